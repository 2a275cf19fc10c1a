/* affine_work and its launcher; see kernels.h. */
#include "kernels.h"
#include "../common/check.h"

__global__ void affine_work(const uint32_t *in, uint32_t *out, size_t n, uint32_t a,
                            uint32_t b, int steps)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t x = in[i];
        for (int s = 0; s < steps; s++)
            x = a * x + b;
        out[i] = x;
    }
}

extern "C" void affine_launch(const uint32_t *d_in, uint32_t *d_out, size_t n, int steps,
                              cudaStream_t stream)
{
    /* Enough blocks for every SM to hold several, capped by the work there is:
     * the grid-stride loop covers the rest. */
    const int threads = 256;
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    size_t needed = (n + threads - 1) / threads;
    size_t blocks = (size_t)sms * 8;
    if (needed < blocks)
        blocks = needed ? needed : 1;
    affine_work<<<(unsigned)blocks, threads, 0, stream>>>(d_in, d_out, n, AFFINE_A, AFFINE_B,
                                                          steps);
    CHECK_LAUNCH();
}
