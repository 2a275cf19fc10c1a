/* ex07's contract: what exercises/ex07_stream_pool.cu gives the program
 * around it (exercises/given/ex07.cu), and nothing more. */
#ifndef STREAMLAB_EX07_H
#define STREAMLAB_EX07_H

#include <cuda_runtime_api.h>

/* A queue of independent requests, made by the program. */
typedef struct {
    int n; /* requests, numbered 0 .. n-1 */
    /* Queues request i, one kernel, in `stream` and returns at once. No
     * request needs another's result: any two may run at the same time. */
    void (*launch)(int i, cudaStream_t stream);
} request_queue;

/* Yours. Called once, before any run: makes the streams serve() uses. */
void open_pool(void);

/* Yours. Queues every request of q exactly once, each through q->launch, and
 * returns without waiting for the GPU. The program calls it once per run,
 * times it from the call until the GPU is idle (every stream), and checks
 * from each kernel's own record on the GPU that every request ran once, for
 * its full time. */
void serve(const request_queue *q);

/* Yours. Called once, after the last run, with the GPU idle: releases what
 * open_pool() made. */
void close_pool(void);

#endif
