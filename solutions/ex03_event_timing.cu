/* ex03: a timing harness for a kernel of known duration.
 *
 * The reference solution: exercises/ex03_event_timing.cu with both parts
 * done, each marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex03.h.
 *
 * Build and run:   make sol03 && ./sol03
 */
#include "ex03.h"
#include "streamlab.h"

/* One launch, timed; returns milliseconds. The shape measure() expects: ctx
 * is the kernel_bench. */
static double time_one_launch(void *ctx)
{
    kernel_bench *bench = (kernel_bench *)ctx;
    /* SOLUTION: both events go into the kernel's own stream, so the GPU stamps
     * them just before and just after the kernel and nothing else lies between.
     * event_timer_ms waits for the stop event: asking earlier would return
     * cudaErrorNotReady. A host clock around the launch alone would time only
     * the launch call, since the launch returns before the kernel runs. */
    event_timer_start(&bench->timer, bench->stream);
    bench->launch();
    event_timer_stop(&bench->timer, bench->stream);
    return event_timer_ms(&bench->timer);
}

stats time_kernel(kernel_bench *bench, int reps)
{
    /* SOLUTION: measure() runs time_one_launch twice untimed (the first launch
     * of a kernel in a process loads it, which would inflate the first
     * sample), then `reps` times, and returns median, p5 and p95: the median,
     * because one sample can lie and a mean is dragged by the slow ones. */
    const int warmup = 2;
    return measure(time_one_launch, bench, warmup, reps);
}

/* SOLUTION: behind a background as long as the kernel, events in the
 * kernel's stream around launch() read the background, then the kernel:
 * twice the kernel. */
const double LEVEL2_PREDICTED_RATIO = 2;

/* One sample of level two, timed; returns milliseconds. */
static double time_one_loaded(void *ctx)
{
    loaded_bench *bench = (loaded_bench *)ctx;
    bench->start_background();
    /* SOLUTION: an event is stamped when ITS stream reaches it. The kernel's
     * stream reaches a mark placed before launch() at once, while the kernel
     * still waits for an SM, so that mark times the wait too. The
     * background's stream reaches a mark placed after the background when
     * the background ends: the moment the SMs free and the kernel starts.
     * So the start goes there and the stop after the kernel in its own
     * stream; the GPU stamps both, the host waits for nothing before the
     * launch. (As right: make bench->stream wait, with cudaStreamWaitEvent,
     * for an event recorded in bench->background, then start in
     * bench->stream.) */
    event_timer_start(&bench->timer, bench->background);
    bench->launch();
    event_timer_stop(&bench->timer, bench->stream);
    return event_timer_ms(&bench->timer);
}

stats time_under_load(loaded_bench *bench, int reps)
{
    /* SOLUTION: one untimed sample first, as in level one; then reps. */
    return measure(time_one_loaded, bench, 1, reps);
}
