/* ex07's given program: how much faster does the student's pool of streams
 * serve 32 independent requests than one stream does?
 *
 * The student writes open_pool(), serve() and close_pool()
 * (exercises/ex07_stream_pool.cu; the contract is ex07.h). Each request is
 * one spin_blocks kernel (kernels/) of a known time, whose every block holds
 * a whole SM and logs when and where it ran under a tag drawn fresh for each
 * launch. The program times all requests through one stream of its own and
 * through serve(), in pairs (measure_paired), each from an idle GPU until
 * cudaDeviceSynchronize, which waits for every stream. Two sizes of request:
 * an eighth of the SMs (graded) and a quarter (shown: the SMs, not the pool,
 * bound it).
 *
 * The model (lab07): at most w = min(SMs / blocks, hardware queues) requests
 * run at once, so n requests take ceil(n / w) turns of T: the best speedup
 * over one stream is n / ceil(n / w), 8x for 32 requests of an eighth of the
 * GPU with the default 8 queues.
 *
 * The metrics (grader/rubrics/ex07.ini scores them; grading.h says how):
 *   request_ms            each request's duration (--request-ms)
 *   serial_ms, yours_ms   the median time of all requests, one stream / serve()
 *   speedup               the median of the pairs' ratios, serial / yours
 *   ideal_speedup         the model's n / ceil(n / w)
 *   efficiency            speedup / ideal_speedup
 *   peak_at_once          the most requests whose kernels ran at the same
 *                         moment, from their records on the GPU
 *   quarter_speedup       the same speedup for requests of a quarter of the GPU
 *   streams_used          distinct streams serve() launched into (one run)
 *   requests_wrong        requests launched other than once per run, or whose
 *                         records on the GPU are wrong
 *
 * Level two, measured after level one in the same run: the student's
 * serve_level2() serves LEVEL2_REQUESTS requests of two kernels each, step 0
 * then step 1 (which must not start before step 0 of its request ended),
 * each step LEVEL2_STEP_RATIO x --request-ms (T2) and a thirty-second of the
 * SMs, handed the program's LEVEL2_STREAMS streams and a function that
 * queues one step. Timed in pairs against the program's one stream as
 * level one is. The model (lab07, both parts): at most w = min(SMs /
 * blocks, n) requests at once, n x 2 T2 in one stream against ceil(n / w)
 * x 2 T2, a speedup of n / ceil(n / w) (32x on an H100: every request at
 * once). There are more requests than hardware queues (c), so how the
 * steps reach the queues matters (lab07, part 2); what level one's way, a
 * stream per request queued request by request, reaches is the student's
 * prediction. Its metrics, level one's with the prefix level2_ (request_ms
 * is step_ms):
 *   level2_step_ms, level2_serial_ms, level2_yours_ms, level2_speedup,
 *   level2_ideal_speedup, level2_efficiency, level2_peak_at_once (steps at
 *   once), level2_streams_used, level2_requests_wrong (also: a step 1 that
 *   began, by the GPU's clock, before its step 0 ended);
 *   level2_first_steps_late    requests whose step 0 began more than T2 / 2
 *                              after the run's first step 0 (model: n - w);
 *   level2_depth_first_bound   the model's efficiency for a stream per
 *                              request queued request by request, c queues
 *                              (the prediction's answer: printed only once
 *                              the student has predicted);
 *   level2_predicted           the student's LEVEL2_PREDICTED_EFFICIENCY,
 *                              printed beside it, not scored.
 * --check: two requests of 1 ms, one pair; level two: four requests of two
 * 1 ms steps, one pair. */
#include "ex07.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double request_ms = 1; /* T: every request's known duration */

static const option ex_options[] = {
    {"request-ms", OPT_DOUBLE, &request_ms, 0.2, 100, 0.5, "MS", "how long each request spins (T)"},
    {NULL},
};
static const program_info ex = {
    .name = "ex07", .title = "exercise: a pool of streams serving independent requests",
    .handout = "labs/lab07_concurrent_kernels/README.md",
    .options = ex_options, .reps = 10, .quick_reps = 3,
    .needs = NEEDS_CONCURRENT_KERNELS,
};

/* The check pass (--check): requests of 1 ms, one pair (main() and level2()
 * take fewer requests). grading_begin() calls it before the settings are
 * printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    request_ms = 1;
    opt->reps = 1; /* pairs */
}

/* 80% of the model: launches and the host's clock cost each pair up to a few
 * percent (lab07: 7.8x of 8 for 2 ms kernels); a pool too small to fill the
 * SMs reaches at most (pool / w) of it, 50% with half the streams needed. */
static const verdict EFFICIENT = {
    "pool_reaches_model", 0.8, INFINITY, "",
    "your pool did not reach the model's speedup: are there at least as many streams as "
    "requests that fit at once, each request in one of them, and no wait in serve()? (If so, "
    "another process may hold SMs: see nvidia-smi)"};

/* Level two: 80% of the model again. The model leaves out only the host's
 * launches, at least (n-1)L whatever the schedule (about 4% with 2 ms steps
 * and L = 5 us, lab07); level one's way falls short of it (by how much is
 * the student's prediction). The reference read 95% on an H100 (2026-11-23). */
static const verdict LEVEL2_EFFICIENT = {
    "level2_pool_reaches_model", 0.8, INFINITY, "",
    "your level-2 pool did not reach the model's speedup: how many requests fit the SMs at "
    "once, does each of them have a stream, and does a hardware queue hold a step that must "
    "wait ahead of one that need not (lab07, part 2)?"};

enum { WARMUP = 1, REQUESTS = 32, CHECK_REQUESTS = 2, MAX_STREAMS = 1024,
       LEVEL2_SHARE = 32, LEVEL2_CHECK_REQUESTS = 4, MAX_KERNELS = 2 * LEVEL2_REQUESTS };
/* Level two's step: twice a level-one request, so that its 64 launches, a
 * few microseconds each, stay a few percent of the 2 x 2 ms the model allows. */
static const double LEVEL2_STEP_RATIO = 2;
static const unsigned long long SLACK_NS = 2000; /* %globaltimer's tick */

/* The program's own bench: static, so that the student's file cannot name it.
 * Level one's requests are one kernel, level two's two (steps 0 and 1). */
static struct {
    int n, steps, blocks, sms;         /* requests; kernels per request; blocks (SMs) each */
    uint64_t ns, next_tag;             /* the next launch's tag: fresh, never repeated */
    size_t footprint;
    block_record *d_log, *h_log;       /* one record per block, kernel l's at l x blocks */
    /* per kernel l = i x steps + k (step k of request i), in the latest run: */
    uint64_t *tag;                     /* its tag */
    int *launched;                     /* its launches */
    unsigned long long *start, *end;   /* its first start, last end (~0 and 0: wrong) */
    cudaStream_t seen[MAX_STREAMS];    /* the streams of the latest run */
    int streams;
    tally *wrong;                      /* the level being measured: its wrong requests */
} bench;

static void launch_kernel(int i, int k, cudaStream_t stream)
{
    int l = i * bench.steps + k;
    bench.tag[l] = bench.next_tag++;
    bench.launched[l]++;
    spin_blocks_launch(bench.blocks, bench.footprint, bench.ns, bench.tag[l],
                       bench.d_log + (size_t)l * bench.blocks, stream);
    int s = 0;
    while (s < bench.streams && bench.seen[s] != stream)
        s++;
    if (s == bench.streams && s < MAX_STREAMS)
        bench.seen[bench.streams++] = stream;
}

static void launch_request(int i, cudaStream_t stream)
{
    if (i < 0 || i >= bench.n)
        fail_wrong("launch(%d): there are requests 0 to %d", i, bench.n - 1);
    launch_kernel(i, 0, stream);
}

static void launch_step(int i, int k, cudaStream_t stream)
{
    if (i < 0 || i >= bench.n || k < 0 || k >= bench.steps)
        fail_wrong("step(%d, %d): there are requests 0 to %d, steps 0 and 1", i, k,
                   bench.n - 1);
    launch_kernel(i, k, stream);
}

/* Every kernel of every request launched once, each block's record its own
 * (tag, block, time, SM), and each step after the one before it in its
 * request (the GPU's clock): a request with anything wrong is added to
 * *bench.wrong. Returns the most kernels that ran at the same moment: at
 * each kernel's start, how many had begun and not ended. */
static int verify_run(void)
{
    int kernels = bench.n * bench.steps;
    CUDA_CHECK(cudaMemcpy(bench.h_log, bench.d_log,
                          (size_t)kernels * bench.blocks * sizeof *bench.h_log,
                          cudaMemcpyDeviceToHost));
    for (int i = 0; i < bench.n; i++) {
        int bad = 0, first = i * bench.steps;
        for (int l = first; l < first + bench.steps; l++) {
            const block_record *r = bench.h_log + (size_t)l * bench.blocks;
            bad |= bench.launched[l] != 1 ||
                   verify_block_records(r, bench.blocks, bench.tag[l], bench.ns, bench.sms,
                                        &bench.start[l], NULL) != 0;
            bench.end[l] = 0;
            for (int b = 0; b < bench.blocks; b++)
                bench.end[l] = r[b].end_ns > bench.end[l] ? r[b].end_ns : bench.end[l];
            if (l > first) /* began before the step feeding it had ended */
                bad |= bench.start[l] + SLACK_NS < bench.end[l - 1];
        }
        tally_add(bench.wrong, 1, bad, i);
        for (int l = first; bad && l < first + bench.steps; l++)
            bench.start[l] = ~0ull, bench.end[l] = 0; /* a wrong request counts in no peak */
    }
    int peak = 0;
    for (int i = 0; i < kernels; i++) {
        int at_once = 0;
        for (int j = 0; j < kernels; j++)
            at_once += bench.start[j] <= bench.start[i] && bench.start[i] < bench.end[j];
        peak = at_once > peak ? at_once : peak;
    }
    return peak;
}

/* Requests whose first kernel began more than half a kernel after the run's
 * first one did: each waited, for an SM, its stream or its queue. */
static int late_starts(void)
{
    unsigned long long first = ~0ull;
    int late = 0;
    for (int i = 0; i < bench.n; i++)
        first = bench.start[i * bench.steps] < first ? bench.start[i * bench.steps] : first;
    for (int i = 0; i < bench.n; i++)
        late += bench.start[i * bench.steps] != ~0ull &&
                bench.start[i * bench.steps] > first + bench.ns / 2;
    return late;
}

/* Resets the latest run's accounting; the tags stay fresh across runs. */
static void run_begins(void)
{
    memset(bench.launched, 0, (size_t)bench.n * bench.steps * sizeof *bench.launched);
    bench.streams = 0;
    CUDA_CHECK(cudaDeviceSynchronize());
}

static double time_serial(void *stream)
{
    run_begins();
    double t0 = host_time_ms();
    for (int i = 0; i < bench.n; i++)
        for (int k = 0; k < bench.steps; k++)
            launch_kernel(i, k, *(cudaStream_t *)stream);
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = host_time_ms() - t0;
    verify_run();
    return ms;
}

/* The student's function of the level being measured: serve(one), or
 * serve_level2(two) when two is set. */
typedef struct {
    const request_queue *one;
    const level2_queue *two;
} yours;

static int peak_yours, streams_yours, late_yours; /* the student's latest run */
static double time_yours(void *ctx)
{
    const yours *y = (const yours *)ctx;
    level2_queue two;
    run_begins();
    if (y->two)
        two = *y->two; /* a copy: the program's list of streams stays its own */
    double t0 = host_time_ms();
    if (y->two)
        serve_level2(&two); /* the student's */
    else
        serve(y->one); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = host_time_ms() - t0;
    streams_yours = bench.streams;
    peak_yours = verify_run();
    late_yours = late_starts();
    return ms;
}

/* One size of request: the pairs, and the model's best speedup. */
typedef struct {
    paired p;
    int fit, at_once;
    double ideal;
} served;

static served serve_requests(int blocks, int queues, int pairs, cudaStream_t serial)
{
    static const request_queue queue = {0, launch_request};
    request_queue q = queue;
    yours y = {&q, NULL};
    served s = {0};
    bench.blocks = blocks;
    q.n = bench.n;
    s.fit = bench.sms / blocks;
    s.at_once = s.fit < queues ? s.fit : queues;
    s.ideal = (double)bench.n / ((bench.n + s.at_once - 1) / s.at_once);
    s.p = measure_paired(time_serial, &serial, time_yours, &y, WARMUP, pairs);
    return s;
}

/* Level two: requests of two steps, each step a thirty-second of the SMs,
 * through serve_level2() and through the program's one stream, in pairs;
 * reported, and handed to the grader. */
static void level2(lab_run *lab, int check, int pairs, cudaStream_t serial, int queues)
{
    report *r = lab->r;
    level2_queue q = {0};
    tally wrong = {0};
    double step_ms = check ? 1 : LEVEL2_STEP_RATIO * request_ms;
    bench.n = q.n = check ? (int)LEVEL2_CHECK_REQUESTS : (int)LEVEL2_REQUESTS;
    bench.steps = 2;
    bench.blocks = bench.sms >= LEVEL2_SHARE ? bench.sms / LEVEL2_SHARE : 1;
    bench.ns = ns_from_ms(step_ms);
    bench.wrong = &wrong;
    wrong.where = "requests of two steps";
    q.step = launch_step;
    lab_streams(lab, q.stream, LEVEL2_STREAMS, "level-2 stream", cudaStreamNonBlocking);
    int fit = bench.sms / bench.blocks, w = fit < bench.n ? fit : bench.n;
    int waves = (bench.n + w - 1) / w;
    double ideal = (double)bench.n / waves, best_ms = waves * 2 * step_ms;
    /* Level one's way, a stream per request queued request by request:
     * lab07's model of it, never faster than the SMs (the student's
     * prediction). */
    double depth_ms = bench.n > queues ? ((bench.n + queues - 1) / queues + 1) * step_ms : 0;
    double depth_bound = best_ms / fmax(depth_ms, best_ms);
    yours y = {NULL, &q};
    paired p = measure_paired(time_serial, &serial, time_yours, &y, WARMUP, pairs);
    double efficiency = p.ratio.median / ideal;

    report_section(r, "Level 2: requests of two steps, more at once than hardware queues");
    report_text(r, "  %d blocks a step: %d fit the SMs at once, %d requests: w = %d at once; "
                "%d queues\n", bench.blocks, fit, bench.n, w, queues);
    report_compare(r, "one stream", "time", "n x 2T", bench.n * 2 * step_ms, &p.a, "ms");
    report_compare(r, "your level-2 pool", "time", "ceil(n / w) x 2T", best_ms, &p.b, "ms");
    report_compare(r, "two steps", "speedup", "n / ceil(n / w)", ideal, &p.ratio, "x");
    report_value(r, "your prediction", "efficiency_bound", LEVEL2_PREDICTED_EFFICIENCY * 100,
                 "%");
    /* level one's way's bound is the prediction's answer: only once predicted */
    if (grading_predicted(r, LEVEL2_PREDICTED_EFFICIENCY, 0, "LEVEL2_PREDICTED_EFFICIENCY")) {
        report_value(r, "a stream each, in turn", "efficiency_bound", depth_bound * 100, "%");
        report_text(r, "  (the model's best for level one's way here: a stream per request, "
                    "each request's steps\n  one after the other, %d queues; your prediction "
                    "is LEVEL2_PREDICTED_EFFICIENCY)\n", queues);
    }
    report_value(r, "your level-2 pool", "streams_used", streams_yours, "count");
    report_value(r, "your level-2 pool", "peak_at_once", peak_yours, "count");
    report_value(r, "your level-2 pool", "first_steps_late", late_yours, "count");
    report_text(r, "  your pool used %d stream%s; at most %d steps ran at once; %d step 0s began "
                "over T/2 after the first (model: %d)\n", streams_yours,
                streams_yours == 1 ? "" : "s", peak_yours, late_yours, bench.n - w);
    report_tally(r, "level2_requests_verified", &wrong, "requests launched other than once a "
                 "step, whose blocks' records on the GPU are wrong, or whose step 1 began before "
                 "their step 0 ended");
    report_verdict(r, &LEVEL2_EFFICIENT, efficiency, "your level-2 pool %.2fx faster than one "
                   "stream, the model %.2fx: %.0f%%, the median of %d pairs", p.ratio.median,
                   ideal, efficiency * 100, pairs);

    grading_value("level2_step_ms", step_ms);
    grading_value("level2_serial_ms", p.a.median);
    grading_value("level2_yours_ms", p.b.median);
    grading_value("level2_speedup", p.ratio.median);
    grading_value("level2_ideal_speedup", ideal);
    grading_value("level2_efficiency", efficiency);
    grading_value("level2_peak_at_once", peak_yours);
    grading_value("level2_streams_used", streams_yours);
    grading_value("level2_first_steps_late", late_yours);
    grading_value("level2_depth_first_bound", depth_bound);
    grading_value("level2_predicted", LEVEL2_PREDICTED_EFFICIENCY);
    grading_value("level2_requests_wrong", (double)wrong.wrong);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int pairs = lab.opt.reps;
    bench.n = grading_check() ? CHECK_REQUESTS : REQUESTS;
    bench.sms = lab.dev.sm_count;
    bench.ns = ns_from_ms(request_ms);
    bench.next_tag = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    bench.footprint = spin_blocks_footprint();
    int eighth = bench.sms >= 8 ? bench.sms / 8 : 1, quarter = bench.sms >= 4 ? bench.sms / 4 : 1;
    /* room for level one's n x quarter records and level two's 2n x fewer */
    size_t records = (size_t)MAX_KERNELS * quarter;
    bench.d_log = (block_record *)lab_device(&lab, records * sizeof(block_record));
    bench.h_log = (block_record *)lab_pageable(&lab, records * sizeof(block_record));
    size_t clock = MAX_KERNELS * sizeof(unsigned long long);
    bench.tag = (uint64_t *)lab_pageable(&lab, MAX_KERNELS * sizeof(uint64_t));
    bench.launched = (int *)lab_pageable(&lab, MAX_KERNELS * sizeof(int));
    bench.start = (unsigned long long *)lab_pageable(&lab, clock);
    bench.end = (unsigned long long *)lab_pageable(&lab, clock);
    CUDA_CHECK(cudaMemset(bench.d_log, 0xff, records * sizeof(block_record)));
    bench.steps = 1; /* level one: a request is one kernel */
    cudaStream_t serial = lab_stream(&lab, "the program's one stream", cudaStreamNonBlocking, 0);
    open_pool(); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());

    int queues = lab.dev.max_connections;
    report_param(r, "request_ms", request_ms, "ms");
    report_param(r, "requests", bench.n, "");
    report_fact(r, "hardware_queues", queues, "", "CUDA_DEVICE_MAX_CONNECTIONS, or the "
                "driver's default");
    tally wrong = {0};
    bench.wrong = &wrong;
    wrong.where = "requests of an eighth of the GPU";
    served small = serve_requests(eighth, queues, pairs, serial);
    int streams = streams_yours, peak = peak_yours;
    wrong.where = "requests of a quarter of the GPU";
    served big = serve_requests(quarter, queues, pairs, serial);
    CUDA_CHECK(cudaDeviceSynchronize());
    close_pool(); /* the student's */
    double efficiency = small.p.ratio.median / small.ideal;

    served *size[2] = {&small, &big};
    const char *name[2] = {"1/8 GPU", "1/4 GPU"};
    for (int k = 0; k < 2; k++) {
        served *s = size[k];
        report_section(r, k ? "Requests of a quarter of the GPU each (shown, not graded)"
                            : "Requests of an eighth of the GPU each");
        report_text(r, "  %d blocks each: %d fit the SMs at once, %d queues: w = %d at once\n",
                    k ? quarter : eighth, s->fit, queues, s->at_once);
        report_compare(r, "one stream", "time", "n x T", bench.n * request_ms, &s->p.a, "ms");
        report_compare(r, "your pool", "time", "ceil(n / w) x T",
                       bench.n / s->ideal * request_ms, &s->p.b, "ms");
        report_compare(r, name[k], "speedup", "n / ceil(n / w)", s->ideal, &s->p.ratio, "x");
    }
    report_value(r, "your pool", "streams_used", streams, "count");
    report_value(r, "your pool", "peak_at_once", peak, "count");
    report_text(r, "  your pool used %d stream%s; at most %d requests ran at once (model: %d)\n",
                streams, streams == 1 ? "" : "s", peak, small.at_once);

    report_section(r, "Checks");
    report_tally(r, "requests_verified", &wrong, "requests launched other than once, or "
                 "whose blocks' records on the GPU are wrong (tag, time, SM)");
    report_verdict(r, &EFFICIENT, efficiency, "your pool %.2fx faster than one stream, the model "
                   "%.2fx: %.0f%%, the median of %d pairs", small.p.ratio.median, small.ideal,
                   efficiency * 100, pairs);

    grading_value("request_ms", request_ms);
    grading_value("serial_ms", small.p.a.median);
    grading_value("yours_ms", small.p.b.median);
    grading_value("speedup", small.p.ratio.median);
    grading_value("ideal_speedup", small.ideal);
    grading_value("efficiency", efficiency);
    grading_value("peak_at_once", peak);
    grading_value("quarter_speedup", big.p.ratio.median);
    grading_value("streams_used", streams);
    grading_value("requests_wrong", (double)wrong.wrong);

    level2(&lab, grading_check(), pairs, serial, queues);
    return grading_finish(&lab);
}
