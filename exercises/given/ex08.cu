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
 *
 * Level two, measured after level one in the same run: the student's
 * run_level2() issues a pipeline that forks and joins, LEVEL2_BATCHES
 * batches of four stages (ex08.h): the first, two branches that each read
 * what it wrote (pipeline_join, kernels/, into a word of their own), and the
 * join, which reads both branches' words into the batch's word. Handed four
 * streams (stage s in stream[s]), a pool of LEVEL2_EVENTS events and
 * stage(s, b); never the words or times. Every round draws the first's and
 * the join's times, uniform in [0.1, 0.3) ms, and each branch's time afresh
 * for every batch, uniform in [0.5, 1.5) ms, so that either branch can end
 * last (--check: [0.05, 0.1) and [0.1, 0.3)); every run fresh words,
 * increments and branch words (a join that read a branch early read a
 * random word). Rounds (2 x reps - 1: 9) of the program's own host-chained
 * run and the student's, in alternating order, each checked after it runs
 * (verify_fork_join: words, and each stage's start against the ends of the
 * stages it reads, from the GPU's record). The model: each stage in its
 * stream in batch order, as soon as its stream and the stages it reads
 * allow (fork_join_ms below, from the round's own times); host-chained the
 * sum of every stage's time. Metrics, level one's with the prefix level2_:
 *   level2_runs, level2_mismatches, level2_checked, level2_stages_out_of_order,
 *   level2_calls_wrong, level2_host_chained_ms, level2_yours_ms,
 *   level2_speedup, level2_model_speedup, level2_efficiency,
 *   level2_blocked_fraction;
 *   level2_runs_wrong     the student's runs with a word wrong, a stage
 *                         early or short, or a stage not queued once;
 *   level2_chain_bound    the model's efficiency for level one's way (each
 *                         stage waiting for the one numbered before it):
 *                         the prediction's answer, printed only once the
 *                         student has predicted;
 *   level2_predicted      the student's LEVEL2_PREDICTED_EFFICIENCY.
 * --check: 3 batches, one round; level two one round. */
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

/* The check pass (--check): 3 batches, one round (its stage times are
 * main()'s). grading_begin() calls it before the settings are printed or
 * judged. */
static void check_pass_sizes(common_options *opt)
{
    batches = 3;
    opt->reps = 1; /* rounds; level two's 2 x reps - 1 */
}

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

/* Level two: 90% of the model, as level one. The model's schedule leaves
 * out only launches (microseconds against ms); the reference solution read
 * 1.02 on an H100. Level one's way (each stage waiting for the one numbered
 * before it) never read 0.9 in 3000 gradings of a simulation of the model,
 * the median of 9 rounds each (its value is the exercise's prediction). */
static const verdict LEVEL2_EFFICIENT = {
    "level2_pipeline_reaches_model", 0.9, INFINITY, "%",
    "a batch's path through your waits is longer than the graph's, or a stream waits for "
    "more than its stage reads: lab08's model, with the longest path through the graph in "
    "place of sum(t)"};

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

/* ---- Level two: a fork and a join ---- */

enum { L2_N = LEVEL2_STAGES * LEVEL2_BATCHES };
static struct {
    level2_pipeline lp;        /* what run_level2() is handed (a copy each run) */
    uint64_t ns[L2_N];         /* this round's times, stage s of batch b at [s * B + b] */
    pipeline_buffers p;        /* the batch's word; increments and spans of four stages */
    uint32_t *d_branch, *h_branch; /* each branch's word per batch: A at [b], B at [B + b] */
    int calls[L2_N];
    tally values, order;
} two;

static void stage2(int s, int batch)
{
    int n = LEVEL2_BATCHES, i = s * n + batch;
    if (s < 0 || s >= LEVEL2_STAGES || batch < 0 || batch >= n)
        fail_wrong("stage(%d, %d): stages are 0 to %d, batches 0 to %d", s, batch,
                   LEVEL2_STAGES - 1, n - 1);
    two.calls[i]++;
    uint32_t *word = two.p.d_value + batch, *branch = two.d_branch + batch;
    stage_span *span = two.p.d_span + i;
    cudaStream_t st = two.lp.stream[s];
    if (s == LEVEL2_FIRST)
        pipeline_stage_launch(1, 0, two.ns[i], two.p.add[i], word, span, st);
    else if (s == LEVEL2_JOIN)
        pipeline_join_launch(two.ns[i], two.p.add[i], branch, branch + n, word, span, st);
    else
        pipeline_join_launch(two.ns[i], two.p.add[i], word, NULL,
                             branch + (s == LEVEL2_BRANCH_B ? n : 0), span, st);
}

/* The program's own: the host waits for each stage before the next. */
static void host_chained2(const level2_pipeline *p)
{
    for (int b = 0; b < p->batches; b++)
        for (int s = 0; s < LEVEL2_STAGES; s++) {
            p->stage(s, b);
            CUDA_CHECK(cudaStreamSynchronize(p->stream[s]));
        }
}

/* The model's time: each stage in its stream, in batch order, as soon as
 * its stream and the stages it reads allow; t[s * B + b] in ms. With chain,
 * level one's way: branch B after branch A, the join after branch B. */
static double fork_join_ms(const double *t, int n, int chain)
{
    double first = 0, a = 0, b = 0, join = 0;
    for (int k = 0; k < n; k++) {
        first += t[LEVEL2_FIRST * n + k];
        a = fmax(a, first) + t[LEVEL2_BRANCH_A * n + k];
        b = fmax(b, chain ? a : first) + t[LEVEL2_BRANCH_B * n + k];
        join = fmax(join, fmax(a, b)) + t[LEVEL2_JOIN * n + k];
    }
    return join;
}

typedef struct {
    void (*fn)(const level2_pipeline *);
    level2_pipeline p;
} one_call2;
static void call2(void *ctx) { ((one_call2 *)ctx)->fn(&((one_call2 *)ctx)->p); }

/* One run of `fn` on fresh words, timed (pipeline_run), and checked from
 * the GPU's record (verify_fork_join); returns whether anything was wrong. */
static int one_run2(void (*fn)(const level2_pipeline *), const char *who, run_result *res)
{
    int n = LEVEL2_BATCHES, calls_wrong = 0;
    one_call2 c = {fn, two.lp}; /* a copy */
    memset(two.calls, 0, sizeof two.calls);
    fill_random_u32(two.h_branch, 2 * (size_t)n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(two.d_branch, two.h_branch, 2 * n * sizeof(uint32_t),
                          cudaMemcpyHostToDevice)); /* landed before pipeline_run's sync */
    res->ms = pipeline_run(&two.p, call2, &c, NULL, 0, NULL, NULL, &res->blocked);
    pipeline_download(&two.p);
    two.values.where = two.order.where = who;
    size_t wrong = verify_fork_join(two.p.h_value, two.p.seed, two.p.add, two.p.h_span, two.ns,
                                    n, SLACK_NS, &two.values, &two.order);
    for (int i = 0; i < L2_N; i++)
        calls_wrong += two.calls[i] != 1;
    res->calls_wrong = calls_wrong;
    return wrong > 0 || calls_wrong > 0;
}

static void level2(lab_run *lab, int check)
{
    report *r = lab->r;
    int n = LEVEL2_BATCHES, rounds = 2 * lab->opt.reps - 1; /* --check: 1 */
    int runs = 0, runs_wrong = 0, calls_wrong = 0;
    double lo = check ? 0.05 : 0.1, hi = check ? 0.1 : 0.3;       /* first and join */
    double blo = check ? 0.1 : 0.5, bhi = check ? 0.3 : 1.5;     /* each branch */
    two.lp.batches = n, two.lp.stage = stage2;
    lab_streams(lab, two.lp.stream, LEVEL2_STAGES, "level-2 stage", cudaStreamNonBlocking);
    lab_events(lab, two.lp.event, LEVEL2_EVENTS, cudaEventDisableTiming);
    two.p = pipeline_open(lab, LEVEL2_STAGES, n);
    two.d_branch = (uint32_t *)lab_device(lab, 2 * n * sizeof(uint32_t));
    two.h_branch = (uint32_t *)lab_pageable(lab, 2 * n * sizeof(uint32_t));
    double *v = (double *)lab_pageable(lab, 7 * (size_t)rounds * sizeof(double));
    double *host_ms = v, *yours_ms = v + rounds, *speedup = v + 2 * rounds;
    double *model = v + 3 * rounds, *eff = v + 4 * rounds, *chain = v + 5 * rounds;
    double *fraction = v + 6 * rounds, last_model_ms = 0;
    timeline_span_begin("level 2: host-chained and yours");
    for (int round = -WARMUP; round < rounds; round++) {
        double t[L2_N], sum = 0;
        for (int s = 0; s < LEVEL2_STAGES; s++) {
            int branch = s == LEVEL2_BRANCH_A || s == LEVEL2_BRANCH_B;
            double once = grading_uniform(lo, hi); /* the first's and the join's: per round */
            for (int b = 0; b < n; b++) {
                t[s * n + b] = branch ? grading_uniform(blo, bhi) : once;
                two.ns[s * n + b] = ns_from_ms(t[s * n + b]), sum += t[s * n + b];
            }
        }
        run_result res[2];
        for (int k = 0; k < 2; k++) { /* rounds alternate which goes first */
            int yours = (round + k) % 2 != 0;
            int bad = one_run2(yours ? run_level2 : host_chained2,
                               yours ? "your level-2 pipeline" : "host-chained, level 2",
                               &res[yours]);
            if (yours)
                runs_wrong += bad, calls_wrong += res[1].calls_wrong;
        }
        runs += 2;
        if (round < 0)
            continue;
        double best = last_model_ms = fork_join_ms(t, n, 0);
        host_ms[round] = res[0].ms, yours_ms[round] = res[1].ms;
        speedup[round] = res[0].ms / res[1].ms, model[round] = sum / best;
        eff[round] = speedup[round] / model[round];
        chain[round] = best / fork_join_ms(t, n, 1);
        fraction[round] = res[1].blocked / res[1].ms;
    }
    timeline_span_end();
    stats s_host = stats_of(host_ms, rounds), s_yours = stats_of(yours_ms, rounds);
    stats s_speed = stats_of(speedup, rounds), s_model = stats_of(model, rounds);
    stats s_eff = stats_of(eff, rounds), s_chain = stats_of(chain, rounds);
    stats s_frac = stats_of(fraction, rounds);

    report_section(r, "Level 2: a fork and a join");
    report_text(r, "  %d batches: the first (%.1f-%.1f ms a round), branches A and B (%.1f-%.1f "
                "ms, each batch afresh), the join\n", n, lo, hi, blo, bhi);
    report_stats(r, "host-chained, level 2", "time", &s_host, "ms");
    report_stats(r, "your level-2 pipeline", "time", &s_yours, "ms");
    report_compare(r, "your level-2 pipeline", "speedup", "sum(t) / the fork-join's model",
                   s_model.median, &s_speed, "x");
    report_value(r, "your level-2 pipeline", "last_run_predicted_time", last_model_ms, "ms");
    report_value(r, "your prediction", "efficiency_bound", LEVEL2_PREDICTED_EFFICIENCY * 100,
                 "%");
    /* level one's way's fraction is the prediction's answer: only once predicted */
    if (grading_predicted(r, LEVEL2_PREDICTED_EFFICIENCY, 0, "LEVEL2_PREDICTED_EFFICIENCY")) {
        report_value(r, "level one's way", "efficiency_bound", s_chain.median * 100, "%");
        report_text(r, "  (the model's fraction for level one's way here, each stage waiting "
                    "for the one numbered\n  before it, at each round's times; your prediction "
                    "is LEVEL2_PREDICTED_EFFICIENCY, at the mean times)\n");
    }
    report_value(r, "your level-2 pipeline", "blocked_fraction", s_frac.median * 100, "%");
    report_tally(r, "level2_results_verified", &two.values, "batch words differ from the CPU "
                 "reference of the fork and the join");
    report_tally(r, "level2_stages_in_order", &two.order, "stages that began before a stage "
                 "they read had ended (the GPU's clock), or ran short");
    report_check(r, "level2_stages_queued_once", calls_wrong == 0, "%d (stage, batch) pairs not "
                 "queued exactly once by run_level2()", calls_wrong);
    report_verdict(r, &LEVEL2_EFFICIENT, s_eff.median, "%.2fx over host-chained, %.0f%% of the "
                   "model's %.2fx (the median of %d rounds)", s_speed.median,
                   s_eff.median * 100, s_model.median, rounds);

    grading_value("level2_runs", runs);
    grading_value("level2_mismatches", (double)two.values.wrong);
    grading_value("level2_checked", (double)two.values.checked);
    grading_value("level2_stages_out_of_order", (double)two.order.wrong);
    grading_value("level2_calls_wrong", calls_wrong);
    grading_value("level2_runs_wrong", runs_wrong);
    grading_value("level2_host_chained_ms", s_host.median);
    grading_value("level2_yours_ms", s_yours.median);
    grading_value("level2_speedup", s_speed.median);
    grading_value("level2_model_speedup", s_model.median);
    grading_value("level2_efficiency", s_eff.median);
    grading_value("level2_chain_bound", s_chain.median);
    grading_value("level2_predicted", LEVEL2_PREDICTED_EFFICIENCY);
    grading_value("level2_blocked_fraction", s_frac.median);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int check = grading_check(), rounds = lab.opt.reps, n_runs = 0;
    double lo = check ? 0.1 : 0.5, hi = check ? 0.3 : 1.5;
    bench_open(&lab);
    double *v = (double *)lab_pageable(&lab, 7 * (size_t)rounds * sizeof(double));
    double *host_ms = v, *yours_ms = v + rounds, *speedup = v + 2 * rounds;
    double *model = v + 3 * rounds, *eff = v + 4 * rounds, *blocked = v + 5 * rounds;
    double *fraction = v + 6 * rounds;
    int out_of_order = 0, calls_wrong = 0;
    double last_model_ms = 0; /* the model of the last round's times: its run is traced last */
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
        last_model_ms = sum + (bench.n - 1) * max;
        model[round] = bench.n * sum / last_model_ms;
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
    report_value(r, "your pipeline", "last_run_predicted_time", last_model_ms, "ms");
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
    level2(&lab, check);
    return grading_finish(&lab);
}
