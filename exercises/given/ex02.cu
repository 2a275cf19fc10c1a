/* ex02's given program: do the student's staging buffers let each copy to
 * the GPU run while the host produces the next chunk?
 *
 * The student writes make_staging() and free_staging()
 * (exercises/ex02_pinned_memory.cu; the contract is ex02.h). This program
 * runs its pipeline through those two buffers: the host produces chunk i
 * (fresh random words every run: its work, standing in for reading a file)
 * into buffer i % 2 and queues its copy with cudaMemcpyAsync in a stream of
 * its own, then produces the next, waiting for the copy that last read a
 * buffer before it refills it. From pinned buffers the call only queues the
 * copy, which runs beside the next chunk's production; from pageable ones it
 * returns after the copy, and the two take turns.
 *
 * Each run times itself three ways at once: the host's work (host clock
 * around each chunk's production), the copies (events around each), and the
 * whole run. The comparison is made inside each run, the wall against that
 * same run's work and copies, so that whatever slows a moment slows all
 * three; the metrics read the median run. (The stages are not timed alone,
 * as lab04 times its stages: the host's work here is about ten times the
 * copies, and the overlap, a share of the copies, would drown in the noise
 * of two separate timings of the host. Inside one run the wall is the host's
 * work plus exactly what the host waited for.)
 *
 * The metrics (grader/rubrics/ex02.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   pinned          1 when cudaPointerGetAttributes says both buffers are
 *                   page-locked host memory (cudaMallocHost, cudaHostRegister);
 *   host_ms, copies_ms, wall_ms   the host's work, the copies and the run,
 *                   each a total per run, the median over the runs;
 *   overlap         per run, (host + copies - wall) / the shorter of host and
 *                   copies: the share of it that ran beside the other; the
 *                   median run. Pageable buffers: about 0;
 *   model_overlap   the model's: all but one chunk's worth, (n-1)/n (with two
 *                   buffers, the last copy, or the first chunk's work, runs
 *                   alone whichever is longer);
 *   call_fraction   chunk by chunk, the time inside cudaMemcpyAsync alone over
 *                   that chunk's copy (its events), the median over every
 *                   chunk of every run: about 0 when the call only queues the
 *                   copy (an H100: a few us against 0.3 ms for 16 MiB), 0.8
 *                   or more from pageable memory, where the call returns
 *                   after staging the copy (lab02's pageable_call_waits_for_copy);
 *   words_wrong, words_checked   words on the GPU that differ from what the
 *                   host produced, over every run, the warm-up's too.
 * --check: 4 chunks of 1 MiB, one run, checks only (no verdict on its timing). */
#include "ex02.h"
#include "grading.h"
#include "kernels.h"

#include <stdint.h>
#include <string.h>

static int chunks = 8;
static int chunk_mib = 16;

static const option ex_options[] = {
    {"chunks", OPT_INT, &chunks, 2, 64, NO_QUICK, "N", "chunks in the dataset"},
    {"chunk-mib", OPT_INT, &chunk_mib, 1, 256, 8, "MIB", "size of one chunk"},
    {NULL},
};
static const program_info ex = {
    .name = "ex02",
    .title = "exercise: pinned staging buffers, so the async copy overlaps host work",
    .handout = "labs/lab02_pinned_memory/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* runs, each on fresh data */
    .memory_option = "chunk-mib", .memory_per_unit = 1 << 20, .memory_times = "chunks",
};

/* The check pass (--check): 4 chunks of 1 MiB, one run. grading_begin()
 * calls it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    chunks = 4;
    chunk_mib = 1;
    opt->reps = 1; /* runs */
}

/* Whether the buffers are pinned is in the detail: the hint covers both cases. */
static const verdict OVERLAP = {
    "copies_overlap_host_work", 0.5, INFINITY, "%",
    "with pageable staging buffers cudaMemcpyAsync from them returns only after the copy: "
    "TODO(student) in make_staging() and free_staging(): allocate them with cudaMallocHost, "
    "free them with cudaFreeHost; with pinned ones that did not overlap, another process may "
    "be using this GPU or its link, or the host was busy"};
/* 0.5, halfway between the two models: a pinned buffer's call takes a few
 * percent of its copy, a pageable one's 80% or more. */
static const verdict CALL_AT_ONCE = {
    "copy_call_returns_at_once", -INFINITY, 0.5, "%",
    "cudaMemcpyAsync held the host for much of its copy: it does from pageable memory "
    "(TODO(student) in make_staging()); from pinned memory, the host thread was descheduled "
    "(a busy machine)"};

enum { MAX_CHUNKS = 64, POISON = 0xff, WARMUP = 1 };

/* The program's own bench: static, so that the student's file cannot name it. */
static struct {
    int n;                        /* chunks */
    size_t words, bytes;          /* per chunk */
    uint32_t *stage[STAGES];      /* the student's staging buffers */
    uint32_t *d_data;             /* the whole dataset, on the GPU */
    cudaStream_t stream;
    event_timer copy[MAX_CHUNKS]; /* around each chunk's copy; its stop event also
                                     says when the staging buffer is free again */
} bench;

/* One run's times, ms. */
typedef struct {
    double wall, host, copies;    /* totals: the run, the host's work, the copies */
    double call[MAX_CHUNKS];      /* inside each chunk's cudaMemcpyAsync, and nothing else */
    double copy[MAX_CHUNKS];      /* each chunk's copy, by its events */
} run_times;

/* The host's work on a chunk: here, making its data. */
static void produce_chunk(uint32_t *dst, size_t words, uint64_t seed)
{
    fill_random_u32(dst, words, seed);
}

/* Chunk i is produced into staging buffer i % STAGES, then copied to its
 * place on the GPU. Before the host reuses a buffer it waits for the copy
 * that last read from it: with pinned buffers that copy may still run. */
static run_times run_pipeline(uint64_t seed)
{
    run_times t;
    memset(&t, 0, sizeof t);
    double start = host_time_ms();
    for (int i = 0; i < bench.n; i++) {
        int b = i % STAGES;
        if (i >= STAGES)
            CUDA_CHECK(cudaEventSynchronize(bench.copy[i - STAGES].stop));
        double t0 = host_time_ms();
        produce_chunk(bench.stage[b], bench.words, seed + (uint64_t)i);
        double t1 = host_time_ms();
        event_timer_start(&bench.copy[i], bench.stream);
        double t2 = host_time_ms(); /* the call alone: recording the event is not the copy's */
        CUDA_CHECK(cudaMemcpyAsync(bench.d_data + (size_t)i * bench.words, bench.stage[b],
                                   bench.bytes, cudaMemcpyHostToDevice, bench.stream));
        t.call[i] = host_time_ms() - t2;
        event_timer_stop(&bench.copy[i], bench.stream);
        t.host += t1 - t0;
    }
    CUDA_CHECK(cudaStreamSynchronize(bench.stream));
    t.wall = host_time_ms() - start;
    for (int i = 0; i < bench.n; i++)
        t.copies += t.copy[i] = event_timer_ms(&bench.copy[i]);
    return t;
}

/* Every chunk on the GPU against the words the host produced for it. */
static void verify(uint64_t seed, uint32_t *back, uint32_t *want, tally *t)
{
    CUDA_CHECK(cudaMemcpy(back, bench.d_data, bench.bytes * bench.n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < bench.n; i++) {
        produce_chunk(want, bench.words, seed + (uint64_t)i);
        verify_equal_u32(back + (size_t)i * bench.words, want, bench.words, t);
    }
}

/* Two buffers, apart: one buffer twice, or two that overlap, would be
 * refilled while a copy still reads it. */
static void check_staging(void)
{
    for (int b = 0; b < STAGES; b++)
        if (!bench.stage[b])
            fail_wrong("make_staging() left stage[%d] NULL", b);
    uintptr_t a = (uintptr_t)bench.stage[0], z = (uintptr_t)bench.stage[1];
    if ((a < z ? z - a : a - z) < bench.bytes)
        fail_wrong("make_staging() gave two staging buffers that overlap (%p and %p, %zu bytes "
                   "each)", (void *)bench.stage[0], (void *)bench.stage[1], bench.bytes);
}

static int is_pinned(const void *ptr)
{
    cudaPointerAttributes a;
    CUDA_CHECK(cudaPointerGetAttributes(&a, ptr));
    return a.type == cudaMemoryTypeHost; /* malloc'd memory: cudaMemoryTypeUnregistered */
}

static double *lab_doubles(lab_run *lab, int n)
{
    return (double *)lab_pageable(lab, (size_t)n * sizeof(double));
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int runs = lab.opt.reps;

    bench.n = chunks;
    bench.bytes = (size_t)chunk_mib << 20;
    bench.words = bench.bytes / sizeof(uint32_t);
    bench.stream = lab_stream(&lab, "copies", cudaStreamNonBlocking, 0);
    for (int i = 0; i < bench.n; i++)
        bench.copy[i] = lab_timer(&lab);
    bench.d_data = (uint32_t *)lab_device(&lab, bench.bytes * bench.n);
    uint32_t *back = (uint32_t *)lab_pageable(&lab, bench.bytes * bench.n);
    uint32_t *want = (uint32_t *)lab_pageable(&lab, bench.bytes);
    uint32_t *stage[STAGES] = {NULL}; /* the student's buffers, handed over in an array of */
    make_staging(stage, bench.bytes);  /* their own: not a pointer into the bench */
    memcpy(bench.stage, stage, sizeof stage);
    check_staging();
    int pinned = is_pinned(bench.stage[0]) && is_pinned(bench.stage[1]);

    /* Per run: the three totals, the overlap and the model's wall; per chunk
     * of every run: the call and its copy. */
    double *wall = lab_doubles(&lab, runs), *host = lab_doubles(&lab, runs);
    double *copies = lab_doubles(&lab, runs), *overlap = lab_doubles(&lab, runs);
    double *model_wall = lab_doubles(&lab, runs);
    double *call = lab_doubles(&lab, runs * bench.n), *copy = lab_doubles(&lab, runs * bench.n);
    double model = (bench.n - 1.0) / bench.n;
    tally words = {0};
    report_param(r, "runs", runs, "count");
    timeline_span_begin("pipeline");
    for (int run = -WARMUP; run < runs; run++) { /* the warm-up runs are checked, not timed */
        uint64_t seed = fresh_seed();
        CUDA_CHECK(cudaMemset(bench.d_data, POISON, bench.bytes * bench.n));
        CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream's memset, before the run */
        run_times t = run_pipeline(seed);
        verify(seed, back, want, &words);
        if (run < 0)
            continue;
        double shorter = t.host < t.copies ? t.host : t.copies;
        wall[run] = t.wall, host[run] = t.host, copies[run] = t.copies;
        overlap[run] = (t.host + t.copies - t.wall) / shorter;
        model_wall[run] = t.host + t.copies - model * shorter;
        memcpy(call + run * bench.n, t.call, bench.n * sizeof *call);
        memcpy(copy + run * bench.n, t.copy, bench.n * sizeof *copy);
    }
    timeline_span_end();
    stats sw = stats_of(wall, runs), sh = stats_of(host, runs), sc = stats_of(copies, runs);
    stats so = stats_of(overlap, runs), scall = stats_of(call, runs * bench.n);
    stats fraction = stats_of_ratios(call, copy, runs * bench.n);

    report_section(r, "Produce a chunk, copy it to the GPU, produce the next meanwhile");
    report_value(r, "staging", "pinned", pinned, "bool");
    report_stats(r, "pipeline", "host_work", &sh, "ms");
    report_stats(r, "pipeline", "copies", &sc, "ms");
    report_stats(r, "pipeline", "copy_call_returns", &scall, "ms");
    report_stats(r, "pipeline", "call_fraction", &fraction, "fraction");
    report_text(r, "  (host_work and copies: totals per run; copy_call_returns: per chunk, the "
                   "host's time inside\n  cudaMemcpyAsync; call_fraction: that over the chunk's "
                   "copy)\n");
    report_value(r, "pipeline", "serial", sh.median + sc.median, "ms");
    report_compare(r, "pipeline", "wall", "host + copies - (n-1)/n of the shorter",
                   stats_of(model_wall, runs).median, &sw, "ms");
    report_value(r, "pipeline", "overlap", so.median, "fraction");

    report_tally(r, "chunks_verified", &words, "words on the GPU differ from what the host "
                 "produced, over every run, the warm-up's too");
    if (!grading_check()) { /* the check pass's chunks are too small to judge the timing */
        report_verdict(r, &CALL_AT_ONCE, fraction.median, "the median call took %.1f%% of its "
                       "chunk's copy (%.3f ms)", fraction.median * 100, scall.median);
        report_verdict(r, &OVERLAP, so.median, "%.0f%% of the shorter part (%.2f ms of "
                       "copies, %.2f ms of host work) ran beside the other; wall %.2f ms (model "
                       "%.0f%%: (n-1)/n); staging buffers %s", so.median * 100, sc.median,
                       sh.median, sw.median, model * 100, pinned ? "pinned" : "pageable");
    }

    grading_value("pinned", pinned);
    grading_value("words_wrong", (double)words.wrong);
    grading_value("words_checked", (double)words.checked);
    grading_value("host_ms", sh.median);
    grading_value("copies_ms", sc.median);
    grading_value("wall_ms", sw.median);
    grading_value("overlap", so.median);
    grading_value("model_overlap", model);
    grading_value("call_fraction", fraction.median);

    memcpy(stage, bench.stage, sizeof stage);
    free_staging(stage); /* the student's */
    return grading_finish(&lab);
}
