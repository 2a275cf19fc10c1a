/* Kernels of known duration; see kernels.h. */
#include "kernels.h"
#include "../common/check.h"
#include "../common/timing.h"

__global__ void spin_for_ns(uint64_t ns)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < ns) {
    }
}

__global__ void spin_and_log(uint64_t ns, uint64_t tag, launch_record *out)
{
    uint64_t start = globaltimer_ns(), now;
    do
        now = globaltimer_ns();
    while (now - start < ns);
    out->tag = tag;
    out->start_ns = start;
    out->end_ns = now;
}

long long host_minus_gpu_clock_ns(cudaStream_t stream, launch_record *pinned, int reads)
{
    static uint64_t tag; /* each reading its own: a late write cannot pass for the next */
    volatile launch_record *r = pinned;
    long long best = 0;
    for (int i = 0; i < reads; i++) {
        r->tag = 0, r->end_ns = 0;
        spin_and_log<<<1, 1, 0, stream>>>(0, ++tag, pinned);
        CHECK_LAUNCH();
        for (double t0 = host_time_ms(); r->tag != tag || !r->end_ns;)
            if (host_time_ms() - t0 > 1000) /* a kernel that ran writes within microseconds */
                fail_wrong("a kernel's write to pinned memory never reached the host");
        long long off = (long long)(host_time_ms() * 1e6) - (long long)r->end_ns;
        best = i == 0 || off < best ? off : best;
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return best;
}

__global__ void background_block(uint64_t block_ns, unsigned long long *blocks_done)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < block_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(blocks_done, 1ull);
}

__global__ void spin_blocks(uint64_t ns, uint64_t tag, block_record *log)
{
    uint64_t start = globaltimer_ns(), now;
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    do
        now = globaltimer_ns();
    while (now - start < ns);
    block_record rec = {tag, start, now, sm, blockIdx.x};
    log[blockIdx.x] = rec;
}

/* The dynamic shared memory that makes one block of `kernel` (`threads`
 * threads, no shared memory of its own) fill an SM on the current GPU;
 * exits 3 where two still fit. */
extern "C" size_t whole_sm_footprint_threads(const void *kernel, int threads)
{
    int device, per_block = 0, per_sm = 0, fits = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    per_block));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, kernel, threads, per_block));
    if (fits != 1)
        fail_cannot_run("a block with %d bytes of shared memory (of %d per SM) does not hold "
                        "an SM alone here (%d fit): kernels' footprints are unknown",
                        per_block, per_sm, fits);
    return (size_t)per_block;
}

static size_t whole_sm_footprint(const void *kernel) { return whole_sm_footprint_threads(kernel, 1); }

size_t spin_blocks_footprint(void)
{
    return whole_sm_footprint((const void *)spin_blocks);
}

void spin_blocks_launch(int blocks, size_t footprint, uint64_t ns, uint64_t tag,
                        block_record *log, cudaStream_t stream)
{
    spin_blocks<<<blocks, 1, footprint, stream>>>(ns, tag, log);
    CHECK_LAUNCH();
}

__global__ void pipeline_stage(uint64_t ns, uint32_t add, uint32_t *value, stage_span *span)
{
    uint64_t start = globaltimer_ns(), now;
    uint32_t x = 0;
    if (blockIdx.x == 0) /* read as the stage begins: an early start reads the old value */
        x = *(volatile uint32_t *)value;
    do
        now = globaltimer_ns();
    while (now - start < ns);
    if (blockIdx.x == 0)
        *value = pipeline_stage_reference(x, add);
    atomicMin(&span->start_ns, (unsigned long long)start);
    atomicMax(&span->end_ns, (unsigned long long)now);
}

__global__ void pipeline_join(uint64_t ns, uint32_t add, const uint32_t *x, const uint32_t *y,
                              uint32_t *out, stage_span *span)
{
    uint64_t start = globaltimer_ns(), now;
    /* both read as the stage begins: a join before a branch's end reads its old word */
    uint32_t a = *(const volatile uint32_t *)x, b = y ? *(const volatile uint32_t *)y : 0;
    do
        now = globaltimer_ns();
    while (now - start < ns);
    *out = pipeline_join_reference(a, b, add);
    span->start_ns = start, span->end_ns = now; /* one block: no other to widen it */
}

void pipeline_join_launch(uint64_t ns, uint32_t add, const uint32_t *x, const uint32_t *y,
                          uint32_t *out, stage_span *span, cudaStream_t stream)
{
    pipeline_join<<<1, 1, 0, stream>>>(ns, add, x, y, out, span);
    CHECK_LAUNCH();
}

size_t pipeline_stage_footprint(void)
{
    return whole_sm_footprint((const void *)pipeline_stage);
}

void pipeline_stage_launch(int blocks, size_t footprint, uint64_t ns, uint32_t add,
                           uint32_t *value, stage_span *span, cudaStream_t stream)
{
    pipeline_stage<<<blocks, 1, footprint, stream>>>(ns, add, value, span);
    CHECK_LAUNCH();
}
