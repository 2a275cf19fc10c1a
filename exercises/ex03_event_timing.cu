/* ex03: a timing harness for a kernel of known duration.
 *
 * The task: the program around this file (exercises/given/ex03.cu) hands
 * you a kernel that spins for a known time by the GPU's own clock (twice: a
 * short one of 1.5-3 ms and a long one of 5-8 ms, drawn at random every run)
 * and asks time_kernel() for its duration. Complete the TODO(student) parts
 * so that it times the kernel as lab03 teaches: its own time on the GPU, not
 * the launch call's, and not one lucky or unlucky sample (the contract:
 * exercises/given/ex03.h). The target: your median within 2% of both
 * kernels as the program's own events read them, a pair it records right
 * around each launch (the duration plus the kernel's start on an idle GPU,
 * some microseconds), with a warm-up launch before the samples. What the
 * reference reads on an H100: lab03's handout, "The exercise".
 *
 * Level two (graded apart, below time_kernel): the same timing on a GPU
 * that is not yours alone. Before each launch a background in another
 * stream takes every SM for 2 to 4 ms (drawn at each call), and the
 * kernel's one block needs a whole SM, so it waits for the background to
 * end. The target: the median of the kernel's own duration, from when it
 * starts on an SM to when it ends, within 2% of both known durations, with
 * no host-side wait between start_background() and launch() (after launch(),
 * waiting for your stop event to read the sample is fine, as in level one).
 * Predict first (LEVEL2_PREDICTED_RATIO): ./ex03 prints it beside what the
 * program's own events read.
 *
 * make ex03 && ./ex03 (--quick: 5 samples) prints your medians beside the
 * known durations and the program's events, the verdicts and what the grader
 * would give. As given it measures nothing, says so, and exits 4. Stuck?
 * lab03's handout, "Stuck?".
 */
#include "ex03.h"
#include "streamlab.h"

#include <string.h>

/* One launch, timed; returns milliseconds. The shape measure() expects: ctx
 * is the kernel_bench. */
static double time_one_launch(void *ctx)
{
    kernel_bench *bench = (kernel_bench *)ctx;
    /* TODO(student): the goal: return how long this one launch of the
     * kernel ran on the GPU, in milliseconds. The launch returns before the
     * kernel runs, so a clock read around it on the host times only the
     * call. What can stamp a time on the GPU, in the kernel's stream, just
     * before and just after it?
     * The contract: exactly one bench->launch() per call; use bench->timer
     * and bench->stream (common/timing.h has helpers for the pair: the
     * program checks that they lie around your last launch); read the time
     * only once the GPU has passed your second mark. */
    bench->launch();
    return 0;
}

stats time_kernel(kernel_bench *bench, int reps)
{
    stats s;
    memset(&s, 0, sizeof s); /* n = 0: "not measured" */
    /* TODO(student): the goal: statistics of `reps` samples of the kernel's
     * duration that a cold first launch cannot spoil.
     * The contract: at least one launch before the samples that is not among
     * them; exactly `reps` timed launches after it; return their median, p5
     * and p95 (common/stats.h and common/timing.h have what you need).
     * How it is measured: your median against what the program's own events
     * read around the same launches, on two durations it drew, and the
     * launches in the kernel's own log on the GPU beyond your samples (your
     * warm-up). */
    (void)bench;
    (void)reps;
    (void)time_one_launch; /* delete this line once you call it */
    return s;
}

/* ---- Level two: timed while another stream holds the GPU (graded apart) ----
 * bench->start_background() queues, in stream bench->background, work that
 * holds every SM for a while; bench->launch() then queues the kernel in
 * bench->stream, and its block waits for an SM. The program draws every
 * background's length and both kernels' durations; you get neither. */

/* TODO(student): predict before you write time_under_load(): by lab03's
 * model, what do events recorded in bench->stream just before and just
 * after launch() read, as a multiple of the kernel's duration, when the
 * background started just before it lasts as long as the kernel? ./ex03
 * prints your answer beside what the program's own events read. No points
 * ride on it. */
const double LEVEL2_PREDICTED_RATIO = 0;

stats time_under_load(loaded_bench *bench, int reps)
{
    stats s;
    memset(&s, 0, sizeof s); /* n = 0: "not measured" */
    /* TODO(student): the goal: statistics of `reps` samples of the kernel's
     * own duration on the GPU, from when it starts on an SM to when it ends,
     * each launched while a background holds every SM; not the time it
     * waited for an SM.
     * The contract: each sample (and each untimed one) is one
     * bench->start_background() and then one bench->launch(), issued while
     * that background still runs; at least one untimed sample first, then
     * exactly `reps` timed ones; bench->timer and bench->stream as in level
     * one, and events of your own in any of the bench's streams; no wait
     * and no delay of your own between start_background() and launch().
     * How it is measured: your median against two durations the program
     * drew; the kernel's and every background's own records on the GPU,
     * which also say whether each kernel waited for its background; and
     * whether the background was still running when you called launch() (a
     * kernel launched on an idle GPU is not what is asked: the median then
     * counts as not measured). */
    bench->start_background();
    bench->launch();
    (void)reps;
    return s;
}
