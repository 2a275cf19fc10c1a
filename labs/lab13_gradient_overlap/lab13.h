/* What lab13.cu and decides.cu (part 4) share: the bench, a way of running
 * the backward pass, and how the ways are measured against their models. */
#ifndef STREAMLAB_LAB13_H
#define STREAMLAB_LAB13_H

#include "streamlab.h"
#include "gradients.h"
#include "ranks.h"

enum { WARMUP = 1, CALLS = 5, MAX_WAYS = 10, MAX_BUCKETS = 7 };
enum how { COMPUTE_ONLY, SERIAL, OVERLAPPED };
static const double MIB = 1048576.0;

/* A backward pass: L layers of layer_ms, mib of gradients per GPU. */
typedef struct {
    int layers;
    double layer_ms, mib;
    layer_shape shape;
} job;

typedef struct {
    grad_bench g;
    ranks fast, slow;       /* NCCL's own choice of blocks; at most --slow-ctas */
    link_fit fast_fit, slow_fit;
    layer_shape half, full, one; /* layers on half of the SMs; holding every SM; a block on each */
    double *samples;        /* measure()'s table */
    int reps;
    tally sums;             /* every reduced word of every run */
} lab;

/* One way of running a job: compute alone, serial or overlapped (buckets
 * of `bucket` words), on communicator rk whose all-reduce fits `fit`. */
typedef struct {
    lab *b;
    const job *j;
    enum how how;
    const ranks *rk;
    const link_fit *fit;
    size_t bucket;
    int urgent_comm;        /* NCCL's calls in the greatest-priority comm streams */
    char name[64];
} way;

way make_way(lab *b, const job *j, enum how how, const ranks *rk, const link_fit *fit,
             double bucket_mib);
/* One run on poisoned buffers: *ms on the host's clock, its sums checked. */
void timed_run(void *ctx, double *ms);
/* The ways in rounds (measure_ways); w[0] must be compute only, its
 * median the compute the models of the others use. time[i] each way's,
 * model[i] its model's. */
void measure(lab *b, way *w, int n, stats *time, double *model);
/* Row `serial` over row i of measure()'s table, round by round. */
stats speedup_of(const lab *b, int serial, int i);
/* Part 1's sweep on one communicator: each size's time beside alpha + S/B,
 * busbw; returns the fit. */
link_fit allreduce_sweep(lab_run *run, lab *b, const ranks *rk, const char *who,
                         const double *mib, int n);

/* Part 4 (decides.cu): compute on every SM (and NCCL at the greatest
 * priority beside it), a block on every SM, and a slow link. */
void what_decides(lab_run *run, lab *b, const job *main_job, const job *slow_job,
                  double bucket_mib, int slow_ctas, double half_speedup);

#endif
