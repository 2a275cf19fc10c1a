/* ex12: replay a pipeline's step as a CUDA graph.
 *
 * The task: the program around this file (exercises/given/ex12.cu) runs
 * lab08's three-stage pipeline over 8 batches, 40 steps back to back, each
 * stage a few microseconds. p->issue_step() queues one step from the
 * streams: 24 launches and 39 event calls (exercises/given/ex12.cu's
 * opening comment counts them), forked from p->stream[0] and joined back
 * into it. With stages this short, issuing a step costs the host more than
 * running it costs the GPU. As given, run_step() issues every step from
 * the streams: right, and no faster than the program's own stream run.
 * Make the host's work one call a step:
 *   - prepare_steps(): capture what p->issue_step() queues, from
 *     p->stream[0], into a graph (cudaStreamBeginCapture ... EndCapture);
 *     the fork and join bring the other two streams into the capture. Then
 *     instantiate it (and upload it, so the first replay does not pay);
 *   - run_step(): replay it in p->stream[0], one cudaGraphLaunch;
 *   - finish_steps(): destroy what you made.
 * The program draws fresh stage times and increments every run, before
 * prepare_steps(): a graph kept from an earlier run computes wrong words.
 * exercises/given/ex12.h is the contract.
 *
 * The target (lab12's model): a step replayed at the GPU's pace instead of
 * the host's, at least 1.3x faster per step than the program's own stream
 * run in the same rounds, the host in run_step() under a quarter of its
 * time issuing a step, and every word right. The grade reads the speed as
 * graph_efficiency instead: the streams' same step at the GPU's own pace
 * (behind a gate, in the same rounds) over yours, at least 1.1 (level two
 * 1.0; grader/rubrics/ex12.ini says why).
 *
 * Expected numbers on an H100:
 *   - the reference solution, three runs on an H100 (2026-11-23): speedup
 *     2.64, 2.23 and 2.63, host_ratio 0.017, 0.016 and 0.021 (the graph's
 *     step 47.9-55.9 us, the streams' 122.8-137.1 us); graph_efficiency
 *     1.32-1.48 in six runs the same day (level two 1.23-1.43);
 *   - as given, two runs: speedup 1.01 and 0.98, host_ratio 0.99 and 1.02
 *     (labs/lab12_cuda_graphs/README.md, "Exercise").
 *
 * Level two (graded apart, below finish_steps): every step adds its own
 * word k, fresh each step, as a learning rate changes every step in
 * training. The same bars: at least 1.3x faster per step than the streams,
 * the host under a quarter of their issue time, every word right.
 * Expected numbers on an H100 (level two, the reference solution): 2.07x
 * per step over the streams (target 1.3x), the host well under the target
 * of a quarter (its time a step is your prediction).
 *
 * Build and run:   make ex12 && ./ex12        (./ex12 --quick: a short run)
 * As given the results are right, the speedup is 1x and it exits 4.
 * Stuck? lab12's handout has hints, from gentle to explicit, under "Stuck?".
 */
#include "ex12.h"
#include "streamlab.h"

void prepare_steps(const pipeline *p)
{
    /* TODO(student): capture p->issue_step() from p->stream[0] into a
     * graph, instantiate it and upload it. Keep what run_step() and
     * finish_steps() need in static variables of this file. */
    (void)p;
}

void run_step(const pipeline *p)
{
    /* TODO(student): this issues the whole step from the host, every
     * time. Replay your graph instead. */
    p->issue_step();
}

void finish_steps(const pipeline *p)
{
    /* TODO(student): destroy the executable graph and the graph. */
    (void)p;
}

/* ---- Level two: a word k that changes every step (graded apart) ----
 * p->issue_step_with(k) queues a step with k by value; p->issue_step_reading
 * (d_k) the same step reading k from device memory (exercises/given/ex12.h).
 * ./ex12 prints your prediction beside the host time it measures. */

/* TODO(student): before you write level two, work out from lab12's costs
 * (its handout: capture, instantiate, update, launch) what one
 * level2_step() of your design will cost the host, in microseconds, for a
 * step of 24 kernels and 39 event calls. */
const double LEVEL2_PREDICTED_HOST_US = 0;

void level2_prepare(const level2_pipeline *p)
{
    (void)p; /* TODO(student): whatever your steps need, made once here. */
}

void level2_step(const level2_pipeline *p, uint32_t k)
{
    /* TODO(student): the goal: the step with this k, at least 1.3x faster
     * per step than the program's stream run, the host in here under a
     * quarter of its time issuing a step.
     * The contract: the step's work exactly as p->issue_step_with(k) would
     * queue it, after the step before, each step with its own k; return
     * without waiting for the GPU to reach this step.
     * How it is measured: as level one, in rounds beside the program's own
     * stream run, every word checked against the CPU reference with every
     * step's k; the host's time in here, step by step.
     * Ask: of what a step needs, what changes from one step to the next,
     * and what does changing only that cost? */
    p->issue_step_with(k);
}

void level2_finish(const level2_pipeline *p)
{
    (void)p; /* TODO(student): release what level2_prepare() made. */
}
