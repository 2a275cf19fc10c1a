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
