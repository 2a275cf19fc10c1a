/* ex03: a timing harness for a kernel of known duration.
 *
 * The task: the kernel below spins for exactly --kernel-ms (5 ms; 1 ms with
 * --quick) by the GPU's own clock. Complete the two TODO(student) parts so
 * that the program times it the way lab03 teaches:
 *   - time_one_launch(): one launch between CUDA events recorded in the
 *     kernel's own stream; wait for the stop event before reading the time;
 *   - time_kernel(): warm up first (at least one untimed launch: the first
 *     launch of a kernel loads it), then --reps timed samples, summarised as
 *     median, p5 and p95 (stats_of in common/stats.h, or measure() in
 *     common/timing.h, which does warm-up, samples and statistics at once).
 *
 * The target: your median within 2% of the known duration, with a warm-up
 * launch before the samples. --json reports your median as the measurement
 * "your harness"/"duration", beside the known duration as its prediction.
 *
 * Build and run:   make ex03 && ./ex03          (./ex03 --quick: 1 ms, 10 reps)
 * As given it measures nothing, says so, and exits 4.
 */
#include "streamlab.h"
#include "kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double kernel_ms = 5; /* the known duration */

static const option ex_options[] = {
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 0.5, 1000, "MS",
     "how long the kernel of known duration spins (--quick: 1 unless given)"},
};
static const program_info ex = {
    "ex03", "exercise: a timing harness (warm-up, repetitions, median) for a known kernel",
    ex_options, sizeof ex_options / sizeof ex_options[0], 20,
};

enum { SPARE_LAUNCHES = 100 }; /* room in the log for warm-up launches */

/* ---- given: the kernel, which leaves a record of each run -------------------- */

typedef struct {
    unsigned long long tag;        /* a fresh random base plus the launch's number */
    unsigned long long elapsed_ns; /* how long it spun, by the GPU's own clock */
} launch_record;

/* spin_for_ns (kernels/spin.cu) plus one store, so every launch can be checked. */
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
    cudaStream_t stream;   /* the kernel's stream: record your events here */
    event_timer timer;     /* a start and a stop event (common/timing.h) */
    uint64_t ns, tag_base;
    launch_record *d_log;  /* one record per launch, poisoned before the first */
    int launches, capacity;
} harness;

/* One launch of the kernel in h->stream. Returns at once: the kernel runs later. */
static void launch_known_kernel(harness *h)
{
    if (h->launches >= h->capacity)
        fail_wrong("your harness launched more than %d kernels (--reps plus %d for warm-up)",
                   h->capacity, SPARE_LAUNCHES);
    spin_and_log<<<1, 1, 0, h->stream>>>(h->ns, h->tag_base + h->launches,
                                         &h->d_log[h->launches]);
    CHECK_LAUNCH();
    h->launches++;
}

/* ---- yours: the harness ---------------------------------------------------- */

/* One launch, timed; returns milliseconds. The shape measure() expects. */
static double time_one_launch(void *ctx)
{
    harness *h = (harness *)ctx;
    /* TODO(student): record h->timer's start event in h->stream before the
     * launch and its stop event after it, in the same stream, and return the
     * time between them (event_timer_ms waits for the stop event). A host
     * clock around the launch alone would time only the launch call. */
    launch_known_kernel(h);
    return 0;
}

/* Warm-up, `reps` samples of time_one_launch, and their statistics. */
static stats time_kernel(harness *h, int reps)
{
    stats s;
    memset(&s, 0, sizeof s); /* n = 0: "not measured" */
    /* TODO(student): launch at least once untimed (warm-up), then take `reps`
     * samples with time_one_launch(h) and return stats_of(samples, reps); or
     * let measure(time_one_launch, h, warmup, reps) do all three. */
    (void)h;
    (void)reps;
    (void)time_one_launch; /* delete this line once you call it */
    return s;
}

/* ---- given: checking the launches, and the report ---------------------------- */

/* Every launch left its record, and no record was written without a launch. */
static void verify_log(report *r, const harness *h)
{
    launch_record *log = (launch_record *)xmalloc((size_t)h->capacity * sizeof *log);
    /* The copy runs in the legacy stream, which does not wait for a non-blocking one. */
    CUDA_CHECK(cudaStreamSynchronize(h->stream));
    CUDA_CHECK(cudaMemcpy(log, h->d_log, (size_t)h->capacity * sizeof *log,
                          cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < h->capacity; i++) {
        int ran = log[i].tag == h->tag_base + (uint64_t)i && log[i].elapsed_ns >= h->ns;
        int untouched = log[i].tag == ~0ull;
        bad += i < h->launches ? !ran : !untouched;
    }
    report_check(r, "every_launch_logged", bad == 0, "%d launches, each ran once and spun "
                 "at least %.3f ms by the GPU's clock; %d records wrong", h->launches,
                 kernel_ms, bad);
    free(log);
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &ex, &opt);
    if (opt.quick) {
        if (!option_given(argc, argv, "--kernel-ms"))
            kernel_ms = 1;
        if (opt.reps > 10)
            opt.reps = 10;
    }
    device_info dev;
    device_select(&opt, &dev);
    report *r = report_begin(&ex, &opt, &dev);
    timeline_start(&opt);
    report_param(r, "kernel_ms", kernel_ms, "ms");

    harness h;
    memset(&h, 0, sizeof h);
    h.ns = ns_from_ms(kernel_ms);
    h.tag_base = fresh_seed() >> 1; /* a fresh tag every run; never the all-ones poison */
    h.capacity = opt.reps + SPARE_LAUNCHES;
    CUDA_CHECK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
    timeline_name_stream(h.stream, "kernel");
    CUDA_CHECK(cudaMalloc((void **)&h.d_log, (size_t)h.capacity * sizeof(launch_record)));
    CUDA_CHECK(cudaMemset(h.d_log, 0xff, (size_t)h.capacity * sizeof(launch_record)));
    CUDA_CHECK(cudaDeviceSynchronize());
    event_timer_create(&h.timer);

    report_section(r, "Your harness around a kernel of known duration");
    timeline_span_begin("your harness");
    stats s = time_kernel(&h, opt.reps);
    timeline_span_end();
    report_compare(r, "your harness", "duration", kernel_ms, &s, "ms");
    report_value(r, "your harness", "samples", s.n, "count");
    report_value(r, "your harness", "launches", h.launches, "count");
    verify_log(r, &h);

    double off = s.n > 0 ? s.median / kernel_ms - 1 : -1;
    if (s.n == 0)
        report_verdict(r, "median_matches_known", 0, "not measured: complete TODO(student) "
                       "in time_one_launch() and time_kernel()");
    else
        report_verdict(r, "median_matches_known", fabs(off) <= 0.02,
                       "your median %.4f ms for a %.3f ms kernel: %+.2f%% (limit 2%%), n=%d",
                       s.median, kernel_ms, off * 100, s.n);
    report_verdict(r, "warm_up_done", s.n > 0 && h.launches > s.n,
                   "%d launches for %d samples: %s", h.launches, s.n,
                   h.launches > s.n ? "the first launch stayed out of the samples"
                                    : "no untimed warm-up launch");

    event_timer_destroy(&h.timer);
    CUDA_CHECK(cudaFree(h.d_log));
    CUDA_CHECK(cudaStreamDestroy(h.stream));
    timeline_finish(r, &opt);
    if (s.n == 0)
        report_hint(r, "the harness is not written yet: complete TODO(student) in "
                       "time_one_launch() and time_kernel()");
    else
        report_hint(r, "a median far below the known duration timed the launch call, not "
                       "the kernel (events in the kernel's stream, and wait for the stop "
                       "event); far above it, another process may be using this GPU "
                       "(nvidia-smi)");
    return report_finish(r);
}
