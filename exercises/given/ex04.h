/* ex04's contract: what exercises/ex04_double_buffering.cu gives the program
 * around it (exercises/given/ex04.cu), and nothing more. */
#ifndef STREAMLAB_EX04_H
#define STREAMLAB_EX04_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

/* The work, all of it made by the program before your code runs: n batches
 * in pinned host memory, and the kernel that computes one batch. */
typedef struct {
    int n;                /* batches */
    size_t batch;         /* words (uint32_t) per batch, in and out */
    const uint32_t *h_in; /* n batches of input: batch b at h_in + b * batch */
    uint32_t *h_out;      /* room for n batches of output, laid out the same way */
    /* Queues the kernel on one batch in `stream` and returns at once: it
     * reads `batch` words at d_in and writes as many at d_out, both in device
     * memory (cudaMalloc); it takes about as long as both copies of a batch. */
    void (*compute)(const uint32_t *d_in, uint32_t *d_out, cudaStream_t stream);
} batch_job;

/* Yours. Called once, before any run: makes what run_batches() needs (its
 * streams and device buffers), which live until free_sets(). */
void make_sets(const batch_job *job);

/* Yours. Queues every batch of the job, each uploaded, computed by
 * job->compute and downloaded into its place in h_out, and returns without
 * waiting for the GPU. The program calls it once per run, each run on fresh
 * inputs with the outputs poisoned, times it from the call until the GPU is
 * idle (every stream), and checks every output. */
void run_batches(const batch_job *job);

/* Yours. Called once, after the last run, with the GPU idle: releases what
 * make_sets() made. (compute-sanitizer's leak check, `make sanitize`, reports
 * device memory a program never freed.) */
void free_sets(void);

/* ---- Level two: a kernel as long as an upload ----
 * The same job with the kernel about as long as one copy of a batch (level
 * two's kernel ratio is 1), where two streams cannot keep the copy engines
 * and the SMs busy together: how many streams, and how many pieces per
 * batch, is yours to work out from lab04's model. */

enum { LEVEL2_STREAMS = 8 };

/* Level two's work, and what the program offers for it. */
typedef struct {
    int n;                /* batches */
    size_t batch;         /* words (uint32_t) per batch, in and out */
    const uint32_t *h_in; /* n batches of input, as in batch_job */
    uint32_t *h_out;      /* room for n batches of output, laid out the same way */
    /* The program's non-blocking streams, idle when run_level2() is called:
     * use as many as you choose, none of them is used by anything else. */
    cudaStream_t stream[LEVEL2_STREAMS];
    /* Device memory: room for 2 batches of input at d_in and 2 of output at
     * d_out (2 * batch words each). All the device memory level two gets:
     * compute() refuses (exit 1) words outside it. */
    uint32_t *d_in, *d_out;
    /* Queues the kernel on `words` words (any number from 1, a whole batch
     * or a piece of one) in `stream` and returns at once: reads d_in[0..words)
     * and writes d_out[0..words), both inside the room above. Word i of the
     * output depends on word i of the input only. */
    void (*compute)(const uint32_t *d_in, uint32_t *d_out, size_t words, cudaStream_t stream);
} level2_job;

/* Yours, before run_level2(): the model's answer to "what efficiency can a
 * double buffer (two streams, whole batches) reach at most when the kernel
 * takes as long as an upload?", as a fraction of the ideal (0.5 for 50%).
 * Once you have written it, the program prints it beside the model's bound
 * from the stages it measured; no points ride on it. */
extern const double LEVEL2_PREDICTED_EFFICIENCY;

/* Yours. Level two's run_batches(): queues every batch of the job, each
 * word uploaded, computed by job->compute and downloaded into its place in
 * h_out, and returns without waiting for the GPU. The program calls it once
 * per run, each run on fresh inputs with the outputs poisoned, times it from
 * the call until the GPU is idle, and checks every output. */
void run_level2(const level2_job *job);

#endif
