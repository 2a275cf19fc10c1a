/* ex14's contract: what exercises/ex14_green_contexts.cu gives the program
 * around it (exercises/given/ex14.cu), and nothing more. */
#ifndef STREAMLAB_EX14_H
#define STREAMLAB_EX14_H

#include <cuda.h>
#include <cuda_runtime_api.h>

/* What a partition is asked for. The CUDA driver API's calls are in
 * common/driver.h's table `cu` (cu.cuGreenCtxCreate(...)), which the
 * program has opened before your code runs; CU_CHECK checks each one. */
typedef struct {
    CUdevice device; /* the GPU, as the driver API names it */
    int sms;         /* k: the SMs the urgent work is to have to itself; the
                        device may round k up to its granularity */
    int priority;    /* both streams' priority: the least, the background's,
                        so that what the program measures is the partition,
                        not a priority */
} partition_request;

/* A partition, as your open_partition() leaves it. */
typedef struct {
    cudaStream_t urgent;     /* the program launches its urgent kernel here */
    cudaStream_t background; /* and its background here */
    CUgreenCtx urgent_ctx, background_ctx; /* yours: the program only hands them to
                                              close_partition() */
} partition;

/* Yours. Makes *p from req: two non-blocking streams at req->priority,
 * such that a kernel in p->urgent runs on req->sms SMs (rounded up as the
 * device rounds) and on no other, and a kernel in p->background on every
 * other SM of the GPU, and on none of the urgent work's: however full the
 * background keeps its SMs, the urgent kernel never waits for them. The
 * program runs kernels in both streams (at once, alone, one behind the
 * other), records on which SM each block ran, and times them with events
 * recorded in these streams. Called on an idle GPU, once per level. */
void open_partition(const partition_request *req, partition *p);

/* Yours. Releases what open_partition() made. Called with both streams idle. */
void close_partition(partition *p);

/* ---- Level two: how many SMs to give ----
 * An urgent kernel that must finish within a latency budget, behind the
 * same background. Every SM given to it is taken from the background, so
 * the price of a partition is the background's time. */
typedef struct {
    int sm_count;      /* the GPU's SMs */
    int min_sms, step; /* the least partition the device makes, and its step
                          (minSmPartitionSize, smCoscheduledAlignment): the
                          sizes are min_sms + n step, n = 0, 1, ..., and k
                          becomes the least of them at or above it (NVIDIA's
                          guideline has min_sms a multiple of step on every
                          architecture it lists; the program reports the size
                          the device made of your k) */
    int blocks;        /* B: the urgent kernel's blocks, each holding a whole SM */
    double block_us;   /* t: each block's time on its SM */
    double launch_us;  /* what the kernel's latency adds to its blocks' time (its
                          launch, and the host seeing its end), as this run
                          measured it for level one's urgent kernel alone */
    double budget_us;  /* the most its latency may be, launch to completion */
} level2_job;

/* Yours. Returns k, the SMs to ask open_partition() for, so that the urgent
 * kernel's latency in a partition of k SMs, behind the background on the
 * other SMs, is within job->budget_us, and the background pays as little
 * as it can for it; writes the latency you expect at that k into
 * *predicted_us (printed beside the measurement, not scored). Called once
 * a run, before anything of level two runs, with numbers drawn afresh every
 * run. Then the program opens your partition of k SMs and measures. */
int choose_partition_sms(const level2_job *job, double *predicted_us);

#endif
