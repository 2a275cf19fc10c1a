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

#endif
