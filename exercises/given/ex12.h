/* ex12's contract: what exercises/ex12_graph_pipeline.cu gives the program
 * around it (exercises/given/ex12.cu), and nothing more. */
#ifndef STREAMLAB_EX12_H
#define STREAMLAB_EX12_H

#include <cuda_runtime_api.h>
#include <stdint.h>

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

/* ---- Level two: a parameter that changes every step ----
 * As a training loop's learning rate: every step adds its own word k (the
 * program draws one afresh for every step) in every stage, beside the
 * stage's increment. The step is the same otherwise. Whether to capture,
 * update or rebuild, and what to change each step, is yours to work out
 * from lab12's costs. */

/* What one level-two run hands you, made by the program. */
typedef struct {
    int batches;                        /* B, as level one's */
    cudaStream_t stream[EX12_STAGES];   /* as level one's */
    /* Queues one step as issue_step() does, every stage adding k, passed by
     * value: a capture keeps this k in the graph. */
    void (*issue_step_with)(uint32_t k);
    /* The same step, each stage reading k from the device word at d_k as
     * it begins (a capture keeps the address, not the word). d_k must stay
     * valid until finish; the program never writes it. */
    void (*issue_step_reading)(const uint32_t *d_k);
} level2_pipeline;

/* Yours, before you write level2_step(): the model's answer to "how many
 * microseconds of the host's time will one level2_step() take?", from
 * lab12's H100 costs, for the 24 kernels and 39 event calls of a step
 * (exercises/given/ex12.cu's opening comment counts them). The program
 * prints it beside what it measures; no points ride on it. */
extern const double LEVEL2_PREDICTED_HOST_US;

/* Yours, as level one's three, for level two: called once per run before
 * its steps on an idle GPU (timed apart, not graded); then level2_step()
 * `steps` times back to back, step i with its own k (timed on the host as
 * level one's), the GPU awaited, every word checked against the CPU
 * reference of every step's stages with each step's k; then
 * level2_finish(), the GPU idle. level2_step() queues the step with this k
 * after the step before it and returns at once. */
void level2_prepare(const level2_pipeline *p);
void level2_step(const level2_pipeline *p, uint32_t k);
void level2_finish(const level2_pipeline *p);

#endif
