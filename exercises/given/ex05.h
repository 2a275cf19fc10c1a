/* ex05's contract: what exercises/ex05_stream_priorities.cu gives the program
 * around it (exercises/given/ex05.cu), and nothing more. */
#ifndef STREAMLAB_EX05_H
#define STREAMLAB_EX05_H

#include <cuda_runtime_api.h>

/* Yours. Creates and returns the stream the program launches its short,
 * latency-critical kernel on, while a background of many short blocks,
 * launched on a stream of the least priority, keeps every SM busy. The
 * program measures the kernel's latency, from its launch to its completion,
 * on your stream and on a stream of the background's priority, at the same
 * moments of the same background, in turns; it asks cudaStreamGetPriority
 * for your stream's priority, checks every output of the kernel, and
 * destroys the stream at its end (unless it is one of CUDA's own: 0,
 * cudaStreamLegacy, cudaStreamPerThread). Called once, on an idle GPU. */
cudaStream_t create_critical_stream(void);

#endif
