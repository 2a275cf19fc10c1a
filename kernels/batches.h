/* A batch pipeline: n batches of words in host memory, each uploaded, put
 * through affine_work and downloaded, issued on S streams with each batch
 * cut into C items; each stage timed alone; and the model of how long the
 * whole takes. lab04 measures its variants with it, and ex04's given
 * program reads the same model (batch_engines_ms), so that the lab and the
 * exercise judge a pipeline against one formula. */
#ifndef STREAMLAB_BATCHES_H
#define STREAMLAB_BATCHES_H

#include "kernels.h"
#include "../common/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { BATCH_MAX_STREAMS = 8 };
enum batch_stage { BATCH_H2D, BATCH_KERNEL, BATCH_D2H, BATCH_BESIDE };

/* How a variant issues the work. */
typedef struct {
    int streams;       /* S: item j goes to stream j % S, into that stream's own buffers */
    int chunks;        /* C: each batch cut into C items */
    int breadth_first; /* per round of S items: all H2D, then all kernels, then all D2H */
    int pageable;      /* host buffers from malloc instead of cudaMallocHost */
} batch_shape;

typedef struct {
    int n;                  /* batches */
    size_t batch;           /* words per batch */
    int steps;              /* affine_work rounds per element: the caller calibrates it */
    uint32_t *h_in, *h_out; /* pinned, n batches each */
    uint32_t *p_in, *p_out; /* pageable, the same inputs */
    uint32_t *d_in, *d_out; /* room for two batches each: every stream's buffers */
    cudaStream_t stream[BATCH_MAX_STREAMS]; /* non-blocking: the legacy stream never orders them */
    cudaEvent_t joined[BATCH_MAX_STREAMS];
    event_timer timer;
} batch_pipeline;

/* Its buffers, streams ("stream 0" ...), events and timer, owned by the run;
 * fresh random inputs, pinned and pageable alike; every output page touched
 * and every device byte written before anything is timed. Returns with the
 * GPU idle. */
batch_pipeline batch_pipeline_open(lab_run *run, int n, size_t batch);

/* One stage (BATCH_H2D, _KERNEL or _D2H) of item j: batch j / C, chunk j %
 * C, on stream j % S with that stream's buffers; the stream's order keeps
 * the items that share them apart (item j + S's upload waits for item j's
 * download). */
void batch_issue(const batch_pipeline *p, const batch_shape *sh, int j, int stage);

/* Stream `waiter` goes on only once stream `on` has reached this point. */
void batch_wait_for(const batch_pipeline *p, int waiter, int on);

/* Every item once in the shape's order, between p->timer's two events in
 * stream 0, which the other streams fork from and join: the host queues
 * everything, then waits once. Returns the events' ms. */
double batch_pipeline_run(batch_pipeline *p, const batch_shape *sh);

/* One stage of items of 1/chunks of a batch, timed alone (an issue_fn for
 * measure_issued and time_issued, `per_sample` issues a sample): H2D,
 * KERNEL, D2H (from pageable memory if asked) back to back in stream 0, or
 * BESIDE, an upload there and a download in stream 1 (item 1's), which
 * forks from stream 0 before the first and joins it after the last. */
typedef struct {
    batch_pipeline *p;
    int stage, pageable, chunks, per_sample;
} batch_stage_of;
void batch_issue_stage(void *batch_stage_of_ctx, int i);

/* ---- the model ---- */

/* ms per item (a batch, or a chunk of one): each stage alone; c', the slower
 * copy while both run; pageable copies (whole batches only). */
typedef struct {
    double h, k, d, beside, h_pageable, d_pageable;
} batch_stage_ms;

/* Stage times h, k, d and c' as the model takes them: c' never below the
 * slower copy alone (that would be noise), and the slower copy where one
 * engine never runs both at once. */
batch_stage_ms batch_stage_times(double h, double k, double d, double beside, int engines);

/* The engines' bound over m items of stage times t each: the busiest engine
 * does its stage of all m items, the other stages before its first and after
 * its last (fill, drain); with one copy engine, uploads and downloads take
 * turns on it. */
double batch_engines_ms(batch_stage_ms t, int m, int engines);

/* The streams' bound over n batches: a stream runs its items one after
 * another, and stream s's first upload waits for the s uploads before it. */
double batch_streams_ms(batch_stage_ms t, const batch_shape *sh, int n);

#ifdef __cplusplus
}
#endif
#endif
