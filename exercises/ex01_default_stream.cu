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
 * Build and run:   make ex01 && ./ex01          (./ex01 --quick: 5 ms kernels)
 * ./ex01 prints both times beside their predictions, the verdict, and what
 * the grader would give. As given both measurements take the sum, the
 * verdict is NO, and it exits 4. Stuck? lab01's handout has hints, from
 * gentle to explicit, under "Stuck?".
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
