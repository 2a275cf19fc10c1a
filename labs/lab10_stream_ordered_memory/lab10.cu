/* lab10: stream-ordered memory, and who may free a buffer.
 *
 * The question: a loop allocates a temporary, runs a kernel on it and frees
 * it, while another stream runs unrelated work. With cudaMalloc/cudaFree,
 * what does the loop cost, and what does it do to the other stream? With
 * cudaMallocAsync/cudaFreeAsync (a pool, ordered in a stream), what changes?
 * And when a buffer made in stream A is read in stream B, who may free it,
 * and when?
 *
 * Build and run:   make lab10 && ./lab10        (./lab10 --help for options)
 *                  ./lab10 --free unsafe        only the unsafe free: its wrong words fail (exit 1)
 *
 * What to look for: (1) an allocate/free pair from the pool costs the host
 * about a microsecond, cudaMalloc + cudaFree tens to hundreds; (2) cudaFree
 * waits for the whole device, so the loop stops running beside the other
 * stream; the stream-ordered loop keeps every kernel beside it; (3) the pool
 * gives its memory back at each synchronise unless its release threshold
 * says keep it; (4) cudaFreeAsync in A while B still reads the buffer: A's
 * next allocation gets the same address, overwrites it, and B reads wrong
 * words. Waiting on B's event before the free, or freeing in B, reads none.
 */
#include "lab10.h"

#include <stdint.h>
#include <stdio.h>

static int size_mib = 16;    /* part 4's shared buffer */
static int big_mib = 64;     /* parts 1 and 3: the large allocation */
static int iterations = 100; /* part 2: A's allocate/kernel/free loop */
static double a_ms = 0.1, b_ms = 2, delay_ms = 5;

static const option lab_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 1024, 4, "MIB", "part 4: the buffer A makes and B reads"},
    {"big-mib", OPT_INT, &big_mib, 2, 1024, NO_QUICK, "MIB", "parts 1 and 3: the large allocation"},
    {"iterations", OPT_INT, &iterations, 10, 1000, 20, "N",
     "part 2: A's allocate/kernel/free loop"},
    {"a-ms", OPT_DOUBLE, &a_ms, 0.05, 10, NO_QUICK, "MS", "part 2: each of A's kernels"},
    {"b-ms", OPT_DOUBLE, &b_ms, 0.2, 100, 0.5, "MS", "part 2: each of B's ten kernels"},
    {"delay-ms", OPT_DOUBLE, &delay_ms, 0.5, 100, 1, "MS", "part 4: B's work before it reads"},
    {"free", OPT_STRING, &free_ways, 0, 0, NO_QUICK, "WAYS", "part 4: all (default), safe (the "
     "two fixes only: what a sanitizer must find clean) or unsafe (the race alone, a failure)"},
    {NULL},
};

static const program_info program = {
    .name = "lab10",
    .title = "stream-ordered memory: what allocation costs, and who may free a buffer",
    .handout = "labs/lab10_stream_ordered_memory/README.md",
    .options = lab_options, .reps = 7, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
    .memory_option = "size-mib", .memory_per_unit = 2 << 20, /* a buffer and the next */
    .check_options = check_free_ways,
};

enum { B_KERNELS = 10, PAIRS = 50, WARMUP = 1 };

/* ---- part 1: what an allocate/free pair costs the host -------------------- */

typedef struct { bench *b; size_t bytes; int pooled; } pair_way;

static void one_pair(const pair_way *w)
{
    void *p;
    if (w->pooled) {
        CUDA_CHECK(cudaMallocAsync(&p, w->bytes, w->b->a));
        CUDA_CHECK(cudaFreeAsync(p, w->b->a));
    } else {
        CUDA_CHECK(cudaMalloc(&p, w->bytes));
        CUDA_CHECK(cudaFree(p));
    }
}

/* PAIRS pairs back to back, per pair in us. A pooled sample starts with one
 * pair untimed: a synchronise (the other way's cudaFree) may have handed the
 * pool's memory back, and the lesson is the cost of a pair the pool serves. */
static double pairs_us(void *ctx)
{
    pair_way *w = (pair_way *)ctx;
    if (w->pooled)
        one_pair(w);
    double t0 = host_time_ms();
    for (int i = 0; i < PAIRS; i++)
        one_pair(w);
    double us = (host_time_ms() - t0) * 1e3 / PAIRS;
    CUDA_CHECK(cudaStreamSynchronize(w->b->a));
    return us;
}

/* A pool serves a pair from memory it already holds: host bookkeeping, no
 * call into the OS. cudaMalloc of a big buffer maps memory and cudaFree
 * unmaps it (and waits for the device). Judged at the big size: H100,
 * 2026-11-23, 64 MiB 85-139 us against 0.6-1.2 (120-136x); 10x is an order
 * of magnitude, far inside. A small buffer is not judged: the driver carves
 * it from memory it keeps mapped, so an idle GPU's 1 MiB pair cost only
 * 2.4-4.4 us against 0.6-1.1 (4x); its cudaFree still waits for the device,
 * which is part 2's lesson. */
static const verdict POOL_CHEAP = {
    "pool_pair_cheaper", 10, INFINITY, "x",
    "a pooled allocate/free pair cost the host nearly as much as cudaMalloc + cudaFree: a "
    "busy CPU, or a tool intercepting every CUDA call"};

typedef struct { pair_way w[2][2]; paired p[2]; } part1; /* [size][pooled] */

static int attempt_pairs(void *ctx, double *spread)
{
    part1 *p = (part1 *)ctx;
    int n = p->w[0][0].b->reps, holds = 1;
    *spread = 0;
    for (int s = 0; s < 2; s++) {
        p->p[s] = measure_paired(pairs_us, &p->w[s][0], pairs_us, &p->w[s][1], WARMUP, n);
        *spread = fmax(*spread, stats_spread(&p->p[s].ratio));
        if (s == 1) /* the big buffer: see POOL_CHEAP */
            holds &= verdict_holds(&POOL_CHEAP, p->p[s].ratio.median);
    }
    return holds;
}

static void allocation_cost(lab_run *run, bench *b)
{
    part1 p;
    const size_t bytes[2] = {MIB, (size_t)big_mib * MIB};
    for (int s = 0; s < 2; s++)
        for (int pooled = 0; pooled < 2; pooled++)
            p.w[s][pooled] = (pair_way){b, bytes[s], pooled};
    report_section(run->r, "Part 1: what an allocate/free pair costs the host");
    lab_attempt(run, "cudaMalloc vs the pool", attempt_pairs, &p);
    for (int s = 0; s < 2; s++) {
        char name[64];
        snprintf(name, sizeof name, "%zu MiB", bytes[s] / MIB);
        b->pair_us[s] = p.p[s].a.median;
        report_stats(run->r, name, "cudaMalloc_cudaFree", &p.p[s].a, "us");
        report_stats(run->r, name, "cudaMallocAsync_cudaFreeAsync", &p.p[s].b, "us");
        report_value(run->r, name, "pool_speedup", p.p[s].ratio.median, "x");
    }
    report_text(run->r, "  1 MiB: the driver carves a small buffer from memory it keeps mapped:"
                " cudaMalloc + cudaFree %.1fx the pool's pair, not judged\n",
                p.p[0].ratio.median);
    report_verdict(run->r, &POOL_CHEAP, p.p[1].ratio.median, "%zu MiB: cudaMalloc + cudaFree "
                   "%.1f us, from the pool %.2f us: %.0fx", bytes[1] / MIB, p.p[1].a.median,
                   p.p[1].b.median, p.p[1].ratio.median);
}

/* ---- part 2: an allocation loop beside unrelated work --------------------- */

enum alloc_how { PREALLOCATED, CUDA_MALLOC, STREAM_ORDERED, LOOP_WAYS };
static const char *const loop_name[] = {"preallocated", "cudaMalloc/cudaFree", "stream-ordered"};
typedef struct { bench *b; enum alloc_how how; void *pre; } loop_way;

/* B's ten kernels first, then A's loop: a buffer, a kernel that writes its
 * record into it, a copy that takes the record out, the free. v[0]: the host
 * clock from an idle GPU to cudaDeviceSynchronize; v[1]: A's kernels whose
 * run (their own %globaltimer) overlapped B's. */
static void loop_run(void *ctx, double *v)
{
    loop_way *w = (loop_way *)ctx;
    bench *b = w->b;
    int n = iterations;
    uint64_t tag = b->tag += n + B_KERNELS;
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    for (int j = 0; j < B_KERNELS; j++) {
        spin_and_log<<<1, 1, 0, b->b>>>(ns_from_ms(b_ms), tag + n + j, b->d_rec + n + j);
        CHECK_LAUNCH();
    }
    for (int i = 0; i < n; i++) {
        void *buf = w->pre;
        if (w->how == CUDA_MALLOC)
            CUDA_CHECK(cudaMalloc(&buf, MIB));
        else if (w->how == STREAM_ORDERED)
            CUDA_CHECK(cudaMallocAsync(&buf, MIB, b->a));
        spin_and_log<<<1, 1, 0, b->a>>>(ns_from_ms(a_ms), tag + i, (launch_record *)buf);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(b->d_rec + i, buf, sizeof(launch_record),
                                   cudaMemcpyDeviceToDevice, b->a));
        if (w->how == CUDA_MALLOC)
            CUDA_CHECK(cudaFree(buf)); /* waits for the whole device: B's kernels too */
        else if (w->how == STREAM_ORDERED)
            CUDA_CHECK(cudaFreeAsync(buf, b->a)); /* after the copy, in A; the host goes on */
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    v[0] = host_time_ms() - t0;
    CUDA_CHECK(cudaMemcpy(b->h_rec, b->d_rec, (n + B_KERNELS) * sizeof(launch_record),
                          cudaMemcpyDeviceToHost));
    const launch_record *r = b->h_rec;
    b->logged.where = loop_name[w->how];
    verify_launch_records(r, n, tag, ns_from_ms(a_ms), 0, &b->logged);
    verify_launch_records(r + n, B_KERNELS, tag + n, ns_from_ms(b_ms), n, &b->logged);
    v[1] = launches_within(r, n, r[n].start_ns, r[n + B_KERNELS - 1].end_ns); /* B in order */
}

/* The models. Preallocated and stream-ordered: A's kernels run beside B's,
 * max(N a, 10 b). cudaMalloc/cudaFree: the first cudaFree waits for the
 * device, B's whole 10 b, and from then on each iteration runs alone and
 * pays part 1's 1 MiB pair: 10 b + N (a + pair), a floor: on an H100
 * (2026-11-23) each lone iteration also cost about 70 us more than a + pair
 * (37.4 ms against 30.2), which no verdict judges (the handout says why). */
static double loop_model(enum alloc_how how, const bench *b)
{
    double tb = B_KERNELS * b_ms, ta = iterations * a_ms;
    return how == CUDA_MALLOC ? tb + iterations * (a_ms + b->pair_us[0] / 1e3) : fmax(ta, tb);
}

/* H100, 2026-11-23 (100 x 0.1 ms beside 10 x 2 ms): cudaMalloc/cudaFree 1
 * of 100 kernels beside B; stream-ordered 100 of 100, 20.14 ms against
 * preallocated's 20.04 (1.005x). Fractions of N: 0.1 and 0.9 leave room for
 * a kernel or ten the clock's ticks misplace; the times 15%. */
static const verdict FREE_WAITS = {
    "cudafree_waits_for_device", -INFINITY, 0.1, "%",
    "A's kernels still ran beside B with cudaMalloc/cudaFree in the loop: did cudaFree return "
    "before B's kernels ended? (a driver that no longer synchronises in cudaFree)"};
static const verdict ASYNC_OVERLAPS = {
    "stream_ordered_keeps_overlap", 0.9, INFINITY, "%",
    "A's kernels did not run beside B with the stream-ordered loop: another process holding "
    "SMs, CUDA_DEVICE_MAX_CONNECTIONS=1, or a tool serialising kernels"};
static const verdict ASYNC_FREE = {
    "stream_ordered_costs_nothing", 0.85, 1.15, "x",
    "the stream-ordered loop took longer than the preallocated one: the pool mapped memory in "
    "the loop (its release threshold?), or the host issued slowly"};

typedef struct { loop_way w[LOOP_WAYS]; stats time[LOOP_WAYS], beside[LOOP_WAYS], vs_pre; } part2;

static int attempt_loop(void *ctx, double *spread)
{
    part2 *p = (part2 *)ctx;
    bench *b = p->w[0].b;
    int n = b->reps;
    measure_ways(loop_run, p->w, sizeof p->w[0], LOOP_WAYS, 2, WARMUP, n, b->samples);
    for (int i = 0; i < LOOP_WAYS; i++)
        p->time[i] = stats_of(b->samples + i * n, n),
        p->beside[i] = stats_of(b->samples + (LOOP_WAYS + i) * n, n);
    p->vs_pre = stats_of_ratios(b->samples + STREAM_ORDERED * n, b->samples + PREALLOCATED * n, n);
    *spread = stats_spread(&p->vs_pre);
    return verdict_holds(&FREE_WAITS, p->beside[CUDA_MALLOC].median / iterations) &&
           verdict_holds(&ASYNC_OVERLAPS, p->beside[STREAM_ORDERED].median / iterations) &&
           verdict_holds(&ASYNC_FREE, p->vs_pre.median);
}

static void loop_beside_work(lab_run *run, bench *b)
{
    part2 p;
    void *pre = lab_device(run, MIB);
    for (int i = 0; i < LOOP_WAYS; i++)
        p.w[i] = (loop_way){b, (enum alloc_how)i, pre};
    report_section(run->r, "Part 2: A allocates, runs a kernel and frees N times, beside B");
    report_param(run->r, "iterations", iterations, "");
    report_param(run->r, "a_ms", a_ms, "ms");
    report_param(run->r, "b_ms", b_ms, "ms");
    lab_attempt(run, "allocation loops beside B", attempt_loop, &p);
    for (int i = 0; i < LOOP_WAYS; i++) {
        report_compare(run->r, loop_name[i], "time", i == CUDA_MALLOC ? "10 b + N (a + pair)" :
                       "max(N a, 10 b)", loop_model((enum alloc_how)i, b), &p.time[i], "ms");
        report_compare(run->r, loop_name[i], "a_kernels_beside_b", i == CUDA_MALLOC ? "1" : "N",
                       i == CUDA_MALLOC ? 1 : iterations, &p.beside[i], "count");
    }
    report_verdict(run->r, &FREE_WAITS, p.beside[CUDA_MALLOC].median / iterations, "cudaMalloc/"
                   "cudaFree: %.0f of %d of A's kernels ran beside B", p.beside[CUDA_MALLOC].median,
                   iterations);
    report_verdict(run->r, &ASYNC_OVERLAPS, p.beside[STREAM_ORDERED].median / iterations,
                   "stream-ordered: %.0f of %d ran beside B", p.beside[STREAM_ORDERED].median,
                   iterations);
    report_verdict(run->r, &ASYNC_FREE, p.vs_pre.median, "stream-ordered %.2f ms, preallocated "
                   "%.2f ms: %.3fx round by round", p.time[STREAM_ORDERED].median,
                   p.time[PREALLOCATED].median, p.vs_pre.median);
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b;
    bench_open(&run, &b, (size_t)size_mib * MIB / sizeof(uint32_t), ns_from_ms(delay_ms),
               iterations + B_KERNELS, 2 * LOOP_WAYS * run.opt.reps);
    b.big_mib = big_mib;
    allocation_cost(&run, &b);
    loop_beside_work(&run, &b);
    release_threshold(&run, &b);
    who_frees(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "loop_kernels_logged", &b.logged, "part 2's kernels that did not log "
                 "their run, for their time, through the allocated buffer");
    return lab_end(&run);
}
