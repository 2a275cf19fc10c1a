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
 *
 * Level two, measured after level one in the same run, with the student's
 * stream of level one: a background of tiles (ex05.h), each round a fresh
 * job: a tile of 2-16 us and a setup per block of 5-10 us, drawn, and as
 * many tiles as 5 ms of work for each slot (a block the GPU holds at once).
 * The student's level2_tiles_per_block() says how many consecutive tiles
 * each block does; the program launches ceil(tiles / that) blocks on the
 * least-priority stream. Each block spins its setup and its tiles on
 * %globaltimer, adds its tiles to a count and leaves its start and end (the
 * first start, the last end, the longest block). In rounds: the critical
 * kernel alone on an idle GPU, then at the round's moment, spread evenly
 * over 10%-90% of the shape's model length (waves x block), of a fresh
 * background of that shape; its wait is the latency less the median alone.
 * The model is lab05's, for blocks of one length B = setup + tiles x tile,
 * started together: what the kernel waits for at the median and 9 times
 * in 10 is the student's to work out (the report prints the model's values
 * for the student's shape), and the wait behind the shape handed out is the
 * student's prediction: the model's waits, for either shape, are printed
 * only once the student has predicted. Its metrics:
 *   level2_rounds                rounds timed (and one warm-up, checked too);
 *   level2_runs_wrong            rounds with a shape outside the contract, a
 *                                tile count other than the job's (the GPU's
 *                                count), or a wrong output of the kernel;
 *   level2_shapes_refused, level2_tiles_wrong, level2_outputs_wrong   each;
 *   level2_tiles_per_block       the median round's answer (as launched);
 *   level2_block_us              its model block, setup + tiles x tile;
 *   level2_longest_block_us      the longest block by the GPU's clock;
 *   level2_wait_us, level2_wait_p90_us   the median wait and the 90th
 *                                percentile: the budget's number;
 *   level2_efficiency, level2_efficiency_model   each slot's tiles' time
 *                                over the background's span on the GPU's
 *                                clock, and its model (waves x block);
 *   level2_late_samples          as late_samples;
 *   level2_handed_out_wait_us    the model's median wait behind the shape
 *                                handed out, and
 *   level2_predicted_wait_us     the student's LEVEL2_PREDICTED_WAIT_US,
 *                                printed beside it (no rubric scores it).
 * --check: no background for level one, 3 rounds on an idle GPU: the
 * outputs only; level two's 3 rounds with 1 ms of tiles a slot, the kernel
 * launched with it: the contract, the count and the outputs. */
#include "ex05.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
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

/* The check pass (--check): 3 rounds (main() leaves out the background).
 * grading_begin() calls it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt) { opt->reps = 3; }

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

/* One critical launch on s, after_ms into a fresh background that start()
 * queues (after_ms < 0: on an idle GPU): its latency in us, launch to
 * completion on the host clock; its outputs checked into *outputs. *late: the
 * background had finished before the launch. Returns with the GPU idle. */
static double one_launch(cudaStream_t s, double after_ms, void (*start)(void), int *late,
                         tally *outputs)
{
    CUDA_CHECK(cudaMemset(bench.d_out, 0xff, bench.n * sizeof(uint32_t))); /* poison */
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    *late = 0;
    if (after_ms >= 0) {
        start();
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
    verify_affine(bench.h_in, bench.h_out, bench.n, CRITICAL_STEPS, outputs);
    return latency_us;
}

/* A side's sample of this round, as measure_rounds() takes it: a launch
 * that found the background over is tried again, TRIES times at most. */
static double time_critical(void *ctx)
{
    side *s = (side *)ctx;
    int round = s->round++, late, tries = 1;
    double after = s->mid_background ? bench.after[round < 0 ? 0 : round] : -1;
    double latency = one_launch(s->stream, after, start_background, &late, &bench.outputs);
    for (; late && tries < TRIES; tries++)
        latency = one_launch(s->stream, after, start_background, &late, &bench.outputs);
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

/* ---- Level two: the critical kernel within a budget, behind the student's shape ---- */

/* Each round's tile and setup times are drawn from these ranges: wide enough
 * (8x in tile time) that no one number of tiles per block fits every round
 * (the fewest tiles the setup's share allows at the shortest tiles and the
 * longest setup make blocks of the longest tiles far past what the budget
 * allows): the shape must follow from each round's job. */
static const double TILE_US_MIN = 2, TILE_US_MAX = 16, SETUP_US_MIN = 5, SETUP_US_MAX = 10;
static double level2_work_us = 5000; /* each slot's share of the tiles: level one's 5 ms */

/* What the background's blocks leave on the GPU, each round: the tiles they
 * did, and on %globaltimer the first block's start, the last one's end and
 * the longest block. */
enum { TILES_DONE, FIRST_START, LAST_END, LONGEST, RECORD };

/* Level two's background: block b does the setup, then tiles [b t, (b+1) t)
 * of `tiles` (fewer in the last block), spun as one wait of their total time
 * (a wait per tile would round each one up to a step of %globaltimer). */
static __global__ void tiled_background(unsigned long long tiles, unsigned long long per_block,
                                        uint64_t setup_ns, uint64_t tile_ns,
                                        unsigned long long *rec)
{
    uint64_t start = globaltimer_ns();
    unsigned long long first = (unsigned long long)blockIdx.x * per_block;
    unsigned long long mine = first >= tiles ? 0 : tiles - first < per_block ? tiles - first
                                                                             : per_block;
    while (globaltimer_ns() - start < setup_ns + mine * tile_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long end = globaltimer_ns();
        atomicAdd(&rec[TILES_DONE], mine);
        atomicMin(&rec[FIRST_START], (unsigned long long)start);
        atomicMax(&rec[LAST_END], end);
        atomicMax(&rec[LONGEST], end - start);
    }
}

/* Level two's bench: this round's job and the shape launched for it. */
static struct {
    level2_job job;
    unsigned long long per_block, blocks, *d_rec;
} shape;

static void start_tiled_background(void)
{
    const level2_job *j = &shape.job;
    CUDA_CHECK(cudaMemsetAsync(shape.d_rec, 0, RECORD * sizeof *shape.d_rec, bench.low));
    CUDA_CHECK(cudaMemsetAsync(shape.d_rec + FIRST_START, 0xff, sizeof *shape.d_rec, bench.low));
    tiled_background<<<(unsigned int)shape.blocks, THREADS, 0, bench.low>>>(
        (unsigned long long)j->tiles, shape.per_block, ns_from_ms(j->setup_us / 1e3),
        ns_from_ms(j->tile_us / 1e3), shape.d_rec);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(bench.background_done, bench.low));
}

/* A fresh job; the student's shape for it, launched as asked when it keeps
 * the contract (ex05.h), else the nearest inside 1 .. tiles_per_slot.
 * Returns 1 when it broke the contract. */
static int next_shape(int slots)
{
    level2_job *j = &shape.job;
    j->slots = slots;
    j->tile_us = grading_uniform(TILE_US_MIN, TILE_US_MAX);
    j->setup_us = grading_uniform(SETUP_US_MIN, SETUP_US_MAX);
    j->tiles_per_slot = (int)fmax(1, floor(level2_work_us / j->tile_us + 0.5));
    j->tiles = (long long)slots * j->tiles_per_slot;
    level2_job copy = *j;
    int asked = level2_tiles_per_block(&copy); /* the student's */
    int t = asked < 1 ? 1 : asked > j->tiles_per_slot ? j->tiles_per_slot : asked;
    shape.per_block = (unsigned long long)t;
    shape.blocks = ((unsigned long long)j->tiles + t - 1) / t;
    double block = j->setup_us + t * j->tile_us;
    return t != asked || j->setup_us * 100 > LEVEL2_SETUP_SHARE_PCT * block;
}

/* The 9-in-10 wait within LEVEL2_WAIT_BUDGET_US (ex05.h), the exercise's target. */
static const verdict WITHIN_BUDGET = {
    "level2_within_budget", -INFINITY, LEVEL2_WAIT_BUDGET_US, "us",
    "the critical kernel waited past its budget: by lab05's model, when does a priority act, "
    "and what in your shape sets how long the kernel waits for that? See TODO(student) in "
    "level2_tiles_per_block()"};

/* Level two's samples, per round. */
typedef struct {
    double *alone, *latency, *wait, *tiles, *block, *longest, *efficiency, *efficiency_model;
    double *handed_out;
    int wrong, refused, tiles_wrong, late, retried;
    tally outputs;
} level2_rounds;

/* One round: a fresh job and the student's shape; the critical kernel alone,
 * then at the round's moment (a fraction `at` of the shape's model length;
 * at the start in the check pass) of a fresh background of that shape, tried
 * again when it came after the background's end; the GPU's record read back. */
static void level2_round(level2_rounds *l, int j, cudaStream_t yours, int slots, double at)
{
    int refused = next_shape(slots), late = 0, tries = 1;
    const level2_job *job = &shape.job;
    size_t wrong_before = l->outputs.wrong;
    double block = job->setup_us + (double)shape.per_block * job->tile_us;
    double waves = ceil((double)shape.blocks / slots), ideal = job->tiles_per_slot * job->tile_us;
    unsigned long long rec[RECORD];
    l->alone[j] = one_launch(yours, -1, NULL, &late, &l->outputs);
    l->latency[j] = one_launch(yours, at * waves * block / 1e3, start_tiled_background, &late,
                               &l->outputs);
    for (; late && tries < TRIES; tries++)
        l->latency[j] = one_launch(yours, at * waves * block / 1e3, start_tiled_background, &late,
                                   &l->outputs);
    CUDA_CHECK(cudaMemcpy(rec, shape.d_rec, sizeof rec, cudaMemcpyDeviceToHost));
    int tiles_wrong = rec[TILES_DONE] != (unsigned long long)job->tiles;
    l->tiles[j] = (double)shape.per_block;
    l->block[j] = block;
    l->longest[j] = rec[LONGEST] * 1e-3;
    l->efficiency[j] = rec[LAST_END] > rec[FIRST_START]
                           ? 100 * ideal * 1e3 / (double)(rec[LAST_END] - rec[FIRST_START])
                           : 0;
    l->efficiency_model[j] = ideal / (waves * block);
    /* the report's "as handed out" row, printed only once predicted */
    l->handed_out[j] = (1 - at) * (job->setup_us + ideal);
    l->refused += refused, l->tiles_wrong += tiles_wrong; /* the warm-up's too: all checked */
    l->wrong += refused || tiles_wrong || l->outputs.wrong > wrong_before;
    if (j >= 0)
        l->late += late, l->retried += tries - 1;
}

/* Level two: `rounds` rounds and a warm-up, each on a fresh job; the wait is
 * each round's latency less the median alone. */
static void level2(lab_run *lab, cudaStream_t yours, int rounds, int check)
{
    report *r = lab->r;
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tiled_background, THREADS,
                                                             0));
    int slots = per_sm * lab->dev.sm_count;
    shape.d_rec = (unsigned long long *)lab_device(lab, RECORD * sizeof *shape.d_rec);
    enum { ROWS = 9 };
    double *row = (double *)lab_pageable(lab, ROWS * (size_t)(rounds + WARMUP) * sizeof *row);
    level2_rounds l = {0};
    double **rows[ROWS] = {&l.alone,      &l.latency,    &l.wait,
                           &l.tiles,      &l.block,      &l.longest,
                           &l.efficiency, &l.efficiency_model, &l.handed_out};
    for (int i = 0; i < ROWS; i++) /* index -WARMUP .. -1: the warm-up's */
        *rows[i] = row + (size_t)i * (rounds + WARMUP) + WARMUP;
    double *at = (double *)lab_pageable(lab, (size_t)rounds * sizeof *at);
    random_strata(at, rounds, 0.1, 0.9);
    timeline_span_begin("level 2: alone, then behind your shape, in rounds");
    for (int j = -WARMUP; j < rounds; j++)
        level2_round(&l, j, yours, slots, check ? 0 : at[j < 0 ? 0 : j]);
    timeline_span_end();
    double alone = stats_of(l.alone, rounds).median;
    for (int j = 0; j < rounds; j++)
        l.wait[j] = l.latency[j] - alone;
    stats wait = stats_of(l.wait, rounds), block = stats_of(l.block, rounds);
    stats longest = stats_of(l.longest, rounds), tiles = stats_of(l.tiles, rounds);
    stats eff = stats_of(l.efficiency, rounds); /* in % */
    double p90 = stats_percentile(l.wait, rounds, 90);
    double eff_model = stats_of(l.efficiency_model, rounds).median;
    double handed_out = stats_of(l.handed_out, rounds).median;

    char title[120];
    snprintf(title, sizeof title, "Level 2: a wait within %d us, behind a background of your "
             "shape (%d slots)", LEVEL2_WAIT_BUDGET_US, slots);
    report_section(r, title);
    report_value(r, "your prediction", "wait", LEVEL2_PREDICTED_WAIT_US, "us");
    /* The model's waits answer the prediction: behind the shape handed out,
     * and behind the student's shape, which is that one until they change
     * it. Printed only once the student has predicted. */
    int predicted = grading_predicted(r, LEVEL2_PREDICTED_WAIT_US, 0, "LEVEL2_PREDICTED_WAIT_US");
    if (predicted) {
        report_value(r, "as handed out", "wait_model", handed_out, "us");
        report_text(r, "  (the shape handed out, one block per slot, by the model at each "
                    "round's moment, the median\n  round; your prediction is "
                    "LEVEL2_PREDICTED_WAIT_US)\n");
    }
    report_value(r, "your shape", "tiles_per_block", tiles.median, "count");
    report_compare(r, "your shape", "longest_block", "setup + tiles x tile", block.median,
                   &longest, "us");
    grading_compare(r, predicted, "your shape", "wait", "half a block", block.median / 2, &wait,
                    "us");
    report_value(r, "your shape", "wait_p90", p90, "us");
    if (predicted)
        report_value(r, "your shape", "wait_p90_model", 0.9 * block.median, "us");
    report_compare(r, "your shape", "efficiency", "tiles / (waves x block)", eff_model * 100,
                   &eff, "%");
    report_tally(r, "level2_critical_verified", &l.outputs,
                 "outputs of the critical kernel differ from the CPU reference");
    report_check(r, "level2_tiles_counted", l.tiles_wrong == 0, "the background ran a number of "
                 "tiles other than its job's in %d of %d rounds", l.tiles_wrong, rounds + WARMUP);
    report_check(r, "level2_shape_in_contract", l.refused == 0, "level2_tiles_per_block() broke "
                 "its contract in %d of %d rounds: from 1 to tiles_per_slot, and the setup at "
                 "most %d%% of a block", l.refused, rounds + WARMUP, LEVEL2_SETUP_SHARE_PCT);
    if (!check)
        report_verdict(r, &WITHIN_BUDGET, p90, "9 of 10 waits within %.0f us (median %.0f us; "
                       "a block of %.0f us by the GPU's clock, %.0f tiles), %d of %d rounds late",
                       p90, wait.median, longest.median, tiles.median, l.late, rounds);

    grading_value("level2_rounds", rounds);
    grading_value("level2_runs_wrong", l.wrong);
    grading_value("level2_shapes_refused", l.refused);
    grading_value("level2_tiles_wrong", l.tiles_wrong);
    grading_value("level2_outputs_wrong", (double)l.outputs.wrong);
    grading_value("level2_tiles_per_block", tiles.median);
    grading_value("level2_block_us", block.median);
    grading_value("level2_longest_block_us", longest.median);
    grading_value("level2_wait_us", wait.median);
    grading_value("level2_wait_p90_us", p90);
    grading_value("level2_efficiency", eff.median / 100);
    grading_value("level2_efficiency_model", eff_model);
    grading_value("level2_late_samples", l.late);
    grading_value("level2_handed_out_wait_us", handed_out);
    grading_value("level2_predicted_wait_us", LEVEL2_PREDICTED_WAIT_US);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    const device_info *dev = &lab.dev;
    int check = grading_check(), rounds = lab.opt.reps;

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

    if (check)
        level2_work_us = 1000; /* a shorter background: the check pass checks, it does not time */
    level2(&lab, yours, rounds, check);

    /* The critical stream is create_critical_stream()'s, not the run's: released
     * here, unless it is one of CUDA's own, which nobody may destroy (a student
     * who returned the default stream gets that stream's points, not exit 1). */
    if (yours != 0 && yours != cudaStreamLegacy && yours != cudaStreamPerThread)
        CUDA_CHECK(cudaStreamDestroy(yours));
    return grading_finish(&lab);
}
