/* Checkable work: affine_work, seeded_fill and seeded_count_wrong, and their
 * launchers; see kernels.h. */
#include "kernels.h"
#include "../common/check.h"

__global__ void affine_work(const uint32_t *in, uint32_t *out, size_t n, uint32_t a,
                            uint32_t b, int steps, unsigned long long *span)
{
    if (span && threadIdx.x == 0)
        atomicMin(&span[0], (unsigned long long)globaltimer_ns());
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t x = in[i];
        for (int s = 0; s < steps; s++)
            x = a * x + b;
        out[i] = x;
    }
    if (span) { /* the same for every thread of the block: __syncthreads is safe here */
        __syncthreads();
        if (threadIdx.x == 0)
            atomicMax(&span[1], (unsigned long long)globaltimer_ns());
    }
}

/* Enough blocks for every SM to hold several, capped by the work there is:
 * the grid-stride loop covers the rest. The SM count is asked once per GPU,
 * not inside a lab's timed loops. */
static unsigned int grid_for(size_t n)
{
    static int sms_of[64];
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    int *sms = &sms_of[device & 63];
    if (!*sms)
        CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device));
    size_t needed = (n + AFFINE_THREADS - 1) / AFFINE_THREADS, most = (size_t)*sms * 8;
    return (unsigned int)(needed < 1 ? 1 : needed < most ? needed : most);
}

extern "C" void affine_launch_with_span(const uint32_t *d_in, uint32_t *d_out, size_t n,
                                        int steps, unsigned long long *span,
                                        cudaStream_t stream)
{
    affine_work<<<grid_for(n), AFFINE_THREADS, 0, stream>>>(d_in, d_out, n, AFFINE_A, AFFINE_B,
                                                           steps, span);
    CHECK_LAUNCH();
}

extern "C" void affine_launch(const uint32_t *d_in, uint32_t *d_out, size_t n, int steps,
                              cudaStream_t stream)
{
    affine_launch_with_span(d_in, d_out, n, steps, NULL, stream);
}

__global__ void seeded_fill(uint32_t *p, size_t n, uint64_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = seeded_word(seed, i);
}

/* Each thread counts its own, then one atomic per warp: a count of millions
 * of wrong words costs no more than a count of none. */
__global__ void seeded_count_wrong(const uint32_t *p, size_t n, uint64_t seed,
                                   unsigned long long *wrong)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long mine = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        mine += p[i] != seeded_word(seed, i);
    for (int off = 16; off > 0; off /= 2)
        mine += __shfl_down_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(wrong, mine);
}

extern "C" void seeded_fill_launch(uint32_t *p, size_t n, uint64_t seed, cudaStream_t stream)
{
    seeded_fill<<<grid_for(n), AFFINE_THREADS, 0, stream>>>(p, n, seed);
    CHECK_LAUNCH();
}

extern "C" void seeded_count_launch(const uint32_t *p, size_t n, uint64_t seed,
                                    unsigned long long *wrong, cudaStream_t stream)
{
    seeded_count_wrong<<<grid_for(n), AFFINE_THREADS, 0, stream>>>(p, n, seed, wrong);
    CHECK_LAUNCH();
}
