/* lab03: timing GPU work correctly.
 *
 * The question: a kernel lasts exactly 5 ms. What do you read when you time it
 * with the host clock, with and without waiting for it, and with CUDA events?
 * And why does every streamlab measurement warm up first and report a median?
 *
 * Build and run:   make lab03 && ./lab03        (./lab03 --help for options)
 *
 * What to look for: the very first launch costs more than the later ones
 * (the kernel is loaded then); the host clock around a launch alone reads
 * microseconds, because a launch returns before the kernel runs; the host
 * clock with a wait reads the duration plus a little; events recorded in the
 * kernel's stream read the duration; cudaEventElapsedTime asked too early
 * answers cudaErrorNotReady, a status to handle, not a crash. Last, events
 * made with cudaEventDisableTiming, and what they save.
 */
#include "streamlab.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double kernel_ms = 5; /* the known duration */

static const option lab_options[] = {
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 0.5, 1000, "MS",
     "how long the kernel of known duration spins (--quick: 1 unless given)"},
};
static const program_info lab = {
    "lab03", "timing GPU work correctly: host clocks, events, warm-up and medians",
    lab_options, sizeof lab_options / sizeof lab_options[0], 20,
};

enum { WARMUP = 3, SHOWN = 5 };

/* ---- the kernel of known duration, which leaves a record of each run -------- */

typedef struct {
    unsigned long long tag;        /* a fresh random base plus the launch's number */
    unsigned long long elapsed_ns; /* how long it spun, by the GPU's own clock */
} launch_record;

/* spin_for_ns (kernels/spin.cu) plus one store, so the host can check that
 * every launch ran, once, for at least the time asked. Nothing else in this
 * process launches it, so section 1 times its true first launch. */
__global__ void spin_and_log(uint64_t ns, uint64_t tag, launch_record *out)
{
    uint64_t start = globaltimer_ns(), now;
    do
        now = globaltimer_ns();
    while (now - start < ns);
    out->tag = tag;
    out->elapsed_ns = now - start;
}

typedef struct {
    cudaStream_t stream;
    uint64_t ns;           /* the known duration */
    uint64_t tag_base;
    launch_record *d_log;  /* one record per launch, poisoned before the first */
    int launches, capacity;
    event_timer timer;
} bench;

static void launch_known(bench *b)
{
    if (b->launches >= b->capacity)
        fail_wrong("more launches than the log has room for (%d)", b->capacity);
    spin_and_log<<<1, 1, 0, b->stream>>>(b->ns, b->tag_base + b->launches,
                                         &b->d_log[b->launches]);
    CHECK_LAUNCH();
    b->launches++;
}

/* ---- 1. the first launch --------------------------------------------------- */

/* Sample 0 is the first launch of spin_and_log in this process. */
static void first_launch(report *r, bench *b, int reps)
{
    double *call_us = (double *)xmalloc((size_t)(reps + 1) * sizeof(double));
    double *total_ms = (double *)xmalloc((size_t)(reps + 1) * sizeof(double));
    for (int i = 0; i <= reps; i++) {
        double t0 = host_time_ms();
        launch_known(b);
        double t1 = host_time_ms();
        CUDA_CHECK(cudaStreamSynchronize(b->stream));
        double t2 = host_time_ms();
        call_us[i] = (t1 - t0) * 1e3;
        total_ms[i] = t2 - t0;
    }
    stats call = stats_of(call_us + 1, reps), total = stats_of(total_ms + 1, reps);
    report_value(r, "first launch", "launch_call", call_us[0], "us");
    report_stats(r, "later launches", "launch_call", &call, "us");
    report_value(r, "first launch", "launch_and_wait", total_ms[0], "ms");
    report_stats(r, "later launches", "launch_and_wait", &total, "ms");
    report_value(r, "first launch", "extra", (total_ms[0] - total.median) * 1e3, "us");
    report_value(r, "first launch", "vs_later_median", total_ms[0] / total.median, "x");

    const char *loading = getenv("CUDA_MODULE_LOADING");
    report_text(r, "  The first launch of a kernel in a process loads it onto the GPU, inside the "
                   "launch call\n  (module loading: %s). make builds machine code for the "
                   "GPU it finds, so nothing\n  is compiled here; a build with only PTX for "
                   "this GPU would add a JIT compile as well.\n  A warm-up launch pays all "
                   "this untimed; without one, it lands in the first measurement.\n",
                loading && *loading ? loading : "LAZY, the default");
    free(total_ms);
    free(call_us);
}

/* ---- 2. four ways to time it ------------------------------------------------- */

/* Way 1: the host clock around the launch alone. A launch only queues the
 * kernel and returns: this times the queueing. */
static double host_no_wait(void *ctx)
{
    bench *b = (bench *)ctx;
    double t0 = host_time_ms();
    launch_known(b);
    double t = host_time_ms() - t0;
    CUDA_CHECK(cudaStreamSynchronize(b->stream)); /* untimed: the next sample starts idle */
    return t;
}

/* Way 2: the host clock around launch and wait: right, plus the launch and
 * the time the host takes to notice the kernel finished. */
static double host_and_wait(void *ctx)
{
    bench *b = (bench *)ctx;
    double t0 = host_time_ms();
    launch_known(b);
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    return host_time_ms() - t0;
}

/* Way 3: events recorded in the kernel's own stream: the GPU stamps each as
 * it reaches it, so the difference is what happened between them there. */
static double events_in_stream(void *ctx)
{
    bench *b = (bench *)ctx;
    event_timer_start(&b->timer, b->stream);
    launch_known(b);
    event_timer_stop(&b->timer, b->stream);
    return event_timer_ms(&b->timer); /* waits for the stop event first */
}

/* measure() from timing.h, keeping the samples so section 3 can show them. */
static stats sample(timed_fn fn, bench *b, int reps, double *samples)
{
    for (int i = 0; i < reps; i++)
        samples[i] = fn(b);
    return stats_of(samples, reps);
}

/* Way 4: ask for the elapsed time before the stop event has happened. */
static void elapsed_too_early(report *r, bench *b)
{
    float ms = 0;
    event_timer_start(&b->timer, b->stream);
    launch_known(b);
    event_timer_stop(&b->timer, b->stream);
    /* Not CUDA_CHECK: "not yet" is the answer expected here, not a failure. */
    cudaError_t early = cudaEventElapsedTime(&ms, b->timer.start, b->timer.stop);
    if (early != cudaSuccess && early != cudaErrorNotReady)
        CUDA_CHECK(early);
    /* cudaErrorNotReady is documented as "not actually an error" and is not
     * among cudaGetLastError's return values, so the runtime should not keep
     * it as the last error. Clear it anyway: if it were kept, the next
     * CHECK_LAUNCH would blame an innocent launch. Anything else is real. */
    cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess && last != cudaErrorNotReady)
        CUDA_CHECK(last);
    double after = event_timer_ms(&b->timer);
    report_value(r, "4 elapsed too early", "not_ready", early == cudaErrorNotReady, "bool");
    report_value(r, "4 elapsed too early", "after_waiting", after, "ms");
    if (early == cudaErrorNotReady)
        report_text(r, "  way 4 returned %s at once: the stop event had not happened yet, "
                       "so there is no time to give.\n  Handled, not fatal: wait for the "
                       "stop event (cudaEventSynchronize), then ask again.\n",
                    cudaGetErrorName(early));
    else
        report_text(r, "  way 4 returned %s: the kernel had already finished (this host "
                       "thread was held up for longer than it)\n", cudaGetErrorName(early));
    report_text(r, "  cudaGetLastError() just after it: %s\n", cudaGetErrorName(last));
}

/* Every launch left its record, and no record was written without a launch. */
static void verify_log(report *r, const bench *b, int first, int n, stats *own_clock)
{
    launch_record *log = (launch_record *)xmalloc((size_t)b->capacity * sizeof *log);
    /* The copy runs in the legacy stream, which does not wait for a non-blocking one. */
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    CUDA_CHECK(cudaMemcpy(log, b->d_log, (size_t)b->capacity * sizeof *log,
                          cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < b->capacity; i++) {
        int ran = log[i].tag == b->tag_base + (uint64_t)i && log[i].elapsed_ns >= b->ns;
        int untouched = log[i].tag == ~0ull;
        bad += i < b->launches ? !ran : !untouched;
    }
    report_check(r, "every_launch_logged", bad == 0, "%d launches, each ran once and spun "
                 "at least %.3f ms by the GPU's clock; %d records wrong", b->launches,
                 kernel_ms, bad);
    double *ms = (double *)xmalloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        ms[i] = log[first + i].elapsed_ns * 1e-6;
    *own_clock = stats_of(ms, n);
    free(ms);
    free(log);
}

/* ---- 3. why one sample lies ------------------------------------------------ */

static void show_samples(report *r, const char *label, const double *s, const stats *st,
                         double scale, const char *unit)
{
    char v[32];
    report_text(r, "  %-20s first samples", label);
    for (int i = 0; i < SHOWN && i < st->n; i++)
        report_text(r, " %s", format_value(v, sizeof v, s[i] * scale));
    report_text(r, " %s; median %s", unit, format_value(v, sizeof v, st->median * scale));
    report_text(r, ", slowest x%.2f, fastest x%.2f of it\n", st->max / st->median,
                st->min / st->median);
}

/* Sections 2 and 3: the four ways, checked against the kernel's own log, and
 * what their individual samples say. */
static void four_ways(report *r, bench *b, int reps)
{
    report_section(r, "2. Four ways to time a kernel of known duration");
    report_text(r, "  way 1  t0=clock; launch; t1=clock             (then wait, untimed)\n"
                   "  way 2  t0=clock; launch; wait; t1=clock\n"
                   "  way 3  record start; launch; record stop; wait for stop; elapsed  "
                   "(same stream)\n"
                   "  way 4  record start; launch; record stop; elapsed at once\n");
    timeline_span_begin("four ways");
    for (int i = 0; i < WARMUP; i++) /* section 1 loaded the kernel; warm-up is the habit */
        events_in_stream(b);
    double *naive = (double *)xmalloc((size_t)reps * sizeof(double));
    double *waited = (double *)xmalloc((size_t)reps * sizeof(double));
    double *events = (double *)xmalloc((size_t)reps * sizeof(double));
    stats s_naive = sample(host_no_wait, b, reps, naive);
    stats s_waited = sample(host_and_wait, b, reps, waited);
    int first_event_launch = b->launches;
    stats s_events = sample(events_in_stream, b, reps, events);
    report_compare(r, "1 host, no wait", "duration", kernel_ms, &s_naive, "ms");
    report_compare(r, "2 host + wait", "duration", kernel_ms, &s_waited, "ms");
    report_compare(r, "3 events in stream", "duration", kernel_ms, &s_events, "ms");
    elapsed_too_early(r, b);
    timeline_span_end();

    stats own;
    verify_log(r, b, first_event_launch, reps, &own);
    report_stats(r, "kernel's own clock", "duration", &own, "ms");
    report_value(r, "2 host + wait", "over_known", (s_waited.median - kernel_ms) * 1e3, "us");
    report_value(r, "3 events in stream", "over_known", (s_events.median - kernel_ms) * 1e3,
                 "us");
    report_text(r, "  Events read %+.1f us against the kernel's own clock: the GPU starting "
                   "and ending the kernel\n  between the marks. Host + wait adds the launch "
                   "call and the host noticing the end.\n", (s_events.median - own.median) * 1e3);
    double off = s_events.median / kernel_ms - 1;
    report_verdict(r, "events_match_known", fabs(off) <= 0.02,
                   "events %.4f ms for a %.3f ms kernel: %+.2f%% (limit 2%%)",
                   s_events.median, kernel_ms, off * 100);
    double naive_part = s_naive.median / kernel_ms;
    report_verdict(r, "naive_host_misses", naive_part < 0.10,
                   "host clock without a wait read %.4f ms, %.2f%% of the %.3f ms kernel "
                   "(limit under 10%%): it timed the launch call", s_naive.median,
                   naive_part * 100, kernel_ms);

    report_section(r, "3. Why one sample lies");
    show_samples(r, "1 host, no wait", naive, &s_naive, 1e3, "us");
    show_samples(r, "2 host + wait", waited, &s_waited, 1, "ms");
    show_samples(r, "3 events in stream", events, &s_events, 1, "ms");
    report_text(r, "  One warm sample of a %g ms kernel is close to the median; a short thing "
                   "(the launch call) or a\n  cold one (section 1's first launch) is not. The "
                   "median of many, after a warm-up, is the number\n  to trust; p5-p95 says "
                   "how far a single sample could have strayed.\n", kernel_ms);

    free(events);
    free(waited);
    free(naive);
}

/* ---- 4. events that only synchronise ------------------------------------- */

typedef struct {
    cudaStream_t stream;
    cudaEvent_t event;
    int n, wait_each;
} event_loop;

/* n records of one event into an idle stream, waiting for each (a round trip
 * to the GPU) or only for the last: host microseconds per record. */
static double time_event_loop(void *ctx)
{
    event_loop *e = (event_loop *)ctx;
    double t0 = host_time_ms();
    for (int i = 0; i < e->n; i++) {
        CUDA_CHECK(cudaEventRecord(e->event, e->stream));
        if (e->wait_each)
            CUDA_CHECK(cudaEventSynchronize(e->event));
    }
    CUDA_CHECK(cudaStreamSynchronize(e->stream));
    return (host_time_ms() - t0) * 1e3 / e->n;
}

static void compare_flavours(report *r, const char *metric, int n, int wait_each, int reps,
                             cudaStream_t stream, cudaEvent_t timing, cudaEvent_t sync_only)
{
    event_loop e = {stream, timing, n, wait_each};
    stats t = measure(time_event_loop, &e, 1, reps);
    e.event = sync_only;
    stats s = measure(time_event_loop, &e, 1, reps);
    report_stats(r, "timing event", metric, &t, "us");
    report_stats(r, "sync-only event", metric, &s, "us");
    double saved = t.median - s.median;
    report_value(r, "sync-only saves", metric, saved, "us");
    /* Claimed only when the p5-p95 ranges are apart and it is worth 5%. */
    if ((s.p95 < t.p5 || t.p95 < s.p5) && fabs(saved) >= 0.05 * t.median)
        report_text(r, "  -> sync-only events %s %.2f us (%.0f%%) per event here; the p5-p95 "
                       "ranges do not overlap\n", saved > 0 ? "save" : "cost", fabs(saved),
                    fabs(saved) / t.median * 100);
    else
        report_text(r, "  -> %.2f us apart (%.0f%%): inside the spread or under 5%%, too small "
                       "to claim on this GPU\n", fabs(saved), fabs(saved) / t.median * 100);
}

static void event_flavours(report *r, cudaStream_t stream, const common_options *opt)
{
    cudaEvent_t timing, sync_only;
    CUDA_CHECK(cudaEventCreate(&timing));
    CUDA_CHECK(cudaEventCreateWithFlags(&sync_only, cudaEventDisableTiming));
    report_text(r, "  Per sample: %d records then one wait, or %d record+wait round trips "
                   "(host clock, per event)\n", opt->quick ? 100 : 1000, opt->quick ? 50 : 200);
    compare_flavours(r, "record", opt->quick ? 100 : 1000, 0, opt->reps, stream, timing,
                     sync_only);
    compare_flavours(r, "record_and_wait", opt->quick ? 50 : 200, 1, opt->reps, stream,
                     timing, sync_only);

    /* The price: no timestamp. The documented answer is
     * cudaErrorInvalidResourceHandle; whatever it is, it is shown, not fatal.
     * An error like this one is kept as the last error: clear it. */
    float ms = 0;
    cudaError_t asked = cudaEventElapsedTime(&ms, timing, sync_only);
    cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess && last != asked)
        CUDA_CHECK(last);
    report_text(r, "  and the price: cudaEventElapsedTime with a sync-only event returns %s\n",
                cudaGetErrorName(asked));
    CUDA_CHECK(cudaEventDestroy(sync_only));
    CUDA_CHECK(cudaEventDestroy(timing));
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick) {
        if (!option_given(argc, argv, "--kernel-ms"))
            kernel_ms = 1;
        if (opt.reps > 10)
            opt.reps = 10;
    }
    device_info dev;
    device_select(&opt, &dev);
    report *r = report_begin(&lab, &opt, &dev);
    timeline_start(&opt);
    report_param(r, "kernel_ms", kernel_ms, "ms");

    int reps = opt.reps;
    bench b;
    memset(&b, 0, sizeof b);
    b.ns = ns_from_ms(kernel_ms);
    b.tag_base = fresh_seed() >> 1; /* a fresh tag every run; never the all-ones poison */
    b.capacity = (1 + reps) + WARMUP + 3 * reps + 1;
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    timeline_name_stream(b.stream, "kernel");
    CUDA_CHECK(cudaMalloc((void **)&b.d_log, (size_t)b.capacity * sizeof(launch_record)));
    CUDA_CHECK(cudaMemset(b.d_log, 0xff, (size_t)b.capacity * sizeof(launch_record)));
    CUDA_CHECK(cudaDeviceSynchronize());
    event_timer_create(&b.timer);

    report_section(r, "1. The first launch pays for loading the kernel (host clock)");
    timeline_span_begin("first launch");
    first_launch(r, &b, reps);
    timeline_span_end();

    four_ways(r, &b, reps);

    report_section(r, "4. Events only for synchronising: cudaEventDisableTiming");
    report_text(r, "  A timing event makes the GPU write a timestamp when it is reached; a "
                   "sync-only event does not,\n  and is the lighter one to wait on "
                   "(cudaEventSynchronize, cudaStreamWaitEvent).\n");
    event_flavours(r, b.stream, &opt);

    event_timer_destroy(&b.timer);
    CUDA_CHECK(cudaFree(b.d_log));
    CUDA_CHECK(cudaStreamDestroy(b.stream));
    timeline_finish(r, &opt);

    if (dev.launch_blocking)
        report_hint(r, "CUDA_LAUNCH_BLOCKING=1 makes every launch wait for its kernel, so "
                       "the host clock without a wait reads the whole kernel");
    else
        report_hint(r, "another process may be using this GPU (see nvidia-smi), or this "
                       "host is busy: a launch call that blocks or a descheduled thread "
                       "shows in the host readings");
    return report_finish(r);
}
