/* ex02: let the copy run while the host works: pinned staging buffers.
 *
 * The task: the program around this file (exercises/given/ex02.cu) produces
 * a dataset on the host chunk by chunk (fresh random words, standing in for
 * reading a file or decoding) and sends each chunk to the GPU with
 * cudaMemcpyAsync, through the two staging buffers you allocate here, taken
 * in turn, so that the host can produce chunk i+1 while chunk i is on its
 * way. As given it does not happen: the buffers come from malloc, pageable
 * memory, from which cudaMemcpyAsync returns only once the driver has copied
 * everything through a pinned buffer of its own, so the host's work and the
 * copies take turns. Complete the TODO(student) in make_staging() and
 * free_staging(): pinned staging buffers (cudaMallocHost, cudaFreeHost).
 * exercises/given/ex02.h is the contract.
 *
 * The target: the copies overlap the host's work: at least 50% of the
 * shorter of the two (host work, copies) runs while the other does (the
 * model: all but one chunk's worth, (n-1)/n, 88% with the default 8 chunks),
 * and cudaMemcpyAsync from your buffers returns before the copy is half done.
 *
 * Build and run:   make ex02 && ./ex02        (./ex02 --quick: chunks of 8 MiB)
 * ./ex02 prints the host's work, the copies and the wall time beside the
 * model's, every chunk checked against the words the host produced, the
 * verdicts, and what the grader would give. As given the copies overlap
 * nothing: it says NO, names the TODO and exits 4.
 */
#include "ex02.h"
#include "streamlab.h"

#include <stdlib.h>

void make_staging(uint32_t *stage[STAGES], size_t bytes)
{
    /* TODO(student): cudaMemcpyAsync from pageable memory (malloc) returns
     * only when the copy is over. Allocate the staging buffers pinned, with
     * cudaMallocHost, so that the call queues the copy and returns at once. */
    for (int b = 0; b < STAGES; b++)
        stage[b] = (uint32_t *)xmalloc(bytes);
}

void free_staging(uint32_t *stage[STAGES])
{
    /* TODO(student): free what make_staging() allocated, the matching way
     * (cudaFreeHost for cudaMallocHost). */
    for (int b = 0; b < STAGES; b++)
        free(stage[b]);
}
