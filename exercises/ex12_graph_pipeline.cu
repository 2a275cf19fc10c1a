/* ex12: replay a pipeline's step as a CUDA graph.
 *
 * The task: the program around this file (exercises/given/ex12.cu) runs
 * lab08's three-stage pipeline over 8 batches, 40 steps back to back, each
 * stage a few microseconds. p->issue_step() queues one step from the
 * streams: 24 launches and 32 event calls, forked from p->stream[0] and
 * joined back into it. With stages this short, issuing a step costs the
 * host more than running it costs the GPU. As given, run_step() issues
 * every step from the streams: right, and no faster than the program's own
 * stream run. Make the host's work one call a step:
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
 * time issuing a step, and every word right.
 *
 * Expected numbers on an H100:
 *   - the reference solution, three runs on an H100 (2026-11-23): speedup
 *     2.64, 2.23 and 2.63, host_ratio 0.017, 0.016 and 0.021 (the graph's
 *     step 47.9-55.9 us, the streams' 122.8-137.1 us);
 *   - as given, two runs: speedup 1.01 and 0.98, host_ratio 0.99 and 1.02
 *     (labs/lab12_cuda_graphs/README.md, "Exercise").
 *
 * Build and run:   make ex12 && ./ex12        (./ex12 --quick: a short run)
 * As given the results are right, the speedup is 1x and it exits 4.
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
