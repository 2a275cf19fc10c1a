/* A pipeline's buffers before and after a run; see kernels.h. */
#include "kernels.h"
#include "../common/check.h"

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

size_t pipeline_verify(pipeline_buffers *p, const uint64_t *ns, uint64_t slack_ns, tally *values,
                       tally *order)
{
    int n = p->stages * p->batches;
    CUDA_CHECK(cudaMemcpy(p->h_value, p->d_value, p->batches * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(p->h_span, p->d_span, n * sizeof(stage_span), cudaMemcpyDeviceToHost));
    return verify_pipeline(p->h_value, p->seed, p->add, p->h_span, ns, p->stages, p->batches,
                           slack_ns, values, order);
}
