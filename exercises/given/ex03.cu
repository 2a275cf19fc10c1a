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
 * the student's code could keep. Inside that function the program records
 * an event pair of its own right around each kernel: on an idle GPU every
 * event harness also reads the kernel's start, some microseconds that grow
 * when the host is busy (an H100 VM: 5-30 us typical, up to 160 us), so the
 * student's median is held to what those events read at the same launches,
 * not to the bare duration (at 1.5 ms, 30 us is 2%: the reference lost the
 * points so in one grading run of 2026-11-24).
 *
 * The metrics (grader/rubrics/ex03.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   short_ms, long_ms      the two durations drawn;
 *   short_median_ms, long_median_ms   what the student's harness measured;
 *   short_events_ms, long_events_ms   what the program's events around the
 *                          same launches read, the median (the first, cold
 *                          launch left out);
 *   median_error_pct       the larger |median / events - 1|, in percent;
 *                          100 when time_kernel() returned no samples, or
 *                          when a call's last launch did not lie between the
 *                          two events of bench->timer (calls_timed_by_events
 *                          below 2: a median read from elsewhere, untimed);
 *   warmup_launches        launches that ran beyond the samples returned (the
 *                          fewer of the two calls): 1 or more with a warm-up;
 *                          0 when a call was not timed by events;
 *   calls_timed_by_events  the calls (of 2) whose last launch lay right
 *                          between bench->timer's start and stop events;
 *   launches_wrong         records that are wrong: a launch that did not spin
 *                          its full duration, or a record nobody launched.
 *
 * Level two, measured after level one in the same run: time_under_load()
 * (ex03.h), on two more kernels drawn the same way, now a spin_blocks
 * (kernels/) of one block that needs a whole SM, each launch after a
 * background in another stream that holds every SM (spin_blocks, one block
 * per SM) for a length drawn at each start_background(), 2-4 ms. First the
 * program times level one's way itself under a background as long as the
 * short kernel, beside the student's LEVEL2_PREDICTED_RATIO (and the
 * model's ratio, only once the student has predicted). Its metrics:
 *   level2_short_ms, level2_long_ms, level2_short_median_ms,
 *   level2_long_median_ms  as level one's;
 *   level2_median_error_pct  as level one's, and 100 too when a launch ran on
 *                          an idle GPU (level2_idle_launches > 0): a kernel
 *                          timed alone is not the measurement asked for;
 *   level2_launches_wrong  records that are wrong (a kernel or a background
 *                          block that did not spin its time, a record nobody
 *                          launched), and launch() with no start_background()
 *                          since the last launch;
 *   level2_idle_launches   launches issued after their background had ended
 *                          (the host waited: the program's event after it had
 *                          passed), or that began on the GPU before their
 *                          background's first block ended (it did not hold
 *                          every SM), by the records;
 *   level2_predicted_ratio the student's LEVEL2_PREDICTED_RATIO;
 *   level2_level_one_ratio what the program's events around launch() alone
 *                          read under a background as long as the kernel,
 *                          over the kernel's duration (what the student's
 *                          prediction asks).
 * --check: 0.5 and 1 ms, 3 samples; level two's backgrounds 1-2 ms. */
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

/* The check pass (--check): 3 samples (its durations are main()'s).
 * grading_begin() calls it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt) { opt->reps = 3; }

/* Its number: the larger of the two medians' errors against the program's
 * own events around the same launches, as a fraction. */
static const verdict MEDIAN_MATCHES = {
    "median_matches_events", 0, 0.02, "%",
    "if it measured nothing, the harness is not written yet: complete TODO(student) in "
    "time_one_launch() and time_kernel(); a median far below the kernel's duration timed the "
    "launch call, not the kernel (events in the kernel's stream, and wait for the stop event); "
    "far above it, your marks hold more than the launch"};
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
    event_timer *mark;    /* the program's own pair around each launch */
    int launches, capacity;
} kernel;

static void launch_known_kernel(void)
{
    if (kernel.launches >= kernel.capacity)
        fail_wrong("your harness launched more than %d kernels (the samples plus %d for "
                   "warm-up)", kernel.capacity, SPARE_LAUNCHES);
    int i = kernel.launches++;
    event_timer_start(&kernel.mark[i], kernel.stream);
    spin_and_log<<<1, 1, 0, kernel.stream>>>(kernel.ns, kernel.tag_base + i, &kernel.d_log[i]);
    CHECK_LAUNCH();
    event_timer_stop(&kernel.mark[i], kernel.stream);
}

typedef struct {
    stats s;             /* what time_kernel() returned */
    double events_ms;    /* level one: the program's events around the same launches */
    double error;        /* |median / events - 1|, level two's / duration; 1 without samples */
    int ran, wrong;      /* records of launches that ran for their time; wrong records */
    int bracketed;       /* level one: the timer's events lay right around the last launch */
    int idle;            /* level two: launches that did not wait for an SM */
} timed;

/* What the program's own events read around this call's launches, the
 * median, the first (cold) launch left out; `ms` when there was none. */
static double events_median(double ms)
{
    int first = kernel.launches > 1, n = kernel.launches - first;
    if (n == 0)
        return ms;
    double *own = (double *)xmalloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        own[i] = event_timer_ms(&kernel.mark[first + i]);
    double median = stats_of(own, n).median;
    free(own);
    return median;
}

/* Did the student's timer time the call's last launch? Its start event must
 * lie before the program's own pair around that launch, its stop after, and
 * the two within the kernel's duration of the pair, too close to hold
 * another launch. A median read from anywhere else (the program's memory, a
 * constant) leaves the events unrecorded, or where they were a call ago. */
static int last_launch_bracketed(const kernel_bench *bench, double ms)
{
    if (kernel.launches == 0)
        return 0;
    int i = kernel.launches - 1;
    float before, after;
    /* not event_timer_ms(): an event never recorded is an answer here, not a fault */
    cudaError_t e1 = cudaEventElapsedTime(&before, bench->timer.start, kernel.mark[i].start);
    cudaError_t e2 = cudaEventElapsedTime(&after, kernel.mark[i].stop, bench->timer.stop);
    (void)cudaGetLastError();
    return e1 == cudaSuccess && e2 == cudaSuccess && before >= 0 && after >= 0 &&
           before + after < ms;
}

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
    t.events_ms = events_median(ms);
    t.bracketed = last_launch_bracketed(bench, ms);
    t.error = t.s.n > 0 && t.bracketed ? fabs(t.s.median / t.events_ms - 1) : 1;
    return t;
}

static void report_call(report *r, const char *name, double ms, const timed *t)
{
    report_compare(r, name, "duration", "the known duration", ms, &t->s, "ms");
    report_value(r, name, "samples", t->s.n, "count");
    report_value(r, name, "launches", t->ran, "count");
}

/* ---- Level two: the kernel timed while another stream holds the GPU ---- */

/* Its number: level one's, over level two's kernels; 1 when a launch ran on
 * an idle GPU. */
static const verdict LEVEL2_MEDIAN_MATCHES = {
    "level2_median_matches_known", 0, 0.02, "%",
    "if it measured nothing, level two is not written yet: complete TODO(student) in "
    "time_under_load(); a median over the known duration by about a background (2-4 ms) "
    "timed the kernel's wait for an SM too (lab03's model: what does each of your events "
    "mark?). A launch on an idle GPU: the host waited between start_background() and "
    "launch(), or another process holds SMs (nvidia-smi)"};

/* The background's head start: the launch call returns before its blocks
 * are on the SMs; a kernel issued next must find them taken, as it would
 * behind work that was running already. */
static const double HEAD_START_MS = 0.05;
/* %globaltimer's tick and the block scheduler's latency: a kernel began
 * beside its background when it began this long before the background's
 * first block ended. */
static const uint64_t BESIDE_SLACK_NS = 5000;

/* Level two's kernel and backgrounds: static, as level one's. */
static struct {
    cudaStream_t stream, background;
    cudaEvent_t ended;      /* recorded after each background: has it ended? */
    size_t footprint;       /* shared memory that makes a block hold an SM alone */
    int sms;
    uint64_t ns, tag_base;  /* the kernel's duration; launch i's tag is tag_base + i */
    double bg_lo, bg_hi;    /* each background's length drawn from [bg_lo, bg_hi) ms */
    block_record *d_log;    /* launches' records, then the backgrounds' (sms each) */
    uint64_t *bg_ns;        /* each background's length */
    int *bg_of;             /* the background launch i followed; -1: none */
    int launches, backgrounds, capacity; /* room for capacity launches, twice as many backgrounds */
    int pending;            /* a background started since the last launch */
    int unpaired, idle;     /* launches with no background; launches after theirs had ended */
} loaded;

static block_record *background_log(block_record *log, int b)
{
    return log + loaded.capacity + (size_t)b * loaded.sms;
}

static void start_background(void)
{
    if (loaded.backgrounds >= 2 * loaded.capacity)
        fail_wrong("your harness started more than %d backgrounds", 2 * loaded.capacity);
    int b = loaded.backgrounds++;
    loaded.bg_ns[b] = ns_from_ms(grading_uniform(loaded.bg_lo, loaded.bg_hi));
    spin_blocks_launch(loaded.sms, loaded.footprint, loaded.bg_ns[b],
                       loaded.tag_base + loaded.capacity + b, background_log(loaded.d_log, b),
                       loaded.background);
    CUDA_CHECK(cudaEventRecord(loaded.ended, loaded.background));
    loaded.pending = 1;
    for (double t0 = host_time_ms(); host_time_ms() - t0 < HEAD_START_MS;)
        ;
}

static void launch_loaded_kernel(void)
{
    if (loaded.launches >= loaded.capacity)
        fail_wrong("your harness launched more than %d kernels in level two (the samples plus "
                   "%d for warm-up)", loaded.capacity, SPARE_LAUNCHES);
    int i = loaded.launches++;
    loaded.bg_of[i] = loaded.pending ? loaded.backgrounds - 1 : -1;
    loaded.unpaired += !loaded.pending;
    loaded.idle += loaded.pending && event_finished(loaded.ended); /* the host waited */
    loaded.pending = 0;
    spin_blocks_launch(1, loaded.footprint, loaded.ns, loaded.tag_base + i, &loaded.d_log[i],
                       loaded.stream);
}

typedef stats (*loaded_harness)(loaded_bench *bench, int reps);

/* The records of one call: every launch and background ran its time, no
 * record without one, and each kernel began after its background's first
 * block ended. */
static void check_loaded(timed *t, block_record *log)
{
    unsigned long long earliest;
    for (int i = 0; i < loaded.capacity; i++) {
        if (i >= loaded.launches) {
            t->wrong += log[i].tag != ~0ull;
            continue;
        }
        int bad = (int)verify_block_records(&log[i], 1, loaded.tag_base + i, loaded.ns,
                                            loaded.sms, &earliest, NULL);
        t->ran += !bad;
        t->wrong += bad;
        if (bad || loaded.bg_of[i] < 0)
            continue;
        const block_record *bg = background_log(log, loaded.bg_of[i]);
        unsigned long long first_end = ~0ull;
        for (int j = 0; j < loaded.sms; j++)
            first_end = bg[j].end_ns < first_end ? bg[j].end_ns : first_end;
        t->idle += log[i].start_ns + BESIDE_SLACK_NS < first_end; /* beside its background */
    }
    for (int b = 0; b < 2 * loaded.capacity; b++) {
        const block_record *bg = background_log(log, b);
        if (b < loaded.backgrounds)
            t->wrong += verify_block_records(bg, loaded.sms, loaded.tag_base + loaded.capacity + b,
                                             loaded.bg_ns[b], loaded.sms, &earliest, NULL) > 0;
        else
            t->wrong += bg[0].tag != ~0ull;
    }
}

/* One call of a harness on a kernel of `ms` behind backgrounds of bg_lo to
 * bg_hi ms, and its records. */
static timed time_loaded(loaded_harness harness, loaded_bench *bench, double ms,
                                double bg_lo, double bg_hi, int reps)
{
    size_t bytes = ((size_t)loaded.capacity * (1 + 2 * (size_t)loaded.sms)) * sizeof(block_record);
    loaded.ns = ns_from_ms(ms);
    loaded.tag_base = fresh_seed() >> 2; /* fresh every call; never the all-ones poison */
    loaded.bg_lo = bg_lo, loaded.bg_hi = bg_hi;
    loaded.launches = loaded.backgrounds = loaded.pending = loaded.unpaired = loaded.idle = 0;
    CUDA_CHECK(cudaMemset(loaded.d_log, 0xff, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    timed t;
    memset(&t, 0, sizeof t);
    t.s = harness(bench, reps);

    CUDA_CHECK(cudaDeviceSynchronize());
    block_record *log = (block_record *)xmalloc(bytes);
    CUDA_CHECK(cudaMemcpy(log, loaded.d_log, bytes, cudaMemcpyDeviceToHost));
    check_loaded(&t, log);
    free(log);
    t.wrong += loaded.unpaired;
    t.idle += loaded.idle;
    t.error = t.s.n > 0 ? fabs(t.s.median / ms - 1) : 1;
    return t;
}

/* Level one's way under a background, as the program's own demonstration:
 * events in the kernel's stream just before and just after launch(). */
static double level_one_way_once(void *ctx)
{
    loaded_bench *bench = (loaded_bench *)ctx;
    bench->start_background();
    event_timer_start(&bench->timer, bench->stream);
    bench->launch();
    event_timer_stop(&bench->timer, bench->stream);
    return event_timer_ms(&bench->timer);
}

static stats level_one_way(loaded_bench *bench, int reps)
{
    return measure(level_one_way_once, bench, 1, reps);
}

static loaded_bench level2_open(lab_run *lab, int reps)
{
    loaded.capacity = reps + SPARE_LAUNCHES;
    loaded.stream = kernel.stream;
    loaded.background = lab_stream(lab, "background", cudaStreamNonBlocking, 0);
    loaded.ended = lab_event(lab, cudaEventDisableTiming);
    loaded.footprint = spin_blocks_footprint();
    loaded.sms = lab->dev.sm_count;
    loaded.d_log = (block_record *)lab_device(lab, (size_t)loaded.capacity *
                                                       (1 + 2 * (size_t)loaded.sms) *
                                                       sizeof(block_record));
    loaded.bg_ns = (uint64_t *)lab_pageable(lab, 2 * (size_t)loaded.capacity * sizeof(uint64_t));
    loaded.bg_of = (int *)lab_pageable(lab, (size_t)loaded.capacity * sizeof(int));
    return (loaded_bench){start_background, launch_loaded_kernel, loaded.stream,
                          loaded.background, lab_timer(lab)};
}

static stats scaled(stats s, double k)
{
    double *f[] = {&s.median, &s.p5, &s.p95, &s.min, &s.max, &s.mean};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        *f[i] *= k;
    return s;
}

/* Level two: the program's own demonstration beside the student's
 * prediction, then the student's harness on two kernels. */
static void level2(lab_run *lab, int check, int reps)
{
    report *r = lab->r;
    loaded_bench bench = level2_open(lab, reps);
    double short_ms = check ? 0.5 : grading_uniform(1.5, 3);
    double long_ms = check ? 1 : grading_uniform(5, 8);
    double bg_lo = check ? 1 : 2, bg_hi = check ? 2 : 4;

    report_section(r, "Level 2: the kernel while a background in another stream holds every SM");
    timeline_span_begin("level one's way under a background");
    timed demo = time_loaded(level_one_way, &bench, short_ms, short_ms, short_ms, reps);
    timeline_span_end();
    stats ratio = scaled(demo.s, 1 / short_ms);
    report_value(r, "your prediction", "events_over_kernel", LEVEL2_PREDICTED_RATIO, "x");
    /* the model's ratio is the prediction's answer: beside it only once predicted */
    grading_compare(r, grading_predicted(r, LEVEL2_PREDICTED_RATIO, 0, "LEVEL2_PREDICTED_RATIO"),
                    "level one's way", "events_over_kernel",
                    "a background as long as the kernel, then the kernel", 2, &ratio, "x");
    report_text(r, "  (events in the kernel's stream around launch(), a background as long as "
                "the kernel before each:\n  the program's own, %d launches of %.3f ms; your "
                "prediction is LEVEL2_PREDICTED_RATIO)\n", demo.ran, short_ms);

    timeline_span_begin("your harness under a background");
    timed a = time_loaded(time_under_load, &bench, short_ms, bg_lo, bg_hi, reps);
    timed b = time_loaded(time_under_load, &bench, long_ms, bg_lo, bg_hi, reps);
    timeline_span_end();
    report_call(r, "short, loaded", short_ms, &a);
    report_call(r, "long, loaded", long_ms, &b);
    int wrong = a.wrong + b.wrong, idle = a.idle + b.idle;
    report_check(r, "level2_launches_logged", wrong == 0 && demo.wrong == 0, "%d launches, each "
                 "after a background of its own, each ran once for its duration by the GPU's "
                 "clock, as did every background; %d records or launches wrong", a.ran + b.ran,
                 wrong + demo.wrong);
    report_value(r, "launches on an idle GPU", "count", idle, "count");

    double error = idle > 0 ? 1 : fmax(a.error, b.error);
    if (a.s.n == 0 || b.s.n == 0)
        report_verdict(r, &LEVEL2_MEDIAN_MATCHES, error, "not measured: complete "
                       "TODO(student) in time_under_load()");
    else if (idle > 0)
        report_verdict(r, &LEVEL2_MEDIAN_MATCHES, error, "%d launches did not wait for an "
                       "SM: not timed under a background", idle);
    else
        report_verdict(r, &LEVEL2_MEDIAN_MATCHES, error, "your medians %.4f ms for %.3f ms "
                       "and %.4f ms for %.3f ms, each behind a background: at most %.2f%% off",
                       a.s.median, short_ms, b.s.median, long_ms, error * 100);

    grading_value("level2_short_ms", short_ms);
    grading_value("level2_short_median_ms", a.s.n > 0 ? a.s.median : 0);
    grading_value("level2_long_ms", long_ms);
    grading_value("level2_long_median_ms", b.s.n > 0 ? b.s.median : 0);
    grading_value("level2_median_error_pct", error * 100);
    grading_value("level2_launches_wrong", wrong);
    grading_value("level2_idle_launches", idle);
    grading_value("level2_predicted_ratio", LEVEL2_PREDICTED_RATIO);
    grading_value("level2_level_one_ratio", ratio.median);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int check = grading_check(), reps = lab.opt.reps;

    kernel.capacity = reps + SPARE_LAUNCHES;
    kernel.stream = lab_stream(&lab, "kernel", cudaStreamNonBlocking, 0);
    kernel.d_log = (launch_record *)lab_device(&lab, (size_t)kernel.capacity *
                                                         sizeof(launch_record));
    kernel.mark = (event_timer *)lab_pageable(&lab, (size_t)kernel.capacity * sizeof(event_timer));
    for (int i = 0; i < kernel.capacity; i++)
        kernel.mark[i] = lab_timer(&lab);
    kernel_bench bench = {launch_known_kernel, kernel.stream, lab_timer(&lab)};
    double short_ms = check ? 0.5 : grading_uniform(1.5, 3);
    double long_ms = check ? 1 : grading_uniform(5, 8);

    report_section(r, "Your harness around a kernel of known duration, two drawn at random");
    timeline_span_begin("your harness");
    timed a = time_known(&bench, short_ms, reps), b = time_known(&bench, long_ms, reps);
    timeline_span_end();
    report_call(r, "short kernel", short_ms, &a);
    report_call(r, "long kernel", long_ms, &b);
    /* the launch's own start on an idle GPU: what every event harness reads too */
    report_value(r, "short kernel", "program_events", a.events_ms, "ms");
    report_value(r, "long kernel", "program_events", b.events_ms, "ms");
    int wrong = a.wrong + b.wrong;
    report_check(r, "every_launch_logged", wrong == 0, "%d launches, each ran once and spun at "
                 "least its duration by the GPU's clock; %d records wrong", a.ran + b.ran, wrong);

    double error = fmax(a.error, b.error);
    int timed = a.bracketed && b.bracketed; /* the warm-up, too, is about samples timed */
    int warmup = !timed ? 0 : a.ran - a.s.n < b.ran - b.s.n ? a.ran - a.s.n : b.ran - b.s.n;
    if (a.s.n == 0 || b.s.n == 0)
        report_verdict(r, &MEDIAN_MATCHES, error, "not measured: complete TODO(student) "
                       "in time_one_launch() and time_kernel()");
    else if (!timed)
        report_verdict(r, &MEDIAN_MATCHES, error, "not measured around the launches: "
                       "bench->timer's two events did not lie right around the last launch of "
                       "each call (the contract: bench->timer in bench->stream, its start "
                       "before launch() and its stop after)");
    else
        report_verdict(r, &MEDIAN_MATCHES, error, "your medians %.4f ms and %.4f ms, the "
                       "program's events around the same launches %.4f ms and %.4f ms (kernels "
                       "of %.3f and %.3f ms): at most %.2f%% off", a.s.median, b.s.median,
                       a.events_ms, b.events_ms, short_ms, long_ms, error * 100);
    report_verdict(r, &WARM_UP, warmup, "%d and %d launches ran for %d and %d samples: %s",
                   a.ran, b.ran, a.s.n, b.s.n,
                   !timed ? "no sample was timed by events around a launch"
                   : warmup > 0 ? "the first launches stayed out of the samples"
                                : "no untimed warm-up launch");

    grading_value("short_ms", short_ms);
    grading_value("short_median_ms", a.s.n > 0 ? a.s.median : 0);
    grading_value("long_ms", long_ms);
    grading_value("long_median_ms", b.s.n > 0 ? b.s.median : 0);
    grading_value("short_events_ms", a.events_ms);
    grading_value("long_events_ms", b.events_ms);
    grading_value("median_error_pct", error * 100);
    grading_value("warmup_launches", warmup);
    grading_value("calls_timed_by_events", a.bracketed + b.bracketed);
    grading_value("launches_wrong", wrong);

    level2(&lab, check, reps);
    return grading_finish(&lab);
}
