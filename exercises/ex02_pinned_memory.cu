/* ex02: let the copy run while the host works: pinned staging buffers.
 *
 * The task: the program around this file (exercises/given/ex02.cu) produces
 * a dataset on the host chunk by chunk (fresh random words, standing in for
 * reading a file or decoding) and sends each chunk to the GPU with
 * cudaMemcpyAsync, through the two staging buffers you allocate here, taken
 * in turn, so that the host can produce chunk i+1 while chunk i is on its
 * way. As given it does not happen: with the buffers as allocated here,
 * each cudaMemcpyAsync holds the host until its copy is over, so the host's
 * work and the copies take turns. Complete the TODO(student) in
 * make_staging() and free_staging(). exercises/given/ex02.h is the contract.
 *
 * The target: the copies overlap the host's work: at least 50% of the
 * shorter of the two (host work, copies) runs while the other does (the
 * model: all but one chunk's worth, (n-1)/n, 88% with the default 8 chunks),
 * and cudaMemcpyAsync from your buffers returns before the copy is half done.
 *
 * Expected numbers on an H100:
 *   - the reference solution, two runs on an H100 (2026-11-22): overlap 0.80
 *     and 0.79, call_fraction 0.021 and 0.033;
 *   - lab02 measured cudaMemcpyAsync of 64 MiB returning after 8.9 ms from
 *     pageable memory (the copy: 8.9 ms) and after 0.008 ms from pinned
 *     memory (the copy: 1.23 ms) (docs/results/h100/lab02.csv).
 *
 * Build and run:   make ex02 && ./ex02        (./ex02 --quick: chunks of 8 MiB)
 * ./ex02 prints the host's work, the copies and the wall time beside the
 * model's, every chunk checked against the words the host produced, the
 * verdicts, and what the grader would give. As given the copies overlap
 * nothing: it says NO, names the TODO and exits 4. Stuck? lab02's handout
 * has hints, from gentle to explicit, under "Stuck?".
 */
#include "ex02.h"
#include "streamlab.h"

#include <stdlib.h>

void make_staging(uint32_t *stage[STAGES], size_t bytes)
{
    /* TODO(student): the goal: a cudaMemcpyAsync from these buffers only
     * queues the copy and returns, so that the host produces the next chunk
     * while this one travels. As given the call returns only after its copy:
     * what kind of host memory does the copy engine need to read by itself
     * (lab02's model)?
     * The contract: STAGES separate buffers of `bytes` each, host memory the
     * host can write; they live until free_staging(). Keep what you pin
     * small: pinned memory cannot be paged out.
     * How it is measured: the program asks CUDA what kind of memory they
     * are, times each call against its copy, and checks every word. */
    for (int b = 0; b < STAGES; b++)
        stage[b] = (uint32_t *)xmalloc(bytes);
}

void free_staging(uint32_t *stage[STAGES])
{
    /* TODO(student): release what make_staging() allocated, with the call
     * that matches the one that allocated it. */
    for (int b = 0; b < STAGES; b++)
        free(stage[b]);
}
