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
