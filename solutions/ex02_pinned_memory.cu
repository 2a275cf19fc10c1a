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

/* ---- Level two: results come back ---- */

/* SOLUTION: the way handed out pays P + G + C a chunk, n (P + G + C) =
 * 8 x 3.6 P = 28.8 P; the best, P + (n-1) max(P + C, G) + G + C = P + 7 x
 * 2 P + 1.6 P + P = 17.6 P: 17.6 / 28.8 = 0.61. */
const double LEVEL2_PREDICTED_EFFICIENCY = 0.61;

void run_round_trip(const level2_job *job)
{
    /* SOLUTION: one chunk behind. Chunk i+1 is produced and queued before
     * the host waits for chunk i, so the GPU works on it while the host
     * consumes chunk i: the host never waits after the start, and G hides
     * under P + C. The wait is chunk i's own event: the stream would wait
     * for chunk i+1's round trip too, and the host with it. The slots are
     * free in time: upload slot (i+1) % 2 and result slot (i+1) % 2 were
     * chunk i-1's, whose event the host waited for and which it consumed
     * before this turn. One stream suffices: G < P + C, the GPU keeps up. */
    cudaStream_t s = job->stream[0];
    job->produce(0);
    job->queue_chunk(0, s);
    CUDA_CHECK(cudaEventRecord(job->event[0], s));
    for (int i = 0; i < job->chunks; i++) {
        if (i + 1 < job->chunks) {
            job->produce(i + 1);
            job->queue_chunk(i + 1, s);
            CUDA_CHECK(cudaEventRecord(job->event[(i + 1) % LEVEL2_EVENTS], s));
        }
        CUDA_CHECK(cudaEventSynchronize(job->event[i % LEVEL2_EVENTS]));
        job->consume(i);
    }
}
