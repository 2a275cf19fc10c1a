/* Timers and the measure() helper.
 *
 * Two clocks: device events, recorded into the stream whose work they
 * bracket, measure what the GPU did; the host monotonic clock measures what
 * the CPU waited for. Labs compare variants with the same timer. */
#ifndef STREAMLAB_TIMING_H
#define STREAMLAB_TIMING_H

#include <cuda_runtime_api.h>
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Milliseconds on CLOCK_MONOTONIC: never jumps, unlike the wall clock. */
double host_time_ms(void);

/* CPU time of the whole process, in ms (CLOCK_PROCESS_CPUTIME_ID): a driver
 * thread that did the waiting counts, not only the calling thread. */
double host_cpu_ms(void);

/* CPU time of the calling thread alone, in ms (CLOCK_THREAD_CPUTIME_ID):
 * beside host_time_ms(), how much of a stretch the thread was on a core. */
double host_thread_cpu_ms(void);

typedef struct {
    cudaEvent_t start, stop;
} event_timer;

void event_timer_create(event_timer *t);
void event_timer_destroy(event_timer *t);
/* Record the start or stop event in `stream`: it then marks the moment the
 * GPU reaches that point of that stream, and nothing else's. */
void event_timer_start(event_timer *t, cudaStream_t stream);
void event_timer_stop(event_timer *t, cudaStream_t stream);
/* Waits for both events, then returns the milliseconds between the two
 * (negative when the GPU reached the stop first: two streams, unordered). */
double event_timer_ms(event_timer *t);

/* 1 when the GPU has finished the work recorded before `e` in its stream,
 * without waiting. "Not ready" is an answer, not a failure, but the runtime
 * also keeps it as the last error, where the next CHECK_LAUNCH() would find
 * it: it is cleared here. Any other error exits, as CUDA_CHECK does. */
int event_finished(cudaEvent_t e);

/* Waits until the GPU has passed e, one of two ways: nap_us > 0 polls
 * event_finished() and sleeps nap_us between polls (the core is free, the
 * wake-up up to a nap late); nap_us = 0 calls cudaEventSynchronize, which
 * spins or blocks as e was created (cudaEventBlockingSync). Returns the share
 * of a CPU core the process used while it waited (host_cpu_ms over
 * host_time_ms); *returned_ms gets host_time_ms() as the wait returned. */
double event_wait(cudaEvent_t e, double nap_us, double *returned_ms);

/* One run of the work under test: does it once and returns its duration in
 * milliseconds, timed however the caller chose. */
typedef double (*timed_fn)(void *ctx);

/* Polls until the GPU has passed each of events[0..n-1]; seen_ms[i] gets
 * host_time_ms() at the first poll that found event i passed. Polling, not
 * waiting, so that several events are timed on one clock at about a
 * microsecond's resolution, whichever engine stamps them. */
void events_seen_ms(const cudaEvent_t *events, int n, double *seen_ms);

/* Runs fn `warmup` times untimed (module loading, first-touch page faults and
 * clock ramp-up stay out), then `reps` times, and summarises the samples. */
stats measure(timed_fn fn, void *ctx, int warmup, int reps);

/* Issues the i-th of a sample's operations (a copy, a launch) into the
 * stream that measure_issued() times. */
typedef void (*issue_fn)(void *ctx, int i);

/* The time of one operation as the GPU saw it: per sample, events in
 * `stream` around `per_sample` calls of fn, back to back, divided by
 * per_sample (back to back, as work runs in a pipeline: the launch latency of
 * the first is shared out instead of added to one). Warm-up, then reps. */
stats measure_issued(issue_fn fn, void *ctx, cudaStream_t stream, int per_sample, int warmup,
                     int reps);

/* One sample as measure_issued() takes it, as a timed_fn (time_issued) for
 * measure_rounds(): events in `stream` around per_sample calls of fn, per
 * call. The caller fills in every field; the timer is its own. */
typedef struct {
    issue_fn fn;
    void *ctx;
    cudaStream_t stream;
    int per_sample;
    event_timer timer;
} issued;
double time_issued(void *issued_ctx);

/* k ways of doing something, timed in rounds: each round runs every way
 * once, each round starting one way further on (A B, B A, A B ... for two),
 * so that a burst of another process's traffic, or the GPU's clock settling,
 * falls on every way alike rather than on whichever ran in its moment.
 * samples[i * rounds + j] gets way i's time in round j. Warm-up rounds first,
 * untimed. A verdict that compares two ways reads stats_of_ratios() of their
 * rows: the median of the rounds' ratios. */
void measure_rounds(const timed_fn *fn, void *const *ctx, int k, int warmup, int rounds,
                    double *samples);

/* Two ways, A and B, in rounds: each side's statistics, and A / B round by round. */
typedef struct {
    stats a, b, ratio;
} paired;
paired measure_paired(timed_fn a, void *ctx_a, timed_fn b, void *ctx_b, int warmup, int pairs);

/* One run of work that yields k numbers at once (an upload and a download
 * timed together; when a call returned and how long its copy took): fills
 * v[0..k-1]. */
typedef void (*timed_k_fn)(void *ctx, double *v);

/* As measure(), for k numbers per run: out[i] summarises the i-th. */
void measure_several(timed_k_fn fn, void *ctx, int k, int warmup, int reps, stats *out);

/* measure_rounds() for n ways that share one fn yielding k numbers a run (a
 * run's time, and the host's time until it had issued it): way i's context
 * is (char *)ways + i * size, an array of them. samples[(v * n + i) * rounds
 * + j] gets way i's v-th number in round j: for each v, a table laid out as
 * measure_rounds() lays out its one. */
void measure_ways(timed_k_fn fn, void *ways, size_t size, int n, int k, int warmup, int rounds,
                  double *samples);

#ifdef __cplusplus
}
#endif
#endif
