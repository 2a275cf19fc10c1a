/* lab03: timing GPU work correctly.
 *
 * The question: a kernel lasts exactly 5 ms. What do you read when you time it
 * with the host clock, with and without waiting for it, and with CUDA events?
 * And why does every streamlab measurement warm up first and report a median?
 *
 * Build and run:   make lab03 && ./lab03        (./lab03 --help for options)
 *
 * What to look for: the very first launch costs more than the later ones (it
 * loads the kernel); the host clock around a launch alone reads microseconds
 * (a launch returns before the kernel runs), with a wait the duration plus a
 * little; events in the kernel's stream read the duration; asked too early,
 * cudaEventElapsedTime answers cudaErrorNotReady, a status to handle, not a
 * crash. Last, events made with cudaEventDisableTiming, and what they save.
 */
#include "streamlab.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>

static double kernel_ms = 5; /* the known duration */

static const option lab_options[] = {
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 0.5, 1000, 2.5, "MS", "how long the known kernel spins"},
    {NULL},
};

static const program_info program = {
    .name = "lab03", .title = "timing GPU work correctly: host clocks, events, warm-up and medians",
    .handout = "labs/lab03_event_timing/README.md",
    .options = lab_options, .reps = 20, .quick_reps = 10,
};

static const char BUSY[] =
    "another process may be using this GPU (see nvidia-smi), or this host is busy: a launch "
    "call that blocks or a descheduled thread shows in the host readings";

enum { WARMUP = 1, SHOWN = 5 }; /* warm-up rounds of section 2; samples section 3 shows */

/* The kernel of known duration, spin_and_log (kernels/), logs each run: every
 * launch is checked to have run once, for at least the time asked. Nothing
 * launches it before section 1, which times its first launch in this process. */
typedef struct {
    cudaStream_t stream;
    uint64_t ns, tag_base; /* the known duration; the first launch's tag */
    launch_record *d_log;  /* one record per launch, poisoned before the first */
    int launches, capacity;
    event_timer timer;
} bench;

static void launch_known(bench *b)
{
    if (b->launches >= b->capacity)
        fail_wrong("more launches than the log has room for (%d)", b->capacity);
    spin_and_log<<<1, 1, 0, b->stream>>>(b->ns, b->tag_base + b->launches, &b->d_log[b->launches]);
    CHECK_LAUNCH();
    b->launches++;
}

/* ---- 1. the first launch --------------------------------------------------- */

/* The same launch and wait reps + 1 times; sample 0 is the first launch of
 * spin_and_log in this process. */
static void first_launch(report *r, bench *b, int reps)
{
    double *call_us = (double *)xmalloc(2 * (size_t)(reps + 1) * sizeof(double));
    double *total_ms = call_us + reps + 1;
    report_section(r, "1. The first launch pays for loading the kernel (host clock)");
    timeline_span_begin("first launch");
    for (int i = 0; i <= reps; i++) {
        double t0 = host_time_ms();
        launch_known(b);
        call_us[i] = (host_time_ms() - t0) * 1e3;
        CUDA_CHECK(cudaStreamSynchronize(b->stream));
        total_ms[i] = host_time_ms() - t0;
    }
    timeline_span_end();
    stats call = stats_of(call_us + 1, reps), total = stats_of(total_ms + 1, reps);
    report_value(r, "first launch", "launch_call", call_us[0], "us");
    report_stats(r, "later launches", "launch_call", &call, "us");
    report_value(r, "first launch", "launch_and_wait", total_ms[0], "ms");
    report_stats(r, "later launches", "launch_and_wait", &total, "ms");
    report_value(r, "first launch", "extra", (total_ms[0] - total.median) * 1e3, "us");
    report_value(r, "first launch", "vs_later_median", total_ms[0] / total.median, "x");
    const char *loading = getenv("CUDA_MODULE_LOADING");
    report_text(r, "  module loading: %s\n", loading && *loading ? loading : "LAZY, the default");
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

/* The three ways timed in rounds (1 2 3, 2 3 1, ...): a burst of other work hits all alike. */
typedef struct {
    bench *b;
    int reps, first; /* first: the log's record of the first timed round's first launch */
    double *t;       /* way i's sample in round j at t[i * reps + j] */
    stats s[3];
} three_ways;

static const char *const WAY[3] = {"1 host, no wait", "2 host + wait", "3 events in stream"};

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
    /* cudaErrorNotReady is documented as "not actually an error": the runtime
     * should not keep it as the last error. Clear it anyway, lest the next
     * CHECK_LAUNCH blame an innocent launch; anything else is real. */
    cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess && last != cudaErrorNotReady)
        CUDA_CHECK(last);
    double after = event_timer_ms(&b->timer);
    report_value(r, "4 elapsed too early", "not_ready", early == cudaErrorNotReady, "bool");
    report_value(r, "4 elapsed too early", "after_waiting", after, "ms");
    report_text(r, "  way 4 returned %s%s; cudaGetLastError() just after it: %s\n",
                cudaGetErrorName(early), early == cudaErrorNotReady
                    ? " at once: no time yet; handled: waited for the stop event, asked again"
                    : ": the kernel had already finished (this thread was held up for longer)",
                cudaGetErrorName(last));
}

/* Every launch left its record, and no record was written without a launch.
 * Returns how long launches first..first+n-1 spun by the GPU's own clock. */
static stats verify_log(report *r, const bench *b, int first, int n)
{
    launch_record *log = (launch_record *)xmalloc((size_t)b->capacity * sizeof *log);
    /* The copy runs in the legacy stream, which does not wait for a non-blocking one. */
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    CUDA_CHECK(cudaMemcpy(log, b->d_log, (size_t)b->capacity * sizeof *log,
                          cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < b->capacity; i++) {
        int ran = log[i].tag == b->tag_base + (uint64_t)i &&
                  log[i].end_ns - log[i].start_ns >= b->ns;
        bad += i < b->launches ? !ran : log[i].tag != ~0ull; /* unlaunched: poison */
    }
    report_check(r, "every_launch_logged", bad == 0, "%d launches, each ran once and spun "
                 "at least %.3f ms by the GPU's clock; %d records wrong", b->launches,
                 kernel_ms, bad);
    double *ms = (double *)xmalloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        ms[i] = (log[first + i].end_ns - log[first + i].start_ns) * 1e-6;
    stats own = stats_of(ms, n);
    free(ms), free(log);
    return own;
}

/* ---- 3. why one sample lies ------------------------------------------------ */

static void show_samples(report *r, const char *way, const double *t, const stats *s,
                         double scale, const char *unit)
{
    char v[32];
    report_text(r, "  %-20s first samples", way);
    for (int i = 0; i < SHOWN && i < s->n; i++)
        report_text(r, " %s", format_value(v, sizeof v, t[i] * scale));
    report_text(r, " %s; median %s, slowest x%.2f, fastest x%.2f of it\n", unit,
                format_value(v, sizeof v, s->median * scale), s->max / s->median,
                s->min / s->median);
}

/* Model: events read T, plus microseconds for the GPU to start and end the
 * kernel: 1-16 us on H100s, up to 0.6% of --quick's 2.5 ms (at 1 ms, 1.6%
 * came too near the limit) and 0.3% of the default 5 ms. */
static const verdict EVENTS_MATCH = {"events_match_known", -0.02, 0.02, "%", BUSY};
/* Model: a launch call queues the kernel in microseconds, a small part of T. */
static const verdict NAIVE_MISSES = {"naive_host_misses", -INFINITY, 0.10, "%", BUSY};
/* One attempt at sections 2 and 3. Its spread: each way's as its verdict reads
 * it, the launch call's as a share of T. */
static int attempt_ways(void *ctx, double *spread)
{
    three_ways *w = (three_ways *)ctx;
    const timed_fn fn[3] = {host_no_wait, host_and_wait, events_in_stream};
    void *const arg[3] = {w->b, w->b, w->b};
    w->first = w->b->launches + 3 * WARMUP; /* each way launches once a round */
    measure_rounds(fn, arg, 3, WARMUP, w->reps, w->t); /* section 1 loaded it; warm up anyway */
    stats_of_rows(w->t, 3, w->reps, w->s);
    *spread = fmax(stats_spread(&w->s[2]), (w->s[0].p95 - w->s[0].p5) / kernel_ms);
    return verdict_holds(&EVENTS_MATCH, w->s[2].median / kernel_ms - 1) &&
           verdict_holds(&NAIVE_MISSES, w->s[0].median / kernel_ms);
}

/* Sections 2 and 3: the four ways, checked against the kernel's own log, and
 * what their individual samples say. */
static void four_ways(lab_run *run, bench *b, int reps)
{
    report *r = run->r;
    three_ways w = {b, reps, 0, (double *)lab_pageable(run, 3 * (size_t)reps * sizeof(double))};
    const stats *naive = &w.s[0], *waited = &w.s[1], *events = &w.s[2];
    report_section(r, "2. Four ways to time a kernel of known duration");
    timeline_span_begin("four ways");
    lab_attempt(run, "three ways", attempt_ways, &w);
    for (int i = 0; i < 3; i++)
        report_compare(r, WAY[i], "duration", "the known duration", kernel_ms, &w.s[i], "ms");
    elapsed_too_early(r, b);
    timeline_span_end();

    stats own = verify_log(r, b, w.first, 3 * reps); /* the kernel of all three ways */
    report_stats(r, "kernel's own clock", "duration", &own, "ms");
    report_value(r, WAY[1], "over_known", (waited->median - kernel_ms) * 1e3, "us");
    report_value(r, WAY[2], "over_known", (events->median - kernel_ms) * 1e3, "us");
    report_text(r, "  events read %+.1f us against the kernel's own clock\n",
                (events->median - own.median) * 1e3);
    double off = events->median / kernel_ms - 1, naive_part = naive->median / kernel_ms;
    report_verdict(r, &EVENTS_MATCH, off, "events %.4f ms for a %.3f ms kernel: %+.2f%%",
                   events->median, kernel_ms, off * 100);
    report_verdict(r, &NAIVE_MISSES, naive_part, "host clock without a wait read %.4f ms, "
                   "%.2f%% of the %.3f ms kernel: it timed the launch call", naive->median,
                   naive_part * 100, kernel_ms);

    report_section(r, "3. Why one sample lies");
    for (int i = 0; i < 3; i++)
        show_samples(r, WAY[i], w.t + (size_t)i * reps, &w.s[i], i ? 1 : 1e3, i ? "ms" : "us");
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

/* The two flavours in rounds. A saving (or a cost) is claimed only when the pairs'
 * ratio stays on one side of 1 from p5 to p95 and the median pair's is 5% or more. */
static void compare_flavours(report *r, const char *metric, int n, int wait_each, int reps,
                             cudaStream_t stream, cudaEvent_t timing, cudaEvent_t sync_only)
{
    event_loop t = {stream, timing, n, wait_each}, s = {stream, sync_only, n, wait_each};
    paired p = measure_paired(time_event_loop, &s, time_event_loop, &t, 1, reps);
    report_stats(r, "timing event", metric, &p.b, "us");
    report_stats(r, "sync-only event", metric, &p.a, "us");
    double saved = p.b.median - p.a.median, part = 1 - p.ratio.median; /* of a timing event */
    report_value(r, "sync-only saves", metric, saved, "us");
    int claim = (p.ratio.p95 < 1 || p.ratio.p5 > 1) && fabs(part) >= 0.05;
    report_text(r, "  -> sync-only events %s %.2f us (%.0f%%) per event; per pair x%.2f to x%.2f "
                   "(p5-p95)%s\n", !claim ? "differ by" : part > 0 ? "save" : "cost", fabs(saved),
                fabs(part) * 100, p.ratio.p5, p.ratio.p95, claim ? "" : ": too close to claim");
}

static void event_flavours(lab_run *run, cudaStream_t stream)
{
    report *r = run->r;
    int quick = run->opt.quick, records = quick ? 100 : 1000, round_trips = quick ? 50 : 200;
    cudaEvent_t timing = lab_event(run, cudaEventDefault);
    cudaEvent_t sync_only = lab_event(run, cudaEventDisableTiming);
    report_section(r, "4. Events only for synchronising: cudaEventDisableTiming");
    report_text(r, "  Per sample: %d records then one wait, or %d record+wait round trips "
                   "(host clock, per event)\n", records, round_trips);
    compare_flavours(r, "record", records, 0, run->opt.reps, stream, timing, sync_only);
    compare_flavours(r, "record_and_wait", round_trips, 1, run->opt.reps, stream, timing,
                     sync_only);

    /* The price: no timestamp. The documented answer, cudaErrorInvalidResourceHandle,
     * is shown, not fatal; an error like it is kept as the last error: clear it. */
    float ms = 0;
    cudaError_t asked = cudaEventElapsedTime(&ms, timing, sync_only);
    cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess && last != asked)
        CUDA_CHECK(last);
    report_text(r, "  and the price: cudaEventElapsedTime with a sync-only event returns %s\n",
                cudaGetErrorName(asked));
}

/* ---- setup: the run owns these, lab_end() releases them ---------------------------- */

/* The log has room for every launch: section 1's reps + 1; three ways, each
 * once a round of WARMUP + reps, in each of 1 + --retries attempts; way 4's one. */
static bench bench_open(lab_run *run)
{
    bench b = {.ns = ns_from_ms(kernel_ms),
               .tag_base = fresh_seed() >> 1, /* fresh every run; never the all-ones poison */
               .capacity = (1 + run->opt.reps) +
                           (1 + run->opt.retries) * 3 * (WARMUP + run->opt.reps) + 1};
    size_t log_bytes = (size_t)b.capacity * sizeof(launch_record);
    b.stream = lab_stream(run, "kernel", cudaStreamNonBlocking, 0);
    b.d_log = (launch_record *)lab_device(run, log_bytes);
    CUDA_CHECK(cudaMemset(b.d_log, 0xff, log_bytes));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream */
    b.timer = lab_timer(run);
    return b;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b = bench_open(&run);
    first_launch(run.r, &b, run.opt.reps);
    four_ways(&run, &b, run.opt.reps);
    event_flavours(&run, b.stream);
    return lab_end(&run);
}
