/* ex03: a timing harness for a kernel of known duration.
 *
 * The task: the given kernel (spin_and_log, in kernels/) spins for exactly
 * --kernel-ms (5 ms; 1 ms with --quick) by the GPU's own clock. Complete the
 * two TODO(student) parts so that the program times it the way lab03 teaches:
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
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 0.5, 1000, 1, "MS",
     "how long the kernel of known duration spins"},
    {NULL},
};
static const program_info ex = {
    .name = "ex03",
    .title = "exercise: a timing harness (warm-up, repetitions, median) for a known kernel",
    .handout = "labs/lab03_event_timing/README.md",
    .options = ex_options, .reps = 20, .quick_reps = 10,
};

static const verdict MEDIAN_MATCHES = {
    "median_matches_known", -0.02, 0.02, "%",
    "if it measured nothing, the harness is not written yet: complete TODO(student) in "
    "time_one_launch() and time_kernel(); a median far below the known duration timed the "
    "launch call, not the kernel (events in the kernel's stream, and wait for the stop event); "
    "far above it, another process may be using this GPU (nvidia-smi)"};
/* Its number: the launches beyond the samples, 0 when there are no samples. */
static const verdict WARM_UP = {
    "warm_up_done", 1, INFINITY, "launches",
    "no launch stayed out of the samples: the first launch of a kernel loads it; launch at "
    "least once untimed before the samples, as TODO(student) in time_kernel() asks"};

enum { SPARE_LAUNCHES = 100 }; /* room in the log for warm-up launches */

/* ---- given: the harness; spin_and_log (kernels/) leaves a record of each run ---- */

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
        int ran = log[i].tag == h->tag_base + (uint64_t)i &&
                  log[i].end_ns - log[i].start_ns >= h->ns;
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
    lab_run lab;
    lab_begin(&lab, argc, argv, &ex);
    report *r = lab.r;

    harness h;
    memset(&h, 0, sizeof h);
    h.ns = ns_from_ms(kernel_ms);
    h.tag_base = fresh_seed() >> 1; /* a fresh tag every run; never the all-ones poison */
    h.capacity = lab.opt.reps + SPARE_LAUNCHES;
    h.stream = lab_stream(&lab, "kernel", cudaStreamNonBlocking, 0);
    h.d_log = (launch_record *)lab_device(&lab, (size_t)h.capacity * sizeof(launch_record));
    CUDA_CHECK(cudaMemset(h.d_log, 0xff, (size_t)h.capacity * sizeof(launch_record)));
    CUDA_CHECK(cudaDeviceSynchronize());
    h.timer = lab_timer(&lab);

    report_section(r, "Your harness around a kernel of known duration");
    timeline_span_begin("your harness");
    stats s = time_kernel(&h, lab.opt.reps);
    timeline_span_end();
    report_compare(r, "your harness", "duration", "the known duration", kernel_ms, &s, "ms");
    report_value(r, "your harness", "samples", s.n, "count");
    report_value(r, "your harness", "launches", h.launches, "count");
    verify_log(r, &h);

    double off = s.n > 0 ? s.median / kernel_ms - 1 : -1;
    if (s.n == 0)
        report_verdict(r, &MEDIAN_MATCHES, off, "not measured: complete TODO(student) "
                       "in time_one_launch() and time_kernel()");
    else
        report_verdict(r, &MEDIAN_MATCHES, off,
                       "your median %.4f ms for a %.3f ms kernel: %+.2f%%, n=%d",
                       s.median, kernel_ms, off * 100, s.n);
    report_verdict(r, &WARM_UP, s.n > 0 ? h.launches - s.n : 0,
                   "%d launches for %d samples: %s", h.launches, s.n,
                   h.launches > s.n ? "the first launch stayed out of the samples"
                                    : "no untimed warm-up launch");
    return lab_end(&lab);
}
