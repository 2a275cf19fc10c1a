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

#include <stdlib.h>
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
    {"first-ms", OPT_DOUBLE, &first_ms, 1, 1000, "MS",
     "how long the kernel in the first stream spins (--quick: 5 unless given)"},
    {"second-ms", OPT_DOUBLE, &second_ms, 1, 1000, "MS",
     "how long the kernel in the second stream spins (--quick: 5 unless given)"},
};
static const program_info lab = {
    PROGRAM_NAME, "the legacy default stream is a global barrier: two streams, one call between",
    lab_options, sizeof lab_options / sizeof lab_options[0], 5,
};

enum { WARMUP = 1, RECORDS_PER_RUN = 3, MEASUREMENTS = 6 };

/* ---- the kernel: spin_for_ns that leaves a record ------------------------- */

typedef struct {
    unsigned long long tag;              /* a fresh random base plus the launch's number */
    unsigned long long start_ns, end_ns; /* %globaltimer when it began and ended */
} launch_record;

/* Spins `ns` nanoseconds of the GPU's clock, then records itself, so the host
 * can check that every launch ran once for its time and see when it ran. With
 * ns = 0 it is the tiny operation: one thread, one store. Defined here, not
 * taken from kernels/: the launch call that reads "stream 0" is then compiled
 * in this file, which is the one built with --default-stream per-thread. */
__global__ void spin_and_log(uint64_t ns, uint64_t tag, launch_record *out)
{
    uint64_t start = globaltimer_ns(), now;
    do
        now = globaltimer_ns();
    while (now - start < ns);
    out->tag = tag;
    out->start_ns = start;
    out->end_ns = now;
}

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
    launch_record *d_log;       /* RECORDS_PER_RUN records per run, poisoned first */
    int runs, capacity;         /* runs issued, runs the log holds */
    size_t checked, bad;        /* records verified, and wrong */
    event_timer legacy_timer;   /* the classic mistake's events */
} bench;

/* Kernel 1 in the first stream, the tiny kernel in `between`, kernel 2 in the
 * second stream, issued in that order. Nothing the program says orders kernel
 * 2 after kernel 1: only the streams' implicit rules can. */
static void issue_work(bench *b)
{
    if (b->runs >= b->capacity)
        fail_wrong("more runs than the log has room for (%d)", b->capacity);
    launch_record *rec = b->d_log + (size_t)RECORDS_PER_RUN * b->runs;
    uint64_t tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * b->runs;
    spin_and_log<<<1, 1, 0, b->v->first>>>(b->first_ns, tag, rec);
    CHECK_LAUNCH();
    spin_and_log<<<1, 1, 0, b->v->between>>>(0, tag + 1, rec + 1);
    CHECK_LAUNCH();
    spin_and_log<<<1, 1, 0, b->v->second>>>(b->second_ns, tag + 2, rec + 2);
    CHECK_LAUNCH();
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
 * (it ran, once, into its own slot) and, for the kernels, at least the time
 * asked. Returns the median time, by the GPU's own clock, that the two
 * kernels ran at once in the last `timed` runs. */
static double check_runs(bench *b, int first, int timed)
{
    int n = b->runs - first;
    size_t count = (size_t)RECORDS_PER_RUN * n;
    launch_record *log = (launch_record *)xmalloc(count * sizeof *log);
    double *overlap = (double *)xmalloc((size_t)n * sizeof(double));
    CUDA_CHECK(cudaDeviceSynchronize()); /* a copy need not wait for non-blocking streams */
    CUDA_CHECK(cudaMemcpy(log, b->d_log + (size_t)RECORDS_PER_RUN * first,
                          count * sizeof *log, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        const launch_record *k1 = &log[RECORDS_PER_RUN * i], *tiny = k1 + 1, *k2 = k1 + 2;
        uint64_t tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * (first + i);
        b->bad += k1->tag != tag || k1->end_ns - k1->start_ns < b->first_ns;
        b->bad += tiny->tag != tag + 1;
        b->bad += k2->tag != tag + 2 || k2->end_ns - k2->start_ns < b->second_ns;
        b->checked += RECORDS_PER_RUN;
        unsigned long long from = k1->start_ns > k2->start_ns ? k1->start_ns : k2->start_ns;
        unsigned long long to = k1->end_ns < k2->end_ns ? k1->end_ns : k2->end_ns;
        overlap[i] = to > from ? (to - from) * 1e-6 : 0;
    }
    stats s = stats_of(overlap + n - timed, timed);
    free(overlap);
    free(log);
    return s.median;
}

/* Runs variant v `reps` times after a warm-up, timed by `timer`, and reports
 * the time beside the model's prediction, and the overlap the GPU logged. */
static stats run_variant(report *r, bench *b, const variant *v, const char *name,
                         timed_fn timer, int reps, double predicted)
{
    b->v = v;
    int first = b->runs;
    timeline_span_begin(name);
    stats t = measure(timer, b, WARMUP, reps);
    timeline_span_end();
    report_compare(r, name, "time", predicted, &t, "ms");
    report_value(r, name, "overlap_on_gpu", check_runs(b, first, reps), "ms");
    return t;
}

/* A ratio that counts as "serialised": 80% of the way from 1 (overlapped) to
 * sum/longest (serialised): 1.8 for two equal kernels. */
static double serial_limit(double sum, double longest) { return 1 + 0.8 * (sum / longest - 1); }

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick) { /* --quick changes defaults, never a value the user chose */
        if (!option_given(argc, argv, "--first-ms"))
            first_ms = 5;
        if (!option_given(argc, argv, "--second-ms"))
            second_ms = 5;
        if (!option_given(argc, argv, "--reps"))
            opt.reps = 3;
    }
    device_info dev;
    device_select(&opt, &dev);
    device_require(dev.concurrent_kernels, "this GPU runs one kernel at a time "
                   "(concurrentKernels = 0): no streams can overlap, so no barrier shows");
    device_require(!dev.launch_blocking, "CUDA_LAUNCH_BLOCKING=1 makes every launch wait "
                   "for the last: nothing overlaps; unset it to run this lab");
    report *r = report_begin(&lab, &opt, &dev);
    timeline_start(&opt);

    double sum = first_ms + second_ms, longest = first_ms > second_ms ? first_ms : second_ms;
    report_section(r, "The setup");
    report_param(r, "first_ms", first_ms, "ms");
    report_param(r, "second_ms", second_ms, "ms");
    report_fact(r, "concurrent_kernels", dev.concurrent_kernels, "bool",
                "kernels of different streams can run at once");
    report_fact(r, "max_connections", dev.max_connections, "", "hardware queues: 1 would "
                "queue every stream behind every other");
    report_fact(r, "per_thread_build", per_thread_build, "bool", "%s", per_thread_build
                ? "built with --default-stream per-thread: stream 0 is this thread's own stream"
                : "built without --default-stream: stream 0 is the legacy default stream");
    report_text(r, "  Each run: kernel 1 (%g ms) in stream 1, a tiny kernel in another stream, "
                "kernel 2 (%g ms) in\n  stream 2. Serialised they take the sum, %g ms; "
                "overlapped, the longer one, %g ms.\n", first_ms, second_ms, sum, longest);

    bench b;
    memset(&b, 0, sizeof b);
    b.first_ns = ns_from_ms(first_ms);
    b.second_ns = ns_from_ms(second_ms);
    b.tag_base = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    b.capacity = MEASUREMENTS * (WARMUP + opt.reps);
    size_t log_bytes = (size_t)RECORDS_PER_RUN * b.capacity * sizeof(launch_record);
    CUDA_CHECK(cudaMalloc((void **)&b.d_log, log_bytes));
    CUDA_CHECK(cudaMemset(b.d_log, 0xff, log_bytes));
    event_timer_create(&b.legacy_timer);
    cudaStream_t blocking[2], non_blocking[2];
    for (int i = 0; i < 2; i++) {
        CUDA_CHECK(cudaStreamCreate(&blocking[i]));
        CUDA_CHECK(cudaStreamCreateWithFlags(&non_blocking[i], cudaStreamNonBlocking));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    timeline_name_stream(blocking[0], "blocking 1");
    timeline_name_stream(blocking[1], "blocking 2");
    timeline_name_stream(non_blocking[0], "non-blocking 1");
    timeline_name_stream(non_blocking[1], "non-blocking 2");

    /* cudaStreamLegacy and cudaStreamPerThread name one stream in every build;
     * plain 0 names whichever the build chose: only (d) differs between them. */
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
    const char *why[4] = {
        "  The legacy stream waits for all earlier work in blocking streams (kernel 1), and "
        "later work in\n  blocking streams (kernel 2) waits for it: one tiny call, and the "
        "kernels take turns.\n",
        "  Non-blocking streams opt out of that implicit synchronisation: kernel 2 starts "
        "at once.\n",
        "  The per-thread default stream synchronises with the legacy stream only, not with "
        "other streams.\n",
        per_thread_build
            ? "  Built with --default-stream per-thread, stream 0 is the per-thread stream: "
              "this is (c).\n"
            : "  Built without --default-stream, stream 0 is the legacy stream: this is (a). "
              "Now run ./lab01_ptds.\n",
    };
    stats t[4];
    for (int i = 0; i < 4; i++) {
        report_section(r, v[i].title);
        t[i] = run_variant(r, &b, &v[i], v[i].name, time_on_host, opt.reps,
                           v[i].serialises ? sum : longest);
        report_text(r, "%s", why[i]);
    }

    double limit = serial_limit(sum, longest);
    report_section(r, "Did the call between the kernels serialise them?");
    report_verdict(r, "legacy_call_serialises", t[0].median / t[1].median >= limit,
                   "(a) %.2f ms / (b) %.2f ms = %.2f (limit %.2f)", t[0].median, t[1].median,
                   t[0].median / t[1].median, limit);
    report_verdict(r, "per_thread_call_overlaps", t[0].median / t[2].median >= limit,
                   "(a) %.2f ms / (c) %.2f ms = %.2f (limit %.2f)", t[0].median, t[2].median,
                   t[0].median / t[2].median, limit);
    if (per_thread_build)
        report_verdict(r, "stream0_follows_build", t[0].median / t[3].median >= limit,
                       "stream 0 is the per-thread stream here: (a) %.2f ms / (d) %.2f ms = "
                       "%.2f (limit %.2f)", t[0].median, t[3].median,
                       t[0].median / t[3].median, limit);
    else
        report_verdict(r, "stream0_follows_build", t[3].median / t[1].median >= limit,
                       "stream 0 is the legacy stream here: (d) %.2f ms / (b) %.2f ms = "
                       "%.2f (limit %.2f)", t[3].median, t[1].median,
                       t[3].median / t[1].median, limit);

    report_section(r, "The classic mistake: events on the legacy stream around other streams");
    stats ev_a = run_variant(r, &b, &v[0], "a events on legacy", time_with_legacy_events,
                             opt.reps, sum);
    stats ev_b = run_variant(r, &b, &v[1], "b events on legacy", time_with_legacy_events,
                             opt.reps, longest);
    report_text(r, "  Under (a) the stop event waits for kernel 2 because of the barrier; "
                "under (b) nothing in the\n  legacy stream waits for either kernel, so the "
                "events bracket only the tiny kernel.\n");
    double a_off = ev_a.median / t[0].median - 1;
    report_verdict(r, "legacy_events_mislead",
                   a_off >= -0.10 && a_off <= 0.10 && ev_b.median < 0.5 * t[1].median,
                   "events read (a) %.2f ms, host clock %.2f (%+.1f%%, limit 10%%); events read "
                   "(b) %.3f ms, host clock %.2f (limit under half)", ev_a.median, t[0].median,
                   a_off * 100, ev_b.median, t[1].median);

    report_section(r, "Checks");
    report_check(r, "every_launch_logged", b.bad == 0, "%zu of %zu launch records wrong (each "
                 "kernel ran once, into its own slot, for at least its time)", b.bad, b.checked);

    for (int i = 0; i < 2; i++) {
        CUDA_CHECK(cudaStreamDestroy(non_blocking[i]));
        CUDA_CHECK(cudaStreamDestroy(blocking[i]));
    }
    event_timer_destroy(&b.legacy_timer);
    CUDA_CHECK(cudaFree(b.d_log));
    timeline_finish(r, &opt);
    report_hint(r, "if (b) took the sum too, every stream shares one hardware queue "
                   "(CUDA_DEVICE_MAX_CONNECTIONS=1, or MPS); otherwise another process may be "
                   "using this GPU (see nvidia-smi)");
    return report_finish(r);
}
