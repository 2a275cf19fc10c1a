/* ex09's contract: what exercises/ex09_hidden_syncs.cu gives the program
 * around it (exercises/given/ex09.cu), and nothing more. */
#ifndef STREAMLAB_EX09_H
#define STREAMLAB_EX09_H

#include <cuda_runtime_api.h>

/* A small model trained by gradient descent, step by step. The program owns
 * every buffer; the step's work is two functions of the program's that you
 * call, each queueing its kernel in t->stream. */
typedef struct train_state train_state;
struct train_state {
    cudaStream_t stream;  /* the training stream: blocking (cudaStreamCreate), as most code's */
    int n;                /* parameters */
    int steps;            /* steps in this loop: step runs from 0 to steps - 1 */
    double *d_params;     /* n, on the GPU */
    double *d_grads;      /* n, on the GPU: gradients() ADDS to them, so they must be
                             zero before each step's gradients() */
    double *d_losses;     /* steps, on the GPU: update() writes step's loss there */
    double *h_losses;     /* steps, pinned host memory: the program reads every step's
                             loss here when finish_training() has returned */
    /* The step's work, queued in t->stream. workspace: n doubles of device
     * memory of your own, which update() reads after gradients() wrote it. */
    void (*gradients)(const train_state *t, int step, double *workspace);
    void (*update)(const train_state *t, int step, const double *workspace);
};

/* Yours. Called once before the loop (untimed). */
void start_training(train_state *t);
/* Yours. One step: zero the gradients, gradients(), update(). The program
 * times how long the host spends in this call, step by step. */
void train_step(train_state *t, int step);
/* Yours. Called once after the last step: when it returns, t->h_losses
 * holds every step's loss, and everything yours is released. */
void finish_training(train_state *t);

#endif
