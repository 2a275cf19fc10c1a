/* ex03's given program: does the student's timing harness measure a kernel
 * of known duration, with a warm-up launch kept out of the samples?
 *
 * The student writes time_kernel() (exercises/ex03_event_timing.cu; the
 * contract is ex03.h). This program calls it twice, on a spin_and_log
 * (kernels/) of a duration drawn at random every run, one short (1.5-3 ms)
 * and one long (5-8 ms): a constant cannot be within 2% of both. It hands the
 * student a function that launches the kernel, its stream and an event pair,
 * never the duration, and counts the launches from the kernel's own records
 * on the GPU (each with a tag drawn fresh per call), not from any counter
 * the student's code could keep.
 *
 * The metrics (grader/rubrics/ex03.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   short_ms, long_ms      the two durations drawn;
 *   short_median_ms, long_median_ms   what the student's harness measured;
 *   median_error_pct       the larger |median / duration - 1|, in percent;
 *                          100 when time_kernel() returned no samples;
 *   warmup_launches        launches that ran beyond the samples returned (the
 *                          fewer of the two calls): 1 or more with a warm-up;
 *   launches_wrong         records that are wrong: a launch that did not spin
 *                          its full duration, or a record nobody launched.
 * --check: 0.5 and 1 ms, 3 samples. */
#include "ex03.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
#include <string.h>

static const program_info ex = {
    .name = "ex03",
    .title = "exercise: a timing harness (warm-up, repetitions, median) for a known kernel",
    .handout = "labs/lab03_event_timing/README.md",
    .reps = 10, .quick_reps = 5,
};

/* Its number: the larger of the two medians' errors, as a fraction. */
static const verdict MEDIAN_MATCHES = {
    "median_matches_known", 0, 0.02, "%",
    "if it measured nothing, the harness is not written yet: complete TODO(student) in "
    "time_one_launch() and time_kernel(); a median far below the known duration timed the "
    "launch call, not the kernel (events in the kernel's stream, and wait for the stop event); "
    "far above it, another process may be using this GPU (nvidia-smi)"};
/* Its number: the launches beyond the samples, the fewer of the two calls. */
static const verdict WARM_UP = {
    "warm_up_done", 1, INFINITY, "launches",
    "no launch stayed out of the samples: the first launch of a kernel loads it; launch at "
    "least once untimed before the samples, as TODO(student) in time_kernel() asks"};

enum { SPARE_LAUNCHES = 100 }; /* room in the log for warm-up launches */

/* The kernel the student times: static, so that the student's file reaches
 * it only through bench.launch, and never its duration or its tags. */
static struct {
    cudaStream_t stream;
    uint64_t ns, tag_base;
    launch_record *d_log; /* one record per launch, poisoned before each call */
    int launches, capacity;
} kernel;

static void launch_known_kernel(void)
{
    if (kernel.launches >= kernel.capacity)
        fail_wrong("your harness launched more than %d kernels (the samples plus %d for "
                   "warm-up)", kernel.capacity, SPARE_LAUNCHES);
    spin_and_log<<<1, 1, 0, kernel.stream>>>(kernel.ns, kernel.tag_base + kernel.launches,
                                             &kernel.d_log[kernel.launches]);
    CHECK_LAUNCH();
    kernel.launches++;
}

typedef struct {
    stats s;             /* what time_kernel() returned */
    double error;        /* |median / duration - 1|; 1 without samples */
    int ran, wrong;      /* records of launches that ran for their time; wrong records */
} timed;

/* One call of the student's time_kernel() on a kernel of `ms`, and its log. */
static timed time_known(kernel_bench *bench, double ms, int reps)
{
    size_t bytes = (size_t)kernel.capacity * sizeof(launch_record);
    kernel.ns = ns_from_ms(ms);
    kernel.tag_base = fresh_seed() >> 1; /* never the all-ones poison */
    kernel.launches = 0;
    CUDA_CHECK(cudaMemset(kernel.d_log, 0xff, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    timed t;
    memset(&t, 0, sizeof t);
    t.s = time_kernel(bench, reps); /* the student's */

    CUDA_CHECK(cudaDeviceSynchronize());
    launch_record *log = (launch_record *)xmalloc(bytes);
    CUDA_CHECK(cudaMemcpy(log, kernel.d_log, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kernel.capacity; i++) {
        if (log[i].tag == kernel.tag_base + (uint64_t)i &&
            log[i].end_ns - log[i].start_ns >= kernel.ns)
            t.ran++;
        else if (log[i].tag != ~0ull)
            t.wrong++;
    }
    free(log);
    t.error = t.s.n > 0 ? fabs(t.s.median / ms - 1) : 1;
    return t;
}

static void report_call(report *r, const char *name, double ms, const timed *t)
{
    report_compare(r, name, "duration", "the known duration", ms, &t->s, "ms");
    report_value(r, name, "samples", t->s.n, "count");
    report_value(r, name, "launches", t->ran, "count");
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), reps = check ? 3 : lab.opt.reps;

    kernel.capacity = reps + SPARE_LAUNCHES;
    kernel.stream = lab_stream(&lab, "kernel", cudaStreamNonBlocking, 0);
    kernel.d_log = (launch_record *)lab_device(&lab, (size_t)kernel.capacity *
                                                         sizeof(launch_record));
    kernel_bench bench = {launch_known_kernel, kernel.stream, lab_timer(&lab)};
    double short_ms = check ? 0.5 : grading_uniform(1.5, 3);
    double long_ms = check ? 1 : grading_uniform(5, 8);

    report_section(r, "Your harness around a kernel of known duration, two drawn at random");
    timeline_span_begin("your harness");
    timed a = time_known(&bench, short_ms, reps), b = time_known(&bench, long_ms, reps);
    timeline_span_end();
    report_call(r, "short kernel", short_ms, &a);
    report_call(r, "long kernel", long_ms, &b);
    int wrong = a.wrong + b.wrong;
    report_check(r, "every_launch_logged", wrong == 0, "%d launches, each ran once and spun at "
                 "least its duration by the GPU's clock; %d records wrong", a.ran + b.ran, wrong);

    double error = fmax(a.error, b.error);
    int warmup = a.ran - a.s.n < b.ran - b.s.n ? a.ran - a.s.n : b.ran - b.s.n;
    if (a.s.n == 0 || b.s.n == 0)
        report_verdict(r, &MEDIAN_MATCHES, error, "not measured: complete TODO(student) "
                       "in time_one_launch() and time_kernel()");
    else
        report_verdict(r, &MEDIAN_MATCHES, error, "your medians %.4f ms for %.3f ms and %.4f ms "
                       "for %.3f ms: at most %.2f%% off", a.s.median, short_ms, b.s.median,
                       long_ms, error * 100);
    report_verdict(r, &WARM_UP, warmup, "%d and %d launches ran for %d and %d samples: %s",
                   a.ran, b.ran, a.s.n, b.s.n,
                   warmup > 0 ? "the first launches stayed out of the samples"
                              : "no untimed warm-up launch");

    grading_value("short_ms", short_ms);
    grading_value("short_median_ms", a.s.n > 0 ? a.s.median : 0);
    grading_value("long_ms", long_ms);
    grading_value("long_median_ms", b.s.n > 0 ? b.s.median : 0);
    grading_value("median_error_pct", error * 100);
    grading_value("warmup_launches", warmup);
    grading_value("launches_wrong", wrong);
    return grading_finish(&lab);
}
