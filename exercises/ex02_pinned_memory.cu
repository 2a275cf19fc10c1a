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
 * Level two (graded apart, below free_staging): the results come back.
 * run_round_trip() sends 8 chunks up and takes their results back through
 * upload and result slots of your make_staging(); the host produces each
 * chunk and consumes (checks) its results, so it is a stage at both ends
 * of the pipeline, and a download into pinned memory returns before its
 * words are there. The target: at least 90% of the model's best wall,
 * every result word right and no slot read or refilled early, in runs
 * where the GPU's work is three times as long too. Expected numbers on an
 * H100 (2026-11-23, two runs): the reference 0.998 and 0.982 of the model's
 * best wall (the way handed out: your prediction).
 *
 * Build and run:   make ex02 && ./ex02        (./ex02 --quick: chunks of 8 MiB)
 * ./ex02 prints the host's work, the copies and the wall time beside the
 * model's, every chunk checked against the words the host produced, the
 * verdicts, and what the grader would give. As given the copies overlap
 * nothing and level two's round trips take turns with the host: it says
 * NO, names the TODO and exits 4. Stuck? lab02's handout has hints, from
 * gentle to explicit, under "Stuck?".
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

/* ---- Level two: results come back (graded apart) ----
 * ./ex02 prints your prediction (and, once you have written it, the
 * model's value for the way handed out), and your round trip's wall beside
 * the model's best. */

/* TODO(student): before you write run_round_trip(), work out from the model
 * (lab02's handout, level two) what fraction of the model's best wall the
 * way handed out reaches: 8 chunks, C = P, G = 1.6 P (ex02.h). A fraction
 * (0.5 for 50%). */
const double LEVEL2_PREDICTED_EFFICIENCY = 0;

void run_round_trip(const level2_job *job)
{
    /* TODO(student): the goal: the whole round trip within 90% of the
     * model's best wall, P + (n-1) max(P + C, G) + G + C.
     * The contract: every chunk produced, queued and consumed once, from
     * this thread, in order; consume(i) only once chunk i's download has
     * ended; produce(i) only once chunk i-2's upload has ended, and
     * queue_chunk(i) only once chunk i-2 was consumed (they share slots).
     * How it is measured: from an idle GPU until it is idle again, with
     * each stage's own time; every result word checked, and at each call
     * whether the program's own events had passed; in a quarter of the
     * runs the GPU's work is three times as long, so a wait placed by
     * timing fails there. As given: correct, and each stage waits for the
     * others. Ask: which stage sets the period, and what idles meanwhile? */
    for (int i = 0; i < job->chunks; i++) {
        job->produce(i);
        job->queue_chunk(i, job->stream[0]);
        CUDA_CHECK(cudaStreamSynchronize(job->stream[0]));
        job->consume(i);
    }
}
