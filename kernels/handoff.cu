/* A buffer handed from one stream to another, around its free, and the pool
 * it comes from; see kernels.h. */
#include "kernels.h"
#include "../common/check.h"

extern "C" cudaMemPool_t default_mem_pool(int device)
{
    int pools = 0;
    cudaMemPool_t pool;
    CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device));
    if (!pools)
        fail_cannot_run("this GPU or driver has no memory pools: cudaMallocAsync is unsupported");
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    return pool;
}

extern "C" uint32_t *handoff_begin(const buffer_handoff *h, uint64_t seed)
{
    uint32_t *x;
    CUDA_CHECK(cudaMallocAsync((void **)&x, h->words * sizeof *x, h->owner));
    seeded_fill_launch(x, h->words, seed, h->owner);
    CUDA_CHECK(cudaEventRecord(h->filled, h->owner));
    CUDA_CHECK(cudaStreamWaitEvent(h->user, h->filled, 0)); /* the user reads X once written */
    CUDA_CHECK(cudaMemsetAsync(h->d_wrong, 0, sizeof *h->d_wrong, h->user));
    spin_for_ns<<<1, 1, 0, h->user>>>(h->delay_ns);
    CHECK_LAUNCH();
    seeded_count_launch(x, h->words, seed, h->d_wrong, h->user);
    CUDA_CHECK(cudaEventRecord(h->used, h->user));
    return x;
}

extern "C" unsigned long long handoff_end(const buffer_handoff *h, const uint32_t *x,
                                          uint64_t seed, int *reused)
{
    uint32_t *y;
    unsigned long long wrong;
    CUDA_CHECK(cudaMallocAsync((void **)&y, h->words * sizeof *y, h->owner));
    seeded_fill_launch(y, h->words, ~seed, h->owner); /* words the user must never count */
    CUDA_CHECK(cudaFreeAsync(y, h->owner));
    *reused = x == y;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(&wrong, h->d_wrong, sizeof wrong, cudaMemcpyDeviceToHost));
    return wrong;
}
