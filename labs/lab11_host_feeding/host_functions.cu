/* lab11, part 2: host functions. cudaLaunchHostFunc(stream, fn, arg) puts
 * a call of fn(arg) into the stream: the stream waits until the call has
 * returned, and the call runs on a thread of the driver's, not the
 * caller's. That is how a loader can hand a slot back "when the GPU is done
 * with it" without a thread waiting on an event, and what it costs:
 *   (a) one host function between tiny kernels: the stream stalls for a
 *       round trip to the host (H100 probe: about 21 us each);
 *   (b) four 5 ms host functions on four streams: they do not overlap, one
 *       driver thread runs them one at a time (probe: 20.5 ms, not 5);
 *   (c) a 20 ms host function in one stream beside a 1 ms kernel in another:
 *       the kernel does not wait for it (only its own stream does).
 * A host function may make no CUDA call (the driver's thread would wait on
 * itself): these only read the host's clock. */
#include "host_functions.h"
#include "kernels.h"

#include <pthread.h>

enum { STREAMS = 4, TINY = 100, WARMUP = 1 };
static const double SHORT_MS = 5, LONG_MS = 20, KERNEL_MS = 1, GATE_MS = 2;

typedef struct {
    double ms, start, end; /* asked; when it ran, on the host clock */
    pthread_t thread;      /* the thread that ran it */
} host_work;

static void CUDART_CB nothing(void *arg) { (void)arg; }

/* Busy for h->ms on the host clock: work, not a sleep, as a loader's would be. */
static void CUDART_CB busy(void *arg)
{
    host_work *h = (host_work *)arg;
    h->thread = pthread_self();
    h->start = host_time_ms();
    do
        h->end = host_time_ms();
    while (h->end - h->start < h->ms);
}

typedef struct {
    cudaStream_t s[STREAMS];
    event_timer timer;
    cudaEvent_t seen[3];
    int with; /* (a): a host function after each tiny kernel */
} part2;

/* (a) One sample: TINY tiny kernels, each followed by a host function or
 * not, behind a gate kernel that holds them until all are issued; events
 * in the stream; us per kernel. */
static void tiny_run(void *ctx, double *us)
{
    part2 *p = (part2 *)ctx;
    spin_for_ns<<<1, 1, 0, p->s[0]>>>(ns_from_ms(GATE_MS));
    CHECK_LAUNCH();
    event_timer_start(&p->timer, p->s[0]);
    for (int i = 0; i < TINY; i++) {
        spin_for_ns<<<1, 1, 0, p->s[0]>>>(0);
        CHECK_LAUNCH();
        if (p->with)
            CUDA_CHECK(cudaLaunchHostFunc(p->s[0], nothing, NULL));
    }
    event_timer_stop(&p->timer, p->s[0]);
    *us = event_timer_ms(&p->timer) * 1e3 / TINY;
}

/* (b) v[0] the four's run, ms; v[1] how long two of them ran at once, ms;
 * v[2] how many threads ran them. */
static void four_run(void *ctx, double *v)
{
    part2 *p = (part2 *)ctx;
    host_work h[STREAMS];
    double t0 = host_time_ms();
    for (int i = 0; i < STREAMS; i++) {
        h[i].ms = SHORT_MS;
        CUDA_CHECK(cudaLaunchHostFunc(p->s[i], busy, &h[i]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    v[0] = host_time_ms() - t0, v[1] = 0, v[2] = 0;
    for (int i = 0; i < STREAMS; i++) {
        int first = 1;
        for (int j = 0; j < i; j++) {
            v[1] += fmax(0, fmin(h[i].end, h[j].end) - fmax(h[i].start, h[j].start));
            first = first && !pthread_equal(h[i].thread, h[j].thread);
        }
        v[2] += first;
    }
}

/* (c) A LONG_MS host function in stream 0, then a KERNEL_MS kernel there
 * and one in stream 1: when the host saw each done, ms after the launches. */
static void beside_run(void *ctx, double *v)
{
    part2 *p = (part2 *)ctx;
    host_work h = {LONG_MS};
    double seen[3], t0 = host_time_ms();
    CUDA_CHECK(cudaLaunchHostFunc(p->s[0], busy, &h));
    CUDA_CHECK(cudaEventRecord(p->seen[0], p->s[0]));
    for (int i = 0; i < 2; i++) { /* the same stream, then another */
        spin_for_ns<<<1, 1, 0, p->s[i]>>>(ns_from_ms(KERNEL_MS));
        CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(p->seen[1 + i], p->s[i]));
    }
    events_seen_ms(p->seen, 3, seen);
    for (int i = 0; i < 3; i++)
        v[i] = seen[i] - t0;
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* The kernel in the other stream is done long before the host function
 * (it needs KERNEL_MS; behind the host function it would need LONG_MS +
 * KERNEL_MS): at most half of LONG_MS, a margin no wake-up closes. */
static const verdict OWN_STREAM_ONLY = {
    "host_function_stalls_own_stream_only", -INFINITY, 0.5, "x",
    "a kernel in another stream waited for a host function: CUDA_LAUNCH_BLOCKING, a tool "
    "serialising streams, or the legacy stream between blocking streams"};

void host_functions(lab_run *run)
{
    report *r = run->r;
    int n = run->opt.reps;
    part2 p[2];
    double *v = (double *)lab_pageable(run, 3 * 2 * n * sizeof(double)), diff[REPS_MAX];
    stats s[3];
    lab_streams(run, p[0].s, STREAMS, "host functions", cudaStreamNonBlocking);
    for (int i = 0; i < 3; i++)
        p[0].seen[i] = lab_event(run, cudaEventDisableTiming);
    p[0].timer = lab_timer(run), p[0].with = 0;
    p[1] = p[0], p[1].with = 1;

    report_section(r, "Part 2: host functions (cudaLaunchHostFunc)");
    measure_ways(tiny_run, p, sizeof p[0], 2, 1, WARMUP, n, v);
    for (int j = 0; j < n; j++)
        diff[j] = v[n + j] - v[j];
    s[0] = stats_of(v, n), s[1] = stats_of(v + n, n), s[2] = stats_of(diff, n);
    report_stats(r, "tiny kernels", "per_kernel", &s[0], "us");
    report_stats(r, "each + a host function", "per_kernel", &s[1], "us");
    report_stats(r, "one host function", "stalls_its_stream", &s[2], "us");

    measure_several(four_run, &p[0], 3, WARMUP, n, s);
    report_compare(r, "4 x 5 ms, 4 streams", "time", "one driver thread: 4 x 5 ms",
                   STREAMS * SHORT_MS, &s[0], "ms");
    report_stats(r, "4 x 5 ms, 4 streams", "overlapped", &s[1], "ms");
    report_stats(r, "4 x 5 ms, 4 streams", "threads", &s[2], "");

    measure_several(beside_run, &p[0], 3, WARMUP, n, s);
    report_stats(r, "20 ms host function", "done", &s[0], "ms");
    report_stats(r, "1 ms kernel, same stream", "done", &s[1], "ms");
    report_stats(r, "1 ms kernel, other stream", "done", &s[2], "ms");
    report_verdict(r, &OWN_STREAM_ONLY, s[2].median / LONG_MS, "beside a %g ms host function, "
                   "a %g ms kernel in another stream was done after %.2f ms, one in its stream "
                   "after %.2f ms", LONG_MS, KERNEL_MS, s[2].median, s[1].median);
}
