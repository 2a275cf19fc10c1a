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
