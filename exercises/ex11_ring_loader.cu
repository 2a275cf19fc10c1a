/* ex11: feed the GPU from producer threads through a ring of pinned buffers.
 *
 * The task: the program around this file (exercises/given/ex11.cu) runs 32
 * batches through run_loader(). l->prepare(b, s) is the CPU's work on batch
 * b (about 4 ms), written into pinned slot s; l->step(b, s) queues the copy
 * of slot s to the GPU and the GPU's step on batch b (about 2 ms) in
 * l->stream, and returns at once. As given, one thread prepares, steps and
 * waits, batch after batch: right, but the GPU is busy a third of the time.
 * Make it the DataLoader pattern:
 *   - l->producers threads (pthread_create), each preparing its share of the
 *     batches (batch b into slot b % l->slots, say), while this thread calls
 *     step() for batch 0, 1, 2 ... as each is ready (a mutex and a condition
 *     variable say which slot holds which batch);
 *   - a slot may be written again only once the GPU has copied it out:
 *     record l->slot_free[s] in l->stream after step(b, s), and have the
 *     producer that reuses slot s wait for it (cudaEventSynchronize). Waiting
 *     only until step() returned is a race: the program slows some steps
 *     at random, and a slot overwritten too early shows as a wrong batch;
 *   - join the threads before returning; no waiting for the GPU at the end:
 *     the program does that.
 * exercises/given/ex11.h is the contract.
 *
 * The target (lab11's model): with w producers the run takes
 * P + B max(P/w, C+K) and the GPU is busy B K over that, about 90% with 4;
 * your busy share over the model's at least 0.9 x the reference
 * solution's, measured in the same grading run (85% where no solution
 * runs, as in ./ex11's preview), every batch right in every run.
 *
 * Expected numbers on an H100 (the reference solution, 25 runs of
 * 2026-11-24): level one the GPU busy about 89%, 0.976 to 1.001 of the
 * model's 88-92%; level two the GPU busy 0.983 to 0.997 of the target
 * (needs 0.9), whatever the job drawn (3 to 9 producers), level2_size_off 0.
 *
 * Level two (graded apart, below run_loader): choose_loader() sizes the
 * loader for a job drawn afresh every run, a preparation P several times a
 * copy and step C + K. Every producer costs a core and every slot pinned
 * memory: the GPU kept busy, at least 90% of what the largest size allowed
 * reaches with your run's own preparation times (producers side by side
 * may prepare slower than the P calibrated on one thread), by the model's
 * least producers and slots, at most one more of each. The program
 * then runs your run_loader() at that size.
 *
 * Build and run:   make ex11 && ./ex11        (./ex11 --quick: a short run)
 * As given the batches are right, the GPU is busy about a third of the
 * time, and it exits 4. Stuck? lab11's handout has hints, from gentle to
 * explicit, under "Stuck?".
 */
#include "ex11.h"
#include "streamlab.h"

void run_loader(const loader *l)
{
    /* TODO(student): start l->producers threads that prepare the batches
     * into the ring's slots, and step each batch here as soon as it is ready.
     * As given, everything happens here, one batch at a time, in slot 0. */
    for (int b = 0; b < l->batches; b++) {
        l->prepare(b, 0);
        l->step(b, 0);
        /* TODO(student): slot 0 is written again next: this waits for the
         * GPU to finish with it, and keeps the CPU and the GPU taking turns.
         * With a ring, wait only for slot_free[s], and only when reusing s. */
        CUDA_CHECK(cudaStreamSynchronize(l->stream));
    }
}

/* ---- Level two: the loader's size (graded apart) ----
 * ./ex11 prints your prediction beside the GPU's busy share measured at
 * your size, and the model's at your size once you have written it. */

loader_size choose_loader(const level2_job *job, double *predicted_busy)
{
    /* TODO(student), level two: the goal: the GPU as busy as the job allows
     * (at least 90% of what the largest size allowed reaches with the
     * same run's preparations), at the least price: the threads that prepare and
     * the slots you ask for, each at most one more than the model's least.
     * The contract: 1 to EX11_MAX_PRODUCERS producers, 1 to EX11_MAX_SLOTS
     * slots; your run_loader() must work at that size (l->slots need not be
     * 2w). No measuring here: the program measures your size afterwards.
     * Predict first, from lab11's model: how often does the GPU want a
     * batch, how often can w producers deliver one, and how long is a slot
     * out of the producers' hands? Write the GPU's busy share you expect at
     * your size (0 to 1) into *predicted_busy.
     * As given: one producer and two slots, whatever the job. */
    (void)job;
    *predicted_busy = 0;
    return (loader_size){1, 2};
}
