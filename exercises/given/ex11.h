/* ex11's contract: what exercises/ex11_ring_loader.cu gives the program
 * around it (exercises/given/ex11.cu), and nothing more. */
#ifndef STREAMLAB_EX11_H
#define STREAMLAB_EX11_H

#include <cuda_runtime_api.h>

enum { EX11_MAX_PRODUCERS = 10, EX11_MAX_SLOTS = 2 * EX11_MAX_PRODUCERS };

/* What one run hands you, all of it made by the program before your code
 * runs. The batches' contents, how long a batch takes the CPU and the GPU,
 * and the GPU's buffer are not in it: prepare() and step() reach them. */
typedef struct {
    int batches;   /* B: batches 0 .. B-1, each prepared once and stepped once */
    int producers; /* w: the producer threads to start (pthread_create) */
    int slots;     /* pinned staging buffers, 0 .. slots-1: 2w in level one,
                      what choose_loader() returned in level two */
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

/* ---- Level two: how many producers, how many slots ----
 * The same loader, sized by you. Each run draws a job afresh: a preparation
 * of P ms on one core, a copy of C and a step of K on the GPU, with P
 * several times C + K. Every producer thread takes a core from the host,
 * every slot is 4 MiB of pinned memory: the price of a loader is its size. */
typedef struct {
    int batches;    /* B, as in level one */
    double prep_ms; /* P: one batch's preparation, alone on one core (calibrated
                       this run: the host's speed moves from run to run) */
    double copy_ms; /* C: one batch's copy from a pinned slot, measured */
    double step_ms; /* K: the GPU's step on a batch */
    int cores;      /* the host's online cores */
} level2_job;

typedef struct {
    int producers; /* 1 .. EX11_MAX_PRODUCERS */
    int slots;     /* 1 .. EX11_MAX_SLOTS */
} loader_size;

/* Yours. Returns the size of the loader for job: producers and slots such
 * that the GPU is as busy as the job allows (its steps back to back after
 * the first batch), at no more than the model's least size plus one thread
 * and one slot; writes the GPU's busy share you expect at that size into
 * *predicted_busy (0 to 1; printed beside the measurement, not scored).
 * Called once a run, before anything of level two runs. The program then
 * runs your run_loader() with l->producers and l->slots as you returned
 * them (so it must work for any of them, not only level one's 2w slots),
 * and counts the threads that called prepare() itself. */
loader_size choose_loader(const level2_job *job, double *predicted_busy);

#endif
