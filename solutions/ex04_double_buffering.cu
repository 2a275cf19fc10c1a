/* ex04: double-buffer a batch pipeline.
 *
 * The reference solution: exercises/ex04_double_buffering.cu with both parts
 * done, each marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex04.h.
 *
 * Build and run:   make sol04 && ./sol04
 */
#include "ex04.h"
#include "streamlab.h"

enum { SETS = 2 };

/* A buffer set: a stream, and device room for one batch in and one out. */
static struct {
    cudaStream_t stream;
    uint32_t *d_in, *d_out;
} set[SETS];

/* Set i: a non-blocking stream (the legacy default stream never orders it
 * behind its work) and its buffers, for batches of `bytes`. */
static void make_set(int i, size_t bytes)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&set[i].stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&set[i].d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&set[i].d_out, bytes));
}

void make_sets(const batch_job *job)
{
    /* SOLUTION: a second set. Two batches can now be in flight at once, each
     * in its own stream with its own buffers: one computing while the other
     * set's stream downloads its previous result and uploads its next batch. */
    for (int i = 0; i < SETS; i++)
        make_set(i, job->batch * sizeof(uint32_t));
}

void run_batches(const batch_job *job)
{
    size_t bytes = job->batch * sizeof(uint32_t);
    for (int b = 0; b < job->n; b++) {
        /* SOLUTION: batch b on set b % 2, its stream AND its buffers. Batches
         * b and b+1 are in different streams, so the copy engines work on one
         * while the SMs compute the other. Reusing a set is safe without any
         * wait: its stream runs in order, so batch b+2's upload starts only
         * after batch b's download has finished. A different stream with the
         * same buffers would be a race: the next upload would overwrite an
         * input the kernel is still reading. */
        int s = b % SETS;
        const uint32_t *in = job->h_in + (size_t)b * job->batch;
        uint32_t *out = job->h_out + (size_t)b * job->batch;
        CUDA_CHECK(cudaMemcpyAsync(set[s].d_in, in, bytes, cudaMemcpyHostToDevice,
                                   set[s].stream));
        job->compute(set[s].d_in, set[s].d_out, set[s].stream);
        CUDA_CHECK(cudaMemcpyAsync(out, set[s].d_out, bytes, cudaMemcpyDeviceToHost,
                                   set[s].stream));
    }
}

/* Every set make_sets() made; a set never made has no stream to destroy. */
void free_sets(void)
{
    for (int i = 0; i < SETS; i++) {
        if (!set[i].stream)
            continue;
        CUDA_CHECK(cudaStreamDestroy(set[i].stream));
        CUDA_CHECK(cudaFree(set[i].d_in));
        CUDA_CHECK(cudaFree(set[i].d_out));
    }
}

/* ---- Level two: the kernel as long as an upload ---- */

/* SOLUTION: with h = k = d the ideal is 3h + 15h = 18h for 16 batches. Two
 * streams each run upload, kernel, download of their batches in turn: 8
 * batches of 3h on one of them, and the other starts an upload later, so
 * 25h (the streams' bound). 18 / 25 = 0.72; a c' above h raises the ideal
 * and with it this ratio (0.79 at c' = 1.12h, lab04's run). */
const double LEVEL2_PREDICTED_EFFICIENCY = 0.72;

/* SOLUTION: a pipeline of 4 streams, each batch cut into 4 chunks. Three
 * stages busy at once need three operations in flight, so at least three
 * streams (a stream runs one thing at a time); each stream needs words of
 * its own in the room, and the room holds two batches, so the pieces must
 * be smaller than a batch. 4 x 4 (stream s always takes chunk s of a
 * batch, into a quarter-batch slot of its own: one batch of room) reached
 * 2.50x in lab04 at ratio 1, 103% of the whole-batch ideal: the chunks
 * shrink the fill and drain. 8 chunks did worse there: each copy pays a
 * fixed cost besides its bytes. */
enum { STREAMS = 4, CHUNKS = 4 };

void run_level2(const level2_job *job)
{
    size_t slot = (job->batch + CHUNKS - 1) / CHUNKS; /* words of a stream's own slot */
    for (int j = 0; j < job->n * CHUNKS; j++) {
        /* SOLUTION: item j is chunk j % C of batch j / C, on stream j % S,
         * in that stream's slot. Item j + S reuses the slot after item j's
         * download, in the same stream: its order keeps them apart. */
        int c = j % CHUNKS, s = j % STREAMS;
        size_t lo = job->batch * c / CHUNKS, words = job->batch * (c + 1) / CHUNKS - lo;
        size_t at = (size_t)(j / CHUNKS) * job->batch + lo, bytes = words * sizeof(uint32_t);
        uint32_t *d_in = job->d_in + s * slot, *d_out = job->d_out + s * slot;
        CUDA_CHECK(cudaMemcpyAsync(d_in, job->h_in + at, bytes, cudaMemcpyHostToDevice,
                                   job->stream[s]));
        job->compute(d_in, d_out, words, job->stream[s]);
        CUDA_CHECK(cudaMemcpyAsync(job->h_out + at, d_out, bytes, cudaMemcpyDeviceToHost,
                                   job->stream[s]));
    }
}
