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

/* ---- Level two: every loss reported to the host, the GPU kept busy ----
 * The program's loop is level one's with two changes. Every step's loss
 * must reach the host's logger, report(step, loss), no later than
 * LEVEL2_MAX_LAG steps after that step was issued: while
 * train_step_reported(t, r, step + LEVEL2_MAX_LAG) runs at the latest (the
 * last ones in finish_reporting()). And before every LEVEL2_STALL_EVERY-th
 * step the program's host is busy with work of its own (a checkpoint
 * written) for 2.3-2.6 times the step's GPU time G, drawn every run; the
 * loader's kernel takes 0.5-0.8 G. How long the GPU sits idle while the
 * host is away is yours to work out from lab09's model. */

enum { LEVEL2_MAX_LAG = 3, LEVEL2_SLOTS = 4, LEVEL2_STALL_EVERY = 4 };

/* What the level-two loop hands you, made by the program. */
typedef struct {
    double *ring;                      /* LEVEL2_SLOTS doubles of pinned host memory */
    cudaEvent_t event[LEVEL2_SLOTS];   /* a pool (cudaEventDisableTiming): use any */
    /* The host's logger: call it once for every step, with that step's
     * loss as update() wrote it to t->d_losses[step]. */
    void (*report)(int step, double loss);
} loss_ring;

/* Yours, before train_step_reported(): the model's answer to "what share of
 * the program's longest stall (2.6 G) does the GPU sit idle?", for a host
 * that waits for the loss of step (step - 2) in train_step_reported(t, r,
 * step), as a fraction of the stall (0.5 for 50%). The program prints it,
 * and once it is written (not 0) the model's answer to the same question
 * beside it; no points ride on it. */
extern const double LEVEL2_PREDICTED_IDLE;

/* Yours. One step as train_step() queues it, and the report of every loss
 * the lag requires by now (see above): each loss reported once, right,
 * never read from a slot before its copy landed or after it was overwritten.
 * The program times the host inside it, and keeps, on the GPU's own clock,
 * when each step's kernels began and ended. Called between start_training()
 * and finish_training(). */
void train_step_reported(train_state *t, const loss_ring *r, int step);
/* Yours. Called once after the last step, before finish_training(): when it
 * returns, every step's loss has been reported. */
void finish_reporting(train_state *t, const loss_ring *r);

#endif
