/* spin_for_ns: a kernel of known duration; see kernels.h. */
#include "kernels.h"

/* The GPU's nanosecond wall clock. Unlike clock64(), which counts SM cycles
 * and so changes meaning with the clock speed, %globaltimer is in ns. It
 * advances in steps of about a microsecond on some GPUs: fine for durations
 * of milliseconds, the scale the labs use. */
__device__ static inline uint64_t globaltimer_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_for_ns(uint64_t ns)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < ns) {
    }
}
