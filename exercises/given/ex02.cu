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
 *
 * Level two, measured after level one in the same run: the student's
 * run_round_trip() sends LEVEL2_CHUNKS chunks of a quarter of level one's
 * size to the GPU and takes their results back, through upload and result
 * slots from two more calls of make_staging() (pageable slots make every
 * copy hold the host). It is handed two streams, a pool of events and three
 * functions of the program's: produce(i), the host's work, fills upload
 * slot i % 2 with chunk i's fresh words (as level one's production);
 * queue_chunk(i, s) queues the upload, the GPU's work (affine_work, one
 * step, then spin_for_ns: a GPU path G) and the download into result slot
 * i % 2, between events of the program's own; consume(i), the host's work,
 * checks every word of the result slot against the CPU reference of chunk
 * i's words and poisons the slot. At start-up the program times P (a
 * produce) and C (a consume) alone and the GPU path without its spin, and
 * sets the spin so that G = 0.8 (P + C): between P and P + C, so that the
 * host, at both ends, paces the pipeline; each usual run then sets the
 * next one's spin from its own P and C. Each run, every call is counted
 * (each chunk produced, queued and consumed once, in order, from the
 * calling thread, into one of the job's streams), every result word
 * checked, and each consume asks the program's event after chunk i's
 * download whether it has passed (cudaEventQuery: a read before it ended),
 * each produce the event after the upload that last read its slot, each
 * queue_chunk whether the slot's last results were consumed (a slot reused
 * early). In a quarter of the runs, at random places, G is three times as
 * long: a wait placed by timing rather than by an event shows there, as
 * wrong words (poison) and in the event's answer; those runs are checked,
 * not timed. Per timed run: P, C and G the medians of its chunks, the
 * model's best wall P + (n-1) max(P + C, G) + G + C (the first chunk through
 * every stage, then the slowest stage per chunk: the host's two, P + C),
 * and the efficiency, that over the run's wall (from an idle GPU to
 * cudaDeviceSynchronize after run_round_trip() returns). Its metrics:
 *   level2_runs, level2_slow_runs   runs checked (the warm-up's too); those
 *                   with G three times as long;
 *   level2_words_wrong, level2_words_checked   result words wrong, of all checked;
 *   level2_calls_wrong    calls out of range, out of order, from another
 *                   thread or into another stream, and chunks not produced,
 *                   queued and consumed exactly once;
 *   level2_read_early     consumes begun before their chunk's download ended;
 *   level2_reused_early   produces into an upload slot whose last upload had
 *                   not ended, and chunks queued into a result slot not yet
 *                   consumed;
 *   level2_runs_wrong     runs with any of the four above;
 *   level2_produce_ms, level2_consume_ms, level2_gpu_ms   P, C and G, the
 *                   median run's;
 *   level2_ideal_ms, level2_wall_ms   the model's best wall and the run's;
 *   level2_efficiency     ideal / wall, run by run, the median;
 *   level2_model_serial   the model's efficiency of the way handed out
 *                   (produce, queue, wait, consume, chunk after chunk) at
 *                   the run's own times: what the prediction asks, so
 *                   printed only once the student has predicted;
 *   level2_model_late     ... of the next best schedule, the one the
 *                   threshold is set against (the rubric);
 *   level2_predicted      the student's LEVEL2_PREDICTED_EFFICIENCY.
 * --check: 4 chunks of 1 MiB, one run, checks only (no verdict on its
 * timing); level two 4 chunks of 1 MiB, one run. */
#include "ex02.h"
#include "grading.h"
#include "kernels.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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
    /* the dataset, chunks x chunk-mib; level two's four slots of a quarter
     * chunk, one chunk more: at most half as much again (--chunks >= 2) */
    .memory_option = "chunk-mib", .memory_per_unit = 1.5 * 1048576, .memory_times = "chunks",
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

/* Level two: the model's best wall over the run's. 0.9 lies between the
 * model's schedule (about 1.0) and the next best (about 0.8); the rubric
 * says why. */
static const verdict LEVEL2_EFFICIENT = {
    "level2_round_trip_reaches_model", 0.9, INFINITY, "%",
    "the host waited while it could have worked, or the GPU while it could have run: which "
    "stage idles while another works, by lab02's level-two model? See TODO(student) in "
    "run_round_trip(); pageable slots make every copy hold the host"};

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
static void check_staging(uint32_t *const stage[STAGES], size_t bytes)
{
    for (int b = 0; b < STAGES; b++)
        if (!stage[b])
            fail_wrong("make_staging() left stage[%d] NULL", b);
    uintptr_t a = (uintptr_t)stage[0], z = (uintptr_t)stage[1];
    if ((a < z ? z - a : a - z) < bytes)
        fail_wrong("make_staging() gave two staging buffers that overlap (%p and %p, %zu bytes "
                   "each)", (void *)stage[0], (void *)stage[1], bytes);
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

/* Level one: `runs` timed runs of the pipeline through the student's two
 * staging buffers, and a warm-up, reported and handed to the grader. */
static void level1(lab_run *lab, int runs)
{
    report *r = lab->r;
    bench.n = chunks;
    bench.bytes = (size_t)chunk_mib << 20;
    bench.words = bench.bytes / sizeof(uint32_t);
    bench.stream = lab_stream(lab, "copies", cudaStreamNonBlocking, 0);
    for (int i = 0; i < bench.n; i++)
        bench.copy[i] = lab_timer(lab);
    bench.d_data = (uint32_t *)lab_device(lab, bench.bytes * bench.n);
    uint32_t *back = (uint32_t *)lab_pageable(lab, bench.bytes * bench.n);
    uint32_t *want = (uint32_t *)lab_pageable(lab, bench.bytes);
    uint32_t *stage[STAGES] = {NULL}; /* the student's buffers, handed over in an array of */
    make_staging(stage, bench.bytes);  /* their own: not a pointer into the bench */
    memcpy(bench.stage, stage, sizeof stage);
    check_staging(bench.stage, bench.bytes);
    int pinned = is_pinned(bench.stage[0]) && is_pinned(bench.stage[1]);

    /* Per run: the three totals, the overlap and the model's wall; per chunk
     * of every run: the call and its copy. */
    double *wall = lab_doubles(lab, runs), *host = lab_doubles(lab, runs);
    double *copies = lab_doubles(lab, runs), *overlap = lab_doubles(lab, runs);
    double *model_wall = lab_doubles(lab, runs);
    double *call = lab_doubles(lab, runs * bench.n), *copy = lab_doubles(lab, runs * bench.n);
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
}

/* ---- Level two: results come back ---- */

/* The GPU path against the host's two stages, G = L2_GPU_SHARE (P + C):
 * above P, so that producing the next chunk does not hide it, and below
 * P + C, so that the host paces the model's schedule. In a quarter of the
 * runs it is L2_SLOW times as long. */
static const double L2_GPU_SHARE = 0.8, L2_SLOW = 3;
enum { L2_CALIBRATIONS = 5 };

/* Level two's bench, static like level one's: the student's code reaches
 * the slots and the words only through produce, queue_chunk and consume. */
static struct {
    int n;                                /* chunks this run */
    size_t words, bytes;                  /* per chunk */
    uint32_t *up[STAGES], *down[STAGES];  /* the student's upload and result slots */
    uint32_t *d_slot;                     /* on the GPU: upload slot b at b, its results at
                                             STAGES + b, in chunks */
    uint32_t *want;                       /* a chunk's words again, for consume's check */
    cudaStream_t stream[LEVEL2_STREAMS];
    cudaEvent_t event[LEVEL2_EVENTS];     /* the student's */
    event_timer path[LEVEL2_CHUNKS];      /* before each chunk's upload, after its download */
    cudaEvent_t uploaded[LEVEL2_CHUNKS];  /* after each chunk's upload */
    uint64_t seed, spin_ns;               /* this run's words and GPU work */
    pthread_t caller;                     /* the thread that called run_round_trip() */
    tally results;                        /* every run's result words */
    /* this run's record: calls per chunk, and what went against the contract */
    int produced, made[LEVEL2_CHUNKS], queued[LEVEL2_CHUNKS], consumed[LEVEL2_CHUNKS];
    int calls_wrong, read_early, reused_early;
    double produce_ms[LEVEL2_CHUNKS], consume_ms[LEVEL2_CHUNKS];
} trip;

static uint32_t *device_slot(int b, int results)
{
    return trip.d_slot + (size_t)(results * STAGES + b) * trip.words;
}

/* Queues slot b's round trip in s: the upload, the GPU's work (one affine
 * step on every word, then the spin), the download into result slot b,
 * between path's events; `uploaded` after the upload. */
static void round_trip(int b, uint64_t spin_ns, cudaStream_t s, event_timer *path,
                       cudaEvent_t uploaded)
{
    event_timer_start(path, s);
    CUDA_CHECK(cudaMemcpyAsync(device_slot(b, 0), trip.up[b], trip.bytes,
                               cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaEventRecord(uploaded, s));
    affine_launch(device_slot(b, 0), device_slot(b, 1), trip.words, 1, s);
    spin_for_ns<<<1, 1, 0, s>>>(spin_ns);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(trip.down[b], device_slot(b, 1), trip.bytes,
                               cudaMemcpyDeviceToHost, s));
    event_timer_stop(path, s);
}

/* Result slot b against the CPU reference of the words `seed` makes, into
 * *t (NULL: not counted), then poisoned: a read before the next download
 * has landed sees poison. */
static void check_results(int b, uint64_t seed, tally *t)
{
    produce_chunk(trip.want, trip.words, seed);
    verify_affine(trip.want, trip.down[b], trip.words, 1, t);
    memset(trip.down[b], POISON, trip.bytes);
}

/* 1 when chunk i exists and run_round_trip()'s own thread calls; otherwise
 * the call is counted wrong (atomically: another thread may be calling). */
static int trip_call(int i)
{
    if (i >= 0 && i < trip.n && pthread_equal(pthread_self(), trip.caller))
        return 1;
    __atomic_add_fetch(&trip.calls_wrong, 1, __ATOMIC_RELAXED);
    return 0;
}

static void trip_produce(int i)
{
    if (!trip_call(i))
        return;
    trip.made[i]++;
    trip.calls_wrong += i != trip.produced++; /* chunks 0, 1, 2 ... in order */
    /* The upload that last read this slot (chunk i - STAGES) must have ended. */
    if (i >= STAGES && (!trip.queued[i - STAGES] || !event_finished(trip.uploaded[i - STAGES])))
        trip.reused_early++;
    double t0 = host_time_ms();
    produce_chunk(trip.up[i % STAGES], trip.words, trip.seed + (uint64_t)i);
    trip.produce_ms[i] = host_time_ms() - t0;
}

static void trip_queue(int i, cudaStream_t s)
{
    int ours = 0;
    for (int k = 0; k < LEVEL2_STREAMS; k++)
        ours |= s == trip.stream[k];
    if (!trip_call(i))
        return;
    trip.calls_wrong += !ours + (trip.queued[i]++ > 0) + !trip.made[i]; /* once, after produce */
    /* Its download overwrites result slot i % STAGES: chunk i - STAGES's
     * results must have been consumed. */
    if (i >= STAGES && !trip.consumed[i - STAGES])
        trip.reused_early++;
    round_trip(i % STAGES, trip.spin_ns, ours ? s : trip.stream[0], &trip.path[i],
               trip.uploaded[i]);
}

static void trip_consume(int i)
{
    if (!trip_call(i))
        return;
    trip.calls_wrong += trip.consumed[i]++ > 0;
    /* The program's own event after chunk i's download: passed, or read early. */
    if (!trip.queued[i] || !event_finished(trip.path[i].stop))
        trip.read_early++;
    double t0 = host_time_ms();
    check_results(i % STAGES, trip.seed + (uint64_t)i, &trip.results);
    trip.consume_ms[i] = host_time_ms() - t0;
}

static double median_of(const double *v, int n) { return n > 0 ? stats_of(v, n).median : 0; }

/* P and C alone and the GPU path without its spin, each the median of
 * L2_CALIBRATIONS taking the slots in turn (the first of each slot pays for
 * its first touches), in *p, *c, *g0 (ms). */
static void trip_calibrate(double *p, double *c, double *g0)
{
    double tp[L2_CALIBRATIONS], tc[L2_CALIBRATIONS], tg[L2_CALIBRATIONS];
    for (int k = 0; k < L2_CALIBRATIONS; k++) {
        double t0 = host_time_ms();
        produce_chunk(trip.up[k % STAGES], trip.words, fresh_seed());
        tp[k] = host_time_ms() - t0;
        round_trip(k % STAGES, 0, trip.stream[0], &trip.path[0], trip.uploaded[0]);
        tg[k] = event_timer_ms(&trip.path[0]); /* waits for the download */
        t0 = host_time_ms();
        check_results(k % STAGES, 0, NULL);
        tc[k] = host_time_ms() - t0;
    }
    *p = median_of(tp, L2_CALIBRATIONS), *c = median_of(tc, L2_CALIBRATIONS);
    *g0 = median_of(tg, L2_CALIBRATIONS);
}

/* What one run of run_round_trip() showed. */
typedef struct {
    double wall;       /* from an idle GPU to an idle GPU after it returned, ms */
    double p, c, g;    /* the medians of its produces, consumes and GPU paths, ms */
    int wrong;         /* a word wrong, a call out of the contract, a read or a reuse early */
} trip_run;

/* One run on fresh words, every slot poisoned, the GPU's work `spin_ns`
 * long after its affine step. */
static trip_run one_trip(uint64_t spin_ns)
{
    trip_run res;
    size_t before = trip.results.wrong;
    double p[LEVEL2_CHUNKS], c[LEVEL2_CHUNKS], g[LEVEL2_CHUNKS];
    int np = 0, nc = 0, ng = 0;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(trip.d_slot, POISON, 2 * STAGES * trip.bytes));
    for (int b = 0; b < STAGES; b++)
        memset(trip.down[b], POISON, trip.bytes);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream's memset, before the run */
    trip.seed = fresh_seed(), trip.spin_ns = spin_ns;
    trip.produced = trip.calls_wrong = trip.read_early = trip.reused_early = 0;
    memset(trip.made, 0, sizeof trip.made), memset(trip.queued, 0, sizeof trip.queued);
    memset(trip.consumed, 0, sizeof trip.consumed);
    level2_job job = {trip.n, {0}, {0}, trip_produce, trip_queue, trip_consume}; /* a copy */
    memcpy(job.stream, trip.stream, sizeof job.stream);
    memcpy(job.event, trip.event, sizeof job.event);
    trip.caller = pthread_self();
    double start = host_time_ms();
    run_round_trip(&job); /* the student's */
    CUDA_CHECK(cudaDeviceSynchronize());
    res.wall = host_time_ms() - start;
    for (int i = 0; i < trip.n; i++) {
        trip.calls_wrong += trip.made[i] != 1 || trip.queued[i] != 1 || trip.consumed[i] != 1;
        if (trip.made[i])
            p[np++] = trip.produce_ms[i];
        if (trip.queued[i])
            g[ng++] = event_timer_ms(&trip.path[i]);
        if (trip.consumed[i])
            c[nc++] = trip.consume_ms[i];
    }
    res.p = median_of(p, np), res.c = median_of(c, nc), res.g = median_of(g, ng);
    res.wrong = trip.results.wrong > before || trip.calls_wrong || trip.read_early ||
                trip.reused_early;
    return res;
}

/* The model's best wall for n chunks: the first chunk through every stage,
 * then one period of the slowest stage per chunk, the host's two (produce
 * and consume) counting as one: P + (n-1) max(P + C, G) + G + C. */
static double best_wall_ms(double p, double c, double g, int n)
{
    return p + (n - 1) * fmax(p + c, g) + g + c;
}

/* Level two: a warm-up, `timed` runs timed, and `slow` runs with the GPU's
 * work L2_SLOW times as long at random places among them, checked only. */
static void level2(lab_run *lab, int check)
{
    report *r = lab->r;
    int timed = 2 * lab->opt.reps - 1, slow = check ? 0 : (timed + 2) / 3; /* check: reps 1 */
    int runs = timed + slow, warmup = check ? 0 : WARMUP;
    trip.n = check ? 4 : LEVEL2_CHUNKS;
    trip.bytes = (size_t)(chunk_mib >= 4 ? chunk_mib / 4 : 1) << 20;
    trip.words = trip.bytes / sizeof(uint32_t);
    uint32_t *up[STAGES] = {NULL}, *down[STAGES] = {NULL}; /* arrays of the student's own */
    make_staging(up, trip.bytes);
    make_staging(down, trip.bytes);
    check_staging(up, trip.bytes);
    check_staging(down, trip.bytes);
    memcpy(trip.up, up, sizeof up), memcpy(trip.down, down, sizeof down);
    lab_streams(lab, trip.stream, LEVEL2_STREAMS, "level-2 stream", cudaStreamNonBlocking);
    lab_events(lab, trip.event, LEVEL2_EVENTS, cudaEventDisableTiming);
    lab_events(lab, trip.uploaded, LEVEL2_CHUNKS, cudaEventDisableTiming);
    for (int i = 0; i < LEVEL2_CHUNKS; i++)
        trip.path[i] = lab_timer(lab);
    trip.d_slot = (uint32_t *)lab_device(lab, 2 * STAGES * trip.bytes);
    trip.want = (uint32_t *)lab_pageable(lab, trip.bytes);

    double p0, c0, g0;
    trip_calibrate(&p0, &c0, &g0);
    /* The spin follows the host: the start-up's P and C are only the first
     * guess, and each usual run sets the next one's GPU path from its own P
     * and C. On an H100 the start-up's read 1.5x the runs' own (cold pages,
     * an idle link), which left G above P + C in the runs: the GPU, not the
     * host, paced them, and the schedules the threshold separates read
     * closer together than at G = 0.8 (P + C). */
    double target = L2_GPU_SHARE * (p0 + c0);

    /* slow[k] for `slow` of the runs, at random places (the warm-up's is usual) */
    int *slowed = (int *)lab_pageable(lab, (size_t)runs * sizeof(int));
    for (int k = 0; k < runs; k++)
        slowed[k] = k < slow;
    for (int k = runs - 1; k > 0; k--) {
        int j = (int)grading_uniform(0, k + 1), keep = slowed[k];
        slowed[k] = slowed[j], slowed[j] = keep;
    }
    /* per timed run: its stage times, walls and efficiencies */
    double *v = lab_doubles(lab, 8 * timed);
    double *p = v, *c = v + timed, *g = v + 2 * timed, *wall = v + 3 * timed;
    double *ideal = v + 4 * timed, *eff = v + 5 * timed, *serial = v + 6 * timed;
    double *late = v + 7 * timed;
    int checked = 0, runs_wrong = 0, calls = 0, early = 0, reused = 0, t = 0;
    timeline_span_begin("level 2: round trips");
    for (int k = -warmup; k < runs; k++) {
        int is_slow = k >= 0 && slowed[k];
        double spin_ms = fmax(0, target - g0) + (is_slow ? (L2_SLOW - 1) * target : 0);
        trip_run res = one_trip(ns_from_ms(spin_ms));
        checked++, runs_wrong += res.wrong;
        if (!is_slow && res.p + res.c > 0)
            target = L2_GPU_SHARE * (res.p + res.c);
        calls += trip.calls_wrong, early += trip.read_early, reused += trip.reused_early;
        if (k < 0 || is_slow)
            continue;
        p[t] = res.p, c[t] = res.c, g[t] = res.g, wall[t] = res.wall;
        ideal[t] = best_wall_ms(res.p, res.c, res.g, trip.n);
        eff[t] = ideal[t] / res.wall;
        serial[t] = ideal[t] / (trip.n * (res.p + res.g + res.c));
        late[t] = ideal[t] / (res.p + (trip.n - 1) * (fmax(res.p, res.g) + res.c) + res.g + res.c);
        t++;
    }
    timeline_span_end();
    stats sp = stats_of(p, timed), sc = stats_of(c, timed), sg = stats_of(g, timed);
    stats sw = stats_of(wall, timed), si = stats_of(ideal, timed), se = stats_of(eff, timed);
    double model_serial = stats_of(serial, timed).median, model_late = stats_of(late, timed).median;

    report_section(r, "Level 2: results come back: produce, the GPU's round trip, consume");
    report_text(r, "  %d chunks of %zu MiB, each up from an upload slot and back into a result "
                "slot; the GPU path\n  set to %.0f%% of the last usual run's produce and consume "
                "(at start-up: %.2f + %.2f ms); %d of %d runs\n  with it %gx as long, "
                "checked, not timed\n",
                trip.n, trip.bytes >> 20, L2_GPU_SHARE * 100, p0, c0, slow, checked, L2_SLOW);
    report_stats(r, "your round trip", "produce", &sp, "ms");
    report_stats(r, "your round trip", "gpu_path", &sg, "ms");
    report_stats(r, "your round trip", "consume", &sc, "ms");
    report_compare(r, "your round trip", "wall", "P + (n-1) max(P + C, G) + G + C", si.median,
                   &sw, "ms");
    report_value(r, "your round trip", "efficiency", se.median * 100, "%");
    report_value(r, "your prediction", "efficiency_bound", LEVEL2_PREDICTED_EFFICIENCY * 100,
                 "%");
    /* the way handed out's bound is the prediction's answer: only once predicted */
    int predicted = grading_predicted(r, LEVEL2_PREDICTED_EFFICIENCY, 0,
                                      "LEVEL2_PREDICTED_EFFICIENCY");
    if (predicted)
        report_value(r, "the way handed out", "efficiency_bound", model_serial * 100, "%");
    report_value(r, "next best schedule", "efficiency_bound", model_late * 100, "%");
    report_text(r, "  (the model's best wall over each way's, at each run's own P, G and C; the "
                "way handed out:\n  produce, queue, wait, consume, chunk after chunk; your "
                "prediction is LEVEL2_PREDICTED_EFFICIENCY,\n  at C = P and G = 1.6 P)\n");
    report_tally(r, "level2_results_verified", &trip.results, "result words differ from the CPU "
                 "reference of their chunk, over every run, the slow ones and the warm-up's too");
    report_check(r, "level2_calls_in_contract", calls == 0, "%d calls out of range, out of "
                 "order, from another thread or into another stream, or chunks not produced, "
                 "queued and consumed exactly once, in %d runs", calls, checked);
    report_check(r, "level2_read_after_download", early == 0, "%d consumes began before their "
                 "chunk's download had ended, in %d runs%s", early, checked,
                 early ? ": wait for chunk i's own event (or its stream) before consume(i)" : "");
    report_check(r, "level2_slots_free_when_reused", reused == 0, "%d slots reused early, in %d "
                 "runs: produce(i) before the upload of chunk i-2 had ended, or queue_chunk(i) "
                 "before chunk i-2 was consumed", reused, checked);
    char handed_out[48] = "";
    if (predicted)
        snprintf(handed_out, sizeof handed_out, "the way handed out reaches %.0f%%, ",
                 model_serial * 100);
    if (!check) /* one small run: nothing to judge its timing by */
        report_verdict(r, &LEVEL2_EFFICIENT, se.median, "%.0f%% of the model's best wall "
                       "(%.2f ms) in %.2f ms, the median of %d timed runs; %sthe next best "
                       "schedule %.0f%%", se.median * 100, si.median, sw.median, timed,
                       handed_out, model_late * 100);

    grading_value("level2_runs", checked);
    grading_value("level2_slow_runs", slow);
    grading_value("level2_words_wrong", (double)trip.results.wrong);
    grading_value("level2_words_checked", (double)trip.results.checked);
    grading_value("level2_calls_wrong", calls);
    grading_value("level2_read_early", early);
    grading_value("level2_reused_early", reused);
    grading_value("level2_runs_wrong", runs_wrong);
    grading_value("level2_produce_ms", sp.median);
    grading_value("level2_consume_ms", sc.median);
    grading_value("level2_gpu_ms", sg.median);
    grading_value("level2_ideal_ms", si.median);
    grading_value("level2_wall_ms", sw.median);
    grading_value("level2_efficiency", se.median);
    grading_value("level2_model_serial", model_serial);
    grading_value("level2_model_late", model_late);
    grading_value("level2_predicted", LEVEL2_PREDICTED_EFFICIENCY);

    memcpy(up, trip.up, sizeof up), memcpy(down, trip.down, sizeof down);
    free_staging(up); /* the student's */
    free_staging(down);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    level1(&lab, lab.opt.reps);
    level2(&lab, grading_check());
    return grading_finish(&lab);
}
