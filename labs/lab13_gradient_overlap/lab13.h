/* What lab13.cu and decides.cu (part 4) share: the bench and its
 * communicators. The pipeline itself (a way of running the backward pass,
 * the timed run, the rounds and the models) is kernels/overlap.h, which
 * lab14's part 3 runs too. */
#ifndef STREAMLAB_LAB13_H
#define STREAMLAB_LAB13_H

#include "streamlab.h"
#include "gradients.h"
#include "overlap.h"
#include "ranks.h"

enum { MAX_BUCKETS = 7 };

typedef struct {
    overlap_bench o;        /* the GPUs, the rounds' table, the sums (overlap.h) */
    ranks fast, slow;       /* NCCL's own choice of blocks; at most --slow-ctas */
    link_fit fast_fit, slow_fit;
    layer_shape half, full, one; /* layers on half of the SMs; holding every SM; a block on each */
} lab;

/* Part 4 (decides.cu): compute on every SM (and NCCL at the greatest
 * priority beside it), a block on every SM, and a slow link. */
void what_decides(lab_run *run, lab *b, const job *main_job, const job *slow_job,
                  double bucket_mib, int slow_ctas, double half_speedup);

#endif
