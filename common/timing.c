/* Timers and measure(); see timing.h. */
#define _POSIX_C_SOURCE 200809L
#include "timing.h"
#include "check.h"

#include <stdlib.h>
#include <time.h>

double host_time_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int event_finished(cudaEvent_t e)
{
    cudaError_t err = cudaEventQuery(e);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return 0;
    }
    CUDA_CHECK(err);
    return 1;
}

void event_timer_create(event_timer *t)
{
    CUDA_CHECK(cudaEventCreate(&t->start));
    CUDA_CHECK(cudaEventCreate(&t->stop));
}

void event_timer_destroy(event_timer *t)
{
    CUDA_CHECK(cudaEventDestroy(t->start));
    CUDA_CHECK(cudaEventDestroy(t->stop));
}

void event_timer_start(event_timer *t, cudaStream_t stream)
{
    CUDA_CHECK(cudaEventRecord(t->start, stream));
}

void event_timer_stop(event_timer *t, cudaStream_t stream)
{
    CUDA_CHECK(cudaEventRecord(t->stop, stream));
}

double event_timer_ms(event_timer *t)
{
    float ms = 0;
    CUDA_CHECK(cudaEventSynchronize(t->stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, t->start, t->stop));
    return ms;
}

stats measure(timed_fn fn, void *ctx, int warmup, int reps)
{
    for (int i = 0; i < warmup; i++)
        fn(ctx);
    double *samples = xmalloc((size_t)reps * sizeof *samples);
    for (int i = 0; i < reps; i++)
        samples[i] = fn(ctx);
    stats s = stats_of(samples, reps);
    free(samples);
    return s;
}
