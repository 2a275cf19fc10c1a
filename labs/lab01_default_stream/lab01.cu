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

enum { WARMUP = 1, RECORDS_PER_RUN = 3, MEASUREMENTS = 6 };

/* ---- the work, and two ways to time it ------------------------------------ */

typedef struct {
    const char *name, *title;
    cudaStream_t first, second; /* the two kernels' streams */
    cudaStream_t between;       /* where the tiny kernel goes */
    int serialises;             /* what the model predicts */
} variant;

typedef struct {
    const variant *v;
    uint64_t first_ns, second_ns, tag_base;
    launch_record *d_log, *h_log; /* RECORDS_PER_RUN records per run, poisoned first */
    double *overlap;              /* per run: ms the two kernels ran at once */
    int runs, capacity;           /* runs issued, runs the log holds */
    tally records;                /* launch records verified, and wrong */
    event_timer legacy_timer;     /* the classic mistake's events */
    int reps;                     /* --reps */
    variant variants[4];          /* (a) to (d) */
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
static void issue_work(bench *b)
{
    if (b->runs >= b->capacity)
        fail_wrong("more runs than the log has room for (%d)", b->capacity);
    launch_record *rec = b->d_log + (size_t)RECORDS_PER_RUN * b->runs;
    uint64_t tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * b->runs;
    launch(b->v->first, b->first_ns, tag, rec);
    launch(b->v->between, 0, tag + 1, rec + 1);
    launch(b->v->second, b->second_ns, tag + 2, rec + 2);
    b->runs++;
}

/* The timer every variant is compared with: the host clock from an idle GPU
 * to cudaDeviceSynchronize, which waits for every stream whatever its flags.
 * An event pair marks one stream's progress, and here the question is
 * precisely whether one stream orders the others: an event in any one stream
 * would read right in some variants and wrong in others (the last section
 * shows it). The host adds tens of microseconds to 20 ms: under 0.5%. */
static double time_on_host(void *ctx)
{
    bench *b = (bench *)ctx;
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    issue_work(b);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* The samples' way: events recorded on stream 0 around work in other
 * streams. Spelled cudaStreamLegacy, which is what 0 means in ./lab01, so
 * that ./lab01_ptds makes the same mistake. */
static double time_with_legacy_events(void *ctx)
{
    bench *b = (bench *)ctx;
    CUDA_CHECK(cudaDeviceSynchronize());
    event_timer_start(&b->legacy_timer, cudaStreamLegacy);
    issue_work(b);
    event_timer_stop(&b->legacy_timer, cudaStreamLegacy);
    double ms = event_timer_ms(&b->legacy_timer);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the kernels may still be running */
    return ms;
}

/* Copies back the records of runs first..runs-1 and checks each: its own tag
 * (it ran, once, into its own slot) and at least the time asked. Returns the
 * median time, by the GPU's own clock, that the two kernels ran at once in
 * the last `timed` runs. */
static double check_runs(bench *b, int first, int timed)
{
    int n = b->runs - first;
    uint64_t asked_ns[RECORDS_PER_RUN] = {b->first_ns, 0, b->second_ns};
    CUDA_CHECK(cudaDeviceSynchronize()); /* a copy need not wait for non-blocking streams */
    CUDA_CHECK(cudaMemcpy(b->h_log, b->d_log + (size_t)RECORDS_PER_RUN * first,
                          (size_t)RECORDS_PER_RUN * n * sizeof *b->h_log, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        const launch_record *k1 = &b->h_log[RECORDS_PER_RUN * i], *k2 = k1 + 2;
        uint64_t tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * (first + i);
        for (int j = 0; j < RECORDS_PER_RUN; j++)
            tally_add(&b->records, 1, k1[j].tag != tag + j ||
                      k1[j].end_ns - k1[j].start_ns < asked_ns[j], RECORDS_PER_RUN * i + j);
        unsigned long long from = k1->start_ns > k2->start_ns ? k1->start_ns : k2->start_ns;
        unsigned long long to = k1->end_ns < k2->end_ns ? k1->end_ns : k2->end_ns;
        b->overlap[i] = to > from ? (to - from) * 1e-6 : 0;
    }
    return stats_of(b->overlap + n - timed, timed).median;
}

/* Runs variant v --reps times after a warm-up, timed by `timer`, and reports
 * the time beside the model's prediction, and the overlap the GPU logged. */
static stats run_variant(report *r, bench *b, const variant *v, const char *name,
                         timed_fn timer)
{
    int first = b->runs;
    b->v = v;
    b->records.where = name;
    timeline_span_begin(name);
    stats t = measure(timer, b, WARMUP, b->reps);
    timeline_span_end();
    report_compare(r, name, "time", v->serialises ? "the sum of the kernels" : "the longest kernel",
                   v->serialises ? first_ms + second_ms : fmax(first_ms, second_ms), &t, "ms");
    report_value(r, name, "overlap_on_gpu", check_runs(b, first, b->reps), "ms");
    return t;
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

static void run_variants(report *r, bench *b, stats t[4])
{
    for (int i = 0; i < 4; i++) {
        report_section(r, b->variants[i].title);
        t[i] = run_variant(r, b, &b->variants[i], b->variants[i].name, time_on_host);
    }
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
static void judge_ratio(report *r, const verdict *v, const char *here, const char *slow,
                        double slow_ms, const char *fast, double fast_ms)
{
    double serial = (first_ms + second_ms) / fmax(first_ms, second_ms), ratio = slow_ms / fast_ms;
    double way = (ratio - 1) / (serial - 1);
    report_verdict(r, v, way, "%s(%s) %.2f ms / (%s) %.2f ms = %.2f: %.0f%% of the way from 1 "
                   "(overlapped) to %.2f (serialised)", here, slow, slow_ms, fast, fast_ms, ratio,
                   way * 100, serial);
}

static void judge_barrier(report *r, const stats t[4])
{
    report_section(r, "Did the call between the kernels serialise them?");
    judge_ratio(r, &LEGACY_SERIALISES, "", "a", t[0].median, "b", t[1].median);
    judge_ratio(r, &PER_THREAD_OVERLAPS, "", "a", t[0].median, "c", t[2].median);
    if (per_thread_build)
        judge_ratio(r, &STREAM0_FOLLOWS_BUILD, "stream 0 is the per-thread stream here: ", "a",
                    t[0].median, "d", t[3].median);
    else
        judge_ratio(r, &STREAM0_FOLLOWS_BUILD, "stream 0 is the legacy stream here: ", "d",
                    t[3].median, "b", t[1].median);
}

/* Events on the legacy stream read the serialised run right (the barrier
 * makes the stop event wait for kernel 2), and the overlapped one wrong. */
static const verdict EVENTS_RIGHT_UNDER_BARRIER = {
    "legacy_events_right_under_barrier", -0.10, 0.10, "%",
    "the events on the legacy stream did not bracket the serialised run: if (a) did not "
    "serialise either (legacy_call_serialises), nothing made the stop event wait for kernel 2"};
static const verdict EVENTS_MISLEAD = {
    "legacy_events_mislead", -INFINITY, 0.5, "%",
    "the legacy stream's stop event waited for the non-blocking streams' kernels: every stream "
    "shares one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, or MPS), so it queued behind them"};

/* Under (b) nothing in the legacy stream waits for either kernel. */
static void events_on_legacy(report *r, bench *b, const stats t[4])
{
    report_section(r, "The classic mistake: events on the legacy stream around other streams");
    stats ev_a = run_variant(r, b, &b->variants[0], "a events on legacy", time_with_legacy_events);
    stats ev_b = run_variant(r, b, &b->variants[1], "b events on legacy", time_with_legacy_events);
    double a_off = ev_a.median / t[0].median - 1;
    report_verdict(r, &EVENTS_RIGHT_UNDER_BARRIER, a_off, "events read (a) %.2f ms, the host "
                   "clock %.2f ms (%+.1f%%)", ev_a.median, t[0].median, a_off * 100);
    report_verdict(r, &EVENTS_MISLEAD, ev_b.median / t[1].median, "events read (b) %.3f ms, the "
                   "host clock %.2f ms: %.0f%% of it", ev_b.median, t[1].median,
                   ev_b.median / t[1].median * 100);
}

/* ---- setup: the run owns these, lab_end() releases them -------------------- */

/* cudaStreamLegacy and cudaStreamPerThread name one stream in every build;
 * plain 0 names whichever the build chose: only (d) differs between them. */
static bench bench_open(lab_run *run)
{
    bench b = {.first_ns = ns_from_ms(first_ms), .second_ns = ns_from_ms(second_ms),
               .tag_base = fresh_seed() >> 1, /* fresh every run; never the all-ones poison */
               .capacity = MEASUREMENTS * (WARMUP + run->opt.reps), .reps = run->opt.reps};
    size_t log_bytes = (size_t)RECORDS_PER_RUN * b.capacity * sizeof(launch_record);
    b.d_log = (launch_record *)lab_device(run, log_bytes);
    b.h_log = (launch_record *)lab_pageable(run, log_bytes);
    b.overlap = (double *)lab_pageable(run, b.capacity * sizeof(double));
    CUDA_CHECK(cudaMemset(b.d_log, 0xff, log_bytes));
    b.legacy_timer = lab_timer(run);
    cudaStream_t blocking[2] = {lab_stream(run, "blocking 1", cudaStreamDefault, 0),
                                lab_stream(run, "blocking 2", cudaStreamDefault, 0)};
    cudaStream_t non_blocking[2] = {lab_stream(run, "non-blocking 1", cudaStreamNonBlocking, 0),
                                    lab_stream(run, "non-blocking 2", cudaStreamNonBlocking, 0)};
    const variant v[4] = {
        {"a blocking+legacy", "(a) blocking streams, tiny kernel in cudaStreamLegacy",
         blocking[0], blocking[1], cudaStreamLegacy, 1},
        {"b nonblocking+legacy", "(b) non-blocking streams, tiny kernel in cudaStreamLegacy",
         non_blocking[0], non_blocking[1], cudaStreamLegacy, 0},
        {"c blocking+perthread", "(c) blocking streams, tiny kernel in cudaStreamPerThread",
         blocking[0], blocking[1], cudaStreamPerThread, 0},
        {"d blocking+stream0", "(d) blocking streams, tiny kernel in stream 0",
         blocking[0], blocking[1], 0, !per_thread_build},
    };
    memcpy(b.variants, v, sizeof v);
    CUDA_CHECK(cudaDeviceSynchronize());
    return b;
}

int main(int argc, char **argv)
{
    lab_run run;
    stats t[4]; /* (a) to (d), on the host clock */
    lab_begin(&run, argc, argv, &program);
    report_setup(run.r, &run.dev);
    bench b = bench_open(&run);
    run_variants(run.r, &b, t);
    judge_barrier(run.r, t);
    events_on_legacy(run.r, &b, t);
    report_section(run.r, "Checks");
    report_tally(run.r, "every_launch_logged", &b.records, "launch records wrong (each kernel "
                 "ran once, into its own slot, for at least its time)");
    return lab_end(&run);
}
