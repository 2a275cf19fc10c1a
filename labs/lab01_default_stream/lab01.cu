/* lab01: the legacy default stream is a global barrier.
 *
 * The question: two independent kernels of 20 ms run in two streams, and
 * between their launches one tiny kernel goes to "the default stream". Do the
 * two kernels run at once (20 ms in all) or take turns (40 ms)? It depends on
 * how the streams were created, and on what "the default stream" means in
 * this build.
 *
 * Build and run:   make lab01 && ./lab01        (./lab01 --help for options)
 *                  ./lab01_ptds                 the same source, built by make with
 *                                               nvcc --default-stream per-thread
 *
 * What to look for: (a) blocking streams (cudaStreamCreate) with a call on
 * the legacy stream between the kernels take the SUM of the kernels; (b)
 * non-blocking streams take the LONGEST one, call or no call; (c) a call on
 * the per-thread default stream is no barrier; (d) a call on plain stream 0
 * behaves as (a) in ./lab01 and as (c) in ./lab01_ptds: the compiler flag
 * changes what 0 means. Last, the samples' habit of timing with events on
 * stream 0: right only thanks to the barrier, near zero without it.
 */
#include "streamlab.h"
#include "kernels.h"

#include <string.h>

/* nvcc --default-stream per-thread defines this macro. The Makefile builds
 * this file twice, and each program must know which one it is. */
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define PROGRAM_NAME "lab01_ptds"
static const int per_thread_build = 1;
#else
#define PROGRAM_NAME "lab01"
static const int per_thread_build = 0;
#endif

static double first_ms = 20, second_ms = 20; /* the two kernels' known durations */

static const option lab_options[] = {
    {"first-ms", OPT_DOUBLE, &first_ms, 1, 1000, 5, "MS", "how long the kernel in stream 1 spins"},
    {"second-ms", OPT_DOUBLE, &second_ms, 1, 1000, 5, "MS", "how long the kernel in stream 2 spins"},
    {NULL},
};

static const program_info program = {
    .name = PROGRAM_NAME,
    .title = "the legacy default stream is a global barrier: two streams, one call between",
    .handout = "labs/lab01_default_stream/README.md",
    .options = lab_options, .reps = 5, .quick_reps = 3,
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

enum { WARMUP = 1, RECORDS_PER_RUN = 3, WAYS = 4, VARIANTS = 6 };

/* ---- the work, and two ways to time it ------------------------------------ */

typedef struct {
    const char *name, *title;
    cudaStream_t first, second; /* the two kernels' streams */
    cudaStream_t between;       /* where the tiny kernel goes */
    int serialises;             /* what the model predicts */
    timed_fn time;              /* on the host clock, or by the classic mistake's events */
    struct bench *b;            /* whose log its runs write */
    double *overlap; /* ms the kernels ran at once: a ring that ends with its last --reps runs */
    int runs;
} variant;

typedef struct bench {
    uint64_t first_ns, second_ns, tag_base;
    launch_record *d_log, *h_log; /* the latest run's RECORDS_PER_RUN records, poisoned first */
    uint64_t runs;                /* runs issued: each its own tags */
    double *samples;              /* an attempt's times, WAYS rows of --reps; then the rings */
    tally records;                /* launch records verified, and wrong: every run's */
    event_timer legacy_timer;     /* the classic mistake's events */
    int reps;                     /* --reps */
    variant variants[VARIANTS];   /* (a) to (d); (a) and (b) again, timed by events */
} bench;

/* One spin_and_log, <<<1, 1>>> in stream s. Not written <<<...>>>: that hands
 * the stream to the kernel's stub, compiled in kernels/spin.cu without
 * --default-stream per-thread, where 0 is the legacy stream in both builds.
 * cudaLaunchKernelEx is compiled here, so 0 means what this build says. */
static void launch(cudaStream_t s, uint64_t ns, uint64_t tag, launch_record *rec)
{
    cudaLaunchConfig_t one_thread = {dim3(1), dim3(1), 0, s};
    CUDA_CHECK(cudaLaunchKernelEx(&one_thread, spin_and_log, ns, tag, rec));
}

/* Kernel 1 in the first stream, the tiny kernel in `between`, kernel 2 in the
 * second stream, issued in that order. Nothing the program says orders kernel
 * 2 after kernel 1: only the streams' implicit rules can. */
static void issue_work(const variant *v)
{
    bench *b = v->b;
    uint64_t tag = b->tag_base + RECORDS_PER_RUN * b->runs;
    launch(v->first, b->first_ns, tag, b->d_log);
    launch(v->between, 0, tag + 1, b->d_log + 1);
    launch(v->second, b->second_ns, tag + 2, b->d_log + 2);
}

/* The timer every variant is compared with: the host clock from an idle GPU
 * to cudaDeviceSynchronize, which waits for every stream whatever its flags.
 * An event pair marks one stream's progress, and here the question is
 * precisely whether one stream orders the others: an event in any one stream
 * would read right in some variants and wrong in others (the last section
 * shows it). The host adds tens of microseconds to 20 ms: under 0.5%. */
static double time_on_host(void *ctx)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    issue_work((variant *)ctx);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* The samples' way: events recorded on stream 0 around work in other
 * streams. Spelled cudaStreamLegacy, which is what 0 means in ./lab01, so
 * that ./lab01_ptds makes the same mistake. */
static double time_with_legacy_events(void *ctx)
{
    event_timer *timer = &((variant *)ctx)->b->legacy_timer;
    CUDA_CHECK(cudaDeviceSynchronize());
    event_timer_start(timer, cudaStreamLegacy);
    issue_work((variant *)ctx);
    event_timer_stop(timer, cudaStreamLegacy);
    double ms = event_timer_ms(timer);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the kernels may still be running */
    return ms;
}

/* One run of a variant, timed its way, then its records checked: this run's
 * tag (it ran, once: a record of an earlier run has an older tag) and at least
 * the time asked; and how long, by the GPU's clock, the kernels ran at once.
 * A variant's first run is its span in a trace: the rest interleave. */
static double timed_run(void *ctx)
{
    variant *v = (variant *)ctx;
    bench *b = v->b;
    const launch_record *k1 = b->h_log, *k2 = k1 + 2;
    uint64_t asked_ns[RECORDS_PER_RUN] = {b->first_ns, 0, b->second_ns};
    uint64_t tag = b->tag_base + RECORDS_PER_RUN * b->runs;
    if (!v->runs)
        timeline_span_begin(v->name);
    double ms = v->time(v);
    if (!v->runs)
        timeline_span_end();
    CUDA_CHECK(cudaMemcpy(b->h_log, b->d_log, RECORDS_PER_RUN * sizeof *b->h_log,
                          cudaMemcpyDeviceToHost));
    b->records.where = v->name;
    for (int j = 0; j < RECORDS_PER_RUN; j++)
        tally_add(&b->records, 1, k1[j].tag != tag + j ||
                  k1[j].end_ns - k1[j].start_ns < asked_ns[j], RECORDS_PER_RUN * v->runs + j);
    unsigned long long from = k1->start_ns > k2->start_ns ? k1->start_ns : k2->start_ns;
    unsigned long long to = k1->end_ns < k2->end_ns ? k1->end_ns : k2->end_ns;
    v->overlap[v->runs++ % b->reps] = to > from ? (to - from) * 1e-6 : 0;
    b->runs++;
    return ms;
}

/* One attempt: four ways timed in rounds (the order rotating), each verdict
 * reading the median of its two ways' per-round ratios, so that a burst of
 * other work slows both sides of a round alike, not one variant's runs. */
typedef struct {
    const char *what; /* the comparison, as lab_attempt reports it */
    variant *ways[WAYS];
    const verdict *v[3];                  /* verdict k compares way num[k] with den[k] */
    int num[3], den[3];
    double (*reads)(int k, double ratio); /* what verdict k reads, from the median ratio */
    stats time[WAYS], ratio[3];           /* ratio[k]: num[k] / den[k], round by round */
} rounds_demo;

static int attempt_rounds(void *ctx, double *spread)
{
    rounds_demo *d = (rounds_demo *)ctx;
    const timed_fn fn[WAYS] = {timed_run, timed_run, timed_run, timed_run};
    void *ways[WAYS] = {d->ways[0], d->ways[1], d->ways[2], d->ways[3]};
    double *t = d->ways[0]->b->samples;
    int n = d->ways[0]->b->reps, holds = 1;
    measure_rounds(fn, ways, WAYS, WARMUP, n, t); /* every way afresh */
    for (int i = 0; i < WAYS; i++)
        d->time[i] = stats_of(t + i * n, n);
    *spread = 0;
    for (int k = 0; k < 3 && d->v[k]; k++) {
        d->ratio[k] = stats_of_ratios(t + d->num[k] * n, t + d->den[k] * n, n);
        *spread = fmax(*spread, stats_spread(&d->ratio[k]));
        holds &= verdict_holds(d->v[k], d->reads(k, d->ratio[k].median));
    }
    return holds;
}

/* A way's time beside the model's prediction, and the overlap the GPU logged. */
static void report_way(report *r, const rounds_demo *d, int i)
{
    const variant *v = d->ways[i];
    report_compare(r, v->name, "time", v->serialises ? "the sum of the kernels"
                   : "the longest kernel", v->serialises ? first_ms + second_ms
                   : fmax(first_ms, second_ms), &d->time[i], "ms");
    report_value(r, v->name, "overlap_on_gpu", stats_of(v->overlap, v->b->reps).median, "ms");
}

/* ---- the lesson ----------------------------------------------------------- */

static void report_setup(report *r, const device_info *d)
{
    report_section(r, "The setup");
    report_fact(r, "concurrent_kernels", d->concurrent_kernels, "bool",
                "kernels of different streams can run at once");
    report_fact(r, "max_connections", d->max_connections, "", "hardware queues: 1 would "
                "queue every stream behind every other");
    report_fact(r, "per_thread_build", per_thread_build, "bool", "%s", per_thread_build
                ? "built with --default-stream per-thread: stream 0 is this thread's own stream"
                : "built without --default-stream: stream 0 is the legacy default stream");
}

/* How far the ratio of a slow variant's time to a fast one's went from 1
 * (overlapped) towards sum/longest (serialised): 80% of the way counts as
 * serialised, a ratio of 1.8 for two equal kernels. */
static const verdict LEGACY_SERIALISES = {
    "legacy_call_serialises", 0.8, INFINITY, "%",
    "(a) took about as long as (b): if (b) took the sum too, every stream shares one hardware "
    "queue (CUDA_DEVICE_MAX_CONNECTIONS=1, or MPS); if (a) took the longest kernel, the "
    "legacy-stream call did not order the streams"};
static const verdict PER_THREAD_OVERLAPS = {
    "per_thread_call_overlaps", 0.8, INFINITY, "%",
    "(c) took about as long as (a): the per-thread stream's call ordered the blocking streams, "
    "or every stream shares one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, or MPS)"};
static const verdict STREAM0_FOLLOWS_BUILD = {
    "stream0_follows_build", 0.8, INFINITY, "%",
    "(d) did not act as this build's stream 0 (./lab01: the legacy stream, as (a); "
    "./lab01_ptds: the per-thread stream, as (c)): see the verdicts on (a), (b) and (c)"};

/* The ratio slow / fast as a fraction of the way from 1 to sum/longest. */
static double serialised(void) { return (first_ms + second_ms) / fmax(first_ms, second_ms); }
static double way_to_serial(int k, double ratio)
{
    (void)k; /* the same for every verdict that reads it */
    return (ratio - 1) / (serialised() - 1);
}

/* (a) / (b), (a) / (c), and (d) beside this build's stream 0: (d) / (b) or (a) / (d). */
static void barrier(lab_run *run, bench *b)
{
    variant *v = b->variants;
    rounds_demo d = {"variants a to d", {&v[0], &v[1], &v[2], &v[3]},
                     {&LEGACY_SERIALISES, &PER_THREAD_OVERLAPS, &STREAM0_FOLLOWS_BUILD},
                     {0, 0, per_thread_build ? 0 : 3}, {1, 2, per_thread_build ? 3 : 1},
                     way_to_serial};
    lab_attempt(run, d.what, attempt_rounds, &d);
    for (int i = 0; i < WAYS; i++) {
        report_section(run->r, v[i].title);
        report_way(run->r, &d, i);
    }
    report_section(run->r, "Did the call between the kernels serialise them?");
    for (int k = 0; k < 3; k++) {
        const stats *q = &d.ratio[k];
        report_verdict(run->r, d.v[k], way_to_serial(k, q->median), "%s(%c) / (%c) round by "
                       "round: median %.2f (p5 %.2f, p95 %.2f): %.0f%% of the way from 1 "
                       "(overlapped) to %.2f (serialised)", k < 2 ? "" : per_thread_build ?
                       "stream 0 is the per-thread stream here: " : "stream 0 is the legacy "
                       "stream here: ", 'a' + d.num[k], 'a' + d.den[k], q->median, q->p5, q->p95,
                       way_to_serial(k, q->median) * 100, serialised());
    }
}

/* Events on the legacy stream read the serialised run right (the barrier
 * makes the stop event wait for kernel 2), and the overlapped one wrong: each
 * read against the host clock around the same variant in the same round. */
static const verdict EVENTS_RIGHT_UNDER_BARRIER = {
    "legacy_events_right_under_barrier", -0.10, 0.10, "%",
    "the events on the legacy stream did not bracket the serialised run: if (a) did not "
    "serialise either (legacy_call_serialises), nothing made the stop event wait for kernel 2"};
static const verdict EVENTS_MISLEAD = {
    "legacy_events_mislead", -INFINITY, 0.5, "%",
    "the legacy stream's stop event waited for the non-blocking streams' kernels: every stream "
    "shares one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, or MPS), so it queued behind them"};

/* Events over the host clock: (a) off by this much, (b) this share of it. */
static double events_read(int k, double ratio) { return k == 0 ? ratio - 1 : ratio; }

/* Under (b) nothing in the legacy stream waits for either kernel. */
static void events_on_legacy(lab_run *run, bench *b)
{
    variant *v = b->variants; /* (a) on the host clock and by events, then (b) */
    rounds_demo d = {"events on legacy", {&v[0], &v[4], &v[1], &v[5]},
                     {&EVENTS_RIGHT_UNDER_BARRIER, &EVENTS_MISLEAD}, {1, 3}, {0, 2}, events_read};
    report_section(run->r, "The classic mistake: events on the legacy stream around other streams");
    lab_attempt(run, d.what, attempt_rounds, &d);
    report_way(run->r, &d, 1);
    report_way(run->r, &d, 3);
    report_verdict(run->r, &EVENTS_RIGHT_UNDER_BARRIER, d.ratio[0].median - 1, "events read (a) "
                   "%.2f ms, the host clock %.2f ms: round by round %+.1f%% (median)",
                   d.time[1].median, d.time[0].median, (d.ratio[0].median - 1) * 100);
    report_verdict(run->r, &EVENTS_MISLEAD, d.ratio[1].median, "events read (b) %.3f ms, the host "
                   "clock %.2f ms: round by round %.0f%% of it (median)", d.time[3].median,
                   d.time[2].median, d.ratio[1].median * 100);
}

/* ---- setup: the run owns these, lab_end() releases them -------------------- */

/* cudaStreamLegacy and cudaStreamPerThread name one stream in every build;
 * plain 0 names whichever the build chose: only (d) differs between them. */
static void bench_open(lab_run *run, bench *b)
{
    bench init = {.first_ns = ns_from_ms(first_ms), .second_ns = ns_from_ms(second_ms),
                  .tag_base = fresh_seed() >> 1, /* fresh every run; never the all-ones poison */
                  .reps = run->opt.reps};
    size_t log_bytes = RECORDS_PER_RUN * sizeof(launch_record);
    *b = init;
    b->d_log = (launch_record *)lab_device(run, log_bytes);
    b->h_log = (launch_record *)lab_pageable(run, log_bytes);
    b->samples = (double *)lab_pageable(run, (WAYS + VARIANTS) * b->reps * sizeof(double));
    CUDA_CHECK(cudaMemset(b->d_log, 0xff, log_bytes));
    b->legacy_timer = lab_timer(run);
    cudaStream_t blocking[2] = {lab_stream(run, "blocking 1", cudaStreamDefault, 0),
                                lab_stream(run, "blocking 2", cudaStreamDefault, 0)};
    cudaStream_t non_blocking[2] = {lab_stream(run, "non-blocking 1", cudaStreamNonBlocking, 0),
                                    lab_stream(run, "non-blocking 2", cudaStreamNonBlocking, 0)};
    const timed_fn host = time_on_host, events = time_with_legacy_events;
    const variant v[VARIANTS] = {
        {"a blocking+legacy", "(a) blocking streams, tiny kernel in cudaStreamLegacy",
         blocking[0], blocking[1], cudaStreamLegacy, 1, host},
        {"b nonblocking+legacy", "(b) non-blocking streams, tiny kernel in cudaStreamLegacy",
         non_blocking[0], non_blocking[1], cudaStreamLegacy, 0, host},
        {"c blocking+perthread", "(c) blocking streams, tiny kernel in cudaStreamPerThread",
         blocking[0], blocking[1], cudaStreamPerThread, 0, host},
        {"d blocking+stream0", "(d) blocking streams, tiny kernel in stream 0",
         blocking[0], blocking[1], 0, !per_thread_build, host},
        {"a events on legacy", NULL, blocking[0], blocking[1], cudaStreamLegacy, 1, events},
        {"b events on legacy", NULL, non_blocking[0], non_blocking[1], cudaStreamLegacy, 0, events},
    };
    memcpy(b->variants, v, sizeof v);
    for (int i = 0; i < VARIANTS; i++) {
        b->variants[i].b = b;
        b->variants[i].overlap = b->samples + (WAYS + i) * b->reps;
    }
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    report_setup(run.r, &run.dev);
    bench b;
    bench_open(&run, &b);
    barrier(&run, &b);
    events_on_legacy(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "every_launch_logged", &b.records, "launch records wrong (each kernel "
                 "ran once, into its own slot, for at least its time)");
    return lab_end(&run);
}
