/* ex10's contract: what exercises/ex10_cross_stream_free.cu gives the
 * program around it (exercises/given/ex10.cu), and nothing more. */
#ifndef STREAMLAB_EX10_H
#define STREAMLAB_EX10_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer the program made in `owner` with cudaMallocAsync (from the
 * device's default pool) and filled there, and that `user` reads: the user
 * stream waited for the fill, then queued some work of a length you are not
 * told, then its read, the buffer's last use. Both streams are non-blocking:
 * nothing orders them but what you queue. Right after your function returns
 * the program allocates its next buffer in `owner`, the same size, and
 * writes it at once: the pool hands out a freed block in stream order, so
 * whatever `owner` has reached decides what the user's read sees. */

/* Yours. Frees `buffer` with cudaFreeAsync in `owner`, but only once the
 * user's read has ended: the GPU waits for it, never the host (no
 * cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize or
 * cudaFree here). */
void free_after_use_wait(void *buffer, cudaStream_t owner, cudaStream_t user);

/* Yours. Frees `buffer` in the stream that used it last, without the host
 * waiting; `owner` must not be held back by it. */
void free_in_last_user(void *buffer, cudaStream_t owner, cudaStream_t user);

/* ---- Level two: what a pool keeps across a synchronise ----
 * A loop, each iteration in one stream: allocate `out`; then `layers`
 * times: allocate a workspace of work_bytes, use it, cudaFreeAsync it; use
 * `out`, cudaFreeAsync it; then cudaStreamSynchronize, as a loop does to
 * read its result. Every allocation is cudaMallocFromPoolAsync from your
 * pool. The sizes are drawn afresh every run (lab10's part 3 and part 4). */
typedef struct {
    int device;          /* the GPU the loop runs on */
    size_t out_bytes;    /* `out`: allocated first, freed last */
    size_t work_bytes;   /* each layer's workspace, the same size every layer */
    int layers;          /* workspaces an iteration allocates and frees in turn */
    size_t granularity;  /* the program asked a fresh pool like yours for one
                            byte: it reserved this much */
} level2_loop;

/* Yours. Returns a new pool of `device`'s memory (cudaMemPoolCreate: never
 * the device's default pool, which the rest of the process shares), set up
 * so that the loop's allocations cost an iteration about what they cost
 * from a pool that never hands memory back, while the pool holds on to no
 * more than about what an iteration needs at once. Called once, before the
 * loop; the program then owns the pool (it destroys it). */
cudaMemPool_t level2_make_pool(const level2_loop *loop);

/* Yours, printed beside what the program measures, not scored: what
 * release threshold 0 adds to one iteration, in us per MiB the pool would
 * keep, as lab10's part 3 measured it on this GPU (./lab10; its handout
 * shows an H100's run): threshold 0's iteration less the unlimited pool's,
 * over the MiB of part 3's buffer. Not part 3's model (part 1's pair at
 * that size), a floor the handout finds short of the measurement. The
 * program prints it beside what threshold 0 added to this loop's
 * iteration, per MiB of the pool's count (the working set, which it keeps
 * to the grader: your threshold is scored against it). */
extern const double LEVEL2_PREDICTED_REMAP_US_PER_MIB;

#endif
