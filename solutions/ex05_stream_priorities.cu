/* ex05: let the latency-critical kernel jump the queue.
 *
 * The reference solution: exercises/ex05_stream_priorities.cu with its TODO
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex05.h.
 *
 * Build and run:   make sol05 && ./sol05
 */
#include "ex05.h"
#include "streamlab.h"

cudaStream_t create_critical_stream(void)
{
    cudaStream_t s;
    int least, greatest;
    /* SOLUTION: ask for the greatest priority (the most negative number). The
     * block scheduler then hands every block slot that frees to this stream's
     * pending blocks before the background's, so the critical kernel waits for
     * one background block to end, not for all the queued ones. Running blocks
     * are not interrupted: the wait is up to one block duration. */
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    return s;
}
