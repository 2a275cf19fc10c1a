/* ex08's contract: what exercises/ex08_event_pipeline.cu gives the program
 * around it (exercises/given/ex08.cu), and nothing more. */
#ifndef STREAMLAB_EX08_H
#define STREAMLAB_EX08_H

#include <cuda_runtime_api.h>

enum { EX08_STAGES = 3 };

/* What one run hands you, all of it made by the program before your code
 * runs. The words the stages work on and the stages' lengths are not in it:
 * the program draws those afresh every run, and stage() reaches them. */
typedef struct {
    int batches;                        /* B: every stage runs once on every batch */
    cudaStream_t stream[EX08_STAGES];   /* stage s runs in stream[s]; non-blocking: nothing
                                           orders two of them but you */
    cudaEvent_t done[EX08_STAGES];      /* made for you (cudaEventDisableTiming) */
    void (*stage)(int s, int batch);    /* queues stage s of `batch` in stream[s] and returns
                                           at once; stage s of a batch reads what stage s-1 of
                                           it wrote */
} pipeline;

/* Yours. Issues stage s of every batch, each exactly once, so that stage s
 * of a batch starts on the GPU only after stage s-1 of the same batch has
 * ended. The program calls it once per run, times it on the host, waits for
 * the GPU itself afterwards (cudaDeviceSynchronize), then checks every
 * batch's word against the CPU reference and, on the GPU's own clock, that
 * each stage began after the one feeding it had ended. */
void run_pipeline(const pipeline *p);

/* ---- Level two: a pipeline that forks and joins ----
 * Four stages a batch: the first, then two branches that each read what the
 * first wrote (and not each other), then a join that reads both branches.
 * Each branch's time is drawn afresh for every batch. Which stage waits for
 * which is yours to work out from lab08's model. */

enum { LEVEL2_FIRST, LEVEL2_BRANCH_A, LEVEL2_BRANCH_B, LEVEL2_JOIN, LEVEL2_STAGES };
enum { LEVEL2_BATCHES = 4, LEVEL2_EVENTS = 8 };

/* What one level-two run hands you, made by the program. */
typedef struct {
    int batches;                          /* LEVEL2_BATCHES */
    cudaStream_t stream[LEVEL2_STAGES];   /* stage s runs in stream[s]; non-blocking */
    cudaEvent_t event[LEVEL2_EVENTS];     /* a pool (cudaEventDisableTiming): use any */
    /* Queues stage s (LEVEL2_FIRST .. LEVEL2_JOIN) of `batch` in stream[s]
     * and returns at once. Each branch reads what LEVEL2_FIRST of its batch
     * wrote; LEVEL2_JOIN reads what both branches of its batch wrote. */
    void (*stage)(int s, int batch);
} level2_pipeline;

/* Yours, before run_level2(): the model's answer to "what fraction of the
 * fork-join's best time does level one's way reach here?" (each stage
 * waiting for the stage numbered before it: first, A, B, join), for
 * LEVEL2_BATCHES batches with every stage at its mean time (first and join
 * 0.2 ms, each branch 1 ms), as a fraction (0.5 for 50%). Once you have
 * written it, the program prints it beside the model's value at each round's
 * own times; no points ride on it. */
extern const double LEVEL2_PREDICTED_EFFICIENCY;

/* Yours. Issues every stage of every batch, each exactly once, so that each
 * stage starts on the GPU only after every stage it reads has ended, and
 * returns without waiting for the GPU. The program calls it once per run,
 * times it from an idle GPU to cudaDeviceSynchronize, then checks every
 * batch's word against the CPU reference and, on the GPU's own clock, each
 * stage's start against the ends of the stages it reads. */
void run_level2(const level2_pipeline *p);

#endif
