/* ex08's given program: does the student's pipeline let the GPU wait for
 * each stage, so that the stages of different batches run at once, the
 * results stay right and the host stays free?
 *
 * The student writes run_pipeline() (exercises/ex08_event_pipeline.cu; the
 * contract is ex08.h), which this program hands three streams, three events
 * and stage(s, b), which queues stage s of batch b: pipeline_stage
 * (kernels/), one block that reads batch b's word as it begins, spins the
 * stage's time and writes the word through the stage's affine map, logging
 * its span on %globaltimer. Never the words, never the stage times: every
 * round draws three stage times, uniform in [0.5, 1.5) ms (--check: [0.1,
 * 0.3)), and every run fresh words and increments.
 *
 * It measures in rounds, each in another order: the program's own
 * host-chained run (stage, cudaStreamSynchronize, stage, ...) and the
 * student's, with that round's stage times. Each is timed on the host clock
 * from an idle GPU to cudaDeviceSynchronize; "blocked" is the time until
 * run_pipeline() returned. After every run (the warm-up's too), every word
 * is checked against the CPU reference and every stage's span against the
 * one feeding it (verify_pipeline): from the GPU's record, never from
 * anything the student's code returns. The model (lab08): host-chained
 * B x sum(t), event-chained sum(t) + (B-1) x max(t).
 *
 * The metrics (grader/rubrics/ex08.ini scores them; grading.h says how they
 * reach the student and the grader), medians over the rounds:
 *   runs                       runs checked: the warm-up's and the rounds';
 *   mismatches, checked        batch words wrong, of all checked;
 *   stages_out_of_order        stages that began before the one feeding them
 *                              ended, or ran short; runs_out_of_order: runs
 *                              with one;
 *   stage_calls_wrong          (stage, batch) pairs not queued exactly once;
 *   host_chained_ms, yours_ms  the two runs;
 *   speedup                    host-chained / yours, round by round;
 *   model_speedup              the model's, from each round's stage times;
 *   efficiency                 speedup / model_speedup, round by round;
 *   blocked_ms                 the host's time inside run_pipeline();
 *   blocked_fraction           blocked_ms / yours_ms, round by round.
 * --check: 3 batches, one round. */
#include "ex08.h"
#include "grading.h"
#include "kernels.h"
#include "pipeline.h"

#include <string.h>

static int batches = 12;

static const option ex_options[] = {
    {"batches", OPT_INT, &batches, 2, 256, 6, "N", "batches through the pipeline (B)"},
    {NULL},
};

static const program_info ex = {
    .name = "ex08",
    .title = "exercise: chain a pipeline's streams with events, not host waits",
    .handout = "labs/lab08_event_pipelines/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

/* The efficiency the exercise asks for; the model leaves out only launches
 * (microseconds against milliseconds): lab08 measured 2.69x against 2.67x. */
static const verdict EFFICIENT = {
    "pipeline_reaches_model", 0.9, INFINITY, "%",
    "your stages do not overlap across batches: a host wait (cudaStreamSynchronize, "
    "cudaEventSynchronize) keeps every stream but one idle; cudaEventRecord + "
    "cudaStreamWaitEvent let the GPU wait instead"};
static const verdict HOST_FREE = {
    "host_free", -INFINITY, 0.10, "%",
    "run_pipeline() waited for the GPU: the program waits after it returns; inside it, only "
    "cudaStreamWaitEvent (the GPU waits) keeps the order without blocking the host"};

enum { WARMUP = 1, MAX_BATCHES = 256 };
static const unsigned long long SLACK_NS = 2000; /* %globaltimer's tick */

/* The program's own bench: static, so that the student's file reaches it
 * only through stage(). */
static struct {
    int n;
    cudaStream_t s[EX08_STAGES];
    cudaEvent_t done[EX08_STAGES];
    uint64_t ns[EX08_STAGES];  /* this round's stage times */
    pipeline_buffers p;        /* a word per batch; an increment and a span per stage */
    int calls[EX08_STAGES * MAX_BATCHES];
    tally values, order;
} bench;

static void stage(int s, int batch)
{
    if (s < 0 || s >= EX08_STAGES || batch < 0 || batch >= bench.n)
        fail_wrong("stage(%d, %d): stages are 0 to %d, batches 0 to %d", s, batch,
                   EX08_STAGES - 1, bench.n - 1);
    bench.calls[s * bench.n + batch]++;
    pipeline_stage_launch(1, 0, bench.ns[s], bench.p.add[s * bench.n + batch],
                          bench.p.d_value + batch, bench.p.d_span + s * bench.n + batch, bench.s[s]);
}

/* The program's own: the host waits for each stage before the next. */
static void host_chained(const pipeline *p)
{
    for (int b = 0; b < p->batches; b++)
        for (int s = 0; s < EX08_STAGES; s++) {
            p->stage(s, b);
            CUDA_CHECK(cudaStreamSynchronize(p->stream[s]));
        }
}

typedef struct {
    double ms, blocked;
    int out_of_order, calls_wrong;
} run_result;

/* One run of a pipeline function, as pipeline_run() calls it. */
typedef struct {
    void (*fn)(const pipeline *);
    pipeline p;
} one_call;
static void call(void *ctx) { ((one_call *)ctx)->fn(&((one_call *)ctx)->p); }

/* One run of `fn` on fresh words, timed, and checked from the GPU's record
 * (pipeline_run). */
static run_result one_run(void (*fn)(const pipeline *), const char *who)
{
    run_result res = {0, 0, 0, 0};
    size_t late = bench.order.wrong;
    one_call c = {fn, {bench.n, {bench.s[0], bench.s[1], bench.s[2]},
                       {bench.done[0], bench.done[1], bench.done[2]}, stage}}; /* a copy */
    memset(bench.calls, 0, sizeof bench.calls);
    bench.values.where = bench.order.where = who;
    res.ms = pipeline_run(&bench.p, call, &c, bench.ns, SLACK_NS, &bench.values, &bench.order,
                          &res.blocked);
    for (int i = 0; i < EX08_STAGES * bench.n; i++)
        res.calls_wrong += bench.calls[i] != 1;
    res.out_of_order = bench.order.wrong > late;
    return res;
}

static void bench_open(lab_run *lab)
{
    bench.n = batches;
    lab_streams(lab, bench.s, EX08_STAGES, "stage", cudaStreamNonBlocking);
    lab_events(lab, bench.done, EX08_STAGES, cudaEventDisableTiming); /* ordering only */
    bench.p = pipeline_open(lab, EX08_STAGES, bench.n);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), rounds = check ? 1 : lab.opt.reps, n_runs = 0;
    double lo = check ? 0.1 : 0.5, hi = check ? 0.3 : 1.5;
    if (check)
        batches = 3;
    bench_open(&lab);
    double *v = (double *)lab_pageable(&lab, 7 * (size_t)rounds * sizeof(double));
    double *host_ms = v, *yours_ms = v + rounds, *speedup = v + 2 * rounds;
    double *model = v + 3 * rounds, *eff = v + 4 * rounds, *blocked = v + 5 * rounds;
    double *fraction = v + 6 * rounds;
    int out_of_order = 0, calls_wrong = 0;
    timeline_span_begin("rounds: host-chained and yours");
    for (int round = -WARMUP; round < rounds; round++) {
        double t[EX08_STAGES], sum = 0, max = 0;
        for (int s = 0; s < EX08_STAGES; s++) {
            t[s] = grading_uniform(lo, hi), bench.ns[s] = ns_from_ms(t[s]);
            sum += t[s], max = fmax(max, t[s]);
        }
        run_result res[2];
        for (int k = 0; k < 2; k++) { /* rounds alternate which goes first */
            int yours = (round + k) % 2 != 0;
            res[yours] = one_run(yours ? run_pipeline : host_chained,
                                 yours ? "your pipeline" : "host-chained");
        }
        n_runs += 2;
        out_of_order += res[1].out_of_order, calls_wrong += res[1].calls_wrong;
        if (round < 0)
            continue;
        host_ms[round] = res[0].ms, yours_ms[round] = res[1].ms;
        speedup[round] = res[0].ms / res[1].ms;
        model[round] = bench.n * sum / (sum + (bench.n - 1) * max);
        eff[round] = speedup[round] / model[round];
        blocked[round] = res[1].blocked, fraction[round] = res[1].blocked / res[1].ms;
    }
    timeline_span_end();
    stats s_host = stats_of(host_ms, rounds), s_yours = stats_of(yours_ms, rounds);
    stats s_speed = stats_of(speedup, rounds), s_model = stats_of(model, rounds);
    stats s_eff = stats_of(eff, rounds), s_blocked = stats_of(blocked, rounds);
    stats s_frac = stats_of(fraction, rounds);

    report_param(r, "batches", bench.n, "");
    report_section(r, "Three stages over B batches: host-chained, and yours");
    report_stats(r, "host-chained", "time", &s_host, "ms");
    report_stats(r, "your pipeline", "time", &s_yours, "ms");
    report_compare(r, "your pipeline", "speedup", "B sum(t) / (sum(t) + (B-1) max(t))",
                   s_model.median, &s_speed, "x");
    report_stats(r, "your pipeline", "host_blocked", &s_blocked, "ms");
    report_tally(r, "results_verified", &bench.values, "batch words differ from the CPU "
                 "reference of their three stages in order");
    report_tally(r, "stages_in_order", &bench.order, "stages that began before the one "
                 "feeding them had ended (the GPU's clock), or ran short");
    report_check(r, "stages_queued_once", calls_wrong == 0, "%d (stage, batch) pairs not "
                 "queued exactly once by run_pipeline()", calls_wrong);
    report_verdict(r, &EFFICIENT, s_eff.median, "%.2fx over host-chained, %.0f%% of the "
                   "model's %.2fx (the median round)", s_speed.median, s_eff.median * 100,
                   s_model.median);
    report_verdict(r, &HOST_FREE, s_frac.median, "run_pipeline() returned after %.3f ms of a "
                   "%.2f ms run", s_blocked.median, s_yours.median);

    grading_value("runs", n_runs);
    grading_value("mismatches", (double)bench.values.wrong);
    grading_value("checked", (double)bench.values.checked);
    grading_value("stages_out_of_order", (double)bench.order.wrong);
    grading_value("runs_out_of_order", out_of_order);
    grading_value("stage_calls_wrong", calls_wrong);
    grading_value("host_chained_ms", s_host.median);
    grading_value("yours_ms", s_yours.median);
    grading_value("speedup", s_speed.median);
    grading_value("model_speedup", s_model.median);
    grading_value("efficiency", s_eff.median);
    grading_value("blocked_ms", s_blocked.median);
    grading_value("blocked_fraction", s_frac.median);
    return grading_finish(&lab);
}
