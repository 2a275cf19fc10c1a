/* A pipeline's buffers before and after a run (kernels.h), owned by a run,
 * and one run timed and checked (pipeline.h). */
#include "pipeline.h"
#include "../common/check.h"
#include "../common/timing.h"

void pipeline_fresh(pipeline_buffers *p)
{
    fill_random_u32(p->add, (size_t)p->stages * p->batches, fresh_seed());
    pipeline_fresh_words(p);
}

void pipeline_fresh_words(pipeline_buffers *p)
{
    int n = p->stages * p->batches;
    fill_random_u32(p->seed, (size_t)p->batches, fresh_seed());
    for (int i = 0; i < n; i++)
        p->h_span[i].start_ns = ~0ull, p->h_span[i].end_ns = 0;
    CUDA_CHECK(cudaMemcpy(p->d_value, p->seed, p->batches * sizeof(uint32_t),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p->d_span, p->h_span, n * sizeof(stage_span), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* pageable copies may return before they land */
}

void pipeline_download(pipeline_buffers *p)
{
    int n = p->stages * p->batches;
    CUDA_CHECK(cudaMemcpy(p->h_value, p->d_value, p->batches * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(p->h_span, p->d_span, n * sizeof(stage_span), cudaMemcpyDeviceToHost));
}

size_t pipeline_verify(pipeline_buffers *p, const uint64_t *ns, uint64_t slack_ns, tally *values,
                       tally *order)
{
    pipeline_download(p);
    return verify_pipeline(p->h_value, p->seed, p->add, p->h_span, ns, p->stages, p->batches,
                           slack_ns, values, order);
}

pipeline_buffers pipeline_open(lab_run *run, int stages, int batches)
{
    size_t words = (size_t)batches * sizeof(uint32_t), spans = (size_t)stages * batches;
    pipeline_buffers p = {stages, batches};
    p.d_value = (uint32_t *)lab_device(run, words);
    p.h_value = (uint32_t *)lab_pageable(run, (2 + stages) * words);
    p.seed = p.h_value + batches, p.add = p.seed + batches;
    p.d_span = (stage_span *)lab_device(run, spans * sizeof(stage_span));
    p.h_span = (stage_span *)lab_pageable(run, spans * sizeof(stage_span));
    return p;
}

double pipeline_run(pipeline_buffers *p, void (*issue)(void *ctx), void *ctx, const uint64_t *ns,
                    uint64_t slack_ns, tally *values, tally *order, double *issue_ms)
{
    pipeline_fresh(p);
    double t0 = host_time_ms();
    issue(ctx);
    *issue_ms = host_time_ms() - t0;
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = host_time_ms() - t0;
    if (ns)
        pipeline_verify(p, ns, slack_ns, values, order);
    return ms;
}
