/* ex05's given program: does a kernel on the student's stream jump the queue
 * of a background that fills the GPU?
 *
 * The student writes create_critical_stream()
 * (exercises/ex05_stream_priorities.cu; the contract is ex05.h). This
 * program starts a background on a stream of the least priority: --waves
 * waves of blocks (a wave: as many as the GPU holds at once), each spinning
 * --block-us, far more than the GPU holds at once. At a moment of it drawn at
 * random, it launches a short kernel of checkable work (affine_work, whose
 * outputs the CPU checks) and measures its latency on the host clock, from
 * the launch to its completion, polled. In rounds (measure_rounds), each at
 * its own moment in [10%, 90%] of the background (one per stratum, fresh
 * every run): the kernel alone on an idle GPU, on a stream of the
 * background's priority (the reference, made here), and on the student's
 * stream, the order turning each round, so that what slows a moment slows
 * both sides of its pair; the ratio is taken pair by pair. The model: on the
 * reference the kernel waits for what is left of the queued background (half
 * of it, on average); on a stream that jumps the queue, for the next block
 * slot that frees (under one block). Both models are the round's own: its
 * kernel alone plus its moment's rest of the background, or half a block.
 *
 * The metrics (grader/rubrics/ex05.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   priority_least, priority_greatest   this GPU's range (lower is higher)
 *   critical_priority     the priority of the student's stream
 *   background_ms         the background's model duration, waves x block
 *   same_priority_us, yours_us   the median latency on each stream
 *   latency_ratio         pair by pair, the reference's latency over yours:
 *                         the median round
 *   outputs_wrong, checked   outputs of the critical kernel that differ from
 *                         the CPU reference, and outputs checked: every
 *                         launch, on every stream
 *   late_samples          launches that came after the background they were
 *                         meant to land in had finished, even after 3 tries
 * --check: no background, 3 rounds on an idle GPU: the outputs only. */
#include "ex05.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>

static double block_us = 100; /* one background block: short, so slots free often */
static int waves = 50;        /* background blocks = waves x what the GPU holds at once */

static const option ex_options[] = {
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, NO_QUICK, "US",
     "duration of one background block"},
    {"waves", OPT_INT, &waves, 10, 1000, 20, "N", "background grid size, in full waves of the GPU"},
    {NULL},
};
static const program_info ex = {
    .name = "ex05",
    .title = "exercise: give the latency-critical kernel a stream that jumps the queue",
    .handout = "labs/lab05_stream_priorities/README.md",
    .options = ex_options, .reps = 100, .quick_reps = 10, /* rounds */
    .needs = NEEDS_PRIORITIES | NEEDS_CONCURRENT_KERNELS,
};

/* 5x, the rubric's target: the model gives about 25x by default (2500 us of
 * background left against under 100 us), one queue for both streams 1x. */
static const verdict JUMPS_QUEUE = {
    "high_priority_jumps_queue", 5, INFINITY, "x",
    "if your critical stream has the background's priority (the verdict's line gives both), the "
    "block scheduler serves the background first: see TODO(student) in create_critical_stream(); "
    "if it has a higher one, yet still waited, another process may be using this GPU (see "
    "nvidia-smi), or CUDA_DEVICE_MAX_CONNECTIONS=1 puts all streams in one queue"};
/* A timing condition, not a result: an urgent launch that came after the
 * background had ended measured nothing (a busy GPU, a sanitizer's slow
 * launches), so it makes the run "not observed", never "wrong". */
static const verdict MID_BACKGROUND = {
    "samples_mid_background", 0, 0, "launches",
    "some critical launches came after the background they were meant to land in had ended: "
    "the host was slow to launch them (a busy machine, a sanitizer); a larger --waves or "
    "--block-us leaves them more time"};

enum { THREADS = 256, CRITICAL_STEPS = 2000, TRIES = 3, WARMUP = 1, SIDES = 3 };

/* The program's own bench: static, so that the student's file cannot name it. */
static struct {
    cudaStream_t low;                 /* the background's stream: least priority */
    unsigned int bg_blocks;
    uint64_t block_ns;
    unsigned long long *d_blocks_done, blocks_launched;
    int n;                            /* the critical kernel's elements: a block per SM */
    uint32_t *h_in, *h_out, *d_in, *d_out;
    double *after;                    /* each round's moment, ms into the background */
    tally outputs;                    /* every launch of the critical kernel */
    int retried, late;
    cudaEvent_t launched, background_done, done;
} bench;

/* One side of the rounds: the critical kernel on `stream`, mid-background or alone. */
typedef struct {
    cudaStream_t stream;
    int mid_background;
    int round; /* the next sample's round; < 0 while warming up */
} side;

static void start_background(void)
{
    background_block<<<bench.bg_blocks, THREADS, 0, bench.low>>>(bench.block_ns,
                                                                 bench.d_blocks_done);
    CHECK_LAUNCH();
    bench.blocks_launched += bench.bg_blocks;
    CUDA_CHECK(cudaEventRecord(bench.background_done, bench.low));
}

/* The background alone, by events in its stream. */
static double time_background(void *ctx)
{
    float ms = 0;
    (void)ctx;
    CUDA_CHECK(cudaEventRecord(bench.launched, bench.low));
    start_background();
    CUDA_CHECK(cudaEventSynchronize(bench.background_done));
    CUDA_CHECK(cudaEventElapsedTime(&ms, bench.launched, bench.background_done));
    return ms;
}

/* One critical launch on s, after_ms into a fresh background (< 0: on an
 * idle GPU): its latency in us, launch to completion on the host clock; its
 * outputs checked. *late: the background had finished before the launch. */
static double one_launch(cudaStream_t s, double after_ms, int *late)
{
    CUDA_CHECK(cudaMemset(bench.d_out, 0xff, bench.n * sizeof(uint32_t))); /* poison */
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    *late = 0;
    if (after_ms >= 0) {
        start_background();
        while (host_time_ms() - t0 < after_ms) {
        }
        *late = event_finished(bench.background_done);
    }
    double h0 = host_time_ms();
    affine_launch(bench.d_in, bench.d_out, bench.n, CRITICAL_STEPS, s);
    CUDA_CHECK(cudaEventRecord(bench.done, s));
    while (!event_finished(bench.done)) {
    }
    double latency_us = (host_time_ms() - h0) * 1e3;
    CUDA_CHECK(cudaDeviceSynchronize()); /* the background too, before the next launch */
    CUDA_CHECK(cudaMemcpy(bench.h_out, bench.d_out, bench.n * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    verify_affine(bench.h_in, bench.h_out, bench.n, CRITICAL_STEPS, &bench.outputs);
    return latency_us;
}

/* A side's sample of this round, as measure_rounds() takes it: a launch
 * that found the background over is tried again, TRIES times at most. */
static double time_critical(void *ctx)
{
    side *s = (side *)ctx;
    int round = s->round++, late, tries = 1;
    double after = s->mid_background ? bench.after[round < 0 ? 0 : round] : -1;
    double latency = one_launch(s->stream, after, &late);
    for (; late && tries < TRIES; tries++)
        latency = one_launch(s->stream, after, &late);
    if (round >= 0) {
        bench.retried += tries - 1;
        bench.late += late;
    }
    return latency;
}

/* Each side's latencies; mid-background, beside its model, from each
 * round's own sample alone and moment. */
static void report_latencies(report *r, const double *lat, int rounds, int check)
{
    static const char *const name[SIDES] = {"alone", "reference", "your stream"};
    stats s[SIDES];
    for (int i = 0; i < SIDES; i++)
        s[i] = stats_of(lat + (size_t)i * rounds, rounds);
    report_section(r, "The critical kernel's latency, launch to completion, in rounds");
    report_stats(r, name[0], "latency", &s[0], "us");
    if (check) { /* on an idle GPU: no model but the kernel alone */
        report_stats(r, name[1], "latency", &s[1], "us");
        report_stats(r, name[2], "latency", &s[2], "us");
        return;
    }
    double *rest = (double *)xmalloc(2 * (size_t)rounds * sizeof *rest), *half = rest + rounds;
    for (int j = 0; j < rounds; j++) {
        rest[j] = lat[j] + (waves * block_us / 1e3 - bench.after[j]) * 1e3;
        half[j] = lat[j] + block_us / 2;
    }
    report_compare(r, name[1], "latency", "alone + the rest of the background",
                   stats_of(rest, rounds).median, &s[1], "us");
    report_compare(r, name[2], "latency", "alone + half a block", stats_of(half, rounds).median,
                   &s[2], "us");
    free(rest);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    const device_info *dev = &lab.dev;
    int check = grading_check(), rounds = check ? 3 : lab.opt.reps;

    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, background_block, THREADS,
                                                             0));
    bench.bg_blocks = (unsigned int)waves * dev->sm_count * per_sm;
    bench.block_ns = ns_from_ms(block_us / 1e3);
    bench.n = dev->sm_count * THREADS;
    size_t bytes = bench.n * sizeof(uint32_t);
    bench.h_in = (uint32_t *)lab_pageable(&lab, bytes);
    bench.h_out = (uint32_t *)lab_pageable(&lab, bytes);
    bench.d_in = (uint32_t *)lab_device(&lab, bytes);
    bench.d_out = (uint32_t *)lab_device(&lab, bytes);
    bench.d_blocks_done = (unsigned long long *)lab_device(&lab, sizeof(unsigned long long));
    bench.after = (double *)lab_pageable(&lab, (size_t)rounds * sizeof(double));
    CUDA_CHECK(cudaMemset(bench.d_blocks_done, 0, sizeof(unsigned long long)));
    fill_random_u32(bench.h_in, bench.n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(bench.d_in, bench.h_in, bytes, cudaMemcpyHostToDevice));
    bench.launched = lab_event(&lab, cudaEventDefault);
    bench.background_done = lab_event(&lab, cudaEventDefault);
    bench.done = lab_event(&lab, cudaEventDisableTiming);
    bench.low = lab_stream(&lab, "background (least priority)", cudaStreamNonBlocking,
                           dev->priority_least);
    cudaStream_t reference = lab_stream(&lab, "reference (same priority)", cudaStreamNonBlocking,
                                        dev->priority_least);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream does not order non-blocking ones */
    cudaStream_t yours = create_critical_stream(); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());
    timeline_name_stream(yours, "your critical stream");
    int priority;
    CUDA_CHECK(cudaStreamGetPriority(yours, &priority));

    report_section(r, "The setup");
    report_fact(r, "priority_least", dev->priority_least, "", "the background's priority");
    report_fact(r, "priority_greatest", dev->priority_greatest, "", "the most urgent (lower is "
                "higher)");
    report_fact(r, "critical_priority", priority, "", "the priority of your critical stream");
    double background_ms = waves * block_us / 1e3;
    if (!check) { /* the moments: over the shortest background seen, so none ends before its last */
        stats bg = measure(time_background, NULL, 1, 3);
        report_compare(r, "background", "duration", "waves x block duration", background_ms, &bg,
                       "ms");
        double shortest = fmin(bg.min, background_ms);
        random_strata(bench.after, rounds, 0.1 * shortest, 0.9 * shortest);
    }

    side sides[SIDES] = {{reference, 0, -WARMUP}, {reference, !check, -WARMUP},
                         {yours, !check, -WARMUP}};
    timed_fn fn[SIDES] = {time_critical, time_critical, time_critical};
    void *ctx[SIDES] = {&sides[0], &sides[1], &sides[2]};
    double *lat = (double *)lab_pageable(&lab, SIDES * (size_t)rounds * sizeof(double));
    timeline_span_begin("alone, reference, your stream: in rounds");
    measure_rounds(fn, ctx, SIDES, WARMUP, rounds, lat);
    timeline_span_end();
    stats same = stats_of(lat + rounds, rounds), mine = stats_of(lat + 2 * rounds, rounds);
    stats ratio = stats_of_ratios(lat + rounds, lat + 2 * rounds, rounds);
    report_latencies(r, lat, rounds, check);
    report_value(r, "priority", "latency_ratio", ratio.median, "x");

    unsigned long long blocks_done = 0;
    CUDA_CHECK(cudaMemcpy(&blocks_done, bench.d_blocks_done, sizeof blocks_done,
                          cudaMemcpyDeviceToHost));
    report_tally(r, "critical_verified", &bench.outputs,
                 "outputs of the critical kernel differ from the CPU reference");
    report_check(r, "background_counted", blocks_done == bench.blocks_launched, "%llu background "
                 "blocks ran of %llu launched", blocks_done, bench.blocks_launched);
    if (!check) { /* the check pass has no background: nothing to jump */
        report_verdict(r, &JUMPS_QUEUE, ratio.median, "median latency: reference %.0f us, your "
                       "stream (priority %d; the background's %d) %.1f us; pair by pair, %.1fx "
                       "lower", same.median, priority, dev->priority_least, mine.median,
                       ratio.median);
        report_verdict(r, &MID_BACKGROUND, bench.late, "%d of %d critical launches came after "
                       "the background had finished, even after %d tries (%d retried)",
                       bench.late, 2 * rounds, TRIES, bench.retried);
    }

    grading_value("priority_least", dev->priority_least);
    grading_value("priority_greatest", dev->priority_greatest);
    grading_value("critical_priority", priority);
    grading_value("background_ms", background_ms);
    grading_value("same_priority_us", same.median);
    grading_value("yours_us", mine.median);
    grading_value("latency_ratio", ratio.median);
    grading_value("outputs_wrong", (double)bench.outputs.wrong);
    grading_value("checked", (double)bench.outputs.checked);
    grading_value("late_samples", bench.late);

    /* The critical stream is create_critical_stream()'s, not the run's: released
     * here, unless it is one of CUDA's own, which nobody may destroy (a student
     * who returned the default stream gets that stream's points, not exit 1). */
    if (yours != 0 && yours != cudaStreamLegacy && yours != cudaStreamPerThread)
        CUDA_CHECK(cudaStreamDestroy(yours));
    return grading_finish(&lab);
}
