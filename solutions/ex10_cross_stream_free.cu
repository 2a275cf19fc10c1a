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

/* SOLUTION: what the pool reserves for n bytes alive at once: whole
 * granules, the buffers packed into them (on an H100, 32 MiB granules:
 * 33.9 + 36.0 MiB took 96 MiB, not 64 + 64). */
static size_t rounded(size_t n, size_t g) { return (n + g - 1) / g * g; }

cudaMemPool_t level2_make_pool(const level2_loop *loop)
{
    cudaMemPoolProps props = {};
    cudaMemPool_t pool;
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = loop->device;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    /* SOLUTION: alive at once: `out` and ONE workspace. Each layer frees
     * its workspace before the next allocates one of the same size in the
     * same stream, and the pool hands that one the freed block (lab10's
     * part 4: the owner's next buffer got X's address). So the pool
     * reserves round(out + work), whatever the layers. At each
     * synchronise it hands back what it holds over its release threshold
     * (part 3): less than that, and the next iteration maps it again; more
     * holds memory no iteration uses. */
    uint64_t keep = rounded(loop->out_bytes + loop->work_bytes, loop->granularity);
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return pool;
}

/* SOLUTION: lab10's part 3 on the H100: threshold 0 186.4 us an iteration,
 * unlimited 13.0 us, for 64 MiB: (186.4 - 13.0) / 64 us per MiB remapped. */
const double LEVEL2_PREDICTED_REMAP_US_PER_MIB = (186.4 - 13.0) / 64;
