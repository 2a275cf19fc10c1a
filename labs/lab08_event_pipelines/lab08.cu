/* lab08: event pipelines, and what waiting costs the host.
 *
 * The question: three stages of 1 ms over 16 batches, each stage on its own
 * stream. Chained by the host (launch a stage, wait for it, launch the next)
 * they take 48 ms. Chained by events (cudaEventRecord + cudaStreamWaitEvent:
 * the GPU waits, the host never does), how long? And while the host waits
 * for the GPU, what does the waiting itself cost: CPU, and time?
 *
 * Build and run:   make lab08 && ./lab08        (./lab08 --help for options)
 *                  ./lab08 --no-wait            the event chain without its waits: caught
 *
 * What to look for: (1) host-chained is B x sum(t), one stream's time: the
 * streams never overlap, because the host launches nothing while it waits.
 * Event-chained is sum(t) + (B-1) x max(t): batch b+1's first stage runs
 * beside batch b's second, and the host is free after the launches. Unequal
 * stages: the slowest sets the pace. Stages that each fill the GPU: no gain,
 * there is no idle SM for the next stage. (2) a dependency hop on the GPU
 * costs microseconds; a host that spins for a kernel burns a CPU core, one
 * that blocks frees it but wakes up later.
 */
#include "streamlab.h"
#include "kernels.h"
#include "pipeline.h"
#include "waits.h"

#include <stdio.h>

static int batches = 16;     /* B */
static double stage_ms = 1;  /* t of each balanced stage */
static double wait_ms = 20;  /* part 2: the kernel the host waits for */
static int no_wait = 0;

static const option lab_options[] = {
    {"batches", OPT_INT, &batches, 2, 256, 6, "N", "batches through the pipeline (B)"},
    {"stage-ms", OPT_DOUBLE, &stage_ms, 0.2, 20, 0.5, "MS", "how long each balanced stage spins"},
    {"wait-ms", OPT_DOUBLE, &wait_ms, 1, 1000, 5, "MS", "part 2: the kernel the host waits for"},
    {"no-wait", OPT_FLAG, &no_wait, 0, 0, NO_QUICK, NULL,
     "drop the event chain's cudaStreamWaitEvent: its stages race (exit 1, for tests)"},
    {NULL},
};

static const program_info program = {
    .name = "lab08", .title = "event pipelines: the GPU waits, the host does not; what waiting costs",
    .handout = "labs/lab08_event_pipelines/README.md",
    .options = lab_options, .reps = 7, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

enum { STAGES = 3, WARMUP = 1, HOPS = 100, CLOCK_READS = 11 };
enum how { ONE_STREAM, HOST_CHAINED, EVENT_CHAINED };
static const char *const how_name[] = {"one stream", "host-chained", "event-chained"};
static const unsigned long long SLACK_NS = 2000; /* %globaltimer's tick, as lab07 */

/* The variants: stage times in units of --stage-ms, and whether each
 * stage's blocks hold every SM. */
typedef struct { const char *name; double t[STAGES]; int whole_gpu; } shape;
static const shape shapes[] = {
    {"balanced", {1, 1, 1}, 0}, {"unbalanced", {0.5, 2, 0.5}, 0}, {"whole GPU", {1, 1, 1}, 1}};
enum { SHAPES = 3, WAYS = 7 }; /* balanced three ways, the others host- and event-chained */

typedef struct bench {
    int n, sms, reps;
    size_t footprint;
    cudaStream_t s[STAGES];
    cudaEvent_t done[STAGES - 1]; /* stage s of the latest batch has ended: ordering only */
    pipeline_buffers p;           /* a word per batch; an increment and a span per stage */
    double *ms, *blocked;         /* an attempt's: [way * reps + round], blocked right after */
    int gate_late;                /* hop samples whose gate ended before the hops were issued */
    tally values, order, waited;
} bench;

typedef struct { bench *b; const shape *sh; enum how how; } way;

/* ---- part 1: one run of a way, verified ------------------------------------ */

static void launch_stage(bench *b, const shape *sh, int s, int k, cudaStream_t st)
{
    pipeline_stage_launch(sh->whole_gpu ? b->sms : 1, sh->whole_gpu ? b->footprint : 0,
                          ns_from_ms(sh->t[s] * stage_ms), b->p.add[s * b->n + k], b->p.d_value + k,
                          b->p.d_span + s * b->n + k, st);
}

/* The lesson in one loop: the same launches, three ways of ordering them. */
static void issue(void *ctx)
{
    const way *w = (const way *)ctx;
    bench *b = w->b;
    for (int k = 0; k < b->n; k++)
        for (int s = 0; s < STAGES; s++) {
            cudaStream_t st = w->how == ONE_STREAM ? b->s[0] : b->s[s];
            if (w->how == EVENT_CHAINED && s > 0 && !no_wait) /* the GPU waits for stage s-1 */
                CUDA_CHECK(cudaStreamWaitEvent(st, b->done[s - 1], 0));
            launch_stage(b, w->sh, s, k, st);
            if (w->how == EVENT_CHAINED && s < STAGES - 1) /* "stage s of batch k has ended" */
                CUDA_CHECK(cudaEventRecord(b->done[s], st));
            if (w->how == HOST_CHAINED) /* the host waits: it launches nothing meanwhile */
                CUDA_CHECK(cudaStreamSynchronize(st));
        }
}

/* One run of a way on fresh words, timed on the host's clock (pipeline_run:
 * no one stream's events can time three streams): v[0]; the host's time
 * until issue() returned, what it spent blocked: v[1]. Every run's words
 * and spans are checked. */
static void timed_run(void *ctx, double *v)
{
    way *w = (way *)ctx;
    bench *b = w->b;
    uint64_t ns[STAGES];
    for (int s = 0; s < STAGES; s++)
        ns[s] = ns_from_ms(w->sh->t[s] * stage_ms);
    b->values.where = b->order.where = how_name[w->how];
    v[0] = pipeline_run(&b->p, issue, w, ns, SLACK_NS, &b->values, &b->order, &v[1]);
}

/* The models, in ms: host-chained (and one stream) B x sum(t); event-chained
 * sum(t) + (B-1) max(t), unless every stage holds every SM. */
static double sum_t(const shape *sh) { return (sh->t[0] + sh->t[1] + sh->t[2]) * stage_ms; }
static double model_ms(const shape *sh, enum how how, int n)
{
    double max = fmax(sh->t[0], fmax(sh->t[1], sh->t[2])) * stage_ms;
    return how != EVENT_CHAINED || sh->whole_gpu ? n * sum_t(sh) : sum_t(sh) + (n - 1) * max;
}

/* Event- over host-chained, round by round, against the model's ratio,
 * within 15%: launches and the host's clock add microseconds to
 * milliseconds (H100 probe: 48.6 / 18.1 ms = 2.69x, model 2.67x). */
static const verdict EVENT_CHAIN = {
    "event_chain_follows_model", 0.85, 1.15, "x",
    "the event-chained stages did not overlap as the model says: another process holding SMs "
    "(see nvidia-smi), CUDA_DEVICE_MAX_CONNECTIONS=1, or a tool serialising kernels"};
/* The slowest stage sets the pace (H100 probe, 12 batches: 36 -> 25 ms, 1.44x). */
static const verdict SLOWEST_PACES = {
    "slowest_stage_sets_pace", 0.85, 1.15, "x",
    "unequal stages did not take sum(t) + (B-1) max(t): see event_chain_follows_model's hint"};
/* Stages that each hold every SM leave none to the next: 1x within 10%. */
static const verdict WHOLE_NO_GAIN = {
    "whole_gpu_stages_no_gain", 0.9, 1.1, "x",
    "stages that each hold every SM overlapped: a block's shared memory did not keep the next "
    "off its SM, or a stage ended early (see the checks)"};
/* The host's share of the run spent in issue() (H100 probe: 0.19 of 18.1 ms
 * event-chained, 48.4 of 48.6 ms host-chained). */
static const verdict HOST_FREE = {
    "event_chain_host_free", -INFINITY, 0.10, "%",
    "issuing the event chain took long: a busy CPU, or a tool slowing every CUDA call"};
static const verdict HOST_BLOCKED = {
    "host_chain_blocks_host", 0.90, INFINITY, "%",
    "the host-chained loop returned early: did it wait for each stage?"};

typedef struct {
    way w[WAYS];
    stats time[WAYS], blocked[WAYS], speedup[SHAPES];
    double model[SHAPES]; /* the speedup the model gives each shape */
} part1;

static int part1_holds(const part1 *p)
{
    return verdict_holds(&EVENT_CHAIN, p->speedup[0].median / p->model[0]) &&
           verdict_holds(&SLOWEST_PACES, p->speedup[1].median / p->model[1]) &&
           verdict_holds(&WHOLE_NO_GAIN, p->speedup[2].median) &&
           verdict_holds(&HOST_FREE, p->blocked[2].median / p->time[2].median) &&
           verdict_holds(&HOST_BLOCKED, p->blocked[1].median / p->time[1].median);
}

static int attempt_part1(void *ctx, double *spread)
{
    part1 *p = (part1 *)ctx;
    bench *b = p->w[0].b;
    measure_ways(timed_run, p->w, sizeof p->w[0], WAYS, 2, WARMUP, b->reps, b->ms);
    stats_of_rows(b->ms, WAYS, b->reps, p->time);
    stats_of_rows(b->blocked, WAYS, b->reps, p->blocked);
    /* host-chained rows 1, 3, 5 over event-chained 2, 4, 6 */
    *spread = stats_of_row_pairs(b->ms, 1, SHAPES, b->reps, p->speedup);
    return part1_holds(p);
}

static void pipelines(lab_run *run, bench *b)
{
    part1 p = {{{b, &shapes[0], ONE_STREAM}}};
    for (int sh = 0; sh < SHAPES; sh++) {
        p.w[2 * sh + 1] = (way){b, &shapes[sh], HOST_CHAINED};
        p.w[2 * sh + 2] = (way){b, &shapes[sh], EVENT_CHAINED};
        p.model[sh] = model_ms(&shapes[sh], HOST_CHAINED, b->n) /
                      model_ms(&shapes[sh], EVENT_CHAINED, b->n);
    }
    report_section(run->r, "Part 1: three stages over B batches, a stream per stage");
    report_param(run->r, "batches", b->n, "");
    report_param(run->r, "stage_ms", stage_ms, "ms");
    lab_attempt(run, "host-chained vs event-chained", attempt_part1, &p);
    for (int i = 1; i <= 2; i++) /* --trace: balanced host- and event-chained, for a figure */
        timeline_traced_run(how_name[p.w[i].how], timed_run, &p.w[i]);
    for (int i = 0; i < WAYS; i++) {
        const way *w = &p.w[i];
        char name[64];
        snprintf(name, sizeof name, "%s, %s", w->sh->name, how_name[w->how]);
        if (i == 0 || (w->how == HOST_CHAINED && i > 1))
            report_text(run->r, "  %s: stages %g/%g/%g ms%s\n", w->sh->name, w->sh->t[0] * stage_ms,
                        w->sh->t[1] * stage_ms, w->sh->t[2] * stage_ms,
                        w->sh->whole_gpu ? ", each holding every SM" : ", one block each");
        report_compare(run->r, name, "time", w->how != EVENT_CHAINED || w->sh->whole_gpu
                       ? "B x sum(t)" : "sum(t) + (B-1) x max(t)", model_ms(w->sh, w->how, b->n),
                       &p.time[i], "ms");
        report_stats(run->r, name, "host_blocked", &p.blocked[i], "ms");
        if (w->how == EVENT_CHAINED)
            report_compare(run->r, w->sh->name, "speedup", "host-chained / event-chained models",
                           p.model[(i - 1) / 2], &p.speedup[(i - 1) / 2], "x");
    }
    report_section(run->r, "Did the GPU wait instead of the host?");
    report_verdict(run->r, &EVENT_CHAIN, p.speedup[0].median / p.model[0], "balanced: host-chained "
                   "%.2f ms, event-chained %.2f ms: %.2fx round by round (model %.2fx)",
                   p.time[1].median, p.time[2].median, p.speedup[0].median, p.model[0]);
    report_verdict(run->r, &SLOWEST_PACES, p.speedup[1].median / p.model[1], "unbalanced: %.2f -> "
                   "%.2f ms: %.2fx (model %.2fx)", p.time[3].median, p.time[4].median,
                   p.speedup[1].median, p.model[1]);
    report_verdict(run->r, &WHOLE_NO_GAIN, p.speedup[2].median, "whole-GPU stages: %.2f -> %.2f ms: "
                   "%.2fx (model 1x: no SM is idle for the next stage)", p.time[5].median,
                   p.time[6].median, p.speedup[2].median);
    report_verdict(run->r, &HOST_FREE, p.blocked[2].median / p.time[2].median, "event-chained: the "
                   "host was free after %.3f ms of a %.2f ms run", p.blocked[2].median,
                   p.time[2].median);
    report_verdict(run->r, &HOST_BLOCKED, p.blocked[1].median / p.time[1].median, "host-chained: "
                   "the host was blocked %.2f ms of a %.2f ms run", p.blocked[1].median,
                   p.time[1].median);
}

/* ---- part 2: what waiting costs the host ----------------------------------- */

enum wait_mode { SPIN, BLOCKING, POLL, MODES, POLL_US = 50 };
static const char *const mode_name[] = {"spin (default)", "cudaEventBlockingSync",
                                        "poll every 50 us"};
static const char *const hop_name[] = {"GPU hop (event wait)", "launch + stream sync",
                                       "launch + blocking event sync"};

typedef struct waits waits;
typedef struct { waits *w; int how; } wait_way; /* how: a wait_mode, or a hop_way */
static_assert((int)MODES == (int)HOP_WAYS, "the ways of waiting and of hopping share their contexts");
struct waits {
    bench *b;
    cudaEvent_t ev[MODES]; /* SPIN and POLL: a plain event; BLOCKING: BlockingSync */
    kernel_wait k;         /* the --wait-ms kernel's record, and the clocks' offset */
    event_timer timer[HOP_WAYS];
    wait_way way[MODES];
    stats cpu_s[MODES], late_s[MODES];
};

/* The host waits for a --wait-ms kernel one way: v[0], the share of a CPU
 * core the process used meanwhile, in %; v[1], how long after the kernel's
 * own end (its %globaltimer, on the host's clock) the wait returned, in us. */
static void one_wait(void *ctx, double *v)
{
    waits *w = ((wait_way *)ctx)->w;
    enum wait_mode m = (enum wait_mode)((wait_way *)ctx)->how;
    v[0] = 100 * kernel_wait_measure(&w->k, w->b->s[0], ns_from_ms(wait_ms), w->ev[m],
                                     m == POLL ? POLL_US : 0, &v[1]);
}

/* One hop, HOPS times a sample (waits.h): kept on the GPU by an event, timed
 * by events; through the host, by cudaStreamSynchronize or by
 * cudaEventSynchronize on a BlockingSync event, on the host's clock. */
static void one_hop(void *ctx, double *us)
{
    waits *w = ((wait_way *)ctx)->w;
    int how = ((wait_way *)ctx)->how;
    *us = dependency_hop_us((enum hop_way)how, w->b->s, w->b->done[0], w->ev[BLOCKING],
                            &w->timer[how], HOPS, &w->b->gate_late);
}

/* Blocking sync frees the core a spinning wait burns (H100 probe: 0.1% of a
 * core against 100%): at most a tenth of the spin's CPU, a margin that a
 * busy host or a slower wake-up cannot close. The rest is reported as
 * measured, not judged: wake-up times are the OS scheduler's. */
static const verdict BLOCKING_FREES_CPU = {
    "blocking_sync_frees_cpu", -INFINITY, 0.10, "x",
    "a blocking wait used as much CPU as a spinning one: is CUDA_LAUNCH_BLOCKING or a tool "
    "polling for the process?"};

static int attempt_waits(void *ctx, double *spread)
{
    waits *w = (waits *)ctx;
    int n = w->b->reps;
    measure_ways(one_wait, w->way, sizeof w->way[0], MODES, 2, WARMUP, n, w->b->ms);
    stats_of_rows(w->b->ms, MODES, n, w->cpu_s);
    stats_of_rows(w->b->ms + MODES * n, MODES, n, w->late_s);
    *spread = 0;
    return verdict_holds(&BLOCKING_FREES_CPU, w->cpu_s[BLOCKING].median / w->cpu_s[SPIN].median);
}

static void waiting(lab_run *run, bench *b)
{
    int n = b->reps;
    stats hop[HOP_WAYS];
    waits w = {b, {lab_event(run, cudaEventDisableTiming),
                   lab_event(run, cudaEventDisableTiming | cudaEventBlockingSync)}};
    w.ev[POLL] = w.ev[SPIN];
    w.k = kernel_wait_open(run, CLOCK_READS, &b->waited);
    for (int i = 0; i < HOP_WAYS; i++)
        w.timer[i] = lab_timer(run), w.way[i] = (wait_way){&w, i};
    report_section(run->r, "Part 2: what waiting costs the host");
    measure_ways(one_hop, w.way, sizeof w.way[0], HOP_WAYS, 1, WARMUP, n, b->ms);
    stats_of_rows(b->ms, HOP_WAYS, n, hop);
    for (int i = 0; i < HOP_WAYS; i++)
        report_stats(run->r, hop_name[i], "per_hop", &hop[i], "us");
    report_value(run->r, hop_name[HOP_GPU], "gate_ended_early", b->gate_late, "count");
    report_param(run->r, "wait_ms", wait_ms, "ms");
    lab_attempt(run, "spin vs blocking sync", attempt_waits, &w);
    for (int m = 0; m < MODES; m++) {
        report_stats(run->r, mode_name[m], "cpu_busy", &w.cpu_s[m], "%");
        report_stats(run->r, mode_name[m], "late", &w.late_s[m], "us");
    }
    report_verdict(run->r, &BLOCKING_FREES_CPU, w.cpu_s[BLOCKING].median / w.cpu_s[SPIN].median,
                   "waiting %g ms: blocking sync used %.2f%% of a core, spinning %.1f%% (woke "
                   "%.0f us and %.0f us after the kernel)", wait_ms, w.cpu_s[BLOCKING].median,
                   w.cpu_s[SPIN].median, w.late_s[BLOCKING].median, w.late_s[SPIN].median);
}

/* ---- setup: the run owns these, lab_end() releases them ------------------- */

/* Non-blocking streams: the legacy stream's setup copies never order them. */
static void bench_open(lab_run *run, bench *b)
{
    bench init = {.n = batches, .sms = run->dev.sm_count, .reps = run->opt.reps,
                  .footprint = pipeline_stage_footprint()};
    *b = init;
    lab_streams(run, b->s, STAGES, "stage", cudaStreamNonBlocking);
    lab_events(run, b->done, STAGES - 1, cudaEventDisableTiming); /* ordering only: cheaper */
    b->p = pipeline_open(run, STAGES, b->n);
    b->ms = (double *)lab_pageable(run, 2 * WAYS * b->reps * sizeof(double));
    b->blocked = b->ms + WAYS * b->reps;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b;
    bench_open(&run, &b);
    pipelines(&run, &b);
    waiting(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "pipeline_results_verified", &b.values, "batches whose word is not the "
                 "CPU reference of its three stages in order (fresh words every run)");
    report_tally(run.r, "stages_in_order", &b.order, "stages that began before the stage "
                 "feeding them ended, or spun less than asked (the GPU's clock)");
    report_tally(run.r, "waited_kernel_logged", &b.waited, "part 2's kernels that did not log "
                 "their run");
    return lab_end(&run);
}
