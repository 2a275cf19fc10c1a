/* Timers and measure(); see timing.h. */
#define _POSIX_C_SOURCE 200809L
#include "timing.h"
#include "check.h"

#include <stdlib.h>
#include <time.h>

static double clock_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

double host_time_ms(void) { return clock_ms(CLOCK_MONOTONIC); }
double host_cpu_ms(void) { return clock_ms(CLOCK_PROCESS_CPUTIME_ID); }
double host_thread_cpu_ms(void) { return clock_ms(CLOCK_THREAD_CPUTIME_ID); }

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

double event_wait(cudaEvent_t e, double nap_us, double *returned_ms)
{
    const struct timespec nap = {0, (long)(nap_us * 1e3)};
    double w0 = host_time_ms(), c0 = host_cpu_ms();
    if (nap_us > 0)
        while (!event_finished(e))
            nanosleep(&nap, NULL);
    else
        CUDA_CHECK(cudaEventSynchronize(e));
    *returned_ms = host_time_ms();
    return (host_cpu_ms() - c0) / (*returned_ms - w0);
}

void events_seen_ms(const cudaEvent_t *events, int n, double *seen_ms)
{
    for (int i = 0; i < n; i++)
        seen_ms[i] = 0;
    for (int left = n; left > 0;)
        for (int i = 0; i < n; i++)
            if (!seen_ms[i] && event_finished(events[i])) {
                seen_ms[i] = host_time_ms();
                left--;
            }
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
    /* Both marks, not only the stop: a start recorded in another stream
     * (ex03's level two marks the background's end) can be reached after
     * the stop, and cudaEventElapsedTime then fails with cudaErrorNotReady
     * (seen under compute-sanitizer, which changes what runs beside what). */
    CUDA_CHECK(cudaEventSynchronize(t->start));
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

double time_issued(void *ctx)
{
    issued *w = ctx;
    event_timer_start(&w->timer, w->stream);
    for (int i = 0; i < w->per_sample; i++)
        w->fn(w->ctx, i);
    event_timer_stop(&w->timer, w->stream);
    return event_timer_ms(&w->timer) / w->per_sample;
}

stats measure_issued(issue_fn fn, void *ctx, cudaStream_t stream, int per_sample, int warmup,
                     int reps)
{
    issued w = {fn, ctx, stream, per_sample, {0, 0}};
    event_timer_create(&w.timer);
    stats s = measure(time_issued, &w, warmup, reps);
    event_timer_destroy(&w.timer);
    return s;
}

void measure_rounds(const timed_fn *fn, void *const *ctx, int k, int warmup, int rounds,
                    double *samples)
{
    for (int j = 0; j < warmup; j++)
        for (int i = 0; i < k; i++)
            fn[i](ctx[i]);
    for (int j = 0; j < rounds; j++)
        for (int step = 0; step < k; step++) {
            int i = (j + step) % k;
            samples[(size_t)i * rounds + j] = fn[i](ctx[i]);
        }
}

paired measure_paired(timed_fn a, void *ctx_a, timed_fn b, void *ctx_b, int warmup, int pairs)
{
    const timed_fn fn[2] = {a, b};
    void *const ctx[2] = {ctx_a, ctx_b};
    double *t = xmalloc(2 * (size_t)pairs * sizeof *t);
    measure_rounds(fn, ctx, 2, warmup, pairs, t);
    paired p = {stats_of(t, pairs), stats_of(t + pairs, pairs), stats_of_ratios(t, t + pairs, pairs)};
    free(t);
    return p;
}

void measure_several(timed_k_fn fn, void *ctx, int k, int warmup, int reps, stats *out)
{
    double *v = xmalloc((size_t)k * sizeof *v), *all = xmalloc((size_t)k * reps * sizeof *all);
    for (int i = 0; i < warmup; i++)
        fn(ctx, v);
    for (int j = 0; j < reps; j++) {
        fn(ctx, v);
        for (int i = 0; i < k; i++)
            all[(size_t)i * reps + j] = v[i];
    }
    for (int i = 0; i < k; i++)
        out[i] = stats_of(all + (size_t)i * reps, reps);
    free(all);
    free(v);
}

void measure_ways(timed_k_fn fn, void *ways, size_t size, int n, int k, int warmup, int rounds,
                  double *samples)
{
    double *v = xmalloc((size_t)k * sizeof *v);
    for (int j = -warmup; j < rounds; j++)
        for (int step = 0; step < n; step++) {
            int i = (j + warmup + step) % n; /* warm-up rounds rotate too */
            fn((char *)ways + (size_t)i * size, v);
            for (int x = 0; j >= 0 && x < k; x++)
                samples[((size_t)x * n + i) * rounds + j] = v[x];
        }
    free(v);
}
