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

/* ---- Level two: requests of two steps ----
 * Requests of a thirty-second of the GPU each, so that far more of them fit
 * the SMs at once than there are hardware queues, and each now two kernels:
 * step 0, then step 1, which uses what step 0 left. How many streams, and in
 * what order to queue the steps, is yours to work out from lab07's model. */

enum { LEVEL2_REQUESTS = 32, LEVEL2_STREAMS = 64 };

/* Level two's queue, and what the program offers for it. */
typedef struct {
    int n; /* LEVEL2_REQUESTS, numbered 0 .. n-1 */
    /* The program's non-blocking streams, made one after another, idle when
     * serve_level2() is called: use as many as you choose, none of them is
     * used by anything else. */
    cudaStream_t stream[LEVEL2_STREAMS];
    /* Queues step k (0 or 1) of request i, one kernel, in `stream` and
     * returns at once. Step 1 of a request uses what its step 0 left: it must
     * not start on the GPU before step 0 of the same request has ended. Steps
     * of different requests never depend on each other. */
    void (*step)(int i, int k, cudaStream_t stream);
} level2_queue;

/* Yours, before serve_level2(): the model's answer to "what fraction of the
 * ideal can level one's way of serving reach here?" (each request's two
 * steps queued one after the other, request after request, a stream of its
 * own for each request, through the default 8 hardware queues), as a
 * fraction (0.5 for 50%). Once you have written it, the program prints it
 * beside the model's bound for the queues it has; no points ride on it. */
extern const double LEVEL2_PREDICTED_EFFICIENCY;

/* Yours. Queues both steps of every request of q, each exactly once through
 * q->step, step 1 of a request never starting before its step 0 has ended,
 * and returns without waiting for the GPU. The program calls it once per
 * run, times it from the call until the GPU is idle (every stream), and
 * checks from each kernel's own record on the GPU that every step ran once,
 * for its full time, and each step 1 after its step 0. */
void serve_level2(const level2_queue *q);

#endif
