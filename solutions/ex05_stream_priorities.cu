/* ex05 (solution): let the latency-critical kernel jump the queue.
 *
 * The task: a background job of many short blocks keeps every SM busy on a
 * stream of the least priority. A short critical kernel is launched in the
 * middle of it, on the stream create_critical_stream() makes. As given, that
 * stream has the background's priority, so the critical kernel waits for
 * every background block queued before it: milliseconds. Make its blocks go
 * first, so it waits no longer than one background block. Do not touch the
 * background, the kernels or the measurement.
 *
 * Target: the critical kernel's median latency (launch to completion) at
 * least 5x lower than on a stream of the background's priority, which this
 * program also measures as the reference. On an H100 it can be far more.
 *
 * Build and run:   make ex05 && ./ex05        (--quick for a short run)
 * Solution: make sol05 && ./sol05. lab05 and its handout explain the model.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static double block_us = 100; /* one background block */
static int waves = 50;        /* background blocks = waves x what the GPU holds at once */

static const option ex_options[] = {
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, NO_QUICK, "US",
     "duration of one background block"},
    {"waves", OPT_INT, &waves, 10, 1000, 20, "N", "background grid size, in full waves of the GPU"},
    {NULL},
};
static const program_info ex = {
    .name = "sol05", /* named after its binary, so its messages say which program spoke */
    .title = "exercise: give the latency-critical kernel a stream that jumps the queue",
    .handout = "labs/lab05_stream_priorities/README.md",
    .options = ex_options, .reps = 100, .quick_reps = 10, /* samples per variant */
    .needs = NEEDS_PRIORITIES | NEEDS_CONCURRENT_KERNELS,
};

static const verdict JUMPS_QUEUE = {
    "high_priority_jumps_queue", 5, INFINITY, "x",
    "if your critical stream has the background's priority (the verdict's line gives both), the "
    "block scheduler serves the background first: see TODO(student) in create_critical_stream(); "
    "if it has a higher one, yet still waited, another process may be using this GPU (see "
    "nvidia-smi), or CUDA_DEVICE_MAX_CONNECTIONS=1 puts all streams in one queue"};
/* A timing condition, not a result: an urgent launch that came after the
 * background had ended measured nothing (a busy GPU, a sanitizer's slow
 * launches), so it makes the run "not observed", never "wrong". */
static const verdict MID_BACKGROUND = {
    "samples_mid_background", 0, 0, "launches",
    "some critical launches came after the background they were meant to land in had ended: "
    "the host was slow to launch them (a busy machine, a sanitizer); a larger --waves or "
    "--block-us leaves them more time"};

enum { THREADS = 256, CRITICAL_STEPS = 2000 };

/* ---- your part -------------------------------------------------------------------- */

/* The stream the critical kernel is launched on. */
static cudaStream_t create_critical_stream(void)
{
    cudaStream_t s;
    int least, greatest;
    /* SOLUTION: ask for the greatest priority (the most negative number). The
     * block scheduler then hands every block slot that frees to this stream's
     * pending blocks before the background's, so the critical kernel waits for
     * one background block to end, not for all the queued ones. Running blocks
     * are not interrupted: the wait is up to one block duration. */
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    return s;
}

/* ---- the measurement (as in lab05) --------------------------------------------------- */

typedef struct {
    cudaStream_t low;                 /* the background's stream: least priority */
    unsigned int bg_blocks;
    unsigned long long block_ns, *d_blocks_done, blocks_launched;
    int n;
    uint32_t *h_in, *h_out, *d_in, *d_out;
    tally outputs;
    int retried, invalid;
    cudaEvent_t launched, background_done, done;
} bench;

static void start_background(bench *b)
{
    background_block<<<b->bg_blocks, THREADS, 0, b->low>>>(b->block_ns, b->d_blocks_done);
    CHECK_LAUNCH();
    b->blocks_launched += b->bg_blocks;
    CUDA_CHECK(cudaEventRecord(b->background_done, b->low));
}

static double time_background(void *ctx)
{
    bench *b = (bench *)ctx;
    float ms = 0;
    CUDA_CHECK(cudaEventRecord(b->launched, b->low));
    start_background(b);
    CUDA_CHECK(cudaEventSynchronize(b->background_done));
    CUDA_CHECK(cudaEventElapsedTime(&ms, b->launched, b->background_done));
    return ms;
}

/* One critical launch on `critical`, after_ms into a fresh background (< 0:
 * idle GPU). Returns its latency in us, launch call to completion on the host
 * clock, polled; *valid is 0 when the background had already finished. */
static double one_sample(bench *b, cudaStream_t critical, double after_ms, int *valid)
{
    CUDA_CHECK(cudaMemsetAsync(b->d_out, 0xff, b->n * sizeof(uint32_t), critical)); /* poison */
    CUDA_CHECK(cudaStreamSynchronize(critical));
    *valid = 1;
    double t0 = host_time_ms();
    if (after_ms >= 0) {
        start_background(b);
        while (host_time_ms() - t0 < after_ms) {
        }
        *valid = !event_finished(b->background_done);
    }
    double h0 = host_time_ms();
    affine_launch(b->d_in, b->d_out, b->n, CRITICAL_STEPS, critical);
    CUDA_CHECK(cudaEventRecord(b->done, critical));
    while (!event_finished(b->done)) {
    }
    double latency_us = (host_time_ms() - h0) * 1e3;
    CUDA_CHECK(cudaDeviceSynchronize()); /* the background too, before the next sample */

    CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, b->n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    verify_affine(b->h_in, b->h_out, b->n, CRITICAL_STEPS, &b->outputs);
    return latency_us;
}

static stats measure_variant(bench *b, cudaStream_t critical, const double *after_ms, int n)
{
    double *lat = (double *)xmalloc(n * sizeof *lat);
    int valid;
    one_sample(b, critical, -1, &valid); /* warm-up */
    for (int i = 0; i < n; i++) {
        for (int tries = 0; tries < 3; tries++) {
            lat[i] = one_sample(b, critical, after_ms ? after_ms[i] : -1, &valid);
            if (valid)
                break;
            b->retried++;
        }
        b->invalid += !valid;
    }
    stats s = stats_of(lat, n);
    free(lat);
    return s;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &ex);
    report *r = run.r;
    const device_info *dev = &run.dev;
    int samples = run.opt.reps;

    bench b;
    memset(&b, 0, sizeof b);
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, background_block, THREADS,
                                                             0));
    b.bg_blocks = (unsigned int)waves * dev->sm_count * per_sm;
    b.block_ns = ns_from_ms(block_us / 1e3);
    b.n = dev->sm_count * THREADS;
    size_t bytes = b.n * sizeof(uint32_t);
    b.h_in = (uint32_t *)lab_pageable(&run, bytes);
    b.h_out = (uint32_t *)lab_pageable(&run, bytes);
    b.d_in = (uint32_t *)lab_device(&run, bytes);
    b.d_out = (uint32_t *)lab_device(&run, bytes);
    b.d_blocks_done = (unsigned long long *)lab_device(&run, sizeof(unsigned long long));
    CUDA_CHECK(cudaMemset(b.d_blocks_done, 0, sizeof(unsigned long long)));
    fill_random_u32(b.h_in, b.n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(b.d_in, b.h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    b.launched = lab_event(&run, cudaEventDefault);
    b.background_done = lab_event(&run, cudaEventDefault);
    b.done = lab_event(&run, cudaEventDefault);
    cudaStream_t critical = create_critical_stream();
    b.low = lab_stream(&run, "background (least priority)", cudaStreamNonBlocking,
                       dev->priority_least);
    cudaStream_t reference = lab_stream(&run, "reference (same priority)", cudaStreamNonBlocking,
                                        dev->priority_least);
    timeline_name_stream(critical, "your critical stream");
    int priority;
    CUDA_CHECK(cudaStreamGetPriority(critical, &priority));

    report_section(r, "The setup");
    report_fact(r, "priority_least", dev->priority_least, "", "the background's priority");
    report_fact(r, "priority_greatest", dev->priority_greatest, "", "the most urgent (lower is "
                "higher)");
    report_fact(r, "critical_priority", priority, "", "the priority of your critical stream");
    double background_ms = waves * block_us / 1e3;
    stats bg = measure(time_background, &b, 1, 3);
    report_compare(r, "background", "duration", "waves x block duration", background_ms, &bg,
                   "ms");

    /* Launch moments spread over [10%, 90%] of the background, one per stratum. */
    double *after = (double *)lab_pageable(&run, samples * sizeof *after);
    random_strata(after, samples, 0.1 * background_ms, 0.9 * background_ms);
    timeline_span_begin("alone");
    b.outputs.where = "alone";
    stats alone = measure_variant(&b, reference, NULL, samples);
    timeline_span_end();
    timeline_span_begin("reference");
    b.outputs.where = "reference";
    stats on_reference = measure_variant(&b, reference, after, samples);
    timeline_span_end();
    timeline_span_begin("your stream");
    b.outputs.where = "your stream";
    stats on_critical = measure_variant(&b, critical, after, samples);
    timeline_span_end();

    report_section(r, "The critical kernel's latency, launch to completion");
    report_stats(r, "alone", "latency", &alone, "us");
    report_compare(r, "reference", "latency", "alone + half the background",
                   alone.median + background_ms * 1e3 / 2, &on_reference, "us");
    report_compare(r, "your stream", "latency", "alone + half a block",
                   alone.median + block_us / 2, &on_critical, "us");
    double ratio = on_reference.median / on_critical.median;
    report_value(r, "priority", "latency_ratio", ratio, "x");
    report_verdict(r, &JUMPS_QUEUE, ratio, "median latency: reference %.0f us, your stream "
                   "(priority %d; the background's %d) %.1f us: %.1fx lower",
                   on_reference.median, priority, dev->priority_least, on_critical.median, ratio);

    unsigned long long blocks_done = 0;
    CUDA_CHECK(cudaMemcpy(&blocks_done, b.d_blocks_done, sizeof blocks_done,
                          cudaMemcpyDeviceToHost));
    report_tally(r, "critical_verified", &b.outputs,
                 "outputs of the critical kernel differ from the CPU reference");
    report_check(r, "background_counted", blocks_done == b.blocks_launched, "%llu background "
                 "blocks ran of %llu launched", blocks_done, b.blocks_launched);
    report_verdict(r, &MID_BACKGROUND, b.invalid, "%d of %d critical launches came after the "
                   "background had finished (%d retried)", b.invalid, 2 * samples, b.retried);

    /* The critical stream is create_critical_stream()'s, not the run's: released here. */
    CUDA_CHECK(cudaStreamDestroy(critical));
    return lab_end(&run);
}
