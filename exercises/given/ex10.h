/* ex10's contract: what exercises/ex10_cross_stream_free.cu gives the
 * program around it (exercises/given/ex10.cu), and nothing more. */
#ifndef STREAMLAB_EX10_H
#define STREAMLAB_EX10_H

#include <cuda_runtime_api.h>

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

#endif
