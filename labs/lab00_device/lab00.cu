/* lab00: meet your GPU.
 *
 * The question: what can this GPU do at the same time, and how fast can data
 * reach it? Every later lab predicts its result from these numbers: overlap
 * needs copy engines, concurrent kernels need the hardware to allow them,
 * priorities need a priority range, and every copy is bounded by the link.
 *
 * Build and run:   make lab00 && ./lab00        (./lab00 --help for options)
 *
 * What to look for: the number of copy engines (the later labs' overlap
 * depends on it), which priority number is "high", and the pinned bandwidth
 * next to the link's raw rate: that measured number is the practical limit
 * lab02 and lab04 compare against. The last section checks the tools the
 * labs use: a kernel that lasts exactly as long as asked (spin_for_ns) and a
 * compute kernel tuned to a chosen duration (affine_work).
 */
#include "streamlab.h"
#include "kernels.h"

#include <string.h>

static int size_mib = 256;   /* one copy's size: large, so per-copy overhead vanishes */
static double spin_ms = 10;  /* the known duration spin_for_ns is checked against */

static const option lab_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 4096, 32, "MIB", "bytes per copy in the bandwidth test"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.1, 1000, NO_QUICK, "MS", "duration asked of spin_for_ns"},
    {NULL},
};

static const program_info program = {
    .name = "lab00", .title = "meet your GPU: what it can overlap, and how fast data reaches it",
    .handout = "labs/lab00_device/README.md",
    .options = lab_options, .reps = 20,
    .memory_option = "size-mib", .memory_per_unit = 1 << 20, /* one device buffer of a copy */
};

/* What spoils any of the three: other work on the GPU or the link, or a
 * clock that has not reached its working speed yet. */
static const char BUSY_OR_RAMPING[] =
    "another process may be using this GPU or its link (see nvidia-smi), or the GPU's clock "
    "is still ramping up";

enum { LOOPS = 5 }; /* rounds of the link's comparison: a median, not one sample */

/* ---- what the device says ------------------------------------------------- */

static const char *copy_engines_meaning(int engines)
{
    if (engines == 0)
        return "copies and kernels take turns: nothing overlaps";
    if (engines == 1)
        return "one copy at a time beside kernels; H2D and D2H take turns";
    if (engines == 2)
        return "an H2D and a D2H copy at once, each beside kernels";
    return "an H2D and a D2H copy at once, each beside kernels; the spare engine "
           "serves more copies (the link, not the engines, is the limit)";
}

static void report_capabilities(report *r, const device_info *d)
{
    report_section(r, "What this GPU can overlap");
    report_fact(r, "copy_engines", d->async_engines, "", "%s",
                copy_engines_meaning(d->async_engines));
    report_fact(r, "concurrent_kernels", d->concurrent_kernels, "bool", "%s",
                d->concurrent_kernels ? "kernels of different streams can share the SMs"
                                      : "kernels run one at a time, whatever the streams");
    report_fact(r, "priority_least", d->priority_least, "", "the default priority");
    report_fact(r, "priority_greatest", d->priority_greatest, "",
                "LOWER numbers are HIGHER priorities; values outside are clamped");
    report_fact(r, "max_connections", d->max_connections, "",
                "hardware queues for streams (%s); streams beyond that share a queue and "
                "can wait on each other for no reason",
                d->max_connections_set ? "from CUDA_DEVICE_MAX_CONNECTIONS" : "the default");
    report_fact(r, "sm_count", d->sm_count, "", "multiprocessors: a grid smaller than this "
                "leaves room for another stream's kernel");
    report_fact(r, "memory", d->total_memory / 1073741824.0, "GiB", "%.1f GiB free now",
                d->free_memory / 1073741824.0);
    if (d->pcie_gen > 0) {
        report_fact(r, "pcie_gen", d->pcie_gen, "", "the link to the host (now trained to "
                    "gen %d: an idle GPU slows its link to save power)", d->pcie_gen_now);
        report_fact(r, "pcie_width", d->pcie_width, "lanes", "(now x%d)", d->pcie_width_now);
        report_fact(r, "pcie_raw", pcie_raw_gbps(d->pcie_gen, d->pcie_width), "GB/s",
                    "per direction after line encoding, before packet overhead");
    } else {
        report_text(r, "  pcie                   the driver does not report the link "
                       "(no NVML); the measurement below stands alone\n");
    }
}

/* ---- what lab00 times: one operation, issued into its stream ----------------- */

enum op_kind { COPY, SPIN, AFFINE };

typedef struct {
    enum op_kind what;
    void *dst;          /* COPY: bytes from src to dst; AFFINE: in and out of affine_work */
    const void *src;
    size_t bytes;
    int steps;          /* AFFINE: rounds per element */
    cudaStream_t stream;
} op;

/* An issue_fn: time_issued() brackets one or more of these with events in o->stream. */
static void issue(void *ctx, int i)
{
    const op *o = (const op *)ctx;
    (void)i;
    if (o->what == COPY) {
        CUDA_CHECK(cudaMemcpyAsync(o->dst, o->src, o->bytes, cudaMemcpyDefault, o->stream));
    } else if (o->what == SPIN) {
        spin_for_ns<<<1, 1, 0, o->stream>>>(ns_from_ms(spin_ms));
        CHECK_LAUNCH();
    } else {
        affine_launch((const uint32_t *)o->src, (uint32_t *)o->dst, o->bytes / sizeof(uint32_t),
                      o->steps, o->stream);
    }
}

/* ---- the link's practical limit --------------------------------------------- */

/* A copy's rate from its times: bytes per ms / 1e6 = GB/s. */
static stats gbps(size_t bytes, stats ms) { return stats_over(bytes / 1e6, &ms); }

/* One copy per sample, as the labs time a copy, against the plainest way to
 * measure the same thing: `reps` copies back to back between one pair of
 * events. If the two disagree, one of them is measuring something else. They
 * take turns in rounds, each round `reps` copies one at a time (their median)
 * and `reps` back to back (one sample), so that a moment of other traffic on
 * a shared machine's link falls on both sides of the round it spoils. */
typedef struct {
    issued one, loop; /* the same H2D copy: one per sample, or reps back to back */
    double *one_ms;   /* every single copy's time of the attempt (LOOPS x reps), for its row */
    int kept;
    paired p;         /* per copy, ms: a, a round's median single copy; b, the loop's */
} link_demo;

/* A round's first side: as many copies as the loop makes, each between its
 * own pair of events; their median, per copy. */
static double single_copies(void *ctx)
{
    link_demo *d = (link_demo *)ctx;
    double *ms = d->one_ms + d->kept;
    for (int i = 0; i < d->loop.per_sample; i++)
        ms[i] = time_issued(&d->one);
    d->kept += d->loop.per_sample;
    return stats_of(ms, d->loop.per_sample).median;
}

/* Model: both time the same copies, so a round's ratio is 1. 10% either way
 * leaves room for what a copy alone pays and a loop shares out (its events,
 * its start): a copy alone read 4% slower on an H100. */
static const verdict BANDWIDTH_CONSISTENT = {
    "bandwidth_consistent", -0.10, 0.10, "%", BUSY_OR_RAMPING};
static int attempt_link(void *ctx, double *spread)
{
    link_demo *d = (link_demo *)ctx;
    d->kept = 0;
    for (int i = 0; i < 2; i++) /* untimed: the first copies set up the link and the pages */
        time_issued(&d->one);
    d->p = measure_paired(single_copies, d, time_issued, &d->loop, 0, LOOPS);
    *spread = stats_spread(&d->p.ratio);
    return verdict_holds(&BANDWIDTH_CONSISTENT, d->p.ratio.median - 1);
}

static void measure_link(lab_run *run)
{
    report *r = run->r;
    int reps = run->opt.reps;
    size_t bytes = (size_t)size_mib << 20, words = bytes / sizeof(uint32_t);
    uint32_t *h_src = (uint32_t *)lab_pinned(run, bytes);
    uint32_t *h_back = (uint32_t *)lab_pinned(run, bytes);
    uint32_t *d_buf = (uint32_t *)lab_device(run, bytes);
    fill_random_u32(h_src, words, fresh_seed());
    memset(h_back, 0, bytes);
    op c = {COPY, d_buf, h_src, bytes, 0, lab_stream(run, "copies", cudaStreamNonBlocking, 0)};
    link_demo d = {{issue, &c, c.stream, 1, lab_timer(run)}, {issue, &c, c.stream, reps,
                   lab_timer(run)}, (double *)xmalloc((size_t)LOOPS * reps * sizeof(double))};
    report_section(r, "The link's practical limit (pinned memory)");

    timeline_span_begin("link");
    lab_attempt(run, "pinned H2D vs plain loop", attempt_link, &d);
    stats h2d = gbps(bytes, stats_of(d.one_ms, d.kept)), loop = gbps(bytes, d.p.b);
    c.dst = h_back;
    c.src = d_buf;
    stats d2h = gbps(bytes, measure_issued(issue, &c, c.stream, 1, 2, reps));
    timeline_span_end();

    double raw = pcie_raw_gbps(run->dev.pcie_gen, run->dev.pcie_width);
    if (raw > 0) {
        report_compare(r, "pinned H2D", "bandwidth", "the link's raw rate", raw, &h2d, "GB/s");
        report_compare(r, "pinned D2H", "bandwidth", "the link's raw rate", raw, &d2h, "GB/s");
    } else {
        report_stats(r, "pinned H2D", "bandwidth", &h2d, "GB/s");
        report_stats(r, "pinned D2H", "bandwidth", &d2h, "GB/s");
    }
    report_stats(r, "plain loop H2D", "bandwidth", &loop, "GB/s");

    tally t = {0};
    t.where = "H2D then D2H";
    verify_equal_u32(h_back, h_src, words, &t);
    report_tally(r, "bytes_intact", &t, "words differ after H2D then D2H");
    double off = d.p.ratio.median - 1;
    report_verdict(r, &BANDWIDTH_CONSISTENT, off, "one copy per sample %.1f GB/s, %d copies "
                   "back to back %.1f GB/s; a copy alone against one in the loop: %+.1f%% in time "
                   "(median of %d rounds)", h2d.median, reps, loop.median, off * 100, LOOPS);
    free(d.one_ms);
}

/* ---- the labs' tools: kernels of known duration ----------------------------- */

/* A kernel timed against the duration it should last: events around one
 * launch per sample, and the median's offset from the known duration. */
typedef struct {
    op o;
    double known_ms;
    int warmup, reps;
    const verdict *v;
    stats t; /* what the last attempt measured */
} known_demo;

static int attempt_known(void *ctx, double *spread)
{
    known_demo *k = (known_demo *)ctx;
    if (k->o.what == AFFINE) { /* calibrated here, so that a retry re-times the line too */
        affine_calibration cal = affine_calibrate((const uint32_t *)k->o.src, (uint32_t *)k->o.dst,
                                                  k->o.bytes / sizeof(uint32_t), k->o.stream);
        k->o.steps = affine_steps_for_ms(&cal, k->known_ms);
        /* poison what the calibration wrote: an element the timed kernel misses shows */
        CUDA_CHECK(cudaMemsetAsync(k->o.dst, 0xff, k->o.bytes, k->o.stream));
    }
    k->t = measure_issued(issue, &k->o, k->o.stream, 1, k->warmup, k->reps);
    *spread = stats_spread(&k->t);
    return verdict_holds(k->v, k->t.median / k->known_ms - 1);
}

/* Model: spin_for_ns waits on the GPU's nanosecond clock, so it lasts the time
 * asked; events add microseconds of launch (+0.09% of 10 ms on an H100). */
static const verdict SPIN_KEEPS_TIME = {"spin_keeps_time", -0.02, 0.02, "%", BUSY_OR_RAMPING};
static void check_spin(lab_run *run, cudaStream_t stream)
{
    known_demo k = {{SPIN, NULL, NULL, 0, 0, stream}, spin_ms, 1, run->opt.quick ? 5 : 10,
                    &SPIN_KEEPS_TIME};
    lab_attempt(run, "spin_for_ns", attempt_known, &k);
    report_compare(run->r, "spin_for_ns", "duration", "the time asked", spin_ms, &k.t, "ms");
    double off = k.t.median / spin_ms - 1;
    report_verdict(run->r, &SPIN_KEEPS_TIME, off, "%.3f ms asked, %.3f ms measured by events "
                   "(%+.2f%%)", spin_ms, k.t.median, off * 100);
}

/* Model: a line through two timed step counts predicts the steps for 1 ms.
 * 10% either way: lab04 sizes its kernels by the same line, and its model
 * reads the kernel's measured time, not the time asked. */
static const verdict AFFINE_CALIBRATED = {"affine_calibrated", -0.10, 0.10, "%", BUSY_OR_RAMPING};
/* affine_work calibrated to 1 ms on fresh inputs, timed, and every output
 * checked against the CPU. */
static void check_affine(lab_run *run, cudaStream_t stream)
{
    report *r = run->r;
    const double target_ms = 1.0;
    size_t n = run->opt.quick ? (size_t)1 << 20 : (size_t)1 << 24;
    size_t bytes = n * sizeof(uint32_t);
    uint32_t *h_in = (uint32_t *)lab_pageable(run, bytes);
    uint32_t *h_out = (uint32_t *)lab_pageable(run, bytes);
    uint32_t *d_in = (uint32_t *)lab_device(run, bytes);
    uint32_t *d_out = (uint32_t *)lab_device(run, bytes);
    fill_random_u32(h_in, n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));

    /* no warm-up: each attempt's calibration warms it up */
    known_demo k = {{AFFINE, d_out, d_in, bytes, 0, stream}, target_ms, 0, 5, &AFFINE_CALIBRATED};
    report_param(r, "affine_elements", (double)n, "count");
    lab_attempt(run, "affine_work", attempt_known, &k);
    report_value(r, "affine_work", "steps_for_1ms", k.o.steps, "steps");
    report_compare(r, "affine_work", "duration", "calibrated to the time asked", target_ms, &k.t,
                   "ms");

    tally outputs = {0};
    outputs.where = "affine_work";
    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    verify_affine(h_in, h_out, n, k.o.steps, &outputs);
    report_tally(r, "affine_verified", &outputs, "outputs differ from the CPU reference");
    double off = k.t.median / target_ms - 1;
    report_verdict(r, &AFFINE_CALIBRATED, off, "%.2f ms asked, %.3f ms measured (%+.1f%%)",
                   target_ms, k.t.median, off * 100);
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    report_capabilities(run.r, &run.dev);
    measure_link(&run);

    report_section(run.r, "The labs' tools: kernels of known duration");
    cudaStream_t stream = lab_stream(&run, "kernels", cudaStreamNonBlocking, 0);
    timeline_span_begin("kernels");
    check_spin(&run, stream);
    check_affine(&run, stream);
    timeline_span_end();
    return lab_end(&run);
}
