/* ex12's given program: does replaying the student's CUDA graph of lab08's
 * pipeline run a step faster than issuing it from the streams, with the
 * host nearly idle and the results unchanged?
 *
 * A step is lab08's pipeline, event-chained, over B batches: three stages
 * of pipeline_stage (kernels/), stage s in stream s, each reading its
 * batch's word as it begins, spinning the stage's time and writing the word
 * through its own increment; forked from stream 0 and joined back into it by
 * events (issue_step(), the student's to call or to capture). Stages this
 * short (2-5 us, drawn afresh every round) make a step cost the host more
 * than the GPU: 3B launches and 4B event calls.
 *
 * It measures in rounds, each in another order: the program's own stream
 * run (issue_step() `steps` times) and the student's (prepare_steps(), then
 * run_step() `steps` times, then finish_steps()), with that round's stage
 * times and increments. Each is timed on the host clock from an idle GPU to
 * cudaDeviceSynchronize; "host" is the time until the last call returned.
 * Fresh words are uploaded after prepare_steps() and before the steps, so a
 * replay that did nothing, or ran a stale graph, leaves wrong words: every
 * word is checked against the CPU reference of steps x 3 stages, after
 * every run (the warm-up's too), from the GPU's memory, never from anything
 * the student's code returns.
 *
 * The metrics (grader/rubrics/ex12.ini scores them; grading.h says how they
 * reach the student and the grader), medians over the rounds:
 *   runs                        runs checked: the warm-up's and the rounds';
 *   mismatches, checked         batch words wrong, of all checked;
 *   streams_step_us, yours_step_us   a step, the stream run's and the student's;
 *   speedup                     streams / yours, round by round;
 *   streams_host_us, yours_host_us   the host's time per step in the calls;
 *   host_ratio                  yours / streams host time, round by round;
 *   prepare_ms                  prepare_steps(), reported only.
 * --check: 3 batches, 3 steps, one round. */
#include "ex12.h"
#include "grading.h"
#include "kernels.h"

static int batches = 8;
static int steps = 40;

static const option ex_options[] = {
    {"batches", OPT_INT, &batches, 2, 64, 4, "N", "batches through the pipeline each step (B)"},
    {"steps", OPT_INT, &steps, 2, 1000, 10, "N", "steps per run, back to back"},
    {NULL},
};

static const program_info ex = {
    .name = "ex12",
    .title = "exercise: capture a pipeline's step as a CUDA graph and replay it",
    .handout = "labs/lab12_cuda_graphs/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

/* The streams' step is host-bound: 3B launches at lab12's 4.24 us and 4B
 * event calls, about 130 us for B = 8, against some 60 us of GPU work
 * (sum(t) + (B-1) max(t), with a few microseconds a kernel). A graph's step
 * runs at the GPU's pace: about 2x. 1.3x leaves room for a faster CPU
 * (the first H100 run, 2026-11-23: the solution 2.23x to 2.64x in three
 * runs, the streams' step 82.6 to 137.1 us over five, the graph's at most
 * 55.9 us: at worst 1.48x). */
static const verdict FASTER = {
    "graph_faster_per_step", 1.3, INFINITY, "x",
    "your steps were no faster than the streams' own: each step still issues every launch from "
    "the host. Capture p->issue_step() once in prepare_steps() and replay the graph"};
/* One cudaGraphLaunch against 3B launches and 4B event calls: under a
 * quarter of the host's time (lab12: 7.7 us against 4.24 ms for 1,000). */
static const verdict HOST_LIGHT = {
    "host_issue_light", -INFINITY, 0.25, "%",
    "run_step() kept the host as long as issuing the step did: one cudaGraphLaunch per step is "
    "all it needs"};

enum { WARMUP = 1 };

/* The program's own bench: static, so that the student's file reaches it
 * only through issue_step(). */
static struct {
    int n;
    cudaStream_t s[EX12_STAGES];
    cudaEvent_t fork, done[EX12_STAGES - 1], join[EX12_STAGES - 1];
    uint64_t ns[EX12_STAGES]; /* this round's stage times */
    uint32_t *d_value, *h_value, *seed, *want, *add;
    stage_span *d_span;       /* widened every step: not checked */
    tally values;
} bench;

static void issue_step(void)
{
    int n = bench.n;
    CUDA_CHECK(cudaEventRecord(bench.fork, bench.s[0]));
    for (int s = 1; s < EX12_STAGES; s++)
        CUDA_CHECK(cudaStreamWaitEvent(bench.s[s], bench.fork, 0));
    for (int b = 0; b < n; b++)
        for (int s = 0; s < EX12_STAGES; s++) {
            if (s > 0)
                CUDA_CHECK(cudaStreamWaitEvent(bench.s[s], bench.done[s - 1], 0));
            pipeline_stage_launch(1, 0, bench.ns[s], bench.add[s * n + b], bench.d_value + b,
                                  bench.d_span + s * n + b, bench.s[s]);
            if (s < EX12_STAGES - 1)
                CUDA_CHECK(cudaEventRecord(bench.done[s], bench.s[s]));
        }
    for (int s = 1; s < EX12_STAGES; s++) {
        CUDA_CHECK(cudaEventRecord(bench.join[s - 1], bench.s[s]));
        CUDA_CHECK(cudaStreamWaitEvent(bench.s[0], bench.join[s - 1], 0));
    }
}

/* The program's own: every step issued from the streams. */
static void streams_prepare(const pipeline *p) { (void)p; }
static void streams_step(const pipeline *p) { p->issue_step(); }
static void streams_finish(const pipeline *p) { (void)p; }

typedef struct {
    void (*prepare)(const pipeline *), (*step)(const pipeline *), (*finish)(const pipeline *);
    const char *who;
} way;
static const way ways[2] = {{streams_prepare, streams_step, streams_finish, "streams"},
                            {prepare_steps, run_step, finish_steps, "your graph"}};

typedef struct {
    double ms, host_ms, prepare_ms;
} run_result;

/* One run of a way on fresh words, checked from the GPU's memory. */
static run_result one_run(const way *w, int n_steps)
{
    run_result res;
    pipeline p = {bench.n, {bench.s[0], bench.s[1], bench.s[2]}, issue_step}; /* a copy */
    double t0 = host_time_ms();
    w->prepare(&p);
    res.prepare_ms = host_time_ms() - t0;
    fill_random_u32(bench.seed, bench.n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(bench.d_value, bench.seed, bench.n * sizeof(uint32_t),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the words landed; prepare_steps' work done */
    t0 = host_time_ms();
    for (int k = 0; k < n_steps; k++)
        w->step(&p);
    res.host_ms = host_time_ms() - t0;
    CUDA_CHECK(cudaDeviceSynchronize());
    res.ms = host_time_ms() - t0;
    w->finish(&p);
    CUDA_CHECK(cudaMemcpy(bench.h_value, bench.d_value, bench.n * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    for (int b = 0; b < bench.n; b++) {
        uint32_t x = bench.seed[b];
        for (int k = 0; k < n_steps; k++)
            for (int s = 0; s < EX12_STAGES; s++)
                x = pipeline_stage_reference(x, bench.add[s * bench.n + b]);
        bench.want[b] = x;
    }
    bench.values.where = w->who;
    verify_equal_u32(bench.h_value, bench.want, bench.n, &bench.values);
    return res;
}

static void bench_open(lab_run *lab)
{
    bench.n = batches;
    lab_streams(lab, bench.s, EX12_STAGES, "stage", cudaStreamNonBlocking);
    bench.fork = lab_event(lab, cudaEventDisableTiming); /* ordering only */
    for (int s = 0; s < EX12_STAGES - 1; s++) {
        bench.done[s] = lab_event(lab, cudaEventDisableTiming);
        bench.join[s] = lab_event(lab, cudaEventDisableTiming);
    }
    bench.d_value = (uint32_t *)lab_device(lab, bench.n * sizeof(uint32_t));
    bench.h_value = (uint32_t *)lab_pageable(lab, 3 * bench.n * sizeof(uint32_t));
    bench.seed = bench.h_value + bench.n, bench.want = bench.seed + bench.n;
    bench.add = (uint32_t *)lab_pageable(lab, EX12_STAGES * bench.n * sizeof(uint32_t));
    size_t spans = (size_t)EX12_STAGES * bench.n;
    bench.d_span = (stage_span *)lab_device(lab, spans * sizeof(stage_span));
    /* The stages widen their span with atomicMin/atomicMax: start it empty
     * (start at the latest time, end at the earliest), not uninitialised. */
    stage_span *empty = (stage_span *)lab_pageable(lab, spans * sizeof(stage_span));
    for (size_t i = 0; i < spans; i++)
        empty[i].start_ns = ~0ull, empty[i].end_ns = 0;
    CUDA_CHECK(cudaMemcpy(bench.d_span, empty, spans * sizeof(stage_span), cudaMemcpyHostToDevice));
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), rounds = check ? 1 : lab.opt.reps, n_runs = 0;
    if (check)
        batches = 3, steps = 3;
    bench_open(&lab);
    double *v = (double *)lab_pageable(&lab, 7 * (size_t)rounds * sizeof(double));
    double *streams_us = v, *yours_us = v + rounds, *speedup = v + 2 * rounds;
    double *streams_host = v + 3 * rounds, *yours_host = v + 4 * rounds;
    double *host_ratio = v + 5 * rounds, *prepare = v + 6 * rounds;
    timeline_span_begin("rounds: streams and your graph");
    for (int round = -WARMUP; round < rounds; round++) {
        for (int s = 0; s < EX12_STAGES; s++)
            bench.ns[s] = ns_from_ms(grading_uniform(2e-3, 5e-3));
        fill_random_u32(bench.add, EX12_STAGES * bench.n, fresh_seed());
        run_result res[2];
        for (int k = 0; k < 2; k++) { /* rounds alternate which goes first */
            int yours = (round + k) % 2 != 0;
            res[yours] = one_run(&ways[yours], steps);
        }
        n_runs += 2;
        if (round < 0)
            continue;
        streams_us[round] = res[0].ms * 1e3 / steps, yours_us[round] = res[1].ms * 1e3 / steps;
        speedup[round] = res[0].ms / res[1].ms;
        streams_host[round] = res[0].host_ms * 1e3 / steps;
        yours_host[round] = res[1].host_ms * 1e3 / steps;
        host_ratio[round] = res[1].host_ms / res[0].host_ms;
        prepare[round] = res[1].prepare_ms;
    }
    timeline_span_end();
    stats s_streams = stats_of(streams_us, rounds), s_yours = stats_of(yours_us, rounds);
    stats s_speed = stats_of(speedup, rounds), s_sh = stats_of(streams_host, rounds);
    stats s_yh = stats_of(yours_host, rounds), s_ratio = stats_of(host_ratio, rounds);
    stats s_prep = stats_of(prepare, rounds);

    report_param(r, "batches", bench.n, "");
    report_param(r, "steps", steps, "");
    report_section(r, "A step of three stages over B batches: from the streams, and yours");
    report_stats(r, "streams", "per_step", &s_streams, "us");
    report_stats(r, "your graph", "per_step", &s_yours, "us");
    report_stats(r, "streams", "host_per_step", &s_sh, "us");
    report_stats(r, "your graph", "host_per_step", &s_yh, "us");
    report_stats(r, "your graph", "prepare", &s_prep, "ms");
    report_stats(r, "your graph", "speedup", &s_speed, "x");
    report_tally(r, "results_verified", &bench.values, "batch words differ from the CPU "
                 "reference of every step's three stages in order");
    report_verdict(r, &FASTER, s_speed.median, "%.1f us -> %.1f us a step, %.2fx round by round",
                   s_streams.median, s_yours.median, s_speed.median);
    report_verdict(r, &HOST_LIGHT, s_ratio.median, "the host spent %.1f us a step in run_step(), "
                   "%.1f us issuing it from the streams", s_yh.median, s_sh.median);

    grading_value("runs", n_runs);
    grading_value("mismatches", (double)bench.values.wrong);
    grading_value("checked", (double)bench.values.checked);
    grading_value("streams_step_us", s_streams.median);
    grading_value("yours_step_us", s_yours.median);
    grading_value("speedup", s_speed.median);
    grading_value("streams_host_us", s_sh.median);
    grading_value("yours_host_us", s_yh.median);
    grading_value("host_ratio", s_ratio.median);
    grading_value("prepare_ms", s_prep.median);
    return grading_finish(&lab);
}
