/* A batch pipeline, issued, timed and modelled; see batches.h. */
#include "batches.h"
#include "../common/check.h"

#include <math.h>
#include <string.h>

batch_pipeline batch_pipeline_open(lab_run *run, int n, size_t batch)
{
    batch_pipeline p = {.n = n, .batch = batch};
    size_t total = (size_t)n * batch, bytes = total * sizeof(uint32_t);
    size_t device_bytes = 2 * batch * sizeof(uint32_t);
    p.h_in = (uint32_t *)lab_pinned(run, bytes), p.h_out = (uint32_t *)lab_pinned(run, bytes);
    p.p_in = (uint32_t *)lab_pageable(run, bytes), p.p_out = (uint32_t *)lab_pageable(run, bytes);
    p.d_in = (uint32_t *)lab_device(run, device_bytes);
    p.d_out = (uint32_t *)lab_device(run, device_bytes);
    fill_random_u32(p.h_in, total, fresh_seed());
    memcpy(p.p_in, p.h_in, bytes);
    memset(p.p_out, 0xff, bytes); /* its pages faulted in now, not while a copy is timed */
    CUDA_CHECK(cudaMemcpy(p.d_in, p.h_in, device_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(p.d_out, 0xff, device_bytes)); /* no device byte is read unwritten */
    lab_streams(run, p.stream, BATCH_MAX_STREAMS, "stream", cudaStreamNonBlocking);
    for (int s = 0; s < BATCH_MAX_STREAMS; s++)
        p.joined[s] = lab_event(run, cudaEventDisableTiming);
    p.timer = lab_timer(run);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream */
    return p;
}

void batch_issue(const batch_pipeline *p, const batch_shape *sh, int j, int stage)
{
    size_t region = (p->batch + sh->chunks - 1) / sh->chunks;
    int c = j % sh->chunks, s = j % sh->streams;
    size_t lo = p->batch * c / sh->chunks, count = p->batch * (c + 1) / sh->chunks - lo;
    size_t at = (size_t)(j / sh->chunks) * p->batch + lo;
    uint32_t *d_in = p->d_in + s * region, *d_out = p->d_out + s * region;
    cudaStream_t st = p->stream[s];
    if (stage == BATCH_H2D)
        CUDA_CHECK(cudaMemcpyAsync(d_in, (sh->pageable ? p->p_in : p->h_in) + at,
                                   count * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
    else if (stage == BATCH_KERNEL)
        affine_launch(d_in, d_out, count, p->steps, st);
    else
        CUDA_CHECK(cudaMemcpyAsync((sh->pageable ? p->p_out : p->h_out) + at, d_out,
                                   count * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
}

void batch_wait_for(const batch_pipeline *p, int waiter, int on)
{
    CUDA_CHECK(cudaEventRecord(p->joined[on], p->stream[on]));
    CUDA_CHECK(cudaStreamWaitEvent(p->stream[waiter], p->joined[on], 0));
}

double batch_pipeline_run(batch_pipeline *p, const batch_shape *sh)
{
    int m = p->n * sh->chunks, S = sh->streams;
    event_timer_start(&p->timer, p->stream[0]);
    for (int s = 1; s < S; s++) /* they start where stream 0's start event is */
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[s], p->timer.start, 0));
    if (!sh->breadth_first) {
        for (int j = 0; j < m; j++)
            for (int stage = BATCH_H2D; stage <= BATCH_D2H; stage++)
                batch_issue(p, sh, j, stage);
    } else {
        for (int round = 0; round < m; round += S)
            for (int stage = BATCH_H2D; stage <= BATCH_D2H; stage++)
                for (int j = round; j < round + S && j < m; j++)
                    batch_issue(p, sh, j, stage);
    }
    for (int s = 1; s < S; s++)
        batch_wait_for(p, 0, s);
    event_timer_stop(&p->timer, p->stream[0]);
    return event_timer_ms(&p->timer);
}

void batch_issue_stage(void *ctx, int i)
{
    const batch_stage_of *so = (const batch_stage_of *)ctx;
    batch_pipeline *p = so->p;
    const batch_shape one = {1, so->chunks, 0, so->pageable}, two = {2, so->chunks, 0, 0};
    if (so->stage != BATCH_BESIDE) {
        batch_issue(p, &one, i % (p->n * so->chunks), so->stage);
        return;
    }
    if (i == 0)
        batch_wait_for(p, 1, 0);
    batch_issue(p, &two, 0, BATCH_H2D);
    batch_issue(p, &two, 1, BATCH_D2H);
    if (i == so->per_sample - 1)
        batch_wait_for(p, 0, 1);
}

batch_stage_ms batch_stage_times(double h, double k, double d, double beside, int engines)
{
    batch_stage_ms t = {h, k, d, fmax(engines >= 2 ? beside : 0, fmax(h, d)), 0, 0};
    return t;
}

double batch_engines_ms(batch_stage_ms t, int m, int engines)
{
    if (engines >= 2)
        return t.h + t.k + t.d + (m - 1) * fmax(t.beside, t.k);
    return fmax(m * (t.h + t.d), t.h + t.d + m * t.k);
}

double batch_streams_ms(batch_stage_ms t, const batch_shape *sh, int n)
{
    double item = t.h + t.k + t.d, worst = 0;
    int m = n * sh->chunks;
    for (int s = 0; s < sh->streams && s < m; s++) {
        int items = (m - s + sh->streams - 1) / sh->streams; /* stream s's: j = s, s + S, ... */
        worst = fmax(worst, s * t.h + items * item);
    }
    return worst;
}
