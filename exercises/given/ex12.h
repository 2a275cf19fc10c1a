/* ex12's contract: what exercises/ex12_graph_pipeline.cu gives the program
 * around it (exercises/given/ex12.cu), and nothing more. */
#ifndef STREAMLAB_EX12_H
#define STREAMLAB_EX12_H

#include <cuda_runtime_api.h>

enum { EX12_STAGES = 3 };

/* What one run hands you, all of it made by the program before your code
 * runs. The words, the increments and the stages' lengths are not in it:
 * the program draws them afresh every run, and issue_step() reaches them. */
typedef struct {
    int batches;                        /* B: a step runs every stage on every batch */
    cudaStream_t stream[EX12_STAGES];   /* non-blocking; stage s runs in stream[s] */
    void (*issue_step)(void);           /* queues one step, lab08's event-chained pipeline:
                                           forked from stream[0] and joined back into it by
                                           events, so it begins after everything queued in
                                           stream[0] before it and stream[0] reaches its end
                                           only when every stage has ended. Returns at once;
                                           makes no call that a capture refuses */
} pipeline;

/* Yours. Called once per run, before its steps, on an idle GPU: get ready
 * to run steps with as little host work each as you can. The program times
 * it apart from the steps and reports it; it is not graded. */
void prepare_steps(const pipeline *p);

/* Yours. One step: queue the work p->issue_step() queues, so that it runs
 * after the step before it, and return at once. The program calls it
 * `steps` times back to back, timing the calls on the host, then waits for
 * the whole GPU (cudaDeviceSynchronize) and checks every batch's word
 * against the CPU reference of all the steps' stages in order. */
void run_step(const pipeline *p);

/* Yours. Called once per run after its steps, the GPU idle: release what
 * prepare_steps() made. */
void finish_steps(const pipeline *p);

#endif
