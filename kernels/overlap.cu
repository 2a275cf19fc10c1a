/* lab13's pipeline, shared with lab14's part 3 (overlap.h). */
#include "overlap.h"
#include "../common/check.h"
#include "../common/report.h"
#include "../common/timing.h"

#include <math.h>
#include <stdio.h>

enum { WARMUP = 1, CALLS = 5 };

/* ---- one backward pass, issued by one thread for every GPU -------------- */

/* Contexts: every event here is the runtime's, made in each GPU's primary
 * context. done[r][l] is recorded in GPU r's compute stream, which may be a
 * green context's (lab14): it then marks that stream's work, and the comm
 * stream (the primary context's) may wait on it: a stream may wait on an
 * event recorded in another context's stream. The sums say if it did not. */
static void issue(const way *w)
{
    overlap_bench *b = w->b;
    grad_bench *g = &b->g;
    int k = 0, buckets = grad_buckets(g->words, w->bucket);
    for (int l = 0; l < g->layers; l++) {
        for (int r = 0; r < g->gpus; r++) {
            grad_layer(g, r, l);
            CUDA_CHECK(cudaEventRecord(g->done[r][l], g->compute[r])); /* "layer l has ended" */
        }
        /* every bucket whose last layer this was: its GPUs' comm streams wait, then one group */
        for (; w->how == OVERLAPPED && k < buckets && grad_bucket_last_layer(g, w->bucket, k) == l;
             k++) {
            for (int r = 0; r < g->gpus && !b->no_wait; r++)
                CUDA_CHECK(cudaStreamWaitEvent(g->comm[r], g->done[r][l], 0));
            size_t first = (size_t)k * w->bucket;
            b->all_reduce(w->rk, g, first, g->words - first < w->bucket ? g->words - first
                                                                         : w->bucket);
        }
    }
    if (w->how == SERIAL) { /* all layers, then all the gradients at once */
        for (int r = 0; r < g->gpus; r++)
            CUDA_CHECK(cudaStreamWaitEvent(g->comm[r], g->done[r][g->layers - 1], 0));
        b->all_reduce(w->rk, g, 0, g->words);
    }
}

/* One run on poisoned buffers, timed on the host's clock from idle GPUs to
 * idle GPUs (no one stream's events time two GPUs); its sums checked. The
 * poison and the check run in the bench's own streams; only the layers go
 * to the way's. */
extern "C" void timed_run(void *ctx, double *ms)
{
    const way *w = (const way *)ctx;
    grad_bench *g = &w->b->g;
    grad_job(g, w->j->layers, w->j->layer_ms, (size_t)(w->j->mib * MIB / sizeof(float)),
             w->j->shape);
    grad_poison(g);
    grad_comm_priority(g, w->urgent_comm);
    grad_compute_streams(g, w->compute);
    double t0 = host_time_ms();
    issue(w);
    grad_sync(g);
    *ms = host_time_ms() - t0;
    grad_compute_streams(g, NULL);
    grad_comm_priority(g, 0);
    w->b->sums.where = w->name;
    if (w->how != COMPUTE_ONLY)
        grad_verify(g, g->words, &w->b->sums);
}

extern "C" way make_way(overlap_bench *b, const job *j, enum how how, const ranks *rk,
                        const link_fit *fit, double bucket_mib)
{
    way w = {b, j, how, rk, fit, (size_t)(bucket_mib * MIB / sizeof(float)), 0, NULL,
             b->sm_count, ""};
    snprintf(w.name, sizeof w.name, how == COMPUTE_ONLY ? "compute only" : how == SERIAL ?
             "serial" : "bucket %g MiB", bucket_mib);
    return w;
}

extern "C" void overlap_measure(overlap_bench *b, way *w, int n, stats *time, double *model)
{
    measure_ways(timed_run, w, sizeof *w, n, 1, WARMUP, b->reps, b->samples);
    stats_of_rows(b->samples, n, b->reps, time);
    double compute_ms = time[0].median;
    for (int i = 0; i < n; i++) {
        const job *j = w[i].j;
        grad_job(&b->g, j->layers, j->layer_ms, (size_t)(j->mib * MIB / sizeof(float)), j->shape);
        if (w[i].how == COMPUTE_ONLY)
            compute_ms = time[i].median;
        model[i] = w[i].how == COMPUTE_ONLY
                       ? j->layers * ceil((double)j->shape.blocks / w[i].sms) * j->layer_ms
                 : w[i].how == SERIAL ? serial_model_ms(w[i].fit, &b->g, compute_ms)
                 : overlap_model_ms(w[i].fit, &b->g, compute_ms, w[i].bucket);
    }
}

extern "C" stats speedup_of(const overlap_bench *b, int serial, int i)
{
    return stats_of_ratios(b->samples + (size_t)serial * b->reps, b->samples + (size_t)i * b->reps,
                           b->reps);
}

/* ---- what an all-reduce costs -------------------------------------------- */

typedef struct { overlap_bench *b; const ranks *rk; size_t words; } sized;

static double allreduce_ms(void *ctx)
{
    sized *s = (sized *)ctx;
    double t0 = host_time_ms();
    for (int i = 0; i < CALLS; i++) /* back to back, as nccl-tests times them */
        s->b->all_reduce(s->rk, &s->b->g, 0, s->words);
    grad_sync(&s->b->g);
    return (host_time_ms() - t0) / CALLS;
}

extern "C" link_fit allreduce_sweep(lab_run *run, overlap_bench *b, const ranks *rk,
                                    const char *who, const double *mib, int n, const job *fill)
{
    double bytes[8], ms[8], scale = 2.0 * (b->g.gpus - 1) / b->g.gpus;
    stats s[8];
    job no_time = {fill->layers, 0, mib[n - 1], fill->shape}; /* layers of no time: gradients to sum */
    way w = make_way(b, &no_time, COMPUTE_ONLY, rk, NULL, mib[n - 1]);
    double unused;
    timed_run(&w, &unused);
    for (int i = 0; i < n; i++) {
        sized c = {b, rk, (size_t)(mib[i] * MIB / sizeof(float))};
        s[i] = measure(allreduce_ms, &c, WARMUP, b->reps);
        bytes[i] = mib[i] * MIB, ms[i] = s[i].median;
        b->sums.where = who;
        grad_verify(&b->g, c.words, &b->sums);
    }
    link_fit f = link_fit_of(bytes, ms, n);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s, %g MiB", who, mib[i]);
        report_compare(run->r, name, "time", "alpha + S/B", allreduce_model_ms(&f, bytes[i]),
                       &s[i], "ms");
        report_value(run->r, name, "busbw", bytes[i] / ms[i] * 1e-6 * scale, "GB/s");
    }
    report_value(run->r, who, "alpha", f.alpha_ms * 1e3, "us");
    report_value(run->r, who, "B", f.bytes_per_ms * 1e-6, "GB/s");
    return f;
}
