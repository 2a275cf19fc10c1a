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
 * --check: two requests of 1 ms, one pair. */
#include "ex07.h"
#include "grading.h"
#include "kernels.h"

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

/* 80% of the model: launches and the host's clock cost each pair up to a few
 * percent (lab07: 7.8x of 8 for 2 ms kernels); a pool too small to fill the
 * SMs reaches at most (pool / w) of it, 50% with half the streams needed. */
static const verdict EFFICIENT = {
    "pool_reaches_model", 0.8, INFINITY, "",
    "your pool did not reach the model's speedup: are there at least as many streams as "
    "requests that fit at once, each request in one of them, and no wait in serve()? (If so, "
    "another process may hold SMs: see nvidia-smi)"};

enum { WARMUP = 1, REQUESTS = 32, CHECK_REQUESTS = 2, MAX_STREAMS = 1024 };

/* The program's own bench: static, so that the student's file cannot name it. */
static struct {
    int n, blocks, sms;                /* requests; blocks (SMs) per request */
    uint64_t ns, next_tag;             /* the next launch's tag: fresh, never repeated */
    size_t footprint;
    block_record *d_log, *h_log;       /* one record per block, request i's at i x blocks */
    uint64_t *tag;                     /* each request's tag in the latest run */
    int *launched;                     /* launches of each request in the latest run */
    unsigned long long *start, *end;   /* each request's first start, last end (0: wrong) */
    cudaStream_t seen[MAX_STREAMS];    /* the streams of the latest run */
    int streams, runs;
    tally wrong;
} bench;

static void launch_request(int i, cudaStream_t stream)
{
    if (i < 0 || i >= bench.n)
        fail_wrong("launch(%d): there are requests 0 to %d", i, bench.n - 1);
    bench.tag[i] = bench.next_tag++;
    bench.launched[i]++;
    spin_blocks_launch(bench.blocks, bench.footprint, bench.ns, bench.tag[i],
                       bench.d_log + (size_t)i * bench.blocks, stream);
    int s = 0;
    while (s < bench.streams && bench.seen[s] != stream)
        s++;
    if (s == bench.streams && s < MAX_STREAMS)
        bench.seen[bench.streams++] = stream;
}

/* Every request launched once, each block's record its own (tag, block,
 * time, SM), added to bench.wrong. Returns the most requests that ran at the
 * same moment: at each request's start, how many had begun and not ended. */
static int verify_run(void)
{
    size_t records = (size_t)bench.n * bench.blocks;
    CUDA_CHECK(cudaMemcpy(bench.h_log, bench.d_log, records * sizeof *bench.h_log,
                          cudaMemcpyDeviceToHost));
    for (int i = 0; i < bench.n; i++) {
        const block_record *r = bench.h_log + (size_t)i * bench.blocks;
        int bad = bench.launched[i] != 1 ||
                  verify_block_records(r, bench.blocks, bench.tag[i], bench.ns, bench.sms,
                                       &bench.start[i], NULL) != 0;
        tally_add(&bench.wrong, 1, bad, i);
        bench.end[i] = 0;
        if (bad) /* a wrong request ran at no moment: it counts in no peak */
            bench.start[i] = ~0ull;
        for (int b = 0; !bad && b < bench.blocks; b++)
            bench.end[i] = r[b].end_ns > bench.end[i] ? r[b].end_ns : bench.end[i];
    }
    int peak = 0;
    for (int i = 0; i < bench.n; i++) {
        int at_once = 0;
        for (int j = 0; j < bench.n; j++)
            at_once += bench.start[j] <= bench.start[i] && bench.start[i] < bench.end[j];
        peak = at_once > peak ? at_once : peak;
    }
    return peak;
}

/* Resets the latest run's accounting; the tags stay fresh across runs. */
static void run_begins(void)
{
    memset(bench.launched, 0, bench.n * sizeof *bench.launched);
    bench.streams = 0;
    CUDA_CHECK(cudaDeviceSynchronize());
}

static double time_serial(void *stream)
{
    run_begins();
    double t0 = host_time_ms();
    for (int i = 0; i < bench.n; i++)
        launch_request(i, *(cudaStream_t *)stream);
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = host_time_ms() - t0;
    verify_run();
    return ms;
}

static int peak_yours, streams_yours; /* serve()'s latest run */
static double time_yours(void *queue)
{
    run_begins();
    double t0 = host_time_ms();
    serve((const request_queue *)queue); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = host_time_ms() - t0;
    streams_yours = bench.streams;
    peak_yours = verify_run();
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
    served s = {0};
    bench.blocks = blocks;
    q.n = bench.n;
    s.fit = bench.sms / blocks;
    s.at_once = s.fit < queues ? s.fit : queues;
    s.ideal = (double)bench.n / ((bench.n + s.at_once - 1) / s.at_once);
    s.p = measure_paired(time_serial, &serial, time_yours, &q, WARMUP, pairs);
    return s;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int pairs = lab.opt.reps;
    bench.n = REQUESTS;
    if (grading_check()) {
        request_ms = 1;
        bench.n = CHECK_REQUESTS;
        pairs = 1;
    }
    bench.sms = lab.dev.sm_count;
    bench.ns = ns_from_ms(request_ms);
    bench.next_tag = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    bench.footprint = spin_blocks_footprint();
    int eighth = bench.sms >= 8 ? bench.sms / 8 : 1, quarter = bench.sms >= 4 ? bench.sms / 4 : 1;
    size_t records = (size_t)bench.n * quarter;
    bench.d_log = (block_record *)lab_device(&lab, records * sizeof(block_record));
    bench.h_log = (block_record *)lab_pageable(&lab, records * sizeof(block_record));
    bench.tag = (uint64_t *)lab_pageable(&lab, bench.n * sizeof(uint64_t));
    bench.launched = (int *)lab_pageable(&lab, bench.n * sizeof(int));
    bench.start = (unsigned long long *)lab_pageable(&lab, bench.n * sizeof(unsigned long long));
    bench.end = (unsigned long long *)lab_pageable(&lab, bench.n * sizeof(unsigned long long));
    CUDA_CHECK(cudaMemset(bench.d_log, 0xff, records * sizeof(block_record)));
    cudaStream_t serial = lab_stream(&lab, "the program's one stream", cudaStreamNonBlocking, 0);
    open_pool(); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());

    int queues = lab.dev.max_connections;
    report_param(r, "request_ms", request_ms, "ms");
    report_param(r, "requests", bench.n, "");
    report_fact(r, "hardware_queues", queues, "", "CUDA_DEVICE_MAX_CONNECTIONS, or the "
                "driver's default");
    bench.wrong.where = "requests of an eighth of the GPU";
    served small = serve_requests(eighth, queues, pairs, serial);
    int streams = streams_yours, peak = peak_yours;
    bench.wrong.where = "requests of a quarter of the GPU";
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
    report_tally(r, "requests_verified", &bench.wrong, "requests launched other than once, or "
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
    grading_value("requests_wrong", (double)bench.wrong.wrong);
    return grading_finish(&lab);
}
