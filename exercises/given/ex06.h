/* ex06's contract: what exercises/ex06_stream_races.cu gives the program
 * around it (exercises/given/ex06.cu), and nothing more. */
#ifndef STREAMLAB_EX06_H
#define STREAMLAB_EX06_H

#include <cuda_runtime_api.h>

/* What one run hands you, all of it made by the program before your code
 * runs. The buffers and the slow step's length are not in it: the stages
 * reach them, you need not. */
typedef struct {
    cudaStream_t produce, consume; /* non-blocking: nothing orders them but you */
    cudaEvent_t produced;          /* made for the handoff (cudaEventDisableTiming) */
    void (*stage1)(void); /* queues stage 1 in `produce` and returns at once: it uploads
                             fresh inputs, sits through a slow step, and writes
                             d_mid = f(in) */
    void (*stage2)(void); /* queues stage 2 in `consume` and returns at once: it
                             computes d_out = f(d_mid) and copies d_out to the host */
} handoff;

/* Yours. Issues one run, each stage once: stage 1, then stage 2, which must
 * not start on the GPU before stage 1 has written d_mid. Returns without
 * waiting for the GPU. The program calls it once per run, each run on fresh
 * inputs with every buffer poisoned and a slow step of a length it draws (in
 * some runs several times the usual); it checks every result that reaches
 * the host and d_mid and d_out on the GPU, asks the GPU's clock whether stage
 * 2 started after stage 1 ended, and whether stream `produce` is still busy
 * when this returns (had the host waited for stage 1, it would not be). */
void issue_pipeline(const handoff *h);

/* ---- Level two: a ring of two buffers ----
 * A stream of items through the same two stages, now sharing a ring of
 * LEVEL2_RING device buffers instead of one: item i goes through slot
 * i % LEVEL2_RING, so each slot carries several items, one after another. */

enum { LEVEL2_RING = 2, LEVEL2_ITEMS = 6, LEVEL2_EVENTS = 8 };

/* Level two's run, all of it made by the program before your code runs.
 * Neither the slots nor the stages' lengths are in it. */
typedef struct {
    int items;                     /* LEVEL2_ITEMS, numbered 0 .. items - 1 */
    cudaStream_t produce, consume; /* non-blocking: nothing orders them but you */
    /* Events made for you (cudaEventDisableTiming), none recorded yet in this
     * run: use as many as you need, for whatever you need. */
    cudaEvent_t event[LEVEL2_EVENTS];
    void (*stage1)(int item); /* queues item's stage 1 in `produce` and returns at once:
                                 it uploads the item's input, sits through a slow step,
                                 and then writes slot item % LEVEL2_RING */
    void (*stage2)(int item); /* queues item's stage 2 in `consume` and returns at once:
                                 it sits through a slow step, and then reads slot
                                 item % LEVEL2_RING and writes the item's result */
} ring_job;

/* Yours. Issues every item's two stages, each once. Returns without waiting
 * for the GPU. The program calls it once per run, each run on fresh inputs
 * with every buffer poisoned, and the stages' slow steps of lengths it draws
 * (in some runs one stage several times slower than the other). It checks
 * every item's result on the GPU; asks the GPU's clock, for every item,
 * whether its stage 2 read the slot after its stage 1 wrote it and before
 * the next item of that slot overwrote it; and whether the first stage 1
 * issued is still running when this returns (had the host waited for any of
 * the run's work, it would not be). */
void issue_ring(const ring_job *job);

#endif
