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

#include <string.h>

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

/* SOLUTION: level one's way pays each chunk's memcpy and its copy one after
 * the other: 1/h + 1/l a byte, l / (h + l) = 55.3 / 68.7 = 0.80 of
 * min(h, l) at lab02's H100 numbers. */
const double LEVEL2_PREDICTED_EFFICIENCY = 0.80;

enum { SLOTS = 4 };

void upload_level2(const level2_upload *u)
{
    /* SOLUTION: a ring of SLOTS parts: the host fills part k while the copy
     * engine reads the others, so each chunk costs max(c/h, c/l) instead of
     * the sum. An event recorded after each part's copy says when the part
     * is free; the host waits for that event only, never for the stream, so
     * the copies queued behind it keep running. Chunk size: the ring's
     * quarter (4 MiB): large enough that the few us each copy and each wait
     * cost are under 1% of a chunk's 0.3 ms of memcpy, small enough that the
     * fill (the last chunk's copy after the last memcpy, 0.08 ms) is too.
     * Two parts would do as well with these steady rates; four absorb a
     * hiccup of either side. */
    size_t c = u->ring_words / SLOTS;
    for (size_t at = 0, i = 0; at < u->words; at += c, i++) {
        size_t n = u->words - at < c ? u->words - at : c, k = i % SLOTS;
        if (i >= SLOTS) /* the copy that last read part k has run */
            CUDA_CHECK(cudaEventSynchronize(u->event[k]));
        memcpy(u->ring + k * c, u->source + at, n * sizeof(uint32_t));
        u->send(k * c, at, n);
        CUDA_CHECK(cudaEventRecord(u->event[k], u->stream));
    }
}
