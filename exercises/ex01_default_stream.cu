/* ex01: make two streams overlap without removing the legacy-stream call.
 *
 * The task: the program around this file (exercises/given/ex01.cu) runs two
 * independent kernels of 20 ms (5 with --quick) on the two streams you create
 * here, and between their launches one tiny kernel in the legacy default
 * stream, as a library call might (a cudaMemset, a synchronous copy, a kernel
 * launched on stream 0). With the streams as given the kernels take turns.
 * Make them run side by side WITHOUT removing or moving that call: complete
 * the TODO(student) in create_work_streams(), and explain there, in a
 * comment, why your change works. exercises/given/ex01.h is the contract.
 *
 * The target: your streams at least 1.8x faster than the program's blocking
 * streams on the same work in the same run (the median of the pairs' ratios;
 * 2x would be perfect overlap, 1x is no overlap at all).
 *
 * Expected numbers on an H100:
 *   - the reference solution, two runs on an H100 (2026-11-22):
 *     speedup_vs_blocking 2.00 and 2.00;
 *   - lab01 measured the same two 20 ms kernels with a legacy-stream call
 *     between them: 40.06 ms on blocking streams, 20.07 ms on non-blocking
 *     ones, 2.00x (docs/results/h100/lab01.csv).
 *
 * Level two (graded apart, below create_work_streams): the same three
 * launches from three host threads: worker 0 launches kernel 1, the main
 * thread the legacy-stream call, worker 1 kernel 2, each worker into the
 * stream level2_worker_stream() returns in that thread. The program times
 * them against each worker's own per-thread default stream
 * (cudaStreamPerThread), in pairs. The target: your worker streams at least
 * 1.8x faster than the per-thread ones (level one's target, the same two
 * kernels). Predict first, from lab01's model: do two per-thread default
 * streams overlap across a legacy-stream call? As handed out each worker
 * uses its per-thread default stream, as the program's side of each pair
 * does: both sides alike, 1.00. Expected on an H100 (2026-11-23): the
 * reference solution's worker streams took 20.2 ms for the two 20 ms
 * kernels, 1.01 kernel lengths (./ex01's "your worker streams" time, beside
 * its model, the longest kernel), and met the target.
 *
 * Build and run:   make ex01 && ./ex01          (./ex01 --quick: 5 ms kernels)
 * ./ex01 prints level one's two times beside their predictions, the verdict,
 * and what the grader would give. As given both take the sum, the verdict is
 * NO, and so is level two's: it exits 4. Stuck? lab01's handout has hints,
 * from gentle to explicit, under "Stuck?".
 */
#include "ex01.h"
#include "streamlab.h"

void create_work_streams(cudaStream_t streams[2])
{
    /* TODO(student): the goal: kernel 1 in streams[0] and kernel 2 in
     * streams[1] run at the same time, although the program launches a tiny
     * kernel in the legacy default stream between them and you may not
     * remove or move it. As given, the two streams are ordered with respect
     * to that legacy-stream kernel, so the kernels take turns: why? (lab01's
     * model says which streams the legacy stream waits for.)
     * The contract: create exactly two streams, which live until the program
     * ends; the tiny kernel still runs; no change outside this function.
     * How it is measured: the same work on your streams and on two blocking
     * streams of the program's own, in pairs, from each kernel's record on
     * the GPU. Explain in this comment why your streams overlap. */
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamCreate(&streams[i]));
}

/* ---- Level two: two host threads (graded apart) ----
 * ./ex01 prints your prediction beside the per-thread streams' measured
 * time (and their model's, once you have written your prediction), your
 * streams' time beside its model, and how long the two kernels ran at once
 * on the GPU (their own records). */

/* TODO(student): before you change level2_worker_stream(), work out from
 * lab01's model how long the three launches take when each worker launches
 * into its own per-thread default stream, in kernel lengths: 1 if the two
 * kernels overlap, 2 if they take turns. */
const double LEVEL2_PREDICTED_PER_THREAD_KERNELS = 0;

cudaStream_t level2_worker_stream(int worker)
{
    (void)worker;
    /* TODO(student): the goal: worker 0's kernel 1 and worker 1's kernel 2
     * run at the same time, although the main thread launches the tiny
     * kernel in the legacy default stream between them. As handed out each
     * worker uses its own per-thread default stream, a stream no other
     * thread's work goes to: is that enough? Your prediction above says.
     * The contract: return a stream for this worker (called once in each
     * worker thread, worker 0 then 1), which lives until the program ends;
     * no GPU work and no synchronisation here; the legacy-stream call stays,
     * and the build stays as given (no --default-stream per-thread, no
     * macro: a library you link is compiled as it is).
     * How it is measured: the same work on your worker streams and on the
     * workers' per-thread default streams, in pairs, on the host clock from
     * an idle GPU, and every kernel's record on the GPU. Explain in this
     * comment why your streams overlap where the per-thread ones do not. */
    return cudaStreamPerThread; /* this thread's own default stream */
}
