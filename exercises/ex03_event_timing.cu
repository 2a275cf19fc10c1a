/* ex03: a timing harness for a kernel of known duration.
 *
 * The task: the program around this file (exercises/given/ex03.cu) hands
 * you a kernel that spins for a known time by the GPU's own clock (twice: a
 * short one of 1.5-3 ms and a long one of 5-8 ms, drawn at random every run)
 * and asks time_kernel() for its duration. Complete the two TODO(student)
 * parts so that it times the kernel the way lab03 teaches:
 *   - time_one_launch(): one launch between CUDA events recorded in the
 *     kernel's own stream; wait for the stop event before reading the time;
 *   - time_kernel(): warm up first (at least one untimed launch), then `reps`
 *     timed samples, summarised as median, p5 and p95 (stats_of in
 *     common/stats.h, or measure() in common/timing.h, which does warm-up,
 *     samples and statistics at once).
 * exercises/given/ex03.h is the contract.
 *
 * The target: your median within 2% of both known durations, with a warm-up
 * launch before the samples.
 *
 * Build and run:   make ex03 && ./ex03          (./ex03 --quick: 5 samples)
 * ./ex03 prints your medians beside the known durations, the verdicts, and
 * what the grader would give. As given it measures nothing, says so, and
 * exits 4.
 */
#include "ex03.h"
#include "streamlab.h"

#include <string.h>

/* One launch, timed; returns milliseconds. The shape measure() expects: ctx
 * is the kernel_bench. */
static double time_one_launch(void *ctx)
{
    kernel_bench *bench = (kernel_bench *)ctx;
    /* TODO(student): record bench->timer's start event in bench->stream
     * before the launch and its stop event after it, in the same stream, and
     * return the time between them (event_timer_ms waits for the stop
     * event). A host clock around the launch alone would time only the
     * launch call. */
    bench->launch();
    return 0;
}

stats time_kernel(kernel_bench *bench, int reps)
{
    stats s;
    memset(&s, 0, sizeof s); /* n = 0: "not measured" */
    /* TODO(student): launch at least once untimed (warm-up), then take `reps`
     * samples with time_one_launch(bench) and return stats_of(samples, reps);
     * or let measure(time_one_launch, bench, warmup, reps) do all three. */
    (void)bench;
    (void)reps;
    (void)time_one_launch; /* delete this line once you call it */
    return s;
}
