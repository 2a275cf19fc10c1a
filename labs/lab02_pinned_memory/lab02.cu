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
 * What to look for: the table of bandwidth by copy size. Pinned memory
 * (cudaMallocHost) and the same malloc'd buffers once registered
 * (cudaHostRegister) climb to the link's practical limit, measured here as
 * lab00 measures it; pageable memory stops near the speed of a host memcpy,
 * because the driver first copies it into a pinned staging buffer of its own.
 * Then the async trap: cudaMemcpyAsync from pageable memory returns after the
 * copy, from pinned memory in microseconds. Last, what pinning costs per GiB.
 */
#include "streamlab.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int max_mib = 256;  /* the sweep's largest copy: per-copy costs vanish */
static int async_mib = 64; /* long enough to see when the call returns */

static const option lab_options[] = {
    {"max-mib", OPT_INT, &max_mib, 1, 1024, "MIB",
     "largest copy; the sweep doubles from 4 KiB up to it (--quick: 16 unless given, by x4)"},
    {"async-mib", OPT_INT, &async_mib, 1, 1024, "MIB",
     "copy whose return time is measured; at most --max-mib (--quick: 16 unless given)"},
};
static const program_info lab = {
    "lab02", "pinned vs pageable memory: bandwidth by size, the async trap, the cost of pinning",
    lab_options, sizeof lab_options / sizeof lab_options[0], 20,
};

enum { SMALLEST = 4096, MAX_SIZES = 24, POISON = 0xff, MIN_SAMPLES = 7, WARMUP = 2 };
enum kind { PAGEABLE, REGISTERED, PINNED, KINDS };
enum dir { H2D, D2H, DIRS };
static const char *const kind_name[KINDS] = {"pageable", "registered", "pinned"};
static const char *const dir_name[DIRS] = {"H2D", "D2H"};
static const enum cudaMemcpyKind dir_kind[DIRS] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost};

/* The verdicts' thresholds. */
static const double RATIO_MIN = 3.0;      /* pinned / pageable at the largest size */
static const double LINK_MIN = 0.80;      /* pinned / the link's practical limit */
static const double PAGEABLE_BACK = 0.80; /* pageable call returns after >= 80% of the copy */
static const double PINNED_BACK = 0.10;   /* pinned call returns within 10% of the copy */

typedef struct {
    size_t largest;
    cudaStream_t stream;             /* non-blocking: only this lab's copies in it */
    event_timer timer;
    uint32_t *d_buf;                 /* the device end of every copy */
    uint32_t *page_src, *page_dst;   /* malloc: pageable, registered for a while */
    uint32_t *pin_src, *pin_dst;     /* cudaMallocHost */
} bench;

typedef struct {
    int n;
    size_t bytes[MAX_SIZES];
    int batch[MAX_SIZES];            /* copies per sample: small ones in bulk */
    int samples[MAX_SIZES];
    stats bw[KINDS][DIRS][MAX_SIZES];
} sweep;

typedef struct {                     /* ms, for both buffers of `largest` bytes */
    double touch, malloc_host, reg, unreg, free_host;
} pin_costs;

static const char *size_label(char *buf, size_t size, size_t bytes)
{
    if (bytes >= (1u << 20))
        snprintf(buf, size, "%zu MiB", bytes >> 20);
    else
        snprintf(buf, size, "%zu KiB", bytes >> 10);
    return buf;
}

/* ---- one timer for every kind: events around `batch` copies, in their stream ---- */

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    int batch;
    enum cudaMemcpyKind dir;
    bench *b;
} copy_test;

static double time_copies(void *ctx)
{
    copy_test *c = (copy_test *)ctx;
    event_timer_start(&c->b->timer, c->b->stream);
    for (int i = 0; i < c->batch; i++)
        CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->dir, c->b->stream));
    event_timer_stop(&c->b->timer, c->b->stream);
    return event_timer_ms(&c->b->timer);
}

static stats copy_bandwidth(bench *b, void *dst, const void *src, size_t bytes, int batch,
                            enum dir d, int warmup, int samples)
{
    copy_test c = {dst, src, bytes, batch, dir_kind[d], b};
    stats t = measure(time_copies, &c, warmup, samples);
    return stats_over((double)bytes * batch / 1e6, &t); /* GB/s */
}

/* ---- 1. the two limits the model uses ------------------------------------------ */

/* The driver's half of a pageable copy, done by hand: H2D copies the
 * pageable source into pinned staging memory, D2H copies staging memory out
 * to the pageable destination. Each direction is measured on the buffers its
 * copies use: where the OS placed their pages (which NUMA node) sets the speed. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} host_copy_test;

static double time_host_memcpy(void *ctx)
{
    host_copy_test *c = (host_copy_test *)ctx;
    double t0 = host_time_ms();
    memcpy(c->dst, c->src, c->bytes);
    return host_time_ms() - t0;
}

static void measure_limits(report *r, bench *b, const device_info *dev, int reps,
                           stats link[DIRS], stats host_copy[DIRS])
{
    report_section(r, "1. The model's two limits, at the largest size");
    /* lab00's method: one pinned copy per sample, events in a non-blocking stream. */
    link[H2D] = copy_bandwidth(b, b->d_buf, b->pin_src, b->largest, 1, H2D, WARMUP, reps);
    link[D2H] = copy_bandwidth(b, b->pin_dst, b->d_buf, b->largest, 1, D2H, WARMUP, reps);
    report_stats(r, "link H2D", "bandwidth", &link[H2D], "GB/s");
    report_stats(r, "link D2H", "bandwidth", &link[D2H], "GB/s");
    double raw = pcie_raw_gbps(dev->pcie_gen, dev->pcie_width);
    if (raw > 0)
        report_text(r, "  the link's practical limit: one pinned copy per sample, as lab00 "
                       "measures it\n  (the raw PCIe gen %d x%d rate is %.1f GB/s per direction)\n",
                    dev->pcie_gen, dev->pcie_width, raw);
    host_copy_test staging[DIRS] = {{b->pin_dst, b->page_src, b->largest},
                                    {b->page_dst, b->pin_src, b->largest}};
    for (int d = 0; d < DIRS; d++) {
        char variant[32];
        stats t = measure(time_host_memcpy, &staging[d], 1, reps < 5 ? reps : 5);
        host_copy[d] = stats_over((double)b->largest / 1e6, &t); /* GB/s */
        snprintf(variant, sizeof variant, "host memcpy %s", dir_name[d]);
        report_stats(r, variant, "bandwidth", &host_copy[d], "GB/s");
    }
    report_text(r, "  pageable data goes through a pinned staging buffer: the host copies it "
                   "in (H2D) or out (D2H)\n  with memcpy, the copy engine moves it between there "
                   "and the GPU (the link): it cannot beat\n  the slower of the two\n");
}

/* ---- 2. the sweep ------------------------------------------------------------------- */

static void plan_sweep(sweep *s, size_t largest, int quick, int reps)
{
    /* Small copies go in bulk (a sample moves at least 256 KiB), so the
     * events' resolution does not matter; each size gets about the same
     * bytes, but at least MIN_SAMPLES: the verdict reads the largest size,
     * and a median of 3 lets one short burst of traffic on a shared link
     * decide it. The large pageable copies (~30 ms each at 256 MiB) set the
     * budget. */
    const size_t sample_min = 256u << 10, budget = quick ? 8u << 20 : 64u << 20;
    s->n = 0;
    for (size_t bytes = SMALLEST; bytes <= largest && s->n < MAX_SIZES; bytes *= quick ? 4 : 2) {
        size_t per_sample = bytes > sample_min ? bytes : sample_min;
        int samples = (int)(budget / per_sample);
        samples = samples < MIN_SAMPLES ? MIN_SAMPLES : samples;
        s->bytes[s->n] = bytes;
        s->batch[s->n] = (int)(per_sample / bytes);
        s->samples[s->n] = samples < reps ? samples : reps;
        s->n++;
    }
    if (s->bytes[s->n - 1] != largest) { /* the sweep ends where the limits were measured */
        int last = s->n < MAX_SIZES ? s->n++ : s->n - 1;
        s->bytes[last] = largest;
        s->batch[last] = 1;
        s->samples[last] = reps < MIN_SAMPLES ? reps : MIN_SAMPLES;
    }
}

/* Sweeps one kind of host memory up and down at every size. Before each
 * size the device buffer and then the host destination are poisoned, so
 * that the check sees bytes this size's copies delivered. */
static void sweep_kind(report *r, bench *b, sweep *s, enum kind k, uint32_t *src, uint32_t *dst)
{
    size_t bad = 0, checked = 0, first_bad;
    timeline_span_begin(kind_name[k]);
    for (int i = 0; i < s->n; i++) {
        size_t bytes = s->bytes[i], words = bytes / sizeof(uint32_t);
        CUDA_CHECK(cudaMemsetAsync(b->d_buf, POISON, bytes, b->stream));
        s->bw[k][H2D][i] = copy_bandwidth(b, b->d_buf, src, bytes, s->batch[i], H2D, WARMUP,
                                          s->samples[i]);
        memset(dst, POISON, bytes); /* the stream is idle: its last event was waited for */
        s->bw[k][D2H][i] = copy_bandwidth(b, dst, b->d_buf, bytes, s->batch[i], D2H, WARMUP,
                                          s->samples[i]);
        bad += count_mismatches_u32(dst, src, words, &first_bad);
        checked += words;
    }
    timeline_span_end();
    char name[64];
    snprintf(name, sizeof name, "%s_bytes_intact", kind_name[k]);
    report_check(r, name, bad == 0, "%zu of %zu words differ after H2D then D2H, over all "
                 "%d sizes (fresh random source, poisoned destinations)", bad, checked, s->n);
}

/* A table to read in the text report; in CSV and JSON one row per point,
 * variant "pinned H2D", metric "bandwidth@BYTES" (plus _p5 and _p95), for
 * plots. The report has no call that says which format it prints, so the
 * table asks the options that chose it. */
static void report_sweep(report *r, const sweep *s, const common_options *opt)
{
    char label[32], variant[32], metric[48];
    if (opt->csv || opt->json) {
        for (int k = 0; k < KINDS; k++)
            for (int d = 0; d < DIRS; d++)
                for (int i = 0; i < s->n; i++) {
                    snprintf(variant, sizeof variant, "%s %s", kind_name[k], dir_name[d]);
                    snprintf(metric, sizeof metric, "bandwidth@%zu", s->bytes[i]);
                    report_stats(r, variant, metric, &s->bw[k][d][i], "GB/s");
                }
        return;
    }
    report_text(r, "  GB/s, median of the samples; each sample: events around `copies` copies "
                   "in a row\n\n"
                   "                     ----------- H2D ------------   ----------- D2H ------------\n"
                   "     size  samples  pageable registered   pinned   pageable registered   pinned\n");
    for (int i = 0; i < s->n; i++) {
        char n[24];
        snprintf(n, sizeof n, "%dx%d", s->samples[i], s->batch[i]);
        report_text(r, "  %7s %8s", size_label(label, sizeof label, s->bytes[i]), n);
        for (int d = 0; d < DIRS; d++)
            report_text(r, "   %8.2f %10.2f %8.2f", s->bw[PAGEABLE][d][i].median,
                        s->bw[REGISTERED][d][i].median, s->bw[PINNED][d][i].median);
        report_text(r, "\n");
    }
    report_text(r, "  (samples x copies per sample; --csv or --json give every point with p5 "
                   "and p95)\n");
}

/* ---- 3. prediction against measurement, and the verdict ----------------------------- */

/* Returns the likely reason when a verdict is "no", else NULL. */
static const char *judge(report *r, const sweep *s, const stats link[DIRS],
                         const stats host_copy[DIRS])
{
    char label[32], variant[32];
    int last = s->n - 1;
    double bound[DIRS];
    report_section(r, "3. At the largest size: prediction beside measurement");
    report_text(r, "  predicted: pinned and registered = the link's limit; pageable = at most "
                   "the slower of host memcpy and link\n");
    for (int d = 0; d < DIRS; d++) {
        bound[d] = host_copy[d].median < link[d].median ? host_copy[d].median : link[d].median;
        for (int k = 0; k < KINDS; k++) {
            snprintf(variant, sizeof variant, "%s %s", kind_name[k], dir_name[d]);
            report_compare(r, variant, "bandwidth", k == PAGEABLE ? bound[d] : link[d].median,
                           &s->bw[k][d][last], "GB/s");
        }
    }
    size_label(label, sizeof label, s->bytes[last]);
    double pinned[DIRS], pageable[DIRS], ratio[DIRS], of_link[DIRS];
    for (int d = 0; d < DIRS; d++) {
        pinned[d] = s->bw[PINNED][d][last].median;
        pageable[d] = s->bw[PAGEABLE][d][last].median;
        ratio[d] = pinned[d] / pageable[d];
        of_link[d] = pinned[d] / link[d].median;
        snprintf(variant, sizeof variant, "pinned %s", dir_name[d]);
        report_value(r, variant, "vs_pageable", ratio[d], "x");
    }
    /* The verdict reads uploads: CUDA documents that a pageable H2D copy is
     * staged through a pinned buffer by the host, which is the model. For
     * downloads it documents only that the call returns when the copy is
     * done; on the H100 and H200 machines pageable D2H ran 1.5x faster than
     * one host memcpy out of pinned memory, so the driver does more than the
     * model's one copy there, and the ratio came out at 3.0x to 5.9x: no
     * model, so no verdict on it, but pinned must still reach the link. */
    report_verdict(r, "pinned_beats_pageable_H2D", ratio[H2D] >= RATIO_MIN &&
                   of_link[H2D] >= LINK_MIN, "at %s pinned %.1f GB/s, pageable %.1f GB/s: %.1fx "
                   "(limit %.0fx); pinned at %.0f%% of the link's %.1f GB/s (limit %.0f%%)", label,
                   pinned[H2D], pageable[H2D], ratio[H2D], RATIO_MIN, of_link[H2D] * 100,
                   link[H2D].median, LINK_MIN * 100);
    report_verdict(r, "pinned_reaches_link_D2H", of_link[D2H] >= LINK_MIN, "at %s pinned %.1f "
                   "GB/s, %.0f%% of the link's %.1f GB/s (limit %.0f%%); pageable %.1f GB/s, "
                   "%.1fx slower", label, pinned[D2H], of_link[D2H] * 100, link[D2H].median,
                   LINK_MIN * 100, pageable[D2H], ratio[D2H]);
    if (pageable[D2H] > 1.1 * bound[D2H])
        report_text(r, "  pageable D2H beat the model's bound by %.0f%%: the driver brings "
                       "downloads out of its staging\n  memory faster than one host memcpy "
                       "(CUDA documents staging for uploads only), so the\n  verdict on pinned "
                       "vs pageable reads H2D, where the model holds\n",
                    (pageable[D2H] / bound[D2H] - 1) * 100);
    if (of_link[H2D] < LINK_MIN || of_link[D2H] < LINK_MIN)
        return "pinned copies fell short of the link's limit measured moments before: another "
               "process may be using the GPU or its link (see nvidia-smi)";
    if (ratio[H2D] < RATIO_MIN)
        return "pageable uploads came close to pinned ones: this host copies memory fast "
               "compared with its link (see the host memcpy lines), or the copies were small "
               "(--max-mib)";
    return NULL;
}

/* ---- 4. the async trap ------------------------------------------------------------------ */

/* How long the call takes to return to the host, beside how long the copy
 * takes on the GPU (events). The stream is idle before each sample. */
static void async_return(report *r, bench *b, void *dst, const void *src, size_t bytes,
                         enum kind k, enum dir d, int samples, double *fraction)
{
    double *back = (double *)xmalloc((size_t)samples * sizeof(double));
    double *copy = (double *)xmalloc((size_t)samples * sizeof(double));
    for (int i = -1; i < samples; i++) { /* -1 warms up */
        CUDA_CHECK(cudaStreamSynchronize(b->stream));
        event_timer_start(&b->timer, b->stream);
        double t0 = host_time_ms();
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, dir_kind[d], b->stream));
        double returned = host_time_ms() - t0;
        event_timer_stop(&b->timer, b->stream);
        double ms = event_timer_ms(&b->timer);
        if (i >= 0) {
            back[i] = returned;
            copy[i] = ms;
        }
    }
    stats sb = stats_of(back, samples), sc = stats_of(copy, samples);
    char variant[32];
    snprintf(variant, sizeof variant, "%s %s", kind_name[k], dir_name[d]);
    report_stats(r, variant, "call_returns", &sb, "ms");
    report_stats(r, variant, "copy_takes", &sc, "ms");
    *fraction = sb.median / sc.median;
    free(copy);
    free(back);
}

/* Returns the likely reason when a verdict is "no", else NULL. */
static const char *async_trap(report *r, bench *b, size_t bytes, int samples)
{
    char label[32];
    double fraction[KINDS][DIRS];
    report_section(r, "4. The async trap: when does cudaMemcpyAsync return?");
    report_param(r, "async_copy_size", (double)(bytes >> 20), "MiB");
    timeline_span_begin("async");
    double *page = fraction[PAGEABLE], *pin = fraction[PINNED];
    async_return(r, b, b->d_buf, b->page_src, bytes, PAGEABLE, H2D, samples, &page[H2D]);
    async_return(r, b, b->page_dst, b->d_buf, bytes, PAGEABLE, D2H, samples, &page[D2H]);
    async_return(r, b, b->d_buf, b->pin_src, bytes, PINNED, H2D, samples, &pin[H2D]);
    async_return(r, b, b->pin_dst, b->d_buf, bytes, PINNED, D2H, samples, &pin[D2H]);
    timeline_span_end();
    report_text(r, "  pageable: the call stages the data through the driver's pinned buffer "
                   "and returns when that is done;\n  pinned: the call queues the copy and "
                   "returns; the copy engine does the rest while the host works\n");
    size_label(label, sizeof label, bytes);
    int waits = page[H2D] >= PAGEABLE_BACK && page[D2H] >= PAGEABLE_BACK;
    int at_once = pin[H2D] <= PINNED_BACK && pin[D2H] <= PINNED_BACK;
    report_verdict(r, "pageable_call_waits_for_copy", waits, "%s pageable: the call returned "
                   "after %.0f%% (H2D) and %.0f%% (D2H) of the copy's time (limit: at least "
                   "%.0f%%)", label, page[H2D] * 100, page[D2H] * 100, PAGEABLE_BACK * 100);
    report_verdict(r, "pinned_call_returns_at_once", at_once, "%s pinned: the call returned "
                   "after %.1f%% (H2D) and %.1f%% (D2H) of the copy's time (limit: at most "
                   "%.0f%%)", label, pin[H2D] * 100, pin[D2H] * 100, PINNED_BACK * 100);
    if (!waits)
        return "a pageable cudaMemcpyAsync returned before its copy was done: this driver or "
               "system stages pageable memory differently (small copies may be buffered: try a "
               "larger --async-mib)";
    if (!at_once)
        return "a pinned cudaMemcpyAsync took long to return: the host thread was descheduled "
               "(a busy machine), or the copy is too short to compare (try a larger --async-mib)";
    return NULL;
}

/* ---- 5. the cost of pinning --------------------------------------------------------------- */

static void pinning_cost(report *r, const pin_costs *c, size_t largest, const sweep *s)
{
    double gib = 2.0 * largest / (1u << 30); /* every cost is for two buffers */
    int last = s->n - 1;
    report_section(r, "5. The cost of pinning");
    report_value(r, "malloc + first touch", "ms_per_GiB", c->touch / gib, "ms/GiB");
    report_value(r, "cudaMallocHost", "ms_per_GiB", c->malloc_host / gib, "ms/GiB");
    report_value(r, "cudaFreeHost", "ms_per_GiB", c->free_host / gib, "ms/GiB");
    report_value(r, "cudaHostRegister", "ms_per_GiB", c->reg / gib, "ms/GiB");
    report_value(r, "cudaHostUnregister", "ms_per_GiB", c->unreg / gib, "ms/GiB");
    /* Registering a dataset pays off once its copies, made faster, have
     * saved what registering it cost. */
    double gb = (double)(1u << 30) / 1e9; /* one GiB in GB */
    double saved = gb / s->bw[PAGEABLE][H2D][last].median * 1e3 -
                   gb / s->bw[PINNED][H2D][last].median * 1e3; /* ms per GiB copied */
    double reg = c->reg / gib;
    report_value(r, "cudaHostRegister", "break_even_copies", saved > 0 ? reg / saved : INFINITY,
                 "copies");
    report_text(r, "  Registering a GiB costs %.0f ms and saves %.0f ms on every copy of it (H2D):"
                   " it pays after %.1f copies.\n  A staging buffer is pinned once and earns that "
                   "back on every chunk that passes through it. A dataset\n  pinned whole is RAM "
                   "the OS can no longer page out or give to anyone else while it stays pinned,\n"
                   "  and pinning it takes time up front (100 GiB: about %.0f s here). Pin staging "
                   "buffers, not datasets.\n", reg, saved, saved > 0 ? reg / saved : INFINITY,
                reg * 100 / 1e3);
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick && !option_given(argc, argv, "--max-mib"))
        max_mib = 16;
    if (opt.quick && !option_given(argc, argv, "--async-mib"))
        async_mib = 16;
    if (opt.quick && !option_given(argc, argv, "--reps"))
        opt.reps = 5;
    if (async_mib > max_mib)
        async_mib = max_mib;

    device_info dev;
    device_select(&opt, &dev);
    if (((size_t)max_mib << 20) > dev.free_memory / 2)
        fail_usage("--max-mib %d is more than half of this GPU's free memory (%zu MiB)", max_mib,
                   dev.free_memory >> 20);
    int can_register = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&can_register, cudaDevAttrHostRegisterSupported, dev.index));
    device_require(can_register, "this system cannot pin malloc'd memory (cudaHostRegister)");
    report *r = report_begin(&lab, &opt, &dev);
    timeline_start(&opt);

    bench b;
    pin_costs cost;
    memset(&b, 0, sizeof b);
    memset(&cost, 0, sizeof cost);
    b.largest = (size_t)max_mib << 20;
    size_t words = b.largest / sizeof(uint32_t);
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    timeline_name_stream(b.stream, "copies");
    event_timer_create(&b.timer);
    CUDA_CHECK(cudaMalloc((void **)&b.d_buf, b.largest));
    double t0 = host_time_ms();
    b.page_src = (uint32_t *)xmalloc(b.largest);
    b.page_dst = (uint32_t *)xmalloc(b.largest);
    memset(b.page_src, POISON, b.largest); /* first touch: the OS maps the pages now */
    memset(b.page_dst, POISON, b.largest);
    cost.touch = host_time_ms() - t0;
    t0 = host_time_ms();
    CUDA_CHECK(cudaMallocHost((void **)&b.pin_src, b.largest));
    CUDA_CHECK(cudaMallocHost((void **)&b.pin_dst, b.largest));
    cost.malloc_host = host_time_ms() - t0;
    fill_random_u32(b.page_src, words, fresh_seed());
    fill_random_u32(b.pin_src, words, fresh_seed());
    memset(b.pin_dst, POISON, b.largest);

    stats link[DIRS], host_copy[DIRS];
    timeline_span_begin("limits");
    measure_limits(r, &b, &dev, opt.reps, link, host_copy);
    timeline_span_end();

    sweep s;
    plan_sweep(&s, b.largest, opt.quick, opt.reps);
    report_section(r, "2. Bandwidth by copy size: pageable, registered, pinned");
    report_param(r, "smallest_copy", SMALLEST, "bytes");
    report_param(r, "largest_copy", (double)b.largest, "bytes");
    sweep_kind(r, &b, &s, PAGEABLE, b.page_src, b.page_dst);
    t0 = host_time_ms(); /* the same malloc'd buffers, now pinned in place */
    CUDA_CHECK(cudaHostRegister(b.page_src, b.largest, cudaHostRegisterDefault));
    CUDA_CHECK(cudaHostRegister(b.page_dst, b.largest, cudaHostRegisterDefault));
    cost.reg = host_time_ms() - t0;
    sweep_kind(r, &b, &s, REGISTERED, b.page_src, b.page_dst);
    t0 = host_time_ms();
    CUDA_CHECK(cudaHostUnregister(b.page_src));
    CUDA_CHECK(cudaHostUnregister(b.page_dst));
    cost.unreg = host_time_ms() - t0;
    sweep_kind(r, &b, &s, PINNED, b.pin_src, b.pin_dst);
    report_sweep(r, &s, &opt);

    const char *why = judge(r, &s, link, host_copy);
    const char *why_async = async_trap(r, &b, (size_t)async_mib << 20, opt.reps < 5 ? opt.reps : 5);
    if (why || why_async)
        report_hint(r, "%s", why ? why : why_async);

    t0 = host_time_ms();
    CUDA_CHECK(cudaFreeHost(b.pin_dst));
    CUDA_CHECK(cudaFreeHost(b.pin_src));
    cost.free_host = host_time_ms() - t0;
    pinning_cost(r, &cost, b.largest, &s);

    free(b.page_dst);
    free(b.page_src);
    CUDA_CHECK(cudaFree(b.d_buf));
    event_timer_destroy(&b.timer);
    CUDA_CHECK(cudaStreamDestroy(b.stream));
    timeline_finish(r, &opt);
    return report_finish(r);
}
