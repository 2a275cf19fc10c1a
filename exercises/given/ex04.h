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

#endif
