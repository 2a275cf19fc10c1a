/* ex10: free a buffer that another stream still reads.
 *
 * The reference solution: exercises/ex10_cross_stream_free.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex10.h.
 *
 * Build and run:   make sol10 && ./sol10
 */
#include "ex10.h"
#include "streamlab.h"

void free_after_use_wait(void *buffer, cudaStream_t owner, cudaStream_t user)
{
    /* SOLUTION: an event recorded in `user` now stands for everything it
     * has queued, its read included; `owner` waits for it on the GPU, so
     * the free, and the next allocation that may reuse the memory, come
     * after the read. The host only queues. Destroying the event at once
     * is allowed: its resources go when it has completed. */
    cudaEvent_t read_done;
    CUDA_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(read_done, user));
    CUDA_CHECK(cudaStreamWaitEvent(owner, read_done, 0));
    CUDA_CHECK(cudaFreeAsync(buffer, owner));
    CUDA_CHECK(cudaEventDestroy(read_done));
}

void free_in_last_user(void *buffer, cudaStream_t owner, cudaStream_t user)
{
    /* SOLUTION: queued in `user`, the free comes after the read by stream
     * order alone, and `owner` goes on: it is not made to wait. (PyTorch's
     * tensor.record_stream(user) makes its caching allocator do the same.) */
    (void)owner;
    CUDA_CHECK(cudaFreeAsync(buffer, user));
}
