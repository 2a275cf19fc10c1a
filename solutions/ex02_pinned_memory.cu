/* ex02 (solution): let the copy run while the host works: pinned staging buffers.
 *
 * The task: run_pipeline() produces a dataset on the host chunk by chunk
 * (produce_chunk: fresh random words, standing in for reading a file or
 * decoding) and sends each chunk to the GPU with cudaMemcpyAsync, through two
 * staging buffers taken in turn, so that the host can produce chunk i+1 while
 * chunk i is on its way. That is the plan; as given it does not happen. The
 * staging buffers come from malloc: pageable memory, from which
 * cudaMemcpyAsync returns only once the driver has copied everything through
 * its own pinned buffer, so host work and copies take turns. Complete the
 * TODO(student) in make_staging() and free_staging(): pinned staging buffers
 * (cudaMallocHost and cudaFreeHost). run_pipeline() stays as it is.
 *
 * The target: the copies overlap the host work: at least 50% of the shorter
 * of the two (host work, copies) runs while the other does. The model: all
 * but one chunk's worth, (n-1)/n, 88% with the default 8 chunks. The wall
 * time is printed beside the model's; every chunk that reaches the GPU is
 * checked against the words the host produced.
 *
 * Build and run:   make sol02 && ./sol02      (./sol02 --quick: chunks of 8 MiB)
 * This is the reference solution: pinned staging buffers, the copies hidden
 * behind the host's work, exit 0.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static int chunks = 8;
static int chunk_mib = 16;

static const option ex_options[] = {
    {"chunks", OPT_INT, &chunks, 2, 64, NO_QUICK, "N", "chunks in the dataset"},
    {"chunk-mib", OPT_INT, &chunk_mib, 1, 256, 8, "MIB", "size of one chunk"},
    {NULL},
};
static const program_info ex = {
    .name = "sol02", /* named after its binary, so its messages say which program spoke */
    .title = "exercise: pinned staging buffers, so the async copy overlaps host work",
    .handout = "labs/lab02_pinned_memory/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* runs, each on fresh data */
    .memory_option = "chunk-mib", .memory_per_unit = 1 << 20, .memory_times = "chunks",
};

/* Whether the buffers are pinned is in the detail: the hint covers both cases. */
static const verdict OVERLAP = {
    "copies_overlap_host_work", 0.5, INFINITY, "%",
    "with pageable staging buffers cudaMemcpyAsync from them returns only after the copy: "
    "TODO(student) in make_staging() and free_staging(): allocate them with cudaMallocHost, "
    "free them with cudaFreeHost; with pinned ones that did not overlap, another process may "
    "be using this GPU or its link, or the host was busy"};

enum { STAGES = 2, MAX_CHUNKS = 64, POISON = 0xff };

typedef struct {
    int n;                       /* chunks */
    size_t words, bytes;         /* per chunk */
    uint32_t *stage[STAGES];     /* host staging buffers, taken in turn */
    uint32_t *d_data;            /* the whole dataset, on the GPU */
    cudaStream_t stream;
    event_timer copy[MAX_CHUNKS]; /* around each chunk's copy; its stop event also
                                     says when the staging buffer is free again */
} pipeline;

typedef struct {
    double wall, host, copies;   /* ms: the run, the host's work, the copies (events) */
    double call;                 /* ms: median time for cudaMemcpyAsync to return */
} run_times;

/* ---- the staging buffers: your part is here ------------------------------------------ */

static void make_staging(pipeline *p)
{
    /* SOLUTION: from pinned memory the copy engine reads the buffer itself,
     * so cudaMemcpyAsync only queues the copy and returns: the host goes on
     * to produce the next chunk into the other buffer while this one is on
     * its way. (From malloc'd memory the driver must first copy the data
     * into a pinned buffer of its own, on the host's time, and the call
     * returns when all of it has gone.) Two buffers of one chunk each are
     * pinned once, at start-up, and serve every chunk of every run; pinning
     * takes time and RAM the OS can no longer page out (lab02 measures it),
     * so one pins staging buffers, not the dataset. cudaHostRegister on the
     * malloc'd buffers would do as well. */
    for (int b = 0; b < STAGES; b++)
        CUDA_CHECK(cudaMallocHost((void **)&p->stage[b], p->bytes));
}

static void free_staging(pipeline *p)
{
    /* SOLUTION: cudaMallocHost's memory goes back with cudaFreeHost; it was
     * never malloc's to free. */
    for (int b = 0; b < STAGES; b++)
        CUDA_CHECK(cudaFreeHost(p->stage[b]));
}

/* ---- given: the pipeline ---------------------------------------------------------------- */

/* The host's work on a chunk: here, making its data. */
static void produce_chunk(uint32_t *dst, size_t words, uint64_t seed)
{
    fill_random_u32(dst, words, seed);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Chunk i is produced into staging buffer i % 2, then copied to its place on
 * the GPU. Before the host reuses a buffer it waits for the copy that last
 * read from it (chunk i-2): with pinned buffers that copy may still run. */
static run_times run_pipeline(pipeline *p, uint64_t seed)
{
    run_times t = {0, 0, 0, 0};
    double call[MAX_CHUNKS];
    double start = host_time_ms();
    for (int i = 0; i < p->n; i++) {
        int b = i % STAGES;
        if (i >= STAGES)
            CUDA_CHECK(cudaEventSynchronize(p->copy[i - STAGES].stop));
        double t0 = host_time_ms();
        produce_chunk(p->stage[b], p->words, seed + (uint64_t)i);
        double t1 = host_time_ms();
        event_timer_start(&p->copy[i], p->stream);
        CUDA_CHECK(cudaMemcpyAsync(p->d_data + (size_t)i * p->words, p->stage[b], p->bytes,
                                   cudaMemcpyHostToDevice, p->stream));
        call[i] = host_time_ms() - t1;
        event_timer_stop(&p->copy[i], p->stream);
        t.host += t1 - t0;
    }
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    t.wall = host_time_ms() - start;
    for (int i = 0; i < p->n; i++)
        t.copies += event_timer_ms(&p->copy[i]);
    qsort(call, (size_t)p->n, sizeof call[0], by_value);
    t.call = call[p->n / 2];
    return t;
}

/* Every chunk on the GPU against the words the host produced for it. */
static void verify(const pipeline *p, uint64_t seed, uint32_t *back, uint32_t *want, tally *t)
{
    CUDA_CHECK(cudaMemcpy(back, p->d_data, p->bytes * p->n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < p->n; i++) {
        produce_chunk(want, p->words, seed + (uint64_t)i);
        verify_equal_u32(back + (size_t)i * p->words, want, p->words, t);
    }
}

static int is_pinned(const void *ptr)
{
    cudaPointerAttributes a;
    CUDA_CHECK(cudaPointerGetAttributes(&a, ptr));
    return a.type == cudaMemoryTypeHost; /* malloc'd memory: cudaMemoryTypeUnregistered */
}

int main(int argc, char **argv)
{
    lab_run lab;
    lab_begin(&lab, argc, argv, &ex);
    report *r = lab.r;

    pipeline p;
    memset(&p, 0, sizeof p);
    p.n = chunks;
    p.bytes = (size_t)chunk_mib << 20;
    p.words = p.bytes / sizeof(uint32_t);
    int runs = lab.opt.reps;
    report_param(r, "runs", runs, "count");
    p.stream = lab_stream(&lab, "copies", cudaStreamNonBlocking, 0);
    for (int i = 0; i < p.n; i++)
        p.copy[i] = lab_timer(&lab);
    p.d_data = (uint32_t *)lab_device(&lab, p.bytes * p.n);
    uint32_t *back = (uint32_t *)lab_pageable(&lab, p.bytes * p.n);
    uint32_t *want = (uint32_t *)lab_pageable(&lab, p.bytes);
    make_staging(&p);
    int pinned = is_pinned(p.stage[0]) && is_pinned(p.stage[1]);

    double *wall = (double *)lab_pageable(&lab, (size_t)runs * sizeof(double));
    double *host = (double *)lab_pageable(&lab, (size_t)runs * sizeof(double));
    double *copies = (double *)lab_pageable(&lab, (size_t)runs * sizeof(double));
    double *call = (double *)lab_pageable(&lab, (size_t)runs * sizeof(double));
    tally words = {0};
    timeline_span_begin("pipeline");
    for (int run = -1; run < runs; run++) { /* run -1 warms up: not counted */
        uint64_t seed = fresh_seed();
        CUDA_CHECK(cudaMemset(p.d_data, POISON, p.bytes * p.n));
        CUDA_CHECK(cudaDeviceSynchronize()); /* the legacy stream's memset, before the run */
        run_times t = run_pipeline(&p, seed);
        verify(&p, seed, back, want, &words);
        if (run < 0)
            continue;
        wall[run] = t.wall;
        host[run] = t.host;
        copies[run] = t.copies;
        call[run] = t.call;
    }
    timeline_span_end();
    stats sw = stats_of(wall, runs), sh = stats_of(host, runs), sc = stats_of(copies, runs);
    stats scall = stats_of(call, runs);

    report_section(r, "Produce a chunk, copy it to the GPU, produce the next meanwhile");
    report_value(r, "staging", "pinned", pinned, "bool");
    report_stats(r, "pipeline", "host_work", &sh, "ms");
    report_stats(r, "pipeline", "copies", &sc, "ms");
    report_stats(r, "pipeline", "copy_call_returns", &scall, "ms");
    report_text(r, "  (host_work and copies: totals per run; copy_call_returns: per chunk, "
                   "the host's time inside cudaMemcpyAsync)\n");
    /* The model: with two staging buffers, all but one chunk's copy runs
     * while the host produces the next chunk (or all but one chunk's work
     * while the host waits for a copy, when copies take longer). */
    double shorter = sh.median < sc.median ? sh.median : sc.median;
    double model = (double)(p.n - 1) / p.n;
    report_value(r, "pipeline", "serial", sh.median + sc.median, "ms");
    report_compare(r, "pipeline", "wall", "host + copies - (n-1)/n of the shorter",
                   sh.median + sc.median - model * shorter, &sw, "ms");
    double overlap = (sh.median + sc.median - sw.median) / shorter;
    report_value(r, "pipeline", "overlap", overlap, "fraction");

    report_tally(r, "chunks_verified", &words, "words on the GPU differ from what the host "
                 "produced, over every run, the warm-up's too");
    report_verdict(r, &OVERLAP, overlap,
                   "%.0f%% of the shorter part (%.2f ms of copies, %.2f ms of host work) ran "
                   "beside the other; wall %.2f ms (model %.0f%%: (n-1)/n); staging buffers %s",
                   overlap * 100, sc.median, sh.median, sw.median, model * 100,
                   pinned ? "pinned" : "pageable");

    free_staging(&p);
    return lab_end(&lab);
}
