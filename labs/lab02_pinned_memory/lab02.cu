/* lab02: pinned vs pageable memory.
 *
 * The question: a copy between the host and the GPU moves the same bytes over
 * the same link whatever memory holds them on the host. Why is a copy from
 * malloc'd (pageable) memory several times slower than one from pinned
 * memory, why does cudaMemcpyAsync from pageable memory return only when the
 * copy is over, and why not simply pin everything?
 *
 * Build and run:   make lab02 && ./lab02        (./lab02 --help for options)
 *                  ./lab02 --csv > bw.csv       bandwidth by size, for a plot
 *
 * What to look for: pinned and registered memory climb to the link's limit,
 * pageable memory stops near a host memcpy's speed (the driver stages it);
 * cudaMemcpyAsync returns after a pageable copy, at once for a pinned one.
 * Each verdict that compares two kinds times them in turn and reads the pairs' ratios.
 */
#include "streamlab.h"
#include "copies.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int max_mib = 256;  /* the sweep's largest copy: per-copy costs vanish */
static int async_mib = 64; /* long enough to see when the call returns */

static const option lab_options[] = {
    {"max-mib", OPT_INT, &max_mib, 1, 1024, 64, "MIB",
     "largest copy; the sweep doubles from 4 KiB up to it (by x4 under --quick)"},
    {"async-mib", OPT_INT, &async_mib, 1, 1024, 16, "MIB",
     "copy whose return time is measured; at most --max-mib (the copy is cut to it)"},
    {NULL},
};

static const program_info program = {
    .name = "lab02",
    .title = "pinned vs pageable memory: bandwidth by size, the async trap, the cost of pinning",
    .handout = "labs/lab02_pinned_memory/README.md", .options = lab_options, .reps = 20,
    .quick_reps = 5, .needs = NEEDS_HOST_REGISTER, .memory_option = "max-mib",
    .memory_per_unit = 1 << 20,
};

enum { SMALLEST = 4096, POISON = 0xff, WARMUP = 2 };
enum kind { PAGEABLE, REGISTERED, PINNED, KINDS }; enum dir { H2D, D2H, DIRS };
static const char *const kind_name[KINDS] = {"pageable", "registered", "pinned"};
enum cost { TOUCH, MALLOC_HOST, FREE_HOST, REGISTER, UNREGISTER, COSTS }; /* of two buffers */
static const char *const cost_name[COSTS] = {"malloc + first touch", "cudaMallocHost",
    "cudaFreeHost", "cudaHostRegister", "cudaHostUnregister"};
static const char *const variant[KINDS][DIRS] = {{"pageable H2D", "pageable D2H"},
    {"registered H2D", "registered D2H"}, {"pinned H2D", "pinned D2H"}};

typedef struct {
    size_t largest;
    cudaStream_t stream;               /* non-blocking: only this lab's copies in it */
    event_timer timer;
    uint32_t *d_buf;                   /* the device end of every copy */
    uint32_t *host[KINDS][DIRS];       /* the host end: H2D's source, D2H's destination */
    double cost_ms[COSTS], raw;        /* raw: the link's raw rate, GB/s (0: unknown) */
    stats link[DIRS], host_copy[DIRS]; /* the model's limits, L and M */
    copy_sweep sw;                     /* the sweep's sizes, copies per sample, samples */
    stats bw[KINDS][DIRS][COPY_SWEEP_MAX];
} bench;

/* A copy of `bytes` between kind k's host buffer and the device, direction d
 * (kernels/copies.h times it). */
static copy_op copy_of(const bench *b, int k, int d, size_t bytes)
{
    copy_op h2d = {b->d_buf, b->host[k][H2D], bytes, cudaMemcpyHostToDevice, b->stream};
    copy_op d2h = {b->host[k][D2H], b->d_buf, bytes, cudaMemcpyDeviceToHost, b->stream};
    return d == H2D ? h2d : d2h;
}

/* L, the link, as lab00 measures it, and M, the host copy staging adds, on
 * the buffers the copies use (which NUMA node holds the pages sets its speed). */
static void measure_limits(report *r, bench *b, int reps)
{
    static const char *const link[DIRS] = {"link H2D", "link D2H"},
                             *const host_memcpy[DIRS] = {"host memcpy H2D", "host memcpy D2H"};
    report_section(r, "1. The model's two limits, at the largest size");
    timeline_span_begin("limits");
    for (int d = 0; d < DIRS; d++) {
        b->link[d] = copy_gbps(copy_of(b, PINNED, d, b->largest), 1, WARMUP, reps);
        report_stats(r, link[d], "bandwidth", &b->link[d], "GB/s");
        copy_op staging = {b->host[d == H2D ? PINNED : PAGEABLE][D2H],
                           b->host[d == H2D ? PAGEABLE : PINNED][H2D], b->largest};
        b->host_copy[d] = copy_host_gbps(staging, 1, reps < 5 ? reps : 5);
        report_stats(r, host_memcpy[d], "bandwidth", &b->host_copy[d], "GB/s");
    }
    timeline_span_end();
}

/* At most 19 sizes (--max-mib: 1 GiB at most), ending where the limits were measured;
 * about 64 MiB of copies a size (8 under --quick). */
static void plan_sweep(report *r, bench *b, int quick, int reps)
{
    copy_sweep_plan(&b->sw, SMALLEST, b->largest, quick ? 4 : 2, (quick ? 8u : 64u) << 20, reps);
    report_section(r, "2. Bandwidth by copy size: pageable, registered, pinned");
    report_param(r, "smallest_copy", SMALLEST, "bytes");
    report_param(r, "largest_copy", (double)b->largest, "bytes");
}

/* One kind of host memory, up and down at every size; the device buffer and
 * then the host end are poisoned first, so the check sees this size's bytes. */
static void sweep_kind(report *r, bench *b, enum kind k)
{
    tally t = {0};
    char name[64];
    timeline_span_begin(kind_name[k]);
    copy_sweep_round_trips(&b->sw, copy_of(b, k, H2D, 0), copy_of(b, k, D2H, 0), WARMUP,
                           b->bw[k][H2D], b->bw[k][D2H], &t);
    timeline_span_end();
    snprintf(name, sizeof name, "%s_bytes_intact", kind_name[k]);
    report_tally(r, name, &t, "words differ after H2D then D2H, at every size");
}

/* The pageable buffers pinned in place (cudaHostRegister), or unpinned: timed. */
static void pin_pageable(bench *b, int pin)
{
    double t0 = host_time_ms();
    for (int d = 0; d < DIRS; d++)
        CUDA_CHECK(pin ? cudaHostRegister(b->host[PAGEABLE][d], b->largest, cudaHostRegisterDefault)
                       : cudaHostUnregister(b->host[PAGEABLE][d]));
    b->cost_ms[pin ? REGISTER : UNREGISTER] = host_time_ms() - t0;
}

static const char sweep_head[] =
    "\n  GB/s, median       ----------- H2D ------------   ----------- D2H ------------\n"
    "     size  samples  pageable registered   pinned   pageable registered   pinned\n";

/* A table in the text report, else rows "pinned H2D,bandwidth@BYTES" (and
 * _p5, _p95) for plots: the report does not say its format, the options do. */
static void report_sweep(report *r, const bench *b, const common_options *opt)
{
    char n[24];
    for (int k = 0; k < KINDS && (opt->csv || opt->json); k++)
        for (int d = 0; d < DIRS; d++)
            copy_sweep_report(r, &b->sw, variant[k][d], b->bw[k][d]);
    report_text(r, "%s", sweep_head);
    for (int i = 0; i < b->sw.n; i++) {
        snprintf(n, sizeof n, "%dx%d", b->sw.samples[i], b->sw.batch[i]);
        report_text(r, "  %7s %8s", b->sw.label[i], n);
        for (int d = 0; d < DIRS; d++)
            report_text(r, "   %8.2f %10.2f %8.2f", b->bw[PAGEABLE][d][i].median,
                        b->bw[REGISTERED][d][i].median, b->bw[PINNED][d][i].median);
        report_text(r, "\n");
    }
}

/* The sweep's medians at the largest size beside the model: pinned and
 * registered reach the link, pageable at most the slower of the host copy and the link. */
static void predict(report *r, const bench *b)
{
    report_section(r, "3. At the largest size: prediction beside measurement");
    for (int d = 0; d < DIRS; d++)
        for (int k = 0; k < KINDS; k++)
            report_compare(r, variant[k][d], "bandwidth", k == PAGEABLE ? "min(host memcpy, link)"
                           : "link", k == PAGEABLE ? fmin(b->host_copy[d].median, b->link[d].median)
                           : b->link[d].median, &b->bw[k][d][b->sw.n - 1], "GB/s");
    if (!b->raw)
        report_text(r, "  no pinned_reaches_link verdicts: NVML did not give the link's PCIe "
                       "generation and width, so its raw rate is unknown\n");
}

/* Each verdict times kind k's copies of the largest size and pinned ones in turn, and reads
 * the median pair's ratio, k's time over pinned's. Registered pages are locked as
 * cudaMallocHost's are and cross the same link: the model says 1x, and pageable copies take
 * 3x or more (pinned_beats_pageable). The lesson is which of the two registered memory
 * behaves like, so the limit lies between: 1.5x, under halfway on a log scale (README). */
static const char SLOWER[] = "registered copies ran much slower than the pinned ones beside "
    "them: their pages may lie on another NUMA node, or this IOMMU maps scattered pages slowly";
static const verdict MATCHES[DIRS] = {
    {"registered_matches_pinned_H2D", -INFINITY, 1.5, "x", SLOWER},
    {"registered_matches_pinned_D2H", -INFINITY, 1.5, "x", SLOWER}};
/* Judged on uploads: CUDA documents that the host stages a pageable H2D copy
 * through pinned memory (the model: L/M, 5x on an H100), not how it downloads.
 * --quick's largest copy is 64 MiB, not 16, for this verdict (README, verdicts). */
static const verdict BEATS_PAGEABLE = {"pinned_beats_pageable_H2D", 3, INFINITY, "x",
    "pageable uploads came close to pinned ones: this host copies memory fast compared with "
    "its link (see the host memcpy lines), or the copies were small (--max-mib)"};
/* PCIe's packets (README): copies reach 85-90% of the link's raw rate (an H100, gen 5
 * x16: 55 of 63 GB/s). 70% lets a host lose more; a link trained at half or less fails. */
static const char SHORT[] = "pinned copies reached less of the link's raw rate than PCIe's "
    "packets explain: the link trained below its maximum (nvidia-smi -q), another process was "
    "using it, or the copies were small (--max-mib)";
static const verdict REACHES_LINK[DIRS] = {{"pinned_reaches_link_H2D", 0.7, INFINITY, "%", SHORT},
                                           {"pinned_reaches_link_D2H", 0.7, INFINITY, "%", SHORT}};

/* Kind k against pinned in each direction v[] judges (H2D, and D2H where given): p[d].ratio
 * is k's time over pinned's; with link, pinned's gbps[d] is judged on the raw rate too. Pinned
 * under REACHES_LINK where sections 1 or 2 (the same copies) met it: another process's copies. */
typedef struct {
    bench *b; enum kind k; const verdict *v[DIRS]; int link; double gbps[DIRS]; paired p[DIRS];
} versus;

static int attempt_versus(void *ctx, double *spread)
{
    versus *x = (versus *)ctx;
    bench *b = x->b;
    int holds = 1;
    for (int d = 0; d < DIRS && x->v[d]; d++) {
        x->p[d] = copy_paired(copy_of(b, x->k, d, b->largest), copy_of(b, PINNED, d, b->largest),
                              b->timer, 1, b->sw.samples[b->sw.n - 1]);
        x->gbps[d] = (double)b->largest / 1e6 / x->p[d].b.median;
        int reaches = !b->raw || verdict_holds(&REACHES_LINK[d], x->gbps[d] / b->raw);
        double before = fmax(b->link[d].median, b->bw[PINNED][d][b->sw.n - 1].median);
        if (!reaches && verdict_holds(&REACHES_LINK[d], before / b->raw))
            lab_attempt_saw("%s copies ran at %.1f GB/s, at %.1f earlier in this run: "
                            "another process's copies came and went", variant[PINNED][d],
                            x->gbps[d], before);
        holds &= verdict_holds(x->v[d], x->p[d].ratio.median) && (reaches || !x->link);
        *spread = fmax(*spread, fmax(stats_spread(&x->p[d].ratio), stats_spread(&x->p[d].b)));
    }
    return holds;
}

/* Rows "pinned H2D,vs_pageable": pinned's speed over k's, pair by pair, each
 * direction judged (pageable: uploads only, as BEATS_PAGEABLE says why). */
static void judge_versus(lab_run *run, bench *b, enum kind k, const verdict *h2d,
                         const verdict *d2h, double raw)
{
    versus x = {b, k, {h2d, d2h}, raw > 0};
    char what[32], metric[24], *at = b->sw.label[b->sw.n - 1];
    snprintf(what, sizeof what, "pinned vs %s", kind_name[k]);
    snprintf(metric, sizeof metric, "vs_%s", kind_name[k]);
    lab_attempt(run, what, attempt_versus, &x);
    for (int d = 0; d < DIRS && x.v[d]; d++) {
        report_stats(run->r, variant[PINNED][d], metric, &x.p[d].ratio, "x");
        report_verdict(run->r, x.v[d], x.p[d].ratio.median, "at %s pinned copies ran %.2fx as "
                       "fast as %s ones, pair by pair (median of %d)", at, x.p[d].ratio.median,
                       kind_name[k], x.p[d].ratio.n);
        if (x.link)
            report_verdict(run->r, &REACHES_LINK[d], x.gbps[d] / raw, "at %s pinned %.1f GB/s, "
                           "%.0f%% of PCIe gen %d x%d's raw %.1f GB/s", at, x.gbps[d],
                           x.gbps[d] / raw * 100, run->dev.pcie_gen, run->dev.pcie_width, raw);
    }
}

/* The trap's four copies (pageable H2D, D2H, pinned H2D, D2H), each on an idle stream:
 * t[3i..3i+2], when copy i's call returned (host clock), how long it took (events), and
 * the one over the other, sample by sample (copy_returns_ms); back(), its median. */
typedef struct { copy_op c[4]; copy_returns returns; int reps; stats t[12]; } trap;
static double back(const trap *x, int i) { return x->t[3 * i + 2].median; }

static const verdict PAGEABLE_WAITS = {"pageable_call_waits_for_copy", 0.80, INFINITY, "%",
    "a pageable cudaMemcpyAsync returned before its copy was done: this driver or system stages "
    "pageable memory differently (small copies may be buffered: try a larger --async-mib)"};
static const verdict PINNED_AT_ONCE = {"pinned_call_returns_at_once", -INFINITY, 0.10, "%",
    "a pinned cudaMemcpyAsync took long to return: the host thread was descheduled (a busy "
    "machine), or the copy is too short to compare (try a larger --async-mib)"};

/* Each verdict reads the worse direction. The spread is pageable's: a pinned
 * call's few microseconds spread wide even on a quiet machine. */
static int attempt_trap(void *ctx, double *spread)
{
    trap *x = (trap *)ctx;
    timeline_span_begin("async");
    measure_several(copy_returns_ms, &x->returns, 12, 1, x->reps, x->t);
    timeline_span_end();
    *spread = fmax(stats_spread(&x->t[2]), stats_spread(&x->t[5]));
    return verdict_holds(&PAGEABLE_WAITS, fmin(back(x, 0), back(x, 1))) &&
           verdict_holds(&PINNED_AT_ONCE, fmax(back(x, 2), back(x, 3)));
}

static void async_trap(lab_run *run, bench *b, size_t bytes, int reps)
{
    trap x = {.returns = {x.c, 4, b->timer}, .reps = reps};
    for (int i = 0; i < 4; i++)
        x.c[i] = copy_of(b, i < 2 ? PAGEABLE : PINNED, i % 2, bytes);
    report_section(run->r, "4. The async trap: when does cudaMemcpyAsync return?");
    report_param(run->r, "async_copy_size", (double)(bytes >> 20), "MiB");
    lab_attempt(run, "async trap", attempt_trap, &x);
    for (int i = 0; i < 4; i++) {
        const char *v = variant[i < 2 ? PAGEABLE : PINNED][i % 2];
        report_stats(run->r, v, "call_returns", &x.t[3 * i], "ms");
        report_stats(run->r, v, "copy_takes", &x.t[3 * i + 1], "ms");
    }
    report_verdict(run->r, &PAGEABLE_WAITS, fmin(back(&x, 0), back(&x, 1)), "%zu MiB pageable: "
                   "the call returned after %.0f%% (H2D) and %.0f%% (D2H) of the copy's time",
                   bytes >> 20, back(&x, 0) * 100, back(&x, 1) * 100);
    report_verdict(run->r, &PINNED_AT_ONCE, fmax(back(&x, 2), back(&x, 3)), "%zu MiB pinned: "
                   "the call returned after %.1f%% (H2D) and %.1f%% (D2H) of the copy's time",
                   bytes >> 20, back(&x, 2) * 100, back(&x, 3) * 100);
}

/* Frees the pinned buffers (timed: a cost too), then every cost per GiB, and
 * when registering pays: once the faster uploads have saved what it cost. */
static void pinning_cost(report *r, bench *b)
{
    double t0 = host_time_ms(), gib = 2.0 * b->largest / (1u << 30);
    CUDA_CHECK(cudaFreeHost(b->host[PINNED][D2H]));
    CUDA_CHECK(cudaFreeHost(b->host[PINNED][H2D]));
    b->cost_ms[FREE_HOST] = host_time_ms() - t0;
    report_section(r, "5. The cost of pinning");
    for (int c = 0; c < COSTS; c++)
        report_value(r, cost_name[c], "ms_per_GiB", b->cost_ms[c] / gib, "ms/GiB");
    double reg = b->cost_ms[REGISTER] / gib, ms_per_gib_at_1gbs = (1u << 30) / 1e6;
    double saved = ms_per_gib_at_1gbs * (1 / b->bw[PAGEABLE][H2D][b->sw.n - 1].median -
                                         1 / b->bw[PINNED][H2D][b->sw.n - 1].median);
    report_value(r, "cudaHostRegister", "break_even_copies", saved > 0 ? reg / saved : INFINITY,
                 "copies");
    report_text(r, "  registering a GiB costs %.0f ms (100 GiB: %.0f s) and saves %.0f ms per "
                   "upload of it: pin staging buffers, not datasets\n", reg, reg * 100 / 1e3, saved);
}

/* The run owns all but the pinned buffers, whose freeing is timed above. */
static bench bench_open(lab_run *run)
{
    bench b = {.largest = (size_t)max_mib << 20};
    b.raw = pcie_raw_gbps(run->dev.pcie_gen, run->dev.pcie_width);
    b.stream = lab_stream(run, "copies", cudaStreamNonBlocking, 0);
    b.timer = lab_timer(run);
    b.d_buf = (uint32_t *)lab_device(run, b.largest);
    double t0 = host_time_ms();
    for (int d = 0; d < DIRS; d++) {
        b.host[PAGEABLE][d] = (uint32_t *)lab_pageable(run, b.largest);
        memset(b.host[PAGEABLE][d], POISON, b.largest); /* first touch: the OS maps the pages */
    }
    b.cost_ms[TOUCH] = host_time_ms() - t0;
    t0 = host_time_ms();
    for (int d = 0; d < DIRS; d++)
        CUDA_CHECK(cudaMallocHost((void **)&b.host[PINNED][d], b.largest));
    b.cost_ms[MALLOC_HOST] = host_time_ms() - t0;
    memcpy(b.host[REGISTERED], b.host[PAGEABLE], sizeof b.host[PAGEABLE]); /* pinned later */
    fill_random_u32(b.host[PAGEABLE][H2D], b.largest / 4, fresh_seed());
    fill_random_u32(b.host[PINNED][H2D], b.largest / 4, fresh_seed());
    memset(b.host[PINNED][D2H], POISON, b.largest);
    return b;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b = bench_open(&run);
    measure_limits(run.r, &b, run.opt.reps);
    plan_sweep(run.r, &b, run.opt.quick, run.opt.reps);
    sweep_kind(run.r, &b, PAGEABLE);
    pin_pageable(&b, 1); /* the same malloc'd buffers, pinned in place */
    sweep_kind(run.r, &b, REGISTERED);
    sweep_kind(run.r, &b, PINNED);
    report_sweep(run.r, &b, &run.opt);
    predict(run.r, &b);
    judge_versus(&run, &b, REGISTERED, &MATCHES[H2D], &MATCHES[D2H], b.raw); /* registered */
    pin_pageable(&b, 0); /* unpinned: pageable again */
    judge_versus(&run, &b, PAGEABLE, &BEATS_PAGEABLE, NULL, 0);
    async_trap(&run, &b, (size_t)(async_mib < max_mib ? async_mib : max_mib) << 20,
               run.opt.reps < 5 ? run.opt.reps : 5);
    pinning_cost(run.r, &b);
    return lab_end(&run);
}
