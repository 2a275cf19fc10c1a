/* ex11's contract: what exercises/ex11_ring_loader.cu gives the program
 * around it (exercises/given/ex11.cu), and nothing more. */
#ifndef STREAMLAB_EX11_H
#define STREAMLAB_EX11_H

#include <cuda_runtime_api.h>

enum { EX11_MAX_PRODUCERS = 8, EX11_MAX_SLOTS = 2 * EX11_MAX_PRODUCERS };

/* What one run hands you, all of it made by the program before your code
 * runs. The batches' contents, how long a batch takes the CPU and the GPU,
 * and the GPU's buffer are not in it: prepare() and step() reach them. */
typedef struct {
    int batches;   /* B: batches 0 .. B-1, each prepared once and stepped once */
    int producers; /* w: the producer threads to start (pthread_create) */
    int slots;     /* 2w pinned staging buffers, 0 .. slots-1 */
    cudaStream_t stream;                   /* where step() queues the GPU's work */
    cudaEvent_t slot_free[EX11_MAX_SLOTS]; /* made for you, one per slot
                                              (cudaEventBlockingSync | DisableTiming) */
    void (*prepare)(int batch, int slot);  /* the CPU's work on `batch`, several ms, written
                                              into `slot`: call it from any thread, several
                                              threads at once, each on its own slot */
    void (*step)(int batch, int slot);     /* queues in `stream` the copy of `slot` to the
                                              GPU and the GPU's step on it, and returns at
                                              once: the slot is still being read after it
                                              returns, until the GPU has done the copy.
                                              One thread calls it */
} loader;

/* Yours. Prepares and steps every batch, each exactly once, and returns once
 * the last step is queued (the program then waits for the GPU and times the
 * run from the call to an idle GPU). A slot may be written again only after
 * the GPU has copied it out: an event recorded in `stream` after step()
 * passes when the copy (and the step) are done. The program checks every
 * batch the GPU stepped on against what prepare() must have written, on the
 * GPU itself, and in some runs slows some preparations and some steps at
 * random, so that a slot reused too early shows as a wrong batch. */
void run_loader(const loader *l);

#endif
