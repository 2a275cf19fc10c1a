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
 *
 * Level two, measured after level one in the same run: the student's
 * issue_ring() issues LEVEL2_ITEMS items through a ring of LEVEL2_RING
 * device slots (item i in slot i % LEVEL2_RING) with the program's two
 * streams and a pool of events. Stage 1 of an item (stream produce) uploads
 * its input to a staging buffer, sits through a slow step and writes its
 * slot = f(input); stage 2 (stream consume) sits through a slow step, then
 * writes the item's own result = f(slot). Both steps are --spin-ms, and in a
 * quarter of the runs each (at random places, exactly as many of each) the
 * producer's or the consumer's is 4 to 8 times that, so that an order that
 * holds only at the usual speeds fails in some runs: a slot read before it
 * was written, or overwritten before it was read. Every run starts from
 * fresh inputs with every device buffer poisoned; the items' results are
 * checked on the GPU once it is idle, and the GPU's clock (each stage's
 * kernel logs its first start and last end) says, item by item, whether
 * stage 2 read its slot after stage 1 wrote it, and whether the slot's
 * next item began to overwrite it only after stage 2 had finished. Its
 * metrics:
 *   level2_runs, level2_mismatches, level2_checked   as level one's, over
 *                                the items' results;
 *   level2_runs_wrong            runs with a wrong result, an item's stage
 *                                not issued exactly once, or read early;
 *   level2_runs_read_early       runs where an item's stage 2 started before
 *                                its stage 1 ended (read before written);
 *   level2_runs_overwritten      runs where an item's stage 1 started before
 *                                stage 2 of the slot's previous item ended
 *                                (overwritten before read);
 *   level2_slow_producer_runs, level2_slow_consumer_runs   timed runs with
 *                                each stage the slow one;
 *   level2_issue_ms, level2_issue_fraction   the median call, and the median
 *                                of the call over that run's producer step;
 *   level2_producer_idle_runs    timed runs where the first stage 1 issued
 *                                had finished when issue_ring() returned.
 * --check: 1 MiB, 0.5 ms, 3 runs and a warm-up for each level, no guard
 * zones (the buffers' exact sizes, for compute-sanitizer). */
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
     "how long stage 1's slow step usually takes (level two: either stage's)"},
    {NULL},
};
static const program_info ex = {
    .name = "ex06",
    .title = "exercise: make one stream wait for another on the GPU, never on the host",
    .handout = "labs/lab06_stream_races/README.md",
    .options = ex_options, .reps = 20, .quick_reps = 5, /* runs, each on fresh inputs */
    /* d_in, d_mid, d_out; level two: items of a quarter of it, a staging
     * buffer, LEVEL2_RING slots and LEVEL2_ITEMS results (9 quarters) */
    .memory_option = "size-mib", .memory_per_unit = (12 + 9) << 18,
};

/* The check pass (--check): 1 MiB, 0.5 ms, 3 runs. grading_begin() calls
 * it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    size_mib = 1;
    spin_ms = 0.5;
    opt->reps = 3; /* runs */
}

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

/* Level two: the first stage 1 issued is still running when issue_ring()
 * returns, in every timed run (counted: none may have finished). */
static const verdict LEVEL2_GPU_WAITS = {
    "level2_producer_busy_on_return", 0, 0, "runs",
    "the first stage 1 had finished when issue_ring() returned: the host waited for the GPU. "
    "Whatever the ring needs ordered can be ordered on the GPU (lab06's rule)"};

enum { POISON = 0xff, GUARD = 0x5a, GUARD_WORDS = 16384, SLOW_EVERY = 4, SLOW_MIN = 4,
       SLOW_MAX = 8 };
/* The runs of level two: both steps as usual, or one of them slow. */
enum { USUAL, SLOW_PRODUCER, SLOW_CONSUMER };

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

/* slow[i] = k for a quarter of n runs (at least one) for each k from 1 to
 * kinds, 0 for the rest, at random places. */
static void choose_slow_runs(int *slow, int n, int kinds)
{
    int quarter = (n + SLOW_EVERY - 1) / SLOW_EVERY;
    for (int i = 0; i < n; i++)
        slow[i] = i / quarter < kinds ? i / quarter + 1 : 0;
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

/* Level one: `runs` timed runs of issue_pipeline() and a warm-up, reported
 * and handed to the grader. */
static void level1(lab_run *lab, int runs)
{
    report *r = lab->r;
    int *slow = (int *)lab_pageable(lab, (size_t)runs * sizeof(int));
    double *delay = (double *)lab_pageable(lab, 4 * (size_t)runs * sizeof(double));
    double *issue = delay + runs, *fraction = issue + runs, *gap = fraction + runs;
    choose_slow_runs(slow, runs, 1);
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
    report_section(r, "Level 1: two stages, two streams, one buffer between them");
    report_value(r, "pipeline", "mismatches", (double)results.wrong, "count");
    report_value(r, "pipeline", "checked", (double)results.checked, "count");
    report_value(r, "pipeline", "slow_runs", slow_runs, "count");
    report_value(r, "pipeline", "slowest_step", slowest, "ms");
    report_stats(r, "pipeline", "host_issue", &issued, "ms");
    report_stats(r, "pipeline", "issue_fraction", &share, "ratio");
    report_value(r, "pipeline", "producer_busy_runs", producer_busy, "count");
    report_stats(r, "pipeline", "stage2_start_after_stage1_end", &handed, "ms");
    /* The model of the last run (the one a --trace figure draws): stage 2
     * after stage 1, so its slow step, which the copies and f lengthen by
     * tens of microseconds. */
    report_value(r, "pipeline", "last_run_predicted_time", delay[runs - 1], "ms");
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
}

/* ---- Level two: a ring of LEVEL2_RING slots over LEVEL2_ITEMS items ---- */

/* Level two's bench, static like level one's: the student reaches the slots
 * only through the two stages. */
static struct {
    size_t w;                /* words per item: a quarter of level one's buffer */
    uint32_t *h_in;          /* pinned: every item's input, item i at h_in + i * w */
    uint32_t *seen;          /* every item's result as read back from the GPU */
    uint32_t *d_stage;       /* stage 1's upload: stream produce's alone, so its own order
                                keeps the items apart */
    uint32_t *d_slot;        /* the ring: slot s at d_slot + s * w */
    uint32_t *d_out;         /* every item's result, item i at d_out + i * w */
    unsigned long long *d_span; /* per item: stage 1's kernel first start, last end;
                                   stage 2's */
    cudaEvent_t event[LEVEL2_EVENTS], first_done; /* the student's; the first stage 1's end */
    uint64_t produce_ns, consume_ns; /* this run's slow steps */
    int calls[2][LEVEL2_ITEMS], stray; /* each stage's calls per item; calls of no item */
} ring;

static uint32_t *slot_of(int item) { return ring.d_slot + (size_t)(item % LEVEL2_RING) * ring.w; }

/* Counts a call of `stage` (0, 1) for `item`; 0 when there is no such item. */
static int ring_call(int stage, int item)
{
    if (item < 0 || item >= LEVEL2_ITEMS) {
        ring.stray++;
        return 0;
    }
    ring.calls[stage][item]++;
    return 1;
}

static void ring_stage1(int item)
{
    int first = 1; /* no stage 1 issued yet in this run */
    for (int i = 0; i < LEVEL2_ITEMS; i++)
        first = first && ring.calls[0][i] == 0;
    if (!ring_call(0, item))
        return;
    CUDA_CHECK(cudaMemcpyAsync(ring.d_stage, ring.h_in + (size_t)item * ring.w,
                               ring.w * sizeof(uint32_t), cudaMemcpyHostToDevice,
                               bench.produce));
    spin_for_ns<<<1, 1, 0, bench.produce>>>(ring.produce_ns);
    CHECK_LAUNCH();
    affine_launch_with_span(ring.d_stage, slot_of(item), ring.w, 1, ring.d_span + 4 * item,
                            bench.produce);
    if (first) /* whatever the host waits for in the ring comes after this */
        CUDA_CHECK(cudaEventRecord(ring.first_done, bench.produce));
}

static void ring_stage2(int item)
{
    if (!ring_call(1, item))
        return;
    spin_for_ns<<<1, 1, 0, bench.consume>>>(ring.consume_ns);
    CHECK_LAUNCH();
    affine_launch_with_span(slot_of(item), ring.d_out + (size_t)item * ring.w, ring.w, 1,
                            ring.d_span + 4 * item + 2, bench.consume);
}

static void ring_open(lab_run *lab)
{
    size_t items = (size_t)LEVEL2_ITEMS * (ring.w = bench.n / 4);
    ring.h_in = (uint32_t *)lab_pinned(lab, items * sizeof(uint32_t));
    ring.seen = (uint32_t *)lab_pageable(lab, items * sizeof(uint32_t));
    ring.d_stage = (uint32_t *)lab_device(lab, ring.w * sizeof(uint32_t));
    ring.d_slot = (uint32_t *)lab_device(lab, LEVEL2_RING * ring.w * sizeof(uint32_t));
    ring.d_out = (uint32_t *)lab_device(lab, items * sizeof(uint32_t));
    ring.d_span = (unsigned long long *)lab_device(lab, 4 * LEVEL2_ITEMS *
                                                           sizeof(unsigned long long));
    lab_events(lab, ring.event, LEVEL2_EVENTS, cudaEventDisableTiming);
    ring.first_done = lab_event(lab, cudaEventDisableTiming);
}

/* A known start, as fresh_run() for level one. An event's record from an
 * earlier run is complete by now: a wait for it waits for nothing. */
static void fresh_ring_run(double produce_ms, double consume_ms)
{
    unsigned long long reset[4 * LEVEL2_ITEMS];
    size_t items = (size_t)LEVEL2_ITEMS * ring.w;
    for (int i = 0; i < 4 * LEVEL2_ITEMS; i++)
        reset[i] = i % 2 ? 0 : ~0ull;
    CUDA_CHECK(cudaDeviceSynchronize());
    fill_random_u32(ring.h_in, items, fresh_seed());
    CUDA_CHECK(cudaMemset(ring.d_stage, POISON, ring.w * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemset(ring.d_slot, POISON, LEVEL2_RING * ring.w * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemset(ring.d_out, POISON, items * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(ring.d_span, reset, sizeof reset, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    ring.produce_ns = ns_from_ms(produce_ms), ring.consume_ns = ns_from_ms(consume_ms);
    memset(ring.calls, 0, sizeof ring.calls);
    ring.stray = 0;
}

/* What one run of level two showed. */
typedef struct {
    double issue_ms;
    int busy;        /* the first stage 1 still running on return */
    int wrong;       /* a result wrong, a stage not issued once, or a slot read early */
    int read_early;  /* an item's stage 2 started before its stage 1 ended */
    int overwritten; /* an item's stage 1 started before stage 2 of its slot's previous item ended */
} ring_result;

static ring_result one_ring_run(double produce_ms, double consume_ms, tally *t)
{
    ring_result res = {0};
    size_t before = t->wrong, items = (size_t)LEVEL2_ITEMS * ring.w;
    unsigned long long span[4 * LEVEL2_ITEMS];
    int not_once;
    fresh_ring_run(produce_ms, consume_ms);
    ring_job job = {LEVEL2_ITEMS, bench.produce, bench.consume, {0}, ring_stage1, ring_stage2};
    memcpy(job.event, ring.event, sizeof job.event); /* a copy */
    double start = host_time_ms();
    issue_ring(&job); /* the student's */
    res.issue_ms = host_time_ms() - start;
    res.busy = !event_finished(ring.first_done);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(ring.seen, ring.d_out, items * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    t->where = "the items' results on the GPU";
    verify_affine(ring.h_in, ring.seen, items, 2, t);
    CUDA_CHECK(cudaMemcpy(span, ring.d_span, sizeof span, cudaMemcpyDeviceToHost));
    not_once = ring.stray > 0;
    for (int i = 0; i < LEVEL2_ITEMS; i++)
        not_once |= ring.calls[0][i] != 1 || ring.calls[1][i] != 1;
    for (int i = 0; i < LEVEL2_ITEMS && !not_once; i++) {
        const unsigned long long *mine = span + 4 * i; /* item i's stage 1, then stage 2 */
        res.read_early |= mine[2] < mine[1];
        if (i + LEVEL2_RING < LEVEL2_ITEMS) /* the slot's next item: its stage 1's start */
            res.overwritten |= span[4 * (i + LEVEL2_RING)] < mine[3];
    }
    res.wrong = t->wrong > before || not_once || res.read_early;
    return res;
}

/* The model of a run of the ring with both waits: item i's stage 1 waits
 * for stage 2 of item i - LEVEL2_RING, its stage 2 for its stage 1, so with
 * two slots or more the slower step paces every item after the first:
 * p + c + (items - 1) max(p, c), the copies and f left out (microseconds). */
static double ring_model_ms(double p, double c)
{
    return p + c + (LEVEL2_ITEMS - 1) * fmax(p, c);
}

/* Level two: `runs` timed runs of issue_ring() and a warm-up with both steps
 * as usual, a quarter of the timed runs with a slow producer and a quarter
 * with a slow consumer. */
static void level2(lab_run *lab, int runs)
{
    report *r = lab->r;
    int *slow = (int *)lab_pageable(lab, (size_t)runs * sizeof(int));
    double *issue = (double *)lab_pageable(lab, 2 * (size_t)runs * sizeof(double));
    double *fraction = issue + runs;
    int wrong = 0, early = 0, overwritten = 0, busy = 0, slow_of[3] = {0};
    double last_p = spin_ms, last_c = spin_ms; /* the last run's steps */
    tally results = {0};
    choose_slow_runs(slow, runs, 2);
    timeline_span_begin("your ring");
    for (int run = -1; run < runs; run++) { /* run -1 warms up: checked, not timed */
        int kind = run < 0 ? USUAL : slow[run];
        double factor = kind == USUAL ? 1 : grading_uniform(SLOW_MIN, SLOW_MAX);
        double p = kind == SLOW_PRODUCER ? factor * spin_ms : spin_ms;
        double c = kind == SLOW_CONSUMER ? factor * spin_ms : spin_ms;
        ring_result res = one_ring_run(p, c, &results);
        last_p = p, last_c = c;
        wrong += res.wrong, early += res.read_early, overwritten += res.overwritten;
        if (run < 0)
            continue;
        issue[run] = res.issue_ms, fraction[run] = res.issue_ms / p;
        busy += res.busy, slow_of[kind]++;
    }
    timeline_span_end();
    stats issued = stats_of(issue, runs), share = stats_of(fraction, runs);

    char title[120];
    snprintf(title, sizeof title, "Level 2: a ring of %d slots over %d items, either stage the "
             "slow one", LEVEL2_RING, LEVEL2_ITEMS);
    report_section(r, title);
    report_value(r, "ring", "mismatches", (double)results.wrong, "count");
    report_value(r, "ring", "checked", (double)results.checked, "count");
    report_value(r, "ring", "slow_producer_runs", slow_of[SLOW_PRODUCER], "count");
    report_value(r, "ring", "slow_consumer_runs", slow_of[SLOW_CONSUMER], "count");
    report_stats(r, "ring", "host_issue", &issued, "ms");
    report_stats(r, "ring", "issue_fraction", &share, "ratio");
    report_value(r, "ring", "producer_busy_runs", busy, "count");
    report_value(r, "ring", "last_run_producer_step", last_p, "ms");
    report_value(r, "ring", "last_run_consumer_step", last_c, "ms");
    report_value(r, "ring", "last_run_predicted_time", ring_model_ms(last_p, last_c), "ms");
    report_tally(r, "level2_correct", &results, "the items' results on the GPU differ from the "
                 "CPU reference: see TODO(student) in issue_ring()");
    report_check(r, "level2_read_after_write", early == 0, "an item's stage 2 started before "
                 "its stage 1 had ended, by the GPU's clock, in %d of %d runs", early, runs + 1);
    report_check(r, "level2_no_overwrite_before_read", overwritten == 0, "a stage 1 began to "
                 "overwrite a slot before stage 2 of the slot's previous item had ended, by the "
                 "GPU's clock, in %d of %d runs (%d with a slow consumer): who may reuse a slot, "
                 "and when? See TODO(student) in issue_ring()", overwritten, runs + 1,
                 slow_of[SLOW_CONSUMER]);
    report_verdict(r, &LEVEL2_GPU_WAITS, runs - busy, "the first stage 1 had already finished "
                   "when issue_ring() returned in %d of %d timed runs", runs - busy, runs);

    grading_value("level2_runs", runs + 1);
    grading_value("level2_mismatches", (double)results.wrong);
    grading_value("level2_checked", (double)results.checked);
    grading_value("level2_runs_wrong", wrong);
    grading_value("level2_runs_read_early", early);
    grading_value("level2_runs_overwritten", overwritten);
    grading_value("level2_slow_producer_runs", slow_of[SLOW_PRODUCER]);
    grading_value("level2_slow_consumer_runs", slow_of[SLOW_CONSUMER]);
    grading_value("level2_issue_ms", issued.median);
    grading_value("level2_issue_fraction", share.median);
    grading_value("level2_producer_idle_runs", runs - busy);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    int check = grading_check(), runs = lab.opt.reps;
    bench_open(&lab, check);
    level1(&lab, runs);
    ring_open(&lab);
    level2(&lab, runs);
    return grading_finish(&lab);
}
