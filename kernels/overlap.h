/* lab13's pipeline, shared with lab14's part 3: one thread issues a
 * backward pass on every GPU (gradients.h), serial or with its buckets
 * all-reduced on each GPU's comm stream as their layers end; each run timed
 * from idle GPUs to idle GPUs, its sums checked; ways measured in rounds
 * beside lab13's models. The all-reduce itself is the program's (ranks.h,
 * NCCL): this library calls it through a pointer and needs no NCCL. */
#ifndef STREAMLAB_OVERLAP_H
#define STREAMLAB_OVERLAP_H

#include "gradients.h"
#include "../common/lab.h"
#include "../common/stats.h"
#include "../common/tally.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ranks ranks; /* ranks.h's communicator: only pointed at here */

enum { MAX_WAYS = 10 };
enum how { COMPUTE_ONLY, SERIAL, OVERLAPPED };
static const double MIB = 1048576.0;

/* ranks_all_reduce (ranks.h): words [first, first + n) summed over the GPUs. */
typedef void (*all_reduce_fn)(const ranks *rk, const grad_bench *g, size_t first, size_t n);

/* A backward pass: L layers of blocks that each spin layer_ms, mib of
 * gradients per GPU. A layer of B blocks on S SMs takes ceil(B / S) x
 * layer_ms when its blocks hold an SM each. */
typedef struct {
    int layers;
    double layer_ms, mib;
    layer_shape shape;
} job;

typedef struct {
    grad_bench g;
    all_reduce_fn all_reduce;
    int sm_count;           /* each GPU's SMs */
    int no_wait;            /* lab13 --no-wait: buckets reduced without waiting for their layers */
    double *samples;        /* overlap_measure()'s table: MAX_WAYS x reps */
    int reps;
    tally sums;             /* every reduced word of every run */
} overlap_bench;

/* One way of running a job: compute alone, serial or overlapped (buckets
 * of `bucket` words), on communicator rk whose all-reduce fits `fit`; the
 * layers in the bench's compute streams, or in compute[] (one per GPU,
 * another context's: lab14's green contexts) whose layers reach `sms` SMs. */
typedef struct {
    overlap_bench *b;
    const job *j;
    enum how how;
    const ranks *rk;
    const link_fit *fit;
    size_t bucket;
    int urgent_comm;        /* NCCL's calls in the greatest-priority comm streams */
    const cudaStream_t *compute; /* NULL: the bench's own compute streams */
    int sms;                /* the SMs the layers may use: sm_count unless compute[] says fewer */
    char name[64];
} way;

way make_way(overlap_bench *b, const job *j, enum how how, const ranks *rk, const link_fit *fit,
             double bucket_mib);
/* One run on poisoned buffers: *ms on the host's clock, its sums checked. */
void timed_run(void *ctx, double *ms);
/* The ways in rounds (measure_ways). Each serial or overlapped way's model
 * uses the median of the nearest compute-only way before it (w[0] must be
 * one): the compute those layers take where they run. time[i] each way's,
 * model[i] its model's (compute only: L x ceil(blocks / sms) x layer). */
void overlap_measure(overlap_bench *b, way *w, int n, stats *time, double *model);
/* Row `serial` over row i of overlap_measure()'s table, round by round. */
stats speedup_of(const overlap_bench *b, int serial, int i);
/* An all-reduce's cost on one communicator: each size's time beside
 * alpha + S/B, busbw; returns the fit. The gradients it sums are written
 * first by `fill`'s layers, taking no time. */
link_fit allreduce_sweep(lab_run *run, overlap_bench *b, const ranks *rk, const char *who,
                         const double *mib, int n, const job *fill);

#ifdef __cplusplus
}
#endif
#endif
