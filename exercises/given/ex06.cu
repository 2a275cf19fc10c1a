/* ex06's given program: does the student's handoff between two streams get
 * every result right, run after run, however late the producer, without the
 * host waiting?
 *
 * The student writes issue_pipeline() (exercises/ex06_stream_races.cu; the
 * contract is ex06.h), which this program hands two functions that queue
 * its stages: stage 1 in stream produce (upload fresh inputs, a slow step of
 * spin_for_ns, d_mid = f(in)) and stage 2 in stream consume (d_out =
 * f(d_mid), copied back), f one round of affine_work (kernels/). Never the
 * buffers, never the slow step's length: the program draws that per run,
 * --spin-ms in most runs and, in a quarter of them at random places, 4 to 8
 * times as long, so that only a real dependency is right in every run (a
 * consumer held back by a fixed delay of its own is not).
 *
 * Every run starts from fresh random inputs with every buffer poisoned. The
 * program times the call on the host clock and asks whether stage 1 is still
 * running when it returns (an event stage 1 records at its end): had the host
 * waited for stage 1, it would not be. Then it checks, against the CPU
 * reference, what reached the host once stream consume is done, and, once
 * the GPU is idle, d_mid and d_out on the GPU itself; and from the GPU's
 * clock (each stage's kernel logs when its first block started and its last
 * one ended) whether stage 2 started after stage 1 ended: a race the values
 * happened to survive shows there. In the measure pass each device buffer has
 * a guard zone after it, a known pattern checked at the end: the student's
 * code holds no pointer to them; a stray write into them would show there.
 *
 * The metrics (grader/rubrics/ex06.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   runs                         runs checked: --reps and a warm-up;
 *   mismatches, checked          words wrong, of all checked, over every run:
 *                                what reached the host, d_mid and d_out on the GPU;
 *   runs_wrong                   runs with a wrong word, with stage 2 started
 *                                before stage 1 ended, or a stage not issued once;
 *   runs_out_of_order            runs whose stage 2 started before stage 1 ended;
 *   guard_words_changed          words written past the ends of the buffers;
 *   spin_ms, slow_runs, slow_ms  the usual slow step; the timed runs with a
 *                                slower one, and the slowest;
 *   issue_ms                     the median time the call took;
 *   issue_fraction               the median over the timed runs of the call's
 *                                time over that run's slow step (model: near 0
 *                                when the GPU waits, 1 when the host does);
 *   producer_idle_runs           timed runs where stage 1 had finished when
 *                                issue_pipeline() returned.
 * --check: 1 MiB, 0.5 ms, 3 runs and a warm-up, no guard zones (the buffers'
 * exact sizes, for compute-sanitizer). */
#include "ex06.h"
#include "grading.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>

static int size_mib = 4;   /* 1M elements */
static double spin_ms = 2; /* the usual slow step */

static const option ex_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 256, NO_QUICK, "MIB", "size of each buffer"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.5, 100, NO_QUICK, "MS",
     "how long stage 1's slow step usually takes"},
    {NULL},
};
static const program_info ex = {
    .name = "ex06",
    .title = "exercise: make one stream wait for another on the GPU, never on the host",
    .handout = "labs/lab06_stream_races/README.md",
    .options = ex_options, .reps = 20, .quick_reps = 5, /* runs, each on fresh inputs */
    .memory_option = "size-mib", .memory_per_unit = 3 << 20, /* d_in, d_mid, d_out */
};

/* Its number: the median run's issue time over its slow step. */
static const verdict HOST_NEVER_BLOCKS = {
    "host_never_blocks", -INFINITY, 0.10, "%",
    "issue_pipeline() waited for the GPU: cudaStreamWaitEvent makes the GPU wait; "
    "cudaStreamSynchronize and cudaEventSynchronize make the host wait"};
/* Had the host waited for stage 1 inside issue_pipeline(), stage 1 would be
 * done when it returns: counted over the runs, none may be. */
static const verdict PRODUCER_BUSY = {
    "producer_busy_on_return", 0, 0, "runs",
    "stage 1 had finished when issue_pipeline() returned: the host waited for it. "
    "cudaStreamWaitEvent makes the GPU wait; cudaStreamSynchronize and cudaEventSynchronize make "
    "the host wait"};

enum { POISON = 0xff, GUARD = 0x5a, GUARD_WORDS = 16384, SLOW_EVERY = 4, SLOW_MIN = 4,
       SLOW_MAX = 8 };

/* The program's own bench: static, so that the student's file reaches it
 * only through the two stages. */
static struct {
    size_t n, bytes, guard;
    cudaStream_t produce, consume;
    cudaEvent_t produced, stage1_done;
    uint32_t *h_in, *h_out;  /* pinned: the copies are truly asynchronous */
    uint32_t *d_in, *d_mid, *d_out;
    unsigned long long *d_span; /* %globaltimer: stage 1's kernel [0] first start, [1] last
                                   end; stage 2's [2], [3] */
    uint32_t *seen;          /* a device buffer as read back */
    uint64_t delay_ns;       /* this run's slow step */
    int stage1_calls, stage2_calls;
} bench;

static void stage1(void)
{
    bench.stage1_calls++;
    CUDA_CHECK(cudaMemcpyAsync(bench.d_in, bench.h_in, bench.bytes, cudaMemcpyHostToDevice,
                               bench.produce));
    spin_for_ns<<<1, 1, 0, bench.produce>>>(bench.delay_ns);
    CHECK_LAUNCH();
    affine_launch_with_span(bench.d_in, bench.d_mid, bench.n, 1, bench.d_span, bench.produce);
    CUDA_CHECK(cudaEventRecord(bench.stage1_done, bench.produce));
}

static void stage2(void)
{
    bench.stage2_calls++;
    affine_launch_with_span(bench.d_mid, bench.d_out, bench.n, 1, bench.d_span + 2,
                            bench.consume);
    CUDA_CHECK(cudaMemcpyAsync(bench.h_out, bench.d_out, bench.bytes, cudaMemcpyDeviceToHost,
                               bench.consume));
}

/* A device buffer of `bytes`, followed by bench.guard bytes of GUARD. */
static uint32_t *guarded(lab_run *lab)
{
    char *d = (char *)lab_device(lab, bench.bytes + bench.guard);
    CUDA_CHECK(cudaMemset(d + bench.bytes, GUARD, bench.guard));
    return (uint32_t *)d;
}

/* Words of the guard zone after a buffer that no longer hold the pattern. */
static size_t guard_changed(const uint32_t *d)
{
    unsigned char *g = (unsigned char *)xmalloc(bench.guard + 1);
    CUDA_CHECK(cudaMemcpy(g, (const char *)d + bench.bytes, bench.guard,
                          cudaMemcpyDeviceToHost));
    size_t changed = 0;
    for (size_t w = 0; w < bench.guard / 4; w++)
        changed += g[4 * w] != GUARD || g[4 * w + 1] != GUARD || g[4 * w + 2] != GUARD ||
                   g[4 * w + 3] != GUARD;
    free(g);
    return changed;
}

/* A known start for a run: the last run's work finished (a race leaves stage
 * 1 running), fresh inputs, every buffer poisoned, the spans reset (a first
 * start of all ones, a last end of 0). The setup goes to the legacy stream,
 * which non-blocking streams do not wait for: it is finished before the run. */
static void fresh_run(double delay_ms)
{
    static const unsigned long long span_reset[4] = {~0ull, 0, ~0ull, 0};
    CUDA_CHECK(cudaDeviceSynchronize());
    fill_random_u32(bench.h_in, bench.n, fresh_seed());
    memset(bench.h_out, POISON, bench.bytes);
    CUDA_CHECK(cudaMemset(bench.d_in, POISON, bench.bytes));
    CUDA_CHECK(cudaMemset(bench.d_mid, POISON, bench.bytes));
    CUDA_CHECK(cudaMemset(bench.d_out, POISON, bench.bytes));
    CUDA_CHECK(cudaMemcpy(bench.d_span, span_reset, sizeof span_reset, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.delay_ns = ns_from_ms(delay_ms);
    bench.stage1_calls = bench.stage2_calls = 0;
}

/* What one run showed. */
typedef struct {
    double issue_ms, gap_ms; /* the call; stage 2's first start - stage 1's last end */
    int busy;                /* stage 1 still running on return */
    int wrong_words;         /* a result wrong, on the host or the GPU */
    int not_once;            /* a stage not issued exactly once */
    int out_of_order;        /* stage 2 started before stage 1 ended */
} run_result;

/* One run of the student's issue_pipeline(), its results checked into *t. */
static run_result one_run(double delay_ms, tally *t)
{
    run_result res;
    size_t before = t->wrong;
    unsigned long long span[4];
    fresh_run(delay_ms);
    handoff h = {bench.produce, bench.consume, bench.produced, stage1, stage2}; /* a copy */
    double start = host_time_ms();
    issue_pipeline(&h); /* the student's */
    res.issue_ms = host_time_ms() - start;
    res.busy = !event_finished(bench.stage1_done);
    /* What reaches the host: a reader waits for the stream that copies it back. */
    CUDA_CHECK(cudaStreamSynchronize(bench.consume));
    t->where = "what reached the host";
    verify_affine(bench.h_in, bench.h_out, bench.n, 2, t);
    /* What stays on the GPU, once all of the run (and anything else) is done. */
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(bench.seen, bench.d_mid, bench.bytes, cudaMemcpyDeviceToHost));
    t->where = "d_mid on the GPU";
    verify_affine(bench.h_in, bench.seen, bench.n, 1, t);
    CUDA_CHECK(cudaMemcpy(bench.seen, bench.d_out, bench.bytes, cudaMemcpyDeviceToHost));
    t->where = "d_out on the GPU";
    verify_affine(bench.h_in, bench.seen, bench.n, 2, t);
    CUDA_CHECK(cudaMemcpy(span, bench.d_span, sizeof span, cudaMemcpyDeviceToHost));
    res.not_once = bench.stage1_calls != 1 || bench.stage2_calls != 1;
    res.out_of_order = !res.not_once && span[2] < span[1];
    res.gap_ms = res.not_once ? 0 : ((double)span[2] - (double)span[1]) / 1e6;
    res.wrong_words = t->wrong > before;
    return res;
}

/* slow[i] = 1 for a quarter of n runs (at least one), at random places. */
static void choose_slow_runs(int *slow, int n)
{
    for (int i = 0; i < n; i++)
        slow[i] = i < (n + SLOW_EVERY - 1) / SLOW_EVERY;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)grading_uniform(0, i + 1), keep = slow[i];
        slow[i] = slow[j], slow[j] = keep;
    }
}

static void bench_open(lab_run *lab, int check)
{
    bench.bytes = (size_t)size_mib << 20;
    bench.n = bench.bytes / sizeof(uint32_t);
    bench.guard = check ? 0 : GUARD_WORDS * sizeof(uint32_t);
    bench.produce = lab_stream(lab, "produce", cudaStreamNonBlocking, 0);
    bench.consume = lab_stream(lab, "consume", cudaStreamNonBlocking, 0);
    bench.produced = lab_event(lab, cudaEventDisableTiming); /* orders only */
    bench.stage1_done = lab_event(lab, cudaEventDisableTiming);
    bench.h_in = (uint32_t *)lab_pinned(lab, bench.bytes);
    bench.h_out = (uint32_t *)lab_pinned(lab, bench.bytes);
    bench.seen = (uint32_t *)lab_pageable(lab, bench.bytes);
    bench.d_in = guarded(lab);
    bench.d_mid = guarded(lab);
    bench.d_out = guarded(lab);
    bench.d_span = (unsigned long long *)lab_device(lab, 4 * sizeof(unsigned long long));
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), runs = check ? 3 : lab.opt.reps;
    if (check) {
        size_mib = 1;
        spin_ms = 0.5;
    }
    bench_open(&lab, check);
    int *slow = (int *)lab_pageable(&lab, (size_t)runs * sizeof(int));
    double *delay = (double *)lab_pageable(&lab, 4 * (size_t)runs * sizeof(double));
    double *issue = delay + runs, *fraction = issue + runs, *gap = fraction + runs;
    choose_slow_runs(slow, runs);
    for (int i = 0; i < runs; i++)
        delay[i] = slow[i] ? grading_uniform(SLOW_MIN, SLOW_MAX) * spin_ms : spin_ms;

    tally results = {0};
    int runs_wrong = 0, wrong_words = 0, not_once = 0, out_of_order = 0;
    int producer_busy = 0, slow_runs = 0;
    double slowest = spin_ms;
    timeline_span_begin("your pipeline");
    for (int run = -1; run < runs; run++) { /* run -1 warms up: checked, not timed */
        run_result res = one_run(run < 0 ? spin_ms : delay[run], &results);
        runs_wrong += res.wrong_words || res.not_once || res.out_of_order;
        wrong_words += res.wrong_words;
        not_once += res.not_once;
        out_of_order += res.out_of_order;
        if (run < 0)
            continue;
        issue[run] = res.issue_ms;
        fraction[run] = res.issue_ms / delay[run];
        gap[run] = res.gap_ms;
        producer_busy += res.busy;
        slow_runs += slow[run];
        slowest = fmax(slowest, delay[run]);
    }
    timeline_span_end();
    size_t guards = 0;
    if (bench.guard)
        guards = guard_changed(bench.d_in) + guard_changed(bench.d_mid) +
                 guard_changed(bench.d_out);
    stats issued = stats_of(issue, runs), share = stats_of(fraction, runs);
    stats handed = stats_of(gap, runs);

    report_param(r, "elements", (double)bench.n, "count");
    report_param(r, "runs", runs + 1, "count");
    report_section(r, "Two stages, two streams, one buffer between them");
    report_value(r, "pipeline", "mismatches", (double)results.wrong, "count");
    report_value(r, "pipeline", "checked", (double)results.checked, "count");
    report_value(r, "pipeline", "slow_runs", slow_runs, "count");
    report_value(r, "pipeline", "slowest_step", slowest, "ms");
    report_stats(r, "pipeline", "host_issue", &issued, "ms");
    report_stats(r, "pipeline", "issue_fraction", &share, "ratio");
    report_value(r, "pipeline", "producer_busy_runs", producer_busy, "count");
    report_stats(r, "pipeline", "stage2_start_after_stage1_end", &handed, "ms");
    char what[400];
    snprintf(what, sizeof what, "results wrong (what reached the host, and d_mid and d_out "
             "on the GPU), in %d of %d runs%s", wrong_words, runs + 1,
             results.wrong ? ": stage 2 read d_mid before stage 1 wrote it. TODO(student) in "
                             "issue_pipeline(): record h->produced in stream produce and make "
                             "stream consume wait for it (cudaStreamWaitEvent)"
                           : "");
    report_tally(r, "pipeline_correct", &results, what);
    report_check(r, "stages_issued_once", not_once == 0, "a stage not issued exactly once, in "
                 "%d of %d runs", not_once, runs + 1);
    report_check(r, "stage2_after_stage1", out_of_order == 0, "stage 2 started before stage 1 "
                 "had ended, by the GPU's clock, in %d of %d runs", out_of_order, runs + 1);
    if (bench.guard)
        report_check(r, "stays_in_bounds", guards == 0, "%zu words past the ends of the buffers "
                     "changed", guards);
    report_verdict(r, &HOST_NEVER_BLOCKS, share.median, "issuing took %.1f us, %.1f%% of the "
                   "slow step (the median run; usually %g ms, up to %.3g ms)",
                   issued.median * 1e3, share.median * 100, spin_ms, slowest);
    report_verdict(r, &PRODUCER_BUSY, runs - producer_busy, "stage 1 had already finished when "
                   "issue_pipeline() returned in %d of %d timed runs", runs - producer_busy, runs);

    grading_value("runs", runs + 1);
    grading_value("mismatches", (double)results.wrong);
    grading_value("checked", (double)results.checked);
    grading_value("runs_wrong", runs_wrong);
    grading_value("runs_out_of_order", out_of_order);
    grading_value("guard_words_changed", (double)guards);
    grading_value("spin_ms", spin_ms);
    grading_value("slow_runs", slow_runs);
    grading_value("slow_ms", slowest);
    grading_value("issue_ms", issued.median);
    grading_value("issue_fraction", share.median);
    grading_value("producer_idle_runs", runs - producer_busy);
    return grading_finish(&lab);
}
