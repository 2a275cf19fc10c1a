/* ex09: find the hidden synchronisations in a training loop.
 *
 * The task: the program around this file (exercises/given/ex09.cu) trains a
 * small model for 40 steps. Before each step it queues the data loader's work
 * for the next batch on a stream of its own; your train_step() queues the
 * step on t->stream. Each step is about 1 ms of GPU work, and so is the
 * loader's: the two streams could run side by side. As given, train_step()
 * holds three calls that each wait for something they never asked for
 * (lab09's catalogue lists them all): the host stops in every step, and the
 * GPU runs the loader and the step in turns. Find the three and remove the
 * waits, keeping every result right: complete the TODO(student)s, and say in
 * a comment beside each change what waited, and for what.
 * exercises/given/ex09.h is the contract.
 *
 * The target: the host spends under a fifth of a step's GPU time in
 * train_step(), and a step takes under 1.3x the longer of the two streams'
 * work (the loader's and yours overlapped), with every loss and parameter
 * right.
 *
 * Build and run:   make ex09 && ./ex09          (./ex09 --quick: fewer steps)
 * ./ex09 prints the host's time in each step and the time per step beside
 * their models, checks every result against the CPU, and says what the
 * grader would give. As given both are slow, and it exits 4.
 */
#include "ex09.h"
#include "streamlab.h"

void start_training(train_state *t)
{
    /* TODO(student): whatever your loop needs once, not every step. */
    (void)t;
}

void train_step(train_state *t, int step)
{
    size_t bytes = t->n * sizeof(double);
    double *workspace;
    /* TODO(student): three calls below wait for more than their own work.
     * Keep what each one does (a workspace, zero gradients, every loss on
     * the host at the end), not the wait. */
    CUDA_CHECK(cudaMalloc(&workspace, bytes));
    CUDA_CHECK(cudaMemset(t->d_grads, 0, bytes));
    t->gradients(t, step, workspace);
    t->update(t, step, workspace);
    CUDA_CHECK(cudaMemcpy(&t->h_losses[step], &t->d_losses[step], sizeof(double),
                          cudaMemcpyDeviceToHost)); /* the loss, to log it */
    CUDA_CHECK(cudaFree(workspace));
}

void finish_training(train_state *t)
{
    /* TODO(student): every loss must be in t->h_losses when this returns. */
    (void)t;
}
