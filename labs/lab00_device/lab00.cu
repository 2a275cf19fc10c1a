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

#include <stdlib.h>
#include <string.h>

static int size_mib = 256;   /* one copy's size: large, so per-copy overhead vanishes */
static double spin_ms = 10;  /* the known duration spin_for_ns is checked against */

static const option lab_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 4096, "MIB", "bytes per copy in the bandwidth test"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.1, 1000, "MS", "duration asked of spin_for_ns"},
};
static const program_info lab = {
    "lab00", "meet your GPU: what it can overlap, and how fast data reaches it",
    lab_options, sizeof lab_options / sizeof lab_options[0], 20,
};

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

/* ---- the link's practical limit --------------------------------------------- */

enum { LOOPS = 5 }; /* samples of the plain loop: a median, not one sample */

struct copy_test {
    void *dst;
    const void *src;
    size_t bytes;
    int batch; /* copies per sample in the plain loop */
    cudaStream_t stream;
    event_timer timer;
};

/* One copy, bracketed by events in the copy's own stream. */
static double time_one_copy(void *ctx)
{
    struct copy_test *c = (struct copy_test *)ctx;
    event_timer_start(&c->timer, c->stream);
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, c->stream));
    event_timer_stop(&c->timer, c->stream);
    return event_timer_ms(&c->timer);
}

/* Bandwidth of each copy as measure() sees it, one sample per copy. */
static stats bandwidth(struct copy_test *c, int reps)
{
    stats t = measure(time_one_copy, c, 2, reps);
    return stats_over(c->bytes / 1e6, &t); /* bytes per ms / 1e6 = GB/s */
}

/* The plainest way to measure the same thing: `batch` copies back to back
 * between one pair of events. If measure() and this disagree, one of them
 * is measuring something else. Such a loop is itself one sample, which a
 * moment of other traffic on a shared machine's link can spoil: the verdict
 * reads the median of LOOPS of them. */
static double time_plain_loop(void *ctx)
{
    struct copy_test *c = (struct copy_test *)ctx;
    event_timer_start(&c->timer, c->stream);
    for (int i = 0; i < c->batch; i++)
        CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDefault, c->stream));
    event_timer_stop(&c->timer, c->stream);
    return event_timer_ms(&c->timer);
}

static stats plain_loop_bandwidth(struct copy_test *c, int batch)
{
    c->batch = batch;
    stats t = measure(time_plain_loop, c, 1, LOOPS);
    return stats_over((double)c->bytes * batch / 1e6, &t);
}

static void measure_link(report *r, const device_info *d, const common_options *opt)
{
    size_t bytes = (size_t)size_mib << 20;
    size_t words = bytes / sizeof(uint32_t);
    report_section(r, "The link's practical limit (pinned memory)");
    report_param(r, "copy_size", size_mib, "MiB");

    uint32_t *h_src, *h_back, *d_buf;
    CUDA_CHECK(cudaMallocHost((void **)&h_src, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&h_back, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_buf, bytes));
    fill_random_u32(h_src, words, fresh_seed());
    memset(h_back, 0, bytes);

    struct copy_test c = {d_buf, h_src, bytes, 1, 0, {0, 0}};
    CUDA_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    timeline_name_stream(c.stream, "copies");
    event_timer_create(&c.timer);
    timeline_span_begin("link");

    double raw = pcie_raw_gbps(d->pcie_gen, d->pcie_width);
    stats h2d = bandwidth(&c, opt->reps);
    stats loop = plain_loop_bandwidth(&c, opt->reps);
    c.dst = h_back;
    c.src = d_buf;
    stats d2h = bandwidth(&c, opt->reps);
    timeline_span_end();
    if (raw > 0) {
        report_compare(r, "pinned H2D", "bandwidth", raw, &h2d, "GB/s");
        report_compare(r, "pinned D2H", "bandwidth", raw, &d2h, "GB/s");
        report_text(r, "  (predicted = the raw link rate; packet headers and flow control "
                       "usually leave 80-90%% of it)\n");
    } else {
        report_stats(r, "pinned H2D", "bandwidth", &h2d, "GB/s");
        report_stats(r, "pinned D2H", "bandwidth", &d2h, "GB/s");
    }
    report_stats(r, "plain loop H2D", "bandwidth", &loop, "GB/s");

    size_t first_bad;
    size_t bad = count_mismatches_u32(h_back, h_src, words, &first_bad);
    report_check(r, "bytes_intact", bad == 0, "%zu of %zu words differ after H2D then D2H",
                 bad, words);
    double apart = h2d.median > loop.median ? h2d.median / loop.median - 1
                                            : loop.median / h2d.median - 1;
    report_verdict(r, "bandwidth_consistent", apart <= 0.10,
                   "one copy per sample %.1f GB/s, %d copies back to back %.1f GB/s (median of "
                   "%d): %.1f%% apart (limit 10%%)", h2d.median, opt->reps, loop.median, LOOPS,
                   apart * 100);

    event_timer_destroy(&c.timer);
    CUDA_CHECK(cudaStreamDestroy(c.stream));
    CUDA_CHECK(cudaFree(d_buf));
    CUDA_CHECK(cudaFreeHost(h_back));
    CUDA_CHECK(cudaFreeHost(h_src));
}

/* ---- the labs' tools: kernels of known duration ----------------------------- */

struct spin_test {
    uint64_t ns;
    cudaStream_t stream;
    event_timer timer;
};

static double time_spin(void *ctx)
{
    struct spin_test *s = (struct spin_test *)ctx;
    event_timer_start(&s->timer, s->stream);
    spin_for_ns<<<1, 1, 0, s->stream>>>(s->ns);
    CHECK_LAUNCH();
    event_timer_stop(&s->timer, s->stream);
    return event_timer_ms(&s->timer);
}

static void check_spin(report *r, const common_options *opt, cudaStream_t stream)
{
    double asked = spin_ms;
    struct spin_test s = {ns_from_ms(asked), stream, {0, 0}};
    event_timer_create(&s.timer);
    stats t = measure(time_spin, &s, 1, opt->quick ? 5 : 10);
    event_timer_destroy(&s.timer);
    report_compare(r, "spin_for_ns", "duration", asked, &t, "ms");
    double off = t.median / asked - 1;
    report_verdict(r, "spin_keeps_time", off > -0.02 && off < 0.02,
                   "%.3f ms asked, %.3f ms measured by events (%+.2f%%, limit 2%%)", asked,
                   t.median, off * 100);
}

static void check_affine(report *r, const common_options *opt, cudaStream_t stream)
{
    const double target_ms = 1.0;
    size_t n = opt->quick ? (size_t)1 << 20 : (size_t)1 << 24;
    size_t bytes = n * sizeof(uint32_t);
    uint32_t *h_in = (uint32_t *)xmalloc(bytes), *h_out = (uint32_t *)xmalloc(bytes);
    uint32_t *d_in, *d_out;
    CUDA_CHECK(cudaMalloc((void **)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_out, bytes));
    fill_random_u32(h_in, n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0xff, bytes)); /* poison: an unwritten element shows */

    affine_calibration cal = affine_calibrate(d_in, d_out, n, stream);
    int steps = affine_steps_for_ms(&cal, target_ms);
    report_param(r, "affine_elements", (double)n, "count");
    report_value(r, "affine_work", "steps_for_1ms", steps, "steps");

    event_timer timer;
    event_timer_create(&timer);
    double samples[5];
    for (int i = 0; i < 5; i++) {
        event_timer_start(&timer, stream);
        affine_launch(d_in, d_out, n, steps, stream);
        event_timer_stop(&timer, stream);
        samples[i] = event_timer_ms(&timer);
    }
    event_timer_destroy(&timer);
    stats t = stats_of(samples, 5);
    report_compare(r, "affine_work", "duration", target_ms, &t, "ms");

    CUDA_CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    size_t first_bad;
    size_t bad = verify_affine(h_in, h_out, n, steps, &first_bad);
    report_check(r, "affine_verified", bad == 0, "%zu of %zu outputs differ from the CPU "
                 "reference", bad, n);
    double off = t.median / target_ms - 1;
    report_verdict(r, "affine_calibrated", off > -0.10 && off < 0.10,
                   "%.2f ms asked, %.3f ms measured (%+.1f%%, limit 10%%)", target_ms,
                   t.median, off * 100);

    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_in));
    free(h_out);
    free(h_in);
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick)
        size_mib = size_mib < 32 ? size_mib : 32;

    device_info dev;
    device_select(&opt, &dev);
    /* Three buffers of the copy size live on the host (two) and device (one). */
    if (((size_t)size_mib << 20) > dev.free_memory / 2)
        fail_usage("--size-mib %d is more than half of this GPU's free memory (%zu MiB)",
                   size_mib, dev.free_memory >> 20);
    report *r = report_begin(&lab, &opt, &dev);
    timeline_start(&opt);

    report_capabilities(r, &dev);
    measure_link(r, &dev, &opt);

    report_section(r, "The labs' tools: kernels of known duration");
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    timeline_name_stream(stream, "kernels");
    timeline_span_begin("kernels");
    check_spin(r, &opt, stream);
    check_affine(r, &opt, stream);
    timeline_span_end();
    CUDA_CHECK(cudaStreamDestroy(stream));
    timeline_finish(r, &opt);

    report_hint(r, "another process may be using this GPU or its link (see nvidia-smi), "
                   "or the GPU's clock is still ramping up");
    return report_finish(r);
}
