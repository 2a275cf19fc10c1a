/* lab10, part 3: the pool's release threshold.
 *
 * A pool keeps what is freed into it for the next allocation, but at each
 * synchronise it hands back to the driver whatever it holds above its
 * release threshold: 0 by default, so a loop that synchronises every
 * iteration maps and unmaps its buffer every time. An unlimited threshold
 * keeps it mapped (fast, but held from every other process until
 * cudaMemPoolTrimTo). */
#include "lab10.h"

enum { KEEP_ITERS = 20, WARMUP = 1 };

typedef struct { bench *b; uint64_t threshold; double held_mib; } keep_way;

/* KEEP_ITERS x {allocate --big-mib, a kernel writes its first 4 KiB, free,
 * synchronise}, per iteration in us; then what the pool still reserves. */
static double keep_us(void *ctx)
{
    keep_way *w = (keep_way *)ctx;
    bench *b = w->b;
    uint64_t reserved;
    void *p;
    CUDA_CHECK(cudaMemPoolSetAttribute(b->pool, cudaMemPoolAttrReleaseThreshold, &w->threshold));
    double t0 = 0;
    for (int i = -1; i < KEEP_ITERS; i++) { /* i = -1: untimed, the pool as this way leaves it */
        t0 = i == 0 ? host_time_ms() : t0;
        CUDA_CHECK(cudaMallocAsync(&p, (size_t)b->big_mib * MIB, b->a));
        seeded_fill_launch((uint32_t *)p, 1024, b->tag, b->a);
        CUDA_CHECK(cudaFreeAsync(p, b->a));
        CUDA_CHECK(cudaStreamSynchronize(b->a)); /* where the pool hands back what it keeps */
    }
    double us = (host_time_ms() - t0) * 1e3 / KEEP_ITERS;
    CUDA_CHECK(cudaMemPoolGetAttribute(b->pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    w->held_mib = (double)reserved / MIB;
    return us;
}

/* Threshold 0 hands the memory back at every synchronise, so each
 * iteration maps it again: the model adds part 1's cudaMalloc+cudaFree at
 * this size to the unlimited pool's iteration, a floor: the pool's unmap
 * and map cost more than cudaMalloc's (H100, 2026-11-23: 13.0 + 85.5 us
 * predicted, 186.4 measured, 14x the unlimited pool). At least 2x. What is
 * held is the pool's own count: all of the buffer (its granules) or none. */
static const verdict ZERO_REMAPS = {
    "zero_threshold_remaps", 2, INFINITY, "x",
    "with release threshold 0 an iteration cost little more than with an unlimited one: did "
    "the pool keep its memory across cudaStreamSynchronize?"};
static const verdict THRESHOLD_HOLDS = {
    "threshold_decides_what_is_held", 1, INFINITY, "x",
    "after the synchronise the unlimited pool did not hold the buffer while threshold 0 held "
    "nothing: an allocation of the pool still live, or a driver that trims on its own"};
/* What the unlimited pool held less what threshold 0 held, in buffers (model: 1 - 0) */
static double held_difference(const keep_way *w)
{
    return (w[1].held_mib - w[0].held_mib) / w[0].b->big_mib;
}

typedef struct { keep_way w[2]; paired p; } part3;

static int attempt_keep(void *ctx, double *spread)
{
    part3 *p = (part3 *)ctx;
    p->p = measure_paired(keep_us, &p->w[0], keep_us, &p->w[1], WARMUP, p->w[0].b->reps);
    *spread = stats_spread(&p->p.ratio);
    return verdict_holds(&ZERO_REMAPS, p->p.ratio.median) &&
           verdict_holds(&THRESHOLD_HOLDS, held_difference(p->w));
}

void release_threshold(lab_run *run, bench *b)
{
    part3 p = {{{b, 0, 0}, {b, UINT64_MAX, 0}}};
    uint64_t zero = 0, reserved;
    report_section(run->r, "Part 3: the pool's release threshold, a synchronise every iteration");
    report_param(run->r, "big_mib", b->big_mib, "MiB");
    lab_attempt(run, "release threshold 0 vs unlimited", attempt_keep, &p);
    report_compare(run->r, "threshold 0", "iteration", "unlimited + part 1's pair",
                   p.p.b.median + b->pair_us[1], &p.p.a, "us");
    report_stats(run->r, "threshold unlimited", "iteration", &p.p.b, "us");
    report_value(run->r, "threshold 0", "held_after_sync", p.w[0].held_mib, "MiB");
    report_value(run->r, "threshold unlimited", "held_after_sync", p.w[1].held_mib, "MiB");
    CUDA_CHECK(cudaMemPoolTrimTo(b->pool, 0)); /* what another process would need done */
    CUDA_CHECK(cudaMemPoolGetAttribute(b->pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    report_value(run->r, "after cudaMemPoolTrimTo(0)", "held", (double)reserved / MIB, "MiB");
    CUDA_CHECK(cudaMemPoolSetAttribute(b->pool, cudaMemPoolAttrReleaseThreshold, &zero));
    report_verdict(run->r, &ZERO_REMAPS, p.p.ratio.median, "threshold 0 %.1f us per iteration, "
                   "unlimited %.1f us: %.1fx", p.p.a.median, p.p.b.median, p.p.ratio.median);
    report_verdict(run->r, &THRESHOLD_HOLDS, held_difference(p.w), "held after the synchronise: "
                   "%.0f MiB unlimited, %.0f MiB with threshold 0, of a %d MiB buffer",
                   p.w[1].held_mib, p.w[0].held_mib, b->big_mib);
}
