/* Kernels of known duration; see kernels.h. */
#include "kernels.h"

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

__global__ void background_block(uint64_t block_ns, unsigned long long *blocks_done)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < block_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(blocks_done, 1ull);
}
