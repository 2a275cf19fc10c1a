/* spin_for_ns: a kernel of known duration; see kernels.h. */
#include "kernels.h"

__global__ void spin_for_ns(uint64_t ns)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < ns) {
    }
}
