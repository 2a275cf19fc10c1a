/* Copies between the host and the GPU, measured: one copy as an issue_fn
 * and its rate, the host memcpy a pageable copy's staging adds, when a
 * cudaMemcpyAsync call returns against when its copy ends, and a sweep of
 * sizes from kilobytes up, small copies timed in bulk, every byte checked.
 * lab02's bandwidth lesson; any lab that asks what a copy costs. */
#ifndef STREAMLAB_COPIES_H
#define STREAMLAB_COPIES_H

#include "kernels.h"
#include "../common/report.h"
#include "../common/timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One copy of `bytes` from src to dst, queued in `stream`. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind dir;
    cudaStream_t stream;
} copy_op;

/* cudaMemcpyAsync of *(copy_op *)ctx, checked: an issue_fn. */
void copy_issue(void *copy_op_ctx, int i);

/* Its rate in GB/s, one timer for every kind of memory: measure_issued(),
 * events in c.stream around per_sample copies back to back. */
stats copy_gbps(copy_op c, int per_sample, int warmup, int samples);

/* The rate in GB/s of a memcpy from c.src to c.dst on the host's clock (its
 * dir and stream unused): the host's half of a pageable copy, done by hand.
 * measure(): warm-up, then reps. */
stats copy_host_gbps(copy_op c, int warmup, int reps);

/* Copies a and b in turn, one a sample, timed alike by t's events
 * (measure_paired): ratio is a's time over b's, pair by pair. */
paired copy_paired(copy_op a, copy_op b, event_timer t, int warmup, int pairs);

/* When does a copy's call return? Each of c[0..n-1] issued on its stream
 * once idle, between timer's events. copy_returns_ms is a timed_k_fn
 * (measure_several, ctx a copy_returns) of 3n numbers, three a copy: when
 * its call returned (the host's clock), how long the copy took (the
 * events), and the one over the other, sample by sample. */
typedef struct {
    const copy_op *c;
    int n;
    event_timer timer;
} copy_returns;
void copy_returns_ms(void *copy_returns_ctx, double *v);

/* Sizes from `smallest` up, times `factor` each, and `largest` last (at
 * most COPY_SWEEP_MAX). Copies under 256 KiB go in bulk, as many back to
 * back as make 256 KiB a sample, for the events' resolution; each size gets
 * samples for about `budget` bytes, but at least 7 (at the largest size a
 * median of 3 lets one burst decide) and at most `reps`. */
enum { COPY_SWEEP_MAX = 24 };
typedef struct {
    int n;
    size_t bytes[COPY_SWEEP_MAX];
    int batch[COPY_SWEEP_MAX], samples[COPY_SWEEP_MAX]; /* copies per sample, samples */
    char label[COPY_SWEEP_MAX][24];                     /* "4 KiB", "16 MiB" */
} copy_sweep;
void copy_sweep_plan(copy_sweep *s, size_t smallest, size_t largest, int factor, size_t budget,
                     int reps);

/* At every size of s, a round trip: the device end poisoned (0xff, in
 * up.stream), `up` timed into up_gbps[i], down's host end poisoned, `down`
 * timed into down_gbps[i], then what came down checked against what went
 * up, into *t (where: the size's label). up and down share the device
 * buffer; their bytes fields are set here. */
void copy_sweep_round_trips(const copy_sweep *s, copy_op up, copy_op down, int warmup,
                            stats *up_gbps, stats *down_gbps, tally *t);

/* report_stats() of every size, as "<variant>,bandwidth@<bytes>" (and _p5,
 * _p95): rows for plots (the text format prints a line each, so a lab with
 * a table of its own calls this for --csv and --json). gbps[i]: size i's. */
void copy_sweep_report(report *r, const copy_sweep *s, const char *variant, const stats *gbps);

#ifdef __cplusplus
}
#endif
#endif
