/* ex02: let the copy run while the host works: pinned staging buffers.
 *
 * The reference solution: exercises/ex02_pinned_memory.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex02.h.
 *
 * Build and run:   make sol02 && ./sol02
 */
#include "ex02.h"
#include "streamlab.h"

void make_staging(uint32_t *stage[STAGES], size_t bytes)
{
    /* SOLUTION: from pinned memory the copy engine reads the buffer itself,
     * so cudaMemcpyAsync only queues the copy and returns: the host goes on
     * to produce the next chunk into the other buffer while this one is on
     * its way. (From malloc'd memory the driver must first copy the data
     * into a pinned buffer of its own, on the host's time, and the call
     * returns when all of it has gone.) Two buffers of one chunk each are
     * pinned once, at start-up, and serve every chunk of every run; pinning
     * takes time and RAM the OS can no longer page out (lab02 measures it),
     * so one pins staging buffers, not the dataset. cudaHostRegister on the
     * malloc'd buffers would do as well. */
    for (int b = 0; b < STAGES; b++)
        CUDA_CHECK(cudaMallocHost((void **)&stage[b], bytes));
}

void free_staging(uint32_t *stage[STAGES])
{
    /* SOLUTION: cudaMallocHost's memory goes back with cudaFreeHost; it was
     * never malloc's to free. */
    for (int b = 0; b < STAGES; b++)
        CUDA_CHECK(cudaFreeHost(stage[b]));
}
