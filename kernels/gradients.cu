/* A backward pass's gradients on every GPU, and their check (gradients.h). */
#include "gradients.h"
#include "../common/check.h"
#include "../common/timeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One layer of the backward pass: each block spins `ns` from its own
 * start, then writes its share of the layer's gradients. A block that waits
 * for an SM (NCCL's kernels hold some) ends late: the layer's time is the
 * GPU's to give, as in training. */
__global__ void backward_layer(uint64_t ns, uint32_t seed, int rank, float *g, size_t first,
                               size_t n)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < ns)
        ;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        g[first + i] = grad_value(seed, rank, first + i);
}

/* Adds to *wrong the reduced words that are not the sum over `ranks` GPUs
 * (a NaN is never equal: poison left in, or summed in, counts). */
__global__ void grad_count_wrong(const float *sum, size_t n, uint32_t seed, int ranks,
                                 unsigned long long *wrong)
{
    unsigned long long bad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        bad += !(sum[i] == grad_sum_reference(seed, ranks, i));
    if (bad)
        atomicAdd(wrong, bad);
}

static void use(const grad_bench *b, int g) { CUDA_CHECK(cudaSetDevice(b->dev[g])); }

static int sm_count(void)
{
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

extern "C" void grad_open(lab_run *run, grad_bench *b, const int *dev, int gpus, int max_layers,
                          size_t capacity)
{
    memset(b, 0, sizeof *b);
    b->gpus = gpus, b->max_layers = max_layers, b->capacity = capacity;
    for (int g = 0; g < gpus; g++) {
        char name[64];
        b->dev[g] = dev[g];
        use(b, g);
        snprintf(name, sizeof name, "GPU%d compute", dev[g]);
        b->compute[g] = b->compute_own[g] = lab_stream(run, name, cudaStreamNonBlocking, 0);
        snprintf(name, sizeof name, "GPU%d comm", dev[g]);
        b->comm[g] = b->comm_least[g] = lab_stream(run, name, cudaStreamNonBlocking, 0);
        int least, greatest;
        CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        snprintf(name, sizeof name, "GPU%d comm, greatest priority", dev[g]);
        b->comm_greatest[g] = lab_stream(run, name, cudaStreamNonBlocking, greatest);
        b->done[g] = (cudaEvent_t *)lab_pageable(run, max_layers * sizeof(cudaEvent_t));
        lab_events(run, b->done[g], max_layers, cudaEventDisableTiming); /* ordering only */
        b->grad[g] = (float *)lab_device(run, capacity * sizeof(float));
        b->sum[g] = (float *)lab_device(run, capacity * sizeof(float));
        /* written once here: a collective timed before any layer ran (ex13's
         * link fit) reads defined words; compute-sanitizer's initcheck reports
         * every 32 bytes of an unwritten one, and took minutes doing it */
        CUDA_CHECK(cudaMemset(b->grad[g], 0, capacity * sizeof(float)));
        CUDA_CHECK(cudaMemset(b->sum[g], 0, capacity * sizeof(float)));
        b->d_wrong[g] = (unsigned long long *)lab_device(run, sizeof(unsigned long long));
        /* one footprint for every GPU of the machine: set on each (a per-device attribute) */
        whole_sm_footprint_threads((const void *)backward_layer, GRAD_THREADS);
    }
    b->h_wrong = (unsigned long long *)lab_pinned(run, gpus * sizeof(unsigned long long));
    b->h_window = (float *)lab_pageable(run, 16384 * sizeof(float));
    use(b, 0);
}

extern "C" void grad_job(grad_bench *b, int layers, double layer_ms, size_t words,
                         layer_shape shape)
{
    if (layers > b->max_layers || words > b->capacity || words < (size_t)layers)
        fail_wrong("grad_job: %d layers and %zu words do not fit a bench of %d and %zu", layers,
                   words, b->max_layers, b->capacity);
    b->layers = layers, b->words = words, b->layer_words = words / layers;
    b->layer_ns = ns_from_ms(layer_ms), b->shape = shape;
}

extern "C" void grad_comm_priority(grad_bench *b, int greatest)
{
    for (int g = 0; g < b->gpus; g++)
        b->comm[g] = greatest ? b->comm_greatest[g] : b->comm_least[g];
}

extern "C" void grad_compute_streams(grad_bench *b, const cudaStream_t *streams)
{
    for (int g = 0; g < b->gpus; g++)
        b->compute[g] = streams ? streams[g] : b->compute_own[g];
}

extern "C" layer_shape grad_shape(const char *name, int blocks, int whole_sm)
{
    layer_shape s = {name, blocks > 0 ? blocks : 1,
                     whole_sm ? whole_sm_footprint_threads((const void *)backward_layer,
                                                           GRAD_THREADS) : 0};
    return s;
}

extern "C" void grad_layer(grad_bench *b, int g, int l)
{
    use(b, g);
    size_t n = l == b->layers - 1 ? b->words - l * b->layer_words : b->layer_words;
    backward_layer<<<b->shape.blocks, GRAD_THREADS, b->shape.footprint, b->compute[g]>>>(
        b->layer_ns, b->seed, g, b->grad[g], (size_t)l * b->layer_words, n);
    CHECK_LAUNCH();
}

extern "C" void grad_sync(grad_bench *b)
{
    for (int g = 0; g < b->gpus; g++) {
        CUDA_CHECK(cudaStreamSynchronize(b->compute[g]));
        CUDA_CHECK(cudaStreamSynchronize(b->comm[g]));
    }
    use(b, 0);
}

extern "C" void grad_poison(grad_bench *b)
{
    b->seed = (uint32_t)fresh_seed();
    for (int g = 0; g < b->gpus; g++) { /* 0xFF bytes: a NaN in every float */
        use(b, g);
        CUDA_CHECK(cudaMemsetAsync(b->grad[g], 0xFF, b->words * sizeof(float), b->compute[g]));
        CUDA_CHECK(cudaMemsetAsync(b->sum[g], 0xFF, b->words * sizeof(float), b->compute[g]));
        CUDA_CHECK(cudaMemsetAsync(b->d_wrong[g], 0, sizeof(unsigned long long), b->compute[g]));
    }
    grad_sync(b);
}

extern "C" void grad_warm(grad_bench *b)
{
    for (int g = 0; g < b->gpus; g++) {
        use(b, g);
        backward_layer<<<1, GRAD_THREADS, 0, b->compute[g]>>>(0, 0, g, b->grad[g], 0, 1);
        CHECK_LAUNCH();
        grad_count_wrong<<<1, GRAD_THREADS, 0, b->compute[g]>>>(b->sum[g], 0, 0, 1, b->d_wrong[g]);
        CHECK_LAUNCH();
    }
    grad_sync(b);
}

extern "C" size_t grad_verify(grad_bench *b, size_t words, tally *t)
{
    size_t wrong = 0, window = 16384 < words ? 16384 : words;
    for (int g = 0; g < b->gpus; g++) {
        use(b, g);
        grad_count_wrong<<<2 * sm_count(), GRAD_THREADS, 0, b->compute[g]>>>(
            b->sum[g], words, b->seed, b->gpus, b->d_wrong[g]);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(&b->h_wrong[g], b->d_wrong[g], sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, b->compute[g]));
    }
    grad_sync(b);
    for (int g = 0; g < b->gpus; g++) {
        /* the CPU's own check of a window at a fresh place: the GPU's count is not trusted alone */
        size_t at = (size_t)(fresh_seed() % (words - window + 1));
        use(b, g);
        CUDA_CHECK(cudaMemcpy(b->h_window, b->sum[g] + at, window * sizeof(float),
                              cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < window; i++)
            bad += !(b->h_window[i] == grad_sum_reference(b->seed, b->gpus, at + i));
        size_t w = b->h_wrong[g] > bad ? (size_t)b->h_wrong[g] : bad;
        tally_add(t, words, w, at);
        wrong += w;
    }
    use(b, 0);
    return wrong;
}

extern "C" int grad_buckets(size_t words, size_t bucket)
{
    return (int)((words + bucket - 1) / bucket);
}

extern "C" int grad_bucket_last_layer(const grad_bench *b, size_t bucket, int k)
{
    size_t end = (size_t)(k + 1) * bucket < b->words ? (size_t)(k + 1) * bucket : b->words;
    int l = (int)((end - 1) / b->layer_words);
    return l < b->layers ? l : b->layers - 1;
}

extern "C" double allreduce_model_ms(const link_fit *f, double bytes)
{
    return f->alpha_ms + bytes / f->bytes_per_ms;
}

extern "C" double serial_model_ms(const link_fit *f, const grad_bench *b, double compute_ms)
{
    return compute_ms + allreduce_model_ms(f, (double)b->words * sizeof(float));
}

extern "C" double overlap_model_ms(const link_fit *f, const grad_bench *b, double compute_ms,
                                   size_t bucket)
{
    size_t words = b->words;
    double t = 0;
    for (int k = 0; k < grad_buckets(words, bucket); k++) {
        size_t first = (size_t)k * bucket, n = first + bucket < words ? bucket : words - first;
        double ready = (grad_bucket_last_layer(b, bucket, k) + 1) * compute_ms / b->layers;
        t = fmax(t, ready) + allreduce_model_ms(f, (double)n * sizeof(float));
    }
    return fmax(t, compute_ms);
}

extern "C" link_fit link_fit_of(const double *bytes, const double *ms, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++)
        sx += bytes[i], sy += ms[i], sxx += bytes[i] * bytes[i], sxy += bytes[i] * ms[i];
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    link_fit f = {(sy - slope * sx) / n, slope > 0 ? 1 / slope : INFINITY};
    if (f.alpha_ms < 0) /* a fit through noise: no latency is negative */
        f.alpha_ms = 0;
    return f;
}
