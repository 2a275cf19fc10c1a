/* ex09: find the hidden synchronisations in a training loop.
 *
 * The reference solution: exercises/ex09_hidden_syncs.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex09.h.
 *
 * Build and run:   make sol09 && ./sol09
 */
#include "ex09.h"
#include "streamlab.h"

/* SOLUTION: one workspace for the whole loop. cudaFree waits for the whole
 * device (the loader's stream included) before it returns: freed in every
 * step, it stopped the host every step. Allocated once, freed once after
 * the loop, it waits once. */
static double *workspace;

void start_training(train_state *t)
{
    CUDA_CHECK(cudaMalloc(&workspace, t->n * sizeof(double)));
}

void train_step(train_state *t, int step)
{
    /* SOLUTION: cudaMemset goes to the legacy default stream, which waits
     * for every blocking stream (the loader's too) and makes them wait for
     * it: the step could not start before the loader's kernel ended.
     * cudaMemsetAsync in the training stream is ordered with the step only. */
    CUDA_CHECK(cudaMemsetAsync(t->d_grads, 0, t->n * sizeof(double), t->stream));
    t->gradients(t, step, workspace);
    t->update(t, step, workspace);
    /* SOLUTION: no read-back here. A synchronous cudaMemcpy of the loss
     * waited for the step (and, on the legacy stream, for the loader) every
     * step: PyTorch's loss.item() in the loop. The losses stay on the GPU
     * and come back once, in finish_training(). */
}

void finish_training(train_state *t)
{
    /* SOLUTION: every loss in one copy, then one wait, the only one. */
    CUDA_CHECK(cudaMemcpyAsync(t->h_losses, t->d_losses, t->steps * sizeof(double),
                               cudaMemcpyDeviceToHost, t->stream));
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    CUDA_CHECK(cudaFree(workspace));
    workspace = NULL;
}

/* ---- Level two: every loss reported, the GPU kept busy (graded apart) ---- */

/* SOLUTION: a host that waits for step i - K's loss leaves steps i - K + 1
 * .. i queued, K x G of work, when its wait returns; the stall S then
 * leaves the GPU idle max(0, S - K x G). S <= 2.6 G: K = 2 leaves up to
 * 0.6 G a stall, K = 3 nothing. */
const double LEVEL2_PREDICTED_IDLE = 0.6 / 2.6; /* K = 2 at S = 2.6 G: 23% */

/* Step s's loss goes to slot s % LEVEL2_SLOTS, its event recorded behind
 * the copy. With a lag of LEVEL2_MAX_LAG = LEVEL2_SLOTS - 1, slot s's last
 * loss (step s - LEVEL2_SLOTS) was reported a step before it is reused. */
static void report_step(const loss_ring *r, int s)
{
    int slot = s % LEVEL2_SLOTS;
    /* SOLUTION: the host waits for this copy only, not the device: the
     * steps after s stay queued while it waits. */
    CUDA_CHECK(cudaEventSynchronize(r->event[slot]));
    r->report(s, r->ring[slot]);
}

void train_step_reported(train_state *t, const loss_ring *r, int step)
{
    int slot = step % LEVEL2_SLOTS;
    train_step(t, step);
    /* SOLUTION: the copy in the training stream, into pinned memory: it
     * returns at once (to pageable memory it would wait). The event after
     * it says when the slot may be read. */
    CUDA_CHECK(cudaMemcpyAsync(&r->ring[slot], &t->d_losses[step], sizeof(double),
                               cudaMemcpyDeviceToHost, t->stream));
    CUDA_CHECK(cudaEventRecord(r->event[slot], t->stream));
    /* SOLUTION: report the loss LEVEL2_MAX_LAG steps back: three steps stay
     * queued behind it, more than the longest stall. */
    if (step >= LEVEL2_MAX_LAG)
        report_step(r, step - LEVEL2_MAX_LAG);
}

void finish_reporting(train_state *t, const loss_ring *r)
{
    int first = t->steps > LEVEL2_MAX_LAG ? t->steps - LEVEL2_MAX_LAG : 0;
    for (int s = first; s < t->steps; s++)
        report_step(r, s);
}
