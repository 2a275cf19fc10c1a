/* lab05: stream priorities.
 *
 * The question: a long background job keeps every SM busy and a short,
 * latency-critical kernel arrives. How long from its launch to its
 * completion, and does a high-priority stream let it jump the queue? Does
 * priority do anything for a copy?
 *
 * Build and run:   make lab05 && ./lab05        (./lab05 --help for options)
 *
 * What to look for: the critical kernel's latency. On a stream of the
 * background's priority it waits for every background block queued before it
 * (half the background run, on average); on the greatest-priority stream it
 * takes the next block slot that frees (under one block duration). Its run
 * time is the same few microseconds in both: the difference is all waiting.
 * Then a small high-priority copy waits behind a big low-priority copy all the
 * same: priorities order the blocks of kernels, not copies.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static double block_us = 100; /* one background block: short, so slots free often */
static int waves = 50;        /* background blocks = waves x what the GPU holds at once */
static int copy_mib = 128;    /* the big low-priority copy */

static const option lab_options[] = {
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, "US", "duration of one background block"},
    {"waves", OPT_INT, &waves, 10, 1000, "N", "background grid size, in full waves of the GPU"},
    {"copy-mib", OPT_INT, &copy_mib, 16, 4096, "MIB", "size of the big low-priority copy"},
};
static const program_info lab = {
    "lab05", "stream priorities: a critical kernel jumps the queue, a copy does not",
    lab_options, sizeof lab_options / sizeof lab_options[0], 100, /* samples per variant */
};

enum { THREADS = 256, CRITICAL_STEPS = 2000, SMALL_COPY_BYTES = 256 << 10 };

/* ---- device code ------------------------------------------------------------------ */

/* One background block: busy for block_ns, then it counts itself so the host
 * can check that every block launched really ran. */
__global__ void background_block(unsigned long long block_ns, unsigned long long *blocks_done)
{
    unsigned long long start = globaltimer_ns();
    while (globaltimer_ns() - start < block_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(blocks_done, 1ull);
}

/* The critical work: `steps` rounds of x = a*x + b per element (checked by
 * verify_affine), a few microseconds. span[0] gets the first block's start
 * and span[1] the last block's end: its run time, as opposed to its latency. */
__global__ void critical_work(const uint32_t *in, uint32_t *out, int n, uint32_t a, uint32_t b,
                              int steps, unsigned long long *span)
{
    if (threadIdx.x == 0)
        atomicMin(&span[0], globaltimer_ns());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t x = in[i];
        for (int s = 0; s < steps; s++)
            x = a * x + b;
        out[i] = x;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicMax(&span[1], globaltimer_ns());
}

/* ---- one urgent operation behind a background one ------------------------------------ */

/* The same experiment twice: a background (a many-wave kernel, or a big copy)
 * on the least-priority stream, and an urgent operation (the critical kernel,
 * or a small copy in the same direction) issued while it runs. */
typedef struct {
    int copies;                       /* 0: kernels, 1: copies */
    cudaStream_t low;                 /* the background's stream */
    unsigned int bg_blocks;
    unsigned long long block_ns, *d_blocks_done, blocks_launched;
    int n;                            /* the critical kernel's elements: a block per SM */
    uint32_t *h_in, *h_out, *d_in, *d_out, *h_big, *d_big, *h_small, *d_small;
    unsigned long long *d_span;
    size_t big_bytes, mismatches, outputs;
    int retried, invalid;             /* launches that found the background already over */
    cudaEvent_t launched, done, background_done;
} bench;

static void start_background(bench *b)
{
    if (b->copies) {
        CUDA_CHECK(cudaMemcpyAsync(b->d_big, b->h_big, b->big_bytes, cudaMemcpyHostToDevice,
                                   b->low));
    } else {
        background_block<<<b->bg_blocks, THREADS, 0, b->low>>>(b->block_ns, b->d_blocks_done);
        CHECK_LAUNCH();
        b->blocks_launched += b->bg_blocks;
    }
    CUDA_CHECK(cudaEventRecord(b->background_done, b->low));
}

static double elapsed_us(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms * 1e3;
}

static double time_background(void *ctx)
{
    bench *b = (bench *)ctx;
    CUDA_CHECK(cudaEventRecord(b->launched, b->low));
    start_background(b);
    CUDA_CHECK(cudaEventSynchronize(b->background_done));
    return elapsed_us(b->launched, b->background_done) / 1e3;
}

typedef struct {
    double latency, gpu, run, left; /* us */
} sample;

/* The urgent operation on `urgent`, after_ms into a fresh background (< 0: on
 * an idle GPU). Latency is launch to completion on the host clock: from just
 * before the launch call until a poll sees `done` reached, what a program
 * waiting for the result gets. Polling rather than a blocking wait also times
 * the background's end on the same clock (s->left: how much of it was still to
 * run), whichever engine stamps the events, and costs about a microsecond.
 * s->gpu is the same span as the GPU saw it: two events around the launch in
 * the urgent stream. Returns 0 when the background had already finished at the
 * launch: that sample measured no wait and is taken again. */
static int one_sample(bench *b, cudaStream_t urgent, double after_ms, sample *s)
{
    if (!b->copies) {
        CUDA_CHECK(cudaMemsetAsync(b->d_out, 0xff, b->n * sizeof(uint32_t), urgent)); /* poison */
        CUDA_CHECK(cudaMemsetAsync(b->d_span, 0xff, sizeof(unsigned long long), urgent));
        CUDA_CHECK(cudaMemsetAsync(b->d_span + 1, 0, sizeof(unsigned long long), urgent));
        CUDA_CHECK(cudaStreamSynchronize(urgent));
    }
    int running = 1;
    double t0 = host_time_ms();
    if (after_ms >= 0) {
        start_background(b);
        while (host_time_ms() - t0 < after_ms) {
        }
        running = !event_finished(b->background_done);
    }
    CUDA_CHECK(cudaEventRecord(b->launched, urgent));
    double h0 = host_time_ms(), done_at = 0, background_at = after_ms < 0 ? h0 : 0;
    if (b->copies) {
        CUDA_CHECK(cudaMemcpyAsync(b->d_small, b->h_small, SMALL_COPY_BYTES,
                                   cudaMemcpyHostToDevice, urgent));
    } else {
        critical_work<<<(b->n + THREADS - 1) / THREADS, THREADS, 0, urgent>>>(
            b->d_in, b->d_out, b->n, AFFINE_A, AFFINE_B, CRITICAL_STEPS, b->d_span);
        CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaEventRecord(b->done, urgent));
    while (!done_at || !background_at) {
        if (!done_at && event_finished(b->done))
            done_at = host_time_ms();
        if (!background_at && event_finished(b->background_done))
            background_at = host_time_ms();
    }
    s->latency = (done_at - h0) * 1e3;
    s->left = (background_at - h0) * 1e3;
    s->gpu = elapsed_us(b->launched, b->done);
    s->run = 0;
    if (!b->copies) {
        unsigned long long span[2];
        size_t first_bad;
        CUDA_CHECK(cudaMemcpy(span, b->d_span, sizeof span, cudaMemcpyDeviceToHost));
        s->run = (span[1] - span[0]) * 1e-3;
        CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, b->n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        b->mismatches += verify_affine(b->h_in, b->h_out, b->n, CRITICAL_STEPS, &first_bad);
        b->outputs += b->n;
    }
    return running;
}

typedef struct {
    stats latency, gpu, run;
    double p99, wait; /* wait: median of latency / left; about 1 when it queued behind all of it */
    double *latencies; /* every sample, for the CSV and JSON (plots); then gpu, run, wait */
} variant;

/* n samples on `urgent`, the i-th after_ms[i] into its own background
 * (after_ms NULL: on an idle GPU). stats has p5 and p95; the tail a
 * latency-critical user cares about is p99, computed here. */
static variant measure_variant(bench *b, cudaStream_t urgent, const double *after_ms, int n)
{
    double *v = (double *)xmalloc(4 * n * sizeof *v), *gpu = v + n, *run = v + 2 * n,
           *wait = v + 3 * n;
    sample s;
    one_sample(b, urgent, -1, &s); /* warm-up: the first use of a stream or a module costs extra */
    for (int i = 0; i < n; i++) {
        int tries = 0;
        while (!one_sample(b, urgent, after_ms ? after_ms[i] : -1, &s) && ++tries < 3)
            b->retried++;
        b->invalid += tries == 3;
        v[i] = s.latency, gpu[i] = s.gpu, run[i] = s.run;
        wait[i] = s.left > 0 ? s.latency / s.left : 0;
    }
    variant m = {stats_of(v, n), stats_of(gpu, n), stats_of(run, n), stats_percentile(v, n, 99),
                 stats_of(wait, n).median, v};
    return m;
}

/* Launch moments spread over [10%, 90%] of the background: one per stratum,
 * so their median is the middle of the run, at a random point inside it, so
 * they fall at every phase of a wave. They are planned on the shortest run
 * seen (shortest_ms): a background a few percent quicker than its median
 * must not end before the last of them. *left_us gets the median of what is
 * then left of a median run (run_ms): the model's wait at the same priority. */
static double *launch_moments(int n, double shortest_ms, double run_ms, double *left_us)
{
    double *at = (double *)xmalloc(n * sizeof *at), *left = (double *)xmalloc(n * sizeof *left);
    uint32_t *u = (uint32_t *)xmalloc(n * sizeof *u);
    fill_random_u32(u, n, fresh_seed());
    for (int i = 0; i < n; i++) {
        at[i] = shortest_ms * (0.1 + 0.8 * (i + u[i] / 4294967296.0) / n);
        left[i] = (run_ms - at[i]) * 1e3;
    }
    *left_us = stats_of(left, n).median;
    free(u);
    free(left);
    return at;
}

static void report_variant(report *r, const char *name, double predicted, const variant *m)
{
    report_compare(r, name, "latency", predicted, &m->latency, "us");
    report_value(r, name, "latency_p99", m->p99, "us");
    report_stats(r, name, "gpu_latency", &m->gpu, "us");
    report_samples(r, name, "latency", m->latencies, m->latency.n, "us");
}

/* ---- the lesson ---------------------------------------------------------------------- */

static int clamped(int asked)
{
    cudaStream_t s;
    int got;
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, asked));
    CUDA_CHECK(cudaStreamGetPriority(s, &got));
    CUDA_CHECK(cudaStreamDestroy(s));
    return got;
}

static void report_priorities(report *r, const device_info *d)
{
    report_section(r, "Stream priorities on this GPU (cudaDeviceGetStreamPriorityRange)");
    report_fact(r, "priority_least", d->priority_least, "", "the default: every stream has it "
                "unless made with cudaStreamCreateWithPriority");
    report_fact(r, "priority_greatest", d->priority_greatest, "", "the most urgent: LOWER "
                "numbers are HIGHER priorities");
    int above = d->priority_greatest - 10, below = d->priority_least + 10;
    report_fact(r, "beyond_greatest", clamped(above), "", "what a stream asked for %d got: "
                "values outside the range are clamped to its ends, without an error", above);
    report_fact(r, "beyond_least", clamped(below), "", "what a stream asked for %d got", below);
}

static int kernels_jump_queue(report *r, bench *b, const device_info *d, cudaStream_t same,
                              cudaStream_t high, int samples)
{
    /* A wave is as many blocks as the SMs hold at once. With THREADS-thread
     * blocks the thread limit is what fills an SM, so while the background
     * runs no critical block fits anywhere until a background block ends:
     * the block scheduler must choose, and priority is what it chooses by. */
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, background_block, THREADS,
                                                             0));
    b->bg_blocks = (unsigned int)waves * d->sm_count * per_sm;
    b->block_ns = ns_from_ms(block_us / 1e3);
    double background_ms = waves * block_us / 1e3, left_us;
    report_section(r, "The background: many short blocks on the least-priority stream");
    report_param(r, "block_duration", block_us, "us");
    report_param(r, "background_blocks", b->bg_blocks, "count");
    stats bg = measure(time_background, b, 1, 5);
    report_compare(r, "background", "duration", background_ms, &bg, "ms");
    report_text(r, "  (predicted = %d waves x %.0f us: the %d SMs hold %d x %d blocks at once)\n",
                waves, block_us, d->sm_count, d->sm_count, per_sm);

    double *after = launch_moments(samples, bg.min < background_ms ? bg.min : background_ms,
                                   background_ms, &left_us);
    timeline_span_begin("kernel alone");
    variant alone = measure_variant(b, same, NULL, samples);
    timeline_span_end();
    timeline_span_begin("kernel, same priority");
    variant on_same = measure_variant(b, same, after, samples);
    timeline_span_end();
    timeline_span_begin("kernel, high priority");
    variant on_high = measure_variant(b, high, after, samples);
    timeline_span_end();
    free(after);

    report_section(r, "The critical kernel: alone, then launched mid-background");
    report_stats(r, "alone", "latency", &alone.latency, "us");
    report_stats(r, "alone", "run", &alone.run, "us");
    report_variant(r, "same priority", alone.latency.median + left_us, &on_same);
    report_text(r, "  (predicted = alone + what was left of the background at launch, median "
                "%.0f us:\n   it queues behind every background block; p99 up to alone + "
                "%.0f us)\n", left_us, 0.9 * background_ms * 1e3);
    report_variant(r, "high priority", alone.latency.median + block_us / 2, &on_high);
    report_text(r, "  (predicted = alone + half a block: its blocks take the next slots that "
                "free,\n   at a random point of a %.0f us block; p99 about alone + %.0f us, "
                "plus the stretch of\n   its own run as its blocks wait for those slots: see "
                "run below)\n", block_us, block_us);
    report_stats(r, "same priority", "run", &on_same.run, "us");
    report_stats(r, "high priority", "run", &on_high.run, "us");
    report_text(r, "  latency: host clock, launch call to completion; gpu latency: the same "
                "between two events in\n  its stream; run: first block's start to last block's "
                "end. The wait is the difference.\n");

    double ratio = on_same.latency.median / on_high.latency.median;
    report_value(r, "priority", "latency_ratio", ratio, "x");
    report_verdict(r, "high_priority_jumps_queue", ratio >= 5, "median latency from launch to "
                   "completion: same priority %.0f us, greatest priority %.1f us: %.1fx lower "
                   "(limit 5x)", on_same.latency.median, on_high.latency.median, ratio);
    free(alone.latencies);
    free(on_same.latencies);
    free(on_high.latencies);
    return ratio >= 5;
}

static void copies_keep_order(report *r, bench *b, const device_info *d, cudaStream_t same,
                              cudaStream_t high, int samples)
{
    report_section(r, "Copies: a small high-priority copy issued behind a big low-priority one");
    report_param(r, "big_copy", copy_mib, "MiB");
    report_param(r, "small_copy", SMALL_COPY_BYTES >> 10, "KiB");
    stats big = measure(time_background, b, 1, 5);
    double left_us, *after = launch_moments(samples, big.min, big.median, &left_us);
    timeline_span_begin("copies");
    variant alone = measure_variant(b, same, NULL, samples);
    variant on_same = measure_variant(b, same, after, samples);
    variant on_high = measure_variant(b, high, after, samples);
    timeline_span_end();
    free(after);
    free(alone.latencies);
    free(on_same.latencies);
    free(on_high.latencies); /* the stats suffice here */

    report_stats(r, "big copy", "duration", &big, "ms");
    report_stats(r, "copy alone", "latency", &alone.latency, "us");
    /* The model: copies in one direction queue for one copy engine in the
     * order they arrive, and priority plays no part: either stream's small
     * copy waits for the rest of the big one, then takes its own time. */
    report_compare(r, "copy same priority", "latency", alone.latency.median + left_us,
                   &on_same.latency, "us");
    report_compare(r, "copy high priority", "latency", alone.latency.median + left_us,
                   &on_high.latency, "us");
    report_value(r, "copy same priority", "wait_fraction", on_same.wait, "ratio");
    report_value(r, "copy high priority", "wait_fraction", on_high.wait, "ratio");
    report_text(r, "  (wait fraction = latency / what was left of the big copy at launch: "
                   "about 1 means it queued behind it)\n");
    int queued = on_same.wait >= 0.5;
    report_value(r, "copies", "queued_behind_big_copy", queued, "bool");
    if (queued)
        report_verdict(r, "copies_not_prioritised", on_high.wait >= 0.5, "the high-priority "
                       "small copy waited for %.0f%% of what was left of the big copy, the "
                       "same-priority one %.0f%% (limit: at least 50%%)", on_high.wait * 100,
                       on_same.wait * 100);
    else
        report_text(r, "  note: even at the same priority the small copy did not queue behind "
                    "the big one (%.0f%%):\n  this GPU (%d copy engines) ran the two streams' "
                    "copies side by side, sharing the link.\n  No queue, nothing for a priority "
                    "to jump: compare the two latencies above.\n", on_same.wait * 100,
                    d->async_engines);
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    int samples = opt.reps;
    if (opt.quick) {
        waves = waves < 20 ? waves : 20;
        /* 64 MiB: about 1.2 ms at 55 GB/s, so a launch planned at 90% of it
         * still has 120 us to land inside it; at 32 MiB one run in twelve on
         * the H100 had launches that came too late even after 3 tries. */
        copy_mib = copy_mib < 64 ? copy_mib : 64;
        samples = samples < 10 ? samples : 10;
    }
    device_info dev;
    device_select(&opt, &dev);
    if (dev.priority_greatest >= dev.priority_least)
        fail_cannot_run("this GPU has no stream priorities (cudaDeviceGetStreamPriorityRange "
                        "gives %d to %d)", dev.priority_least, dev.priority_greatest);
    device_require(dev.concurrent_kernels, "this GPU runs one kernel at a time: a critical "
                   "kernel cannot start beside the background");
    if (((size_t)copy_mib << 20) > dev.free_memory / 2)
        fail_usage("--copy-mib %d is more than half of this GPU's free memory (%zu MiB)",
                   copy_mib, dev.free_memory >> 20);
    report *r = report_begin(&lab, &opt, &dev);
    report_param(r, "samples", samples, "count");
    timeline_start(&opt);
    report_priorities(r, &dev);

    bench b;
    memset(&b, 0, sizeof b);
    b.n = dev.sm_count * THREADS;
    b.big_bytes = (size_t)copy_mib << 20;
    size_t bytes = b.n * sizeof(uint32_t), words = b.big_bytes / 4, small = SMALL_COPY_BYTES / 4;
    b.h_in = (uint32_t *)xmalloc(bytes);
    b.h_out = (uint32_t *)xmalloc(bytes);
    CUDA_CHECK(cudaMalloc((void **)&b.d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_out, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_span, 2 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc((void **)&b.d_blocks_done, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(b.d_blocks_done, 0, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_big, b.big_bytes));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_small, SMALL_COPY_BYTES));
    CUDA_CHECK(cudaMalloc((void **)&b.d_big, b.big_bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_small, SMALL_COPY_BYTES));
    fill_random_u32(b.h_in, b.n, fresh_seed());
    fill_random_u32(b.h_big, words, fresh_seed());
    fill_random_u32(b.h_small, small, fresh_seed());
    CUDA_CHECK(cudaMemcpy(b.d_in, b.h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream does not order non-blocking ones */
    CUDA_CHECK(cudaEventCreate(&b.launched));
    CUDA_CHECK(cudaEventCreate(&b.done));
    CUDA_CHECK(cudaEventCreate(&b.background_done));
    cudaStream_t same, high;
    CUDA_CHECK(cudaStreamCreateWithPriority(&b.low, cudaStreamNonBlocking, dev.priority_least));
    CUDA_CHECK(cudaStreamCreateWithPriority(&same, cudaStreamNonBlocking, dev.priority_least));
    CUDA_CHECK(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, dev.priority_greatest));
    timeline_name_stream(b.low, "background (least priority)");
    timeline_name_stream(same, "urgent, same priority");
    timeline_name_stream(high, "urgent, greatest priority");

    int kernels_ok = kernels_jump_queue(r, &b, &dev, same, high, samples);
    b.copies = 1;
    copies_keep_order(r, &b, &dev, same, high, samples);

    unsigned long long blocks_done = 0;
    size_t first_bad;
    uint32_t *back = (uint32_t *)xmalloc(b.big_bytes + SMALL_COPY_BYTES);
    CUDA_CHECK(cudaMemcpy(&blocks_done, b.d_blocks_done, sizeof blocks_done,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back, b.d_big, b.big_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back + words, b.d_small, SMALL_COPY_BYTES, cudaMemcpyDeviceToHost));
    size_t bad = count_mismatches_u32(back, b.h_big, words, &first_bad) +
                 count_mismatches_u32(back + words, b.h_small, small, &first_bad);
    report_section(r, "Checks");
    report_check(r, "critical_verified", b.mismatches == 0, "%zu of %zu outputs of the critical "
                 "kernel differ from the CPU reference", b.mismatches, b.outputs);
    report_check(r, "background_counted", blocks_done == b.blocks_launched, "%llu background "
                 "blocks ran of %llu launched", blocks_done, b.blocks_launched);
    report_check(r, "bytes_intact", bad == 0, "%zu of %zu words differ after the copies", bad,
                 words + small);
    /* A timing condition, not a result: an urgent launch that came after the
     * background had ended measured nothing (a busy GPU, a sanitizer's slow
     * launches), so it makes the run "not observed", never "wrong". */
    report_verdict(r, "samples_mid_background", b.invalid == 0, "%d of %d urgent launches "
                   "came after the background had finished, even after 3 tries (%d retried)",
                   b.invalid, 4 * samples, b.retried);

    free(back);
    CUDA_CHECK(cudaStreamDestroy(high));
    CUDA_CHECK(cudaStreamDestroy(same));
    CUDA_CHECK(cudaStreamDestroy(b.low));
    CUDA_CHECK(cudaEventDestroy(b.background_done));
    CUDA_CHECK(cudaEventDestroy(b.done));
    CUDA_CHECK(cudaEventDestroy(b.launched));
    CUDA_CHECK(cudaFree(b.d_small));
    CUDA_CHECK(cudaFree(b.d_big));
    CUDA_CHECK(cudaFreeHost(b.h_small));
    CUDA_CHECK(cudaFreeHost(b.h_big));
    CUDA_CHECK(cudaFree(b.d_blocks_done));
    CUDA_CHECK(cudaFree(b.d_span));
    CUDA_CHECK(cudaFree(b.d_out));
    CUDA_CHECK(cudaFree(b.d_in));
    free(b.h_out);
    free(b.h_in);
    timeline_finish(r, &opt);
    if (!kernels_ok)
        report_hint(r, "the high-priority kernel waited like the other: "
                       "CUDA_DEVICE_MAX_CONNECTIONS=1 or MPS can funnel all streams into one "
                       "queue, or another process is using this GPU (see nvidia-smi)");
    else if (b.invalid)
        report_hint(r, "some urgent launches came after the background they were meant to land "
                       "in had ended: the host was slow to launch them (a busy machine, a "
                       "sanitizer). A larger --copy-mib or --block-us leaves them more time");
    else
        report_hint(r, "the high-priority copy did not wait: either its stream's copies went to "
                       "another copy engine than the same-priority stream's, or this driver "
                       "orders copies by priority (compare the two wait fractions)");
    return report_finish(r);
}
