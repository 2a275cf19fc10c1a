/* ex10's given program: does the student free a buffer that another stream
 * reads safely, in stream order, without the host waiting?
 *
 * The student writes free_after_use_wait() and free_in_last_user()
 * (exercises/ex10_cross_stream_free.cu; the contract is ex10.h). Each run
 * is lab10's part 4 (kernels/handoff.cu): stream `owner` makes a buffer X
 * with cudaMallocAsync and fills it with fresh seeded words; stream `user`
 * waits for the fill, spins a delay drawn afresh every run, uniform in
 * [2, 6) ms (--check: [0.2, 0.4)), then counts X's wrong words on the GPU,
 * its last use. The student's function frees X; at once `owner` allocates
 * its next buffer, X's size, and fills it with other words. A free that
 * does not wait for the read lets the pool hand X's memory to that buffer,
 * and the user counts every word wrong. The runs take the two functions in
 * turns, after one warm-up run of each (checked, not timed).
 *
 * The metrics (grader/rubrics/ex10.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   wrong_words            words the user read wrong, over every run of both
 *                          functions (its own count, on the GPU);
 *   wrong_words_wait, wrong_words_last_user   the same, per function;
 *   checked_words          words counted;
 *   bytes_leaked           the default pool's memory in use after all runs
 *                          (the GPU idle) less before: a buffer never freed;
 *   host_wait_fraction     the median over the timed calls of the host's time
 *                          inside the student's function / that run's delay;
 *   user_done_at_return    timed calls after which the user's read had
 *                          already ended (an event it recorded after the
 *                          read, queried as the call returned): only a wait
 *                          on the host lets it end that early;
 *   reused_runs            runs in which the owner's next buffer got X's
 *                          address (reported, not scored: the pool decides).
 * --check: 3 runs of each, 1 MiB, short delays: what memcheck, with
 * --track-stream-ordered-races all, sees of the frees. */
#include "ex10.h"
#include "grading.h"
#include "kernels.h"

static int runs = 10;     /* timed runs of each function */
static int size_mib = 16; /* X */

static const option ex_options[] = {
    {"runs", OPT_INT, &runs, 2, 1000, 4, "N", "timed runs of each of your two functions"},
    {"size-mib", OPT_INT, &size_mib, 1, 1024, 4, "MIB", "the buffer the two streams share"},
    {NULL},
};

static const program_info ex = {
    .name = "ex10",
    .title = "exercise: free a buffer another stream reads, in stream order",
    .handout = "labs/lab10_stream_ordered_memory/README.md",
    .options = ex_options, .reps = 1,
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
    .memory_option = "size-mib", .memory_per_unit = 2 << 20, /* X and the next buffer */
};

/* Queuing an event wait and a free takes microseconds; a host that waits
 * for the user's read spends the rest of its delay, 2-6 ms. A fifth of the
 * delay lies far from both (ex09's limit). */
static const verdict HOST_FREE = {
    "host_does_not_wait", 0, 0.2, "x",
    "the host waited inside your function: a cudaStreamSynchronize, cudaEventSynchronize, "
    "cudaDeviceSynchronize or cudaFree waits for the user's work; let the GPU wait instead "
    "(cudaStreamWaitEvent), or free in the user stream"};
static const verdict USER_BUSY = {
    "user_still_reading_at_return", 0, 0, "count",
    "the user's read had already ended when your function returned: the host waited for it"};

typedef void (*free_fn)(void *buffer, cudaStream_t owner, cudaStream_t user);
static const free_fn ways[2] = {free_after_use_wait, free_in_last_user};
static const char *const way_name[2] = {"free_after_use_wait", "free_in_last_user"};

/* One run of a way: returns the user's wrong words; *host_ms the host's
 * time inside the student's function, *done whether the user's read had
 * ended as it returned, *reused whether the next buffer got X's address. */
static unsigned long long one_run(buffer_handoff *h, int way, double delay_ms,
                                  double *host_ms, int *done, int *reused)
{
    uint64_t seed = fresh_seed();
    h->delay_ns = ns_from_ms(delay_ms);
    uint32_t *x = handoff_begin(h, seed);
    double t0 = host_time_ms();
    ways[way](x, h->owner, h->user);
    *host_ms = host_time_ms() - t0;
    *done = event_finished(h->used);
    return handoff_end(h, x, seed, reused);
}

/* The default pool's memory in use now, the GPU idle: what is not freed. */
static double pool_used(cudaMemPool_t pool)
{
    uint64_t used;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    return (double)used;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), device;
    double lo = check ? 0.2 : 2, hi = check ? 0.4 : 6;
    if (check)
        runs = 3, size_mib = 1;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaMemPool_t pool = default_mem_pool(device);
    buffer_handoff h = {lab_stream(&lab, "owner", cudaStreamNonBlocking, 0),
                 lab_stream(&lab, "user", cudaStreamNonBlocking, 0),
                 lab_event(&lab, cudaEventDisableTiming), lab_event(&lab, cudaEventDisableTiming),
                 (unsigned long long *)lab_device(&lab, sizeof(unsigned long long)),
                 (size_t)size_mib << 18, 0}; /* words of 4 bytes */
    double *fraction = (double *)lab_pageable(&lab, 2 * runs * sizeof(double));
    unsigned long long wrong[2] = {0, 0};
    int done_early = 0, reused[2] = {0, 0}, calls = 0;

    report_param(r, "runs", runs, "");
    report_param(r, "size_mib", size_mib, "MiB");
    report_section(r, "The owner makes a buffer, the user reads it late, your function frees it");
    double used_before = pool_used(pool);
    timeline_span_begin("runs");
    for (int i = -1; i < runs; i++) /* i = -1: the warm-up run of each, checked, not timed */
        for (int w = 0; w < 2; w++) {
            double delay = grading_uniform(lo, hi), host_ms;
            int done, again;
            wrong[w] += one_run(&h, w, delay, &host_ms, &done, &again);
            reused[w] += again;
            if (i >= 0)
                fraction[calls++] = host_ms / delay, done_early += done;
        }
    timeline_span_end();
    double leaked = pool_used(pool) - used_before;

    double checked = (double)h.words * (runs + 1);
    stats host = stats_of(fraction, calls);
    for (int w = 0; w < 2; w++) {
        report_check(r, w ? "last_user_words_right" : "wait_words_right", wrong[w] == 0,
                     "%s: %llu of %.0f words the user read were wrong; the owner's next buffer got "
                     "the freed address in %d of %d runs", way_name[w], wrong[w], checked,
                     reused[w], runs + 1);
        report_value(r, way_name[w], "wrong_words", (double)wrong[w], "count");
    }
    report_check(r, "buffers_released", leaked == 0, "%.0f bytes of the pool still in use after "
                 "the runs", leaked);
    report_stats(r, "your functions", "host_wait_fraction", &host, "x");
    report_verdict(r, &HOST_FREE, host.median, "the host spent %.3f of the user's pending work "
                   "inside your functions (median of %d calls)", host.median, calls);
    report_verdict(r, &USER_BUSY, done_early, "%d of %d calls returned after the user's read had "
                   "ended", done_early, calls);

    grading_value("wrong_words", (double)(wrong[0] + wrong[1]));
    grading_value("wrong_words_wait", (double)wrong[0]);
    grading_value("wrong_words_last_user", (double)wrong[1]);
    grading_value("checked_words", 2 * checked);
    grading_value("bytes_leaked", leaked);
    grading_value("host_wait_fraction", host.median);
    grading_value("user_done_at_return", done_early);
    grading_value("reused_runs", reused[0] + reused[1]);
    return grading_finish(&lab);
}
