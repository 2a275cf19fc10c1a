/* lab05: stream priorities.
 *
 * The question: a long background job keeps every SM busy and a short,
 * latency-critical kernel arrives. How long from its launch to its
 * completion, and does a high-priority stream let it jump the queue? Does
 * priority do anything for a copy?
 *
 * Build and run:   make lab05 && ./lab05        (./lab05 --help for options)
 *
 * What to look for: the critical kernel's latency. At the background's
 * priority it waits for every background block queued before it (half the
 * background, on average); at the greatest priority it takes the next block
 * slot that frees (under one block duration). Its run time is a few
 * microseconds in both: the difference is all waiting. A small high-priority
 * copy waits behind a big low-priority copy all the same: priorities order
 * the blocks of kernels, not copies.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>

static double block_us = 100; /* one background block: short, so slots free often */
static int waves = 50;        /* background blocks = waves x what the GPU holds at once */
static int copy_mib = 128;    /* the big low-priority copy */

/* --quick copies 64 MiB, about 1.2 ms at 55 GB/s: a launch planned at 90% of
 * it still has 120 us to land inside it. */
static const option lab_options[] = {
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, NO_QUICK, "US", "duration of one background block"},
    {"waves", OPT_INT, &waves, 10, 1000, 20, "N", "background grid size, in full waves of the GPU"},
    {"copy-mib", OPT_INT, &copy_mib, 16, 4096, 64, "MIB", "size of the big low-priority copy"},
    {NULL},
};

static const program_info program = {
    .name = "lab05", .title = "stream priorities: a critical kernel jumps the queue, a copy does not",
    .handout = "labs/lab05_stream_priorities/README.md",
    .options = lab_options, .reps = 100, .quick_reps = 10, /* samples per variant */
    .needs = NEEDS_PRIORITIES | NEEDS_CONCURRENT_KERNELS,
    .memory_option = "copy-mib", .memory_per_unit = 1 << 20,
};

enum { THREADS = 256, CRITICAL_STEPS = 2000, SMALL_COPY_BYTES = 256 << 10, TRIES = 3 };

/* One experiment, run twice: a background (a many-wave kernel, or a big copy)
 * on the least-priority stream, and an urgent operation (the critical
 * kernel, or a small copy in the same direction) issued while it runs. */
typedef struct {
    int copies, samples, n;           /* 0: kernels, 1: copies; per variant; a block per SM */
    cudaStream_t low, same, high;     /* the background's, the urgent ones' */
    unsigned long long bg_blocks, block_ns, *d_blocks_done, blocks_launched;
    uint32_t *h_in, *h_out, *d_in, *d_out, *h_big, *d_big, *h_small, *d_small;
    unsigned long long *d_span;       /* the critical kernel's first start and last end */
    size_t big_bytes;
    double *latency, *run, *wait;     /* samples, us (wait: a fraction) of each of 3 sides */
    double *after, *left;             /* the last attempt's moments, ms; what each left, us */
    double *lasted;                   /* the background as each pair's launch saw it, ms */
    tally outputs;                    /* the critical kernel's, every sample */
    int retried[2], late[2];          /* kernels', copies': launches that found it over */
    cudaEvent_t done, background_done;
    stats background, ratio;          /* the last attempt's: the background alone; same / high */
} bench;

/* The background, and an event after it; as an issue_fn, so measure_issued() can time it. */
static void start_background(void *ctx, int /* one a sample */)
{
    bench *b = (bench *)ctx;
    if (b->copies)
        CUDA_CHECK(cudaMemcpyAsync(b->d_big, b->h_big, b->big_bytes, cudaMemcpyHostToDevice, b->low));
    else {
        background_block<<<b->bg_blocks, THREADS, 0, b->low>>>(b->block_ns, b->d_blocks_done);
        CHECK_LAUNCH();
        b->blocks_launched += b->bg_blocks;
    }
    CUDA_CHECK(cudaEventRecord(b->background_done, b->low));
}

/* Sample i: the urgent operation on `urgent`, after_ms into a fresh
 * background (< 0: on an idle GPU); latency and run as the handout defines
 * them; wait = latency / what was left, the background's end on the host clock.
 * Returns 0 when the background had already finished at the launch: no wait. */
static int one_sample(bench *b, cudaStream_t urgent, double after_ms, int i)
{
    if (!b->copies) { /* poison the outputs; the span's start to all ones, its end to 0 */
        CUDA_CHECK(cudaMemsetAsync(b->d_out, 0xff, b->n * sizeof(uint32_t), urgent));
        CUDA_CHECK(cudaMemsetAsync(b->d_span, 0xff, sizeof(unsigned long long), urgent));
        CUDA_CHECK(cudaMemsetAsync(b->d_span + 1, 0, sizeof(unsigned long long), urgent));
        CUDA_CHECK(cudaStreamSynchronize(urgent));
    }
    int running = 1;
    double t0 = host_time_ms();
    if (after_ms >= 0) {
        start_background(b, 0);
        while (host_time_ms() - t0 < after_ms) {
        }
        running = !event_finished(b->background_done);
    }
    cudaEvent_t ends[2] = {b->done, b->background_done};
    double h0 = host_time_ms(), seen[2];
    if (b->copies)
        CUDA_CHECK(cudaMemcpyAsync(b->d_small, b->h_small, SMALL_COPY_BYTES,
                                   cudaMemcpyHostToDevice, urgent));
    else
        affine_launch_with_span(b->d_in, b->d_out, b->n, CRITICAL_STEPS, b->d_span, urgent);
    CUDA_CHECK(cudaEventRecord(b->done, urgent));
    events_seen_ms(ends, after_ms < 0 ? 1 : 2, seen);
    b->latency[i] = (seen[0] - h0) * 1e3;
    b->wait[i] = after_ms >= 0 && seen[1] > h0 ? (seen[0] - h0) / (seen[1] - h0) : 0;
    if (i >= b->samples) /* a pair's side: the background's end on the host, or at most now */
        b->lasted[i - b->samples] = (running ? seen[1] : h0) - t0;
    b->run[i] = 0;
    if (!b->copies) {
        unsigned long long span[2];
        CUDA_CHECK(cudaMemcpy(span, b->d_span, sizeof span, cudaMemcpyDeviceToHost));
        b->run[i] = (span[1] - span[0]) * 1e-3;
        CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, b->n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        verify_affine(b->h_in, b->h_out, b->n, CRITICAL_STEPS, &b->outputs);
    }
    return running;
}

/* Side i's samples of s: 0 alone, 1 at the same priority, 2 at the greatest. */
static stats side(const bench *b, const double *s, int i)
{ return stats_of(s + i * b->samples, b->samples); }

/* Each side beside its model (alone + the rest of the background, or + half
 * a block for a kernel that jumps the queue), its tail, samples, run time. */
static void report_variants(report *r, const bench *b, const char *prefix)
{
    static const char *const how[3] = {"alone", "same priority", "high priority"};
    const char *rest = b->copies ? "alone + the rest of the big copy"
                                 : "alone + the rest of the background";
    double alone = side(b, b->latency, 0).median, left = stats_of(b->left, b->samples).median;
    for (int i = 0, n = b->samples; i < 3; i++) {
        char name[48];
        stats latency = side(b, b->latency, i), run = side(b, b->run, i);
        int jumps = i == 2 && !b->copies; /* a kernel at the greatest priority */
        snprintf(name, sizeof name, "%s%s", prefix, how[i]);
        if (i == 0) {
            report_stats(r, name, "latency", &latency, "us");
        } else {
            report_compare(r, name, "latency", jumps ? "alone + half a block" : rest,
                           alone + (jumps ? block_us / 2 : left), &latency, "us");
            report_value(r, name, "latency_p99", stats_percentile(b->latency + i * n, n, 99), "us");
            report_samples(r, name, "latency", b->latency + i * n, n, "us");
        }
        if (!b->copies)
            report_stats(r, name, "run", &run, "us");
    }
}

/* ---- the lesson ---------------------------------------------------------------------- */

static void report_priorities(report *r, const device_info *d)
{
    int asked[2] = {d->priority_greatest - 10, d->priority_least + 10}, got[2];
    for (int i = 0; i < 2; i++) { /* values outside the range, and what a stream gets */
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, asked[i]));
        CUDA_CHECK(cudaStreamGetPriority(s, &got[i]));
        CUDA_CHECK(cudaStreamDestroy(s));
    }
    report_section(r, "Stream priorities on this GPU (cudaDeviceGetStreamPriorityRange)");
    report_fact(r, "priority_least", d->priority_least, "", "the default: every stream has it "
                "unless made with cudaStreamCreateWithPriority");
    report_fact(r, "priority_greatest", d->priority_greatest, "", "the most urgent: LOWER "
                "numbers are HIGHER priorities");
    report_fact(r, "beyond_greatest", got[0], "", "what a stream asked for %d got: values "
                "outside the range are clamped to its ends, without an error", asked[0]);
    report_fact(r, "beyond_least", got[1], "", "what a stream asked for %d got", asked[1]);
}

/* 5x, the geometric middle: a same-priority kernel waits for what is left of
 * the background (about 2500 us by default), a greatest-priority one for the
 * next block slot (under 100 us), about 25x; one funnelled queue gives 1x. */
static const verdict JUMPS_QUEUE = {
    "high_priority_jumps_queue", 5, INFINITY, "x",
    "the high-priority kernel waited like the other: CUDA_DEVICE_MAX_CONNECTIONS=1 or MPS can "
    "funnel all streams into one queue, or another process is using this GPU (see nvidia-smi)"};
/* 50%, the middle: behind the big copy the small one waits for about all that
 * is left of it (100%), and one that jumped the queue for next to none. */
static const verdict COPIES_KEEP_ORDER = {
    "copies_not_prioritised", 0.5, INFINITY, "%",
    "the high-priority copy did not wait: either its stream's copies went to another copy "
    "engine than the same-priority stream's, or this driver orders copies by priority"};
/* A timing condition, not a result: a launch after the background measured
 * no wait; each is retried (TRIES). At most 5% late: the pairs' median holds
 * (the handout's checks say why). H100s: none late in 202 runs of make stress. */
static const verdict MID_BACKGROUND = {
    "samples_mid_background", -INFINITY, 0.05, "%",
    "some urgent launches came after the background they were meant to land in had ended: "
    "the host was slow to launch them (a busy machine, a sanitizer); a larger --copy-mib or "
    "--block-us leaves them more time"};
/* One attempt, afresh: the background alone; then at each moment the urgent
 * operation alone on the idle GPU (the models' base) and a same/high pair, as
 * the handout says. Moments over [10%, 90%] of the shortest background seen
 * (a quick one must not end before the last). The pairs' same / high spread by
 * design (what is left runs from 90% to 10%): the spread handed on is the
 * same-priority wait fraction's, about 1 always. */
static int attempt_urgent(void *ctx, double *spread)
{
    bench *b = (bench *)ctx;
    int n = b->samples, *late = &b->late[b->copies], *retried = &b->retried[b->copies];
    b->background = measure_issued(start_background, b, b->low, 1, 1, 5);
    double run_ms = b->copies ? b->background.median : waves * block_us / 1e3;
    double shortest = fmin(b->background.min, run_ms);
    random_strata(b->after, n, 0.1 * shortest, 0.9 * shortest);
    for (int i = 0; i < n; i++)
        b->left[i] = (run_ms - b->after[i]) * 1e3;
    timeline_span_begin(b->copies ? "copies: alone, same, high" : "kernels: alone, same, high");
    one_sample(b, b->same, -1, 0), one_sample(b, b->high, -1, 0); /* warm-ups: first uses cost */
    *late = *retried = 0; /* samples_mid_background: only the reported attempt's count */
    for (int i = 0; i < n; i++) {
        one_sample(b, b->same, -1, i); /* alone */
        for (int k = 0; k < 2; k++) { /* the pair's first: same priority at even i, high at odd */
            int high = (i + k) % 2, tries = 0;
            while (!one_sample(b, high ? b->high : b->same, b->after[i], (1 + high) * n + i) &&
                   ++tries < TRIES)
                (*retried)++;
            *late += tries == TRIES;
        }
    }
    timeline_span_end();
    b->ratio = stats_of_ratios(b->latency + n, b->latency + 2 * n, n);
    stats same = side(b, b->wait, 1), lasted = stats_of(b->lasted, 2 * n);
    /* The background lasts as long beside the samples as alone, unless something
     * came and went (a link slowed by another process's copies while it was
     * timed alone: every moment then lands after its end): that drift is spread. */
    *spread = fmax(stats_spread(&same), fabs(b->background.median / lasted.median - 1));
    if (!verdict_holds(&MID_BACKGROUND, *late / (2.0 * n)))
        return 0;
    if (b->copies) /* when even the same-priority copy did not queue, nothing to judge */
        return same.median < 0.5 || verdict_holds(&COPIES_KEEP_ORDER, side(b, b->wait, 2).median);
    return verdict_holds(&JUMPS_QUEUE, b->ratio.median);
}

/* THREADS-thread blocks, as many per SM as fit: no critical block fits until a
 * background block ends, and priority decides whose block takes its slot. */
static void kernels_jump_queue(lab_run *run, bench *b)
{
    report *r = run->r;
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, background_block, THREADS, 0));
    b->bg_blocks = (unsigned int)waves * run->dev.sm_count * per_sm;
    b->block_ns = ns_from_ms(block_us / 1e3);
    report_section(r, "The background: many short blocks on the least-priority stream");
    lab_attempt(run, "same vs high priority", attempt_urgent, b);
    report_compare(r, "background", "duration", "waves x block duration", waves * block_us / 1e3,
                   &b->background, "ms");
    report_section(r, "The critical kernel: alone, then launched mid-background");
    report_variants(r, b, "");
    report_value(r, "priority", "latency_ratio", b->ratio.median, "x");
    report_verdict(r, &JUMPS_QUEUE, b->ratio.median, "median latency from launch to completion: "
                   "same priority %.0f us, greatest priority %.1f us; pair by pair, %.1fx lower",
                   side(b, b->latency, 1).median, side(b, b->latency, 2).median, b->ratio.median);
}

/* Copies in one direction queue for one copy engine in arrival order, whatever the priority. */
static void copies_keep_order(lab_run *run, bench *b)
{
    report *r = run->r;
    report_section(r, "Copies: a small high-priority copy issued behind a big low-priority one");
    report_param(r, "small_copy", SMALL_COPY_BYTES >> 10, "KiB");
    b->copies = 1;
    lab_attempt(run, "copy same vs high priority", attempt_urgent, b);
    report_stats(r, "big copy", "duration", &b->background, "ms");
    report_variants(r, b, "copy ");
    double same = side(b, b->wait, 1).median, high = side(b, b->wait, 2).median;
    report_value(r, "copy same priority", "wait_fraction", same, "ratio");
    report_value(r, "copy high priority", "wait_fraction", high, "ratio");
    int queued = same >= 0.5; /* else: no queue, nothing for a priority to jump */
    report_value(r, "copies", "queued_behind_big_copy", queued, "bool");
    if (queued)
        report_verdict(r, &COPIES_KEEP_ORDER, high, "the high-priority small copy waited "
                       "for %.0f%% of what was left of the big copy, the same-priority one %.0f%%",
                       high * 100, same * 100);
    else
        report_text(r, "  note: even at the same priority the small copy did not queue (%.0f%%): "
                    "this GPU's %d copy engines\n  ran the two streams' copies side by side\n",
                    same * 100, run->dev.async_engines);
}

/* Every critical output, every background block, every copied byte. */
static void check_bench(report *r, bench *b)
{
    unsigned long long blocks_done = 0;
    size_t both = b->big_bytes + SMALL_COPY_BYTES; /* the small copy's buffers follow the big one's */
    tally bytes = {0};
    uint32_t *back = (uint32_t *)xmalloc(both);
    CUDA_CHECK(cudaMemcpy(&blocks_done, b->d_blocks_done, sizeof blocks_done, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back, b->d_big, both, cudaMemcpyDeviceToHost));
    verify_equal_u32(back, b->h_big, both / 4, &bytes);
    free(back);
    report_section(r, "Checks");
    report_tally(r, "critical_verified", &b->outputs,
                 "outputs of the critical kernel differ from the CPU reference");
    report_check(r, "background_counted", blocks_done == b->blocks_launched, "%llu background "
                 "blocks ran of %llu launched", blocks_done, b->blocks_launched);
    report_tally(r, "bytes_intact", &bytes, "words differ after the copies");
    int late = b->late[0] + b->late[1], retried = b->retried[0] + b->retried[1];
    report_verdict(r, &MID_BACKGROUND, late / (4.0 * b->samples), "%d of %d urgent launches "
                   "came after the background had finished, even after %d tries (%d retried)",
                   late, 4 * b->samples, TRIES, retried);
}

/* ---- setup: the run owns these, lab_end() releases them ---------------------------- */

static bench bench_open(lab_run *run)
{
    bench b = {.samples = run->opt.reps, .n = run->dev.sm_count * AFFINE_THREADS,
               .big_bytes = (size_t)copy_mib << 20};
    size_t bytes = b.n * sizeof(uint32_t), samples = b.samples * sizeof(double);
    b.h_in = (uint32_t *)lab_pageable(run, bytes), b.h_out = (uint32_t *)lab_pageable(run, bytes);
    b.latency = (double *)lab_pageable(run, 9 * samples); /* 3 sides: alone, then the pairs */
    b.run = b.latency + 3 * b.samples, b.wait = b.run + 3 * b.samples;
    b.after = (double *)lab_pageable(run, 2 * samples), b.left = b.after + b.samples;
    b.lasted = (double *)lab_pageable(run, 2 * samples);
    b.d_in = (uint32_t *)lab_device(run, bytes), b.d_out = (uint32_t *)lab_device(run, bytes);
    b.d_span = (unsigned long long *)lab_device(run, 2 * sizeof(unsigned long long));
    b.d_blocks_done = (unsigned long long *)lab_device(run, sizeof(unsigned long long));
    b.h_big = (uint32_t *)lab_pinned(run, b.big_bytes + SMALL_COPY_BYTES);
    b.d_big = (uint32_t *)lab_device(run, b.big_bytes + SMALL_COPY_BYTES);
    b.h_small = b.h_big + b.big_bytes / 4, b.d_small = b.d_big + b.big_bytes / 4;
    fill_random_u32(b.h_in, b.n, fresh_seed());
    fill_random_u32(b.h_big, (b.big_bytes + SMALL_COPY_BYTES) / 4, fresh_seed());
    CUDA_CHECK(cudaMemcpy(b.d_in, b.h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(b.d_blocks_done, 0, sizeof(unsigned long long)));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream does not order non-blocking ones */
    b.done = lab_event(run, cudaEventDisableTiming);
    b.background_done = lab_event(run, cudaEventDisableTiming);
    int least = run->dev.priority_least, greatest = run->dev.priority_greatest;
    b.low = lab_stream(run, "background (least priority)", cudaStreamNonBlocking, least);
    b.same = lab_stream(run, "urgent, same priority", cudaStreamNonBlocking, least);
    b.high = lab_stream(run, "urgent, greatest priority", cudaStreamNonBlocking, greatest);
    return b;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    report_priorities(run.r, &run.dev);
    bench b = bench_open(&run);
    kernels_jump_queue(&run, &b);
    copies_keep_order(&run, &b);
    check_bench(run.r, &b);
    return lab_end(&run);
}
