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

enum { LOOPS = 5 }; /* samples of the plain loop: a median, not one sample */

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

/* An issue_fn: measure_issued() brackets one or more of these with events in o->stream. */
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

/* Bandwidth of each copy, one copy between a pair of events in its stream per sample. */
static stats bandwidth(op *c, int reps)
{
    stats t = measure_issued(issue, c, c->stream, 1, 2, reps);
    return stats_over(c->bytes / 1e6, &t); /* bytes per ms / 1e6 = GB/s */
}

/* The plainest way to measure the same thing: `batch` copies back to back
 * between one pair of events. If the two disagree, one of them is measuring
 * something else. Such a loop is itself one sample, which a moment of other
 * traffic on a shared machine's link can spoil: the verdict reads the median
 * of LOOPS of them. */
static stats plain_loop_bandwidth(op *c, int batch)
{
    stats t = measure_issued(issue, c, c->stream, batch, 1, LOOPS);
    return stats_over(c->bytes / 1e6, &t);
}

static const verdict BANDWIDTH_CONSISTENT = {
    "bandwidth_consistent", -INFINITY, 0.10, "%", BUSY_OR_RAMPING};
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
    report_section(r, "The link's practical limit (pinned memory)");

    timeline_span_begin("link");
    stats h2d = bandwidth(&c, reps);
    stats loop = plain_loop_bandwidth(&c, reps);
    c.dst = h_back;
    c.src = d_buf;
    stats d2h = bandwidth(&c, reps);
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
    double apart = h2d.median > loop.median ? h2d.median / loop.median - 1
                                            : loop.median / h2d.median - 1;
    report_verdict(r, &BANDWIDTH_CONSISTENT, apart, "one copy per sample %.1f GB/s, %d copies "
                   "back to back %.1f GB/s (median of %d): %.1f%% apart", h2d.median, reps,
                   loop.median, LOOPS, apart * 100);
}

/* ---- the labs' tools: kernels of known duration ----------------------------- */

static const verdict SPIN_KEEPS_TIME = {"spin_keeps_time", -0.02, 0.02, "%", BUSY_OR_RAMPING};
static void check_spin(report *r, int quick, cudaStream_t stream)
{
    op spin = {SPIN, NULL, NULL, 0, 0, stream};
    stats t = measure_issued(issue, &spin, stream, 1, 1, quick ? 5 : 10);
    report_compare(r, "spin_for_ns", "duration", "the time asked", spin_ms, &t, "ms");
    double off = t.median / spin_ms - 1;
    report_verdict(r, &SPIN_KEEPS_TIME, off, "%.3f ms asked, %.3f ms measured by events "
                   "(%+.2f%%)", spin_ms, t.median, off * 100);
}

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
    CUDA_CHECK(cudaMemset(d_out, 0xff, bytes)); /* poison: an unwritten element shows */
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream */

    affine_calibration cal = affine_calibrate(d_in, d_out, n, stream);
    op a = {AFFINE, d_out, d_in, bytes, affine_steps_for_ms(&cal, target_ms), stream};
    report_param(r, "affine_elements", (double)n, "count");
    report_value(r, "affine_work", "steps_for_1ms", a.steps, "steps");
    stats t = measure_issued(issue, &a, stream, 1, 0, 5); /* calibration warmed it up */
    report_compare(r, "affine_work", "duration", "calibrated to the time asked", target_ms, &t,
                   "ms");

    tally outputs = {0};
    outputs.where = "affine_work";
    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    verify_affine(h_in, h_out, n, a.steps, &outputs);
    report_tally(r, "affine_verified", &outputs, "outputs differ from the CPU reference");
    double off = t.median / target_ms - 1;
    report_verdict(r, &AFFINE_CALIBRATED, off, "%.2f ms asked, %.3f ms measured (%+.1f%%)",
                   target_ms, t.median, off * 100);
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
    check_spin(run.r, run.opt.quick, stream);
    check_affine(&run, stream);
    timeline_span_end();
    return lab_end(&run);
}
