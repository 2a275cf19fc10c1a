/* ex04: double-buffer a batch pipeline.
 *
 * The task: the program around this file (exercises/given/ex04.cu) hands
 * run_batches() a job of 16 batches of 16 MiB in pinned memory (8 of 8 MiB
 * with --quick) and a kernel, job->compute, that computes one batch in about
 * the time of both its copies. As given, every batch goes through one stream
 * and one set of device buffers, so the copy engines and the SMs take turns.
 * Make it a double buffer: two sets (a stream and device buffers each), batch
 * b on set b % 2, so that while one batch computes, the other set's stream
 * downloads the previous result and uploads the next batch. Keep every call
 * asynchronous: no waits inside the loop. Complete the TODO(student) in
 * make_sets() and run_batches(); exercises/given/ex04.h is the contract.
 *
 * The target: at least 90% of the ideal speedup over the program's serial run
 * (printed as the efficiency). With 16 batches the ideal is about 1.9x.
 *
 * Build and run:   make ex04 && ./ex04          (./ex04 --quick: a short run)
 * ./ex04 prints each stage's time, the serial run and yours beside the
 * model's, the verdict, and what the grader would give. As given your
 * pipeline is as slow as the serial run, the verdict is NO, and it exits 4.
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
    make_set(0, job->batch * sizeof(uint32_t));
    /* TODO(student): make a second set (make_set(1, ...)), so that two batches
     * can be in flight: one computing while the other uploads or downloads. */
}

void run_batches(const batch_job *job)
{
    size_t bytes = job->batch * sizeof(uint32_t);
    for (int b = 0; b < job->n; b++) {
        /* TODO(student): put batch b on set b % 2, its stream and its buffers.
         * On one set every batch waits for the one before it. Reusing a set
         * is safe because its stream runs in order: batch b+2's upload starts
         * only after batch b's download has finished. */
        int s = 0;
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
