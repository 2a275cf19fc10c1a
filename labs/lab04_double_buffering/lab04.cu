/* lab04: double buffering: hide copies behind compute.
 *
 * The question: a batch job copies each batch to the GPU (H2D), computes on
 * it (kernel) and copies the result back (D2H). In one stream the copy
 * engines and the SMs take turns: n batches take n(h + k + d). With more
 * streams and buffers, batch i+1 uploads while batch i computes and batch
 * i-1 downloads. How close does that come to the ideal, and what does it
 * take: two buffers? two streams? more? pinned memory?
 *
 * Build and run:   make lab04 && ./lab04        (./lab04 --help for options)
 *                  ./lab04 --sweep --csv        speedup vs kernel time, for a plot
 *
 * What to look for: each stage timed alone, then every variant's time beside
 * the model's prediction, its speedup over the serial run and its efficiency
 * (speedup / ideal speedup). On a balanced load the double buffer with two
 * streams reaches about 2x, not 3x: a stream runs its own work in order, so
 * two streams keep at most two of the three stages busy. Three or more
 * streams keep all three busy. From pageable memory the overlap vanishes.
 *
 * The model, with h, k, d one batch's stage times, n batches, chunks of 1/C
 * batch (m = nC items, each stage 1/C as long) on S streams, item j on stream
 * j % S:
 *   serial    = n(h + k + d)
 *   engines   = (h+k+d)/C + (m-1) max(h', k, d')/C    fill + drain + steady state
 *               (h', d': the copies timed while the other direction runs too,
 *               as they do in the steady state; h and d if the link were
 *               perfectly full duplex)
 *               (one copy engine: the larger of m(h+d)/C and (h+d)/C + m k/C,
 *               as the uploads and downloads take turns on it)
 *   streams   = the longest stream's items one after another (s h/C to reach
 *               stream s's first upload, then its items' h+k+d each)
 *   predicted = the larger of the two; ideal = engines (enough streams);
 *   ideal speedup = serial / ideal -> (h+k+d) / max(h,k,d) as m grows.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int batches = 16;        /* many, so filling and draining is a small part of the run */
static int batch_mib = 16;      /* large, so every copy runs at the link's rate */
static double kernel_ratio = 1; /* kernel time / H2D time per batch: 1 balances the stages */
static int sweep = 0;

static const option lab_options[] = {
    {"batches", OPT_INT, &batches, 2, 1024, "N", "batches in the pipeline (--quick: at most 8)"},
    {"batch-mib", OPT_INT, &batch_mib, 1, 1024, "MIB",
     "input of one batch; its output is as large (--quick: at most 8)"},
    {"kernel-ratio", OPT_DOUBLE, &kernel_ratio, 0.05, 20, "R",
     "kernel time per batch / H2D time per batch (1: balanced stages)"},
    {"sweep", OPT_FLAG, &sweep, 0, 0, NULL,
     "instead of the variants: speedup as the kernel-ratio goes from 1/8 to 8"},
};
static const program_info lab = {
    "lab04", "double buffering: hide copies behind compute",
    lab_options, sizeof lab_options / sizeof lab_options[0], 5,
};

enum { MAX_STREAMS = 8, WARMUP = 1, STAGE_REPEAT = 4, HOST_LIMIT_MIB = 8192 };
enum stage { H2D, KERNEL, D2H };

/* How a variant issues the work. */
typedef struct {
    int streams;       /* S: item j goes to stream j % S, into that stream's own buffers */
    int chunks;        /* C: each batch cut into C items */
    int breadth_first; /* per round of S items: all H2D, then all kernels, then all D2H */
    int pageable;      /* host buffers from malloc instead of cudaMallocHost */
} shape;

typedef struct {
    double h, k, d; /* ms for one batch, each stage timed alone */
    double h_beside, d_beside; /* the copies' times while the other direction runs too:
                                  what they take in a pipeline's steady state */
} stage_ms;

typedef struct {
    int n;                     /* batches */
    int quick;                 /* --quick: fewer variants */
    size_t batch;              /* elements per batch */
    int steps;                 /* affine_work rounds per element */
    int reps;
    uint32_t *h_in, *h_out;    /* pinned, n batches each */
    uint32_t *p_in, *p_out;    /* pageable, for variant (d) */
    uint32_t *d_in, *d_out;    /* room for two batches each: every stream's buffers */
    cudaStream_t stream[MAX_STREAMS];
    cudaEvent_t joined[MAX_STREAMS];
    event_timer timer;
    shape sh;                  /* what run_once issues */
    int stage;                 /* what time_stage issues */
    size_t bad, checked;       /* verification over every run */
    char first_wrong[64];
} pipeline;

/* ---- issuing the work ------------------------------------------------------------- */

/* One stage of item j: batch j / C, chunk j % C, on stream j % S with that
 * stream's device buffers. Items that share a stream share its buffers, and
 * the stream's order keeps them apart: item j + S's upload waits for item j's
 * download. Items on different streams never share a buffer. */
static void issue(const pipeline *p, const shape *sh, int j, int stage)
{
    size_t region = (p->batch + sh->chunks - 1) / sh->chunks;
    int c = j % sh->chunks, s = j % sh->streams;
    size_t lo = p->batch * c / sh->chunks, count = p->batch * (c + 1) / sh->chunks - lo;
    size_t at = (size_t)(j / sh->chunks) * p->batch + lo;
    uint32_t *d_in = p->d_in + s * region, *d_out = p->d_out + s * region;
    cudaStream_t st = p->stream[s];
    if (stage == H2D)
        CUDA_CHECK(cudaMemcpyAsync(d_in, (sh->pageable ? p->p_in : p->h_in) + at,
                                   count * sizeof(uint32_t), cudaMemcpyHostToDevice, st));
    else if (stage == KERNEL)
        affine_launch(d_in, d_out, count, p->steps, st);
    else
        CUDA_CHECK(cudaMemcpyAsync((sh->pageable ? p->p_out : p->h_out) + at, d_out,
                                   count * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
}

/* The whole pipeline once, between two events in stream 0: the other streams
 * start after the start event and stream 0 waits for each of them before the
 * stop event. No host waits inside: the host queues everything, then waits once. */
static double run_once(void *ctx)
{
    pipeline *p = (pipeline *)ctx;
    const shape *sh = &p->sh;
    int m = p->n * sh->chunks, S = sh->streams;
    event_timer_start(&p->timer, p->stream[0]);
    for (int s = 1; s < S; s++)
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[s], p->timer.start, 0));
    if (!sh->breadth_first) {
        for (int j = 0; j < m; j++)
            for (int stage = H2D; stage <= D2H; stage++)
                issue(p, sh, j, stage);
    } else {
        for (int round = 0; round < m; round += S)
            for (int stage = H2D; stage <= D2H; stage++)
                for (int j = round; j < round + S && j < m; j++)
                    issue(p, sh, j, stage);
    }
    for (int s = 1; s < S; s++) {
        CUDA_CHECK(cudaEventRecord(p->joined[s], p->stream[s]));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[0], p->joined[s], 0));
    }
    event_timer_stop(&p->timer, p->stream[0]);
    return event_timer_ms(&p->timer);
}

/* One stage alone: STAGE_REPEAT batches of it back to back in stream 0, per
 * batch. Back to back, as in a pipeline, the launch latency of the first is
 * shared out instead of added to one batch's time. */
static double time_stage(void *ctx)
{
    pipeline *p = (pipeline *)ctx;
    event_timer_start(&p->timer, p->stream[0]);
    for (int i = 0; i < STAGE_REPEAT; i++)
        issue(p, &p->sh, i % p->n, p->stage);
    event_timer_stop(&p->timer, p->stream[0]);
    return event_timer_ms(&p->timer) / STAGE_REPEAT;
}

static stats stage_alone(pipeline *p, int stage, int pageable)
{
    shape one = {1, 1, 0, pageable};
    p->sh = one;
    p->stage = stage;
    return measure(time_stage, p, WARMUP, p->reps < 5 ? 5 : p->reps);
}

/* Runs a shape (warm-up, then reps), on outputs poisoned first, and checks
 * every output element against the CPU reference. */
static stats run_verified(pipeline *p, const shape *sh, const char *name)
{
    size_t total = (size_t)p->n * p->batch, first_bad;
    uint32_t *in = sh->pageable ? p->p_in : p->h_in, *out = sh->pageable ? p->p_out : p->h_out;
    memset(out, 0xff, total * sizeof(uint32_t));
    p->sh = *sh;
    timeline_span_begin(name);
    stats t = measure(run_once, p, WARMUP, sh->pageable && p->reps > 3 ? 3 : p->reps);
    timeline_span_end();
    size_t bad = verify_affine(in, out, total, p->steps, &first_bad);
    if (bad && !p->bad)
        snprintf(p->first_wrong, sizeof p->first_wrong, "%s", name);
    p->bad += bad;
    p->checked += total;
    return t;
}

/* ---- the model -------------------------------------------------------------------- */

static double max2(double a, double b) { return a > b ? a : b; }

/* The engines' bound. Each engine does its stage of all m items, and before
 * its first item and after its last one the other stages run (fill and
 * drain): the busiest engine gives h+k+d + (m-1) max(h',k,d'), where the
 * steady state's copies run beside each other and take h' and d'. With one
 * copy engine the uploads and downloads take turns on it: it is busy m(h+d). */
static double engines_ms(stage_ms t, int chunks, int n, int engines)
{
    double h = t.h / chunks, k = t.k / chunks, d = t.d / chunks;
    int m = n * chunks;
    if (engines >= 2)
        return h + k + d + (m - 1) * max2(max2(t.h_beside, t.k), t.d_beside) / chunks;
    return max2(m * (h + d), h + d + m * k);
}

/* The streams' bound: a stream runs its items one after another, and stream
 * s's first upload waits for the s uploads before it. */
static double streams_ms(stage_ms t, const shape *sh, int n)
{
    double h = t.h / sh->chunks, item = (t.h + t.k + t.d) / sh->chunks, worst = 0;
    int m = n * sh->chunks;
    for (int s = 0; s < sh->streams && s < m; s++)
        worst = max2(worst, s * h + (m - s + sh->streams - 1) / sh->streams * item);
    return worst;
}

static double predicted_ms(stage_ms t, const shape *sh, int n, int engines)
{
    return max2(engines_ms(t, sh->chunks, n, engines), streams_ms(t, sh, n));
}


/* ---- the lesson ------------------------------------------------------------------- */

static stage_ms measure_stages(report *r, pipeline *p, const affine_calibration *cal)
{
    double mib = p->batch * sizeof(uint32_t) / 1048576.0, gb = mib * 1048576 / 1e9;
    stage_ms t;
    stats h = stage_alone(p, H2D, 0), d = stage_alone(p, D2H, 0);
    t.h = t.h_beside = h.median, t.d = t.d_beside = d.median;
    p->steps = affine_steps_for_ms(cal, kernel_ratio * t.h);
    stats k = stage_alone(p, KERNEL, 0);
    t.k = k.median;
    report_section(r, "Each stage alone (per batch, pinned memory)");
    report_text(r, "  %d batches of one stage back to back in one stream, between two events\n",
                STAGE_REPEAT);
    report_param(r, "batch_size", mib, "MiB");
    report_param(r, "steps", p->steps, "steps");
    report_stats(r, "H2D", "time", &h, "ms");
    report_value(r, "H2D", "bandwidth", gb / (t.h / 1e3), "GB/s");
    report_compare(r, "kernel", "time", kernel_ratio * t.h, &k, "ms");
    report_text(r, "  (predicted = --kernel-ratio %g x the H2D time: affine_work calibrated to "
                "%d steps)\n", kernel_ratio, p->steps);
    report_stats(r, "D2H", "time", &d, "ms");
    report_value(r, "D2H", "bandwidth", gb / (t.d / 1e3), "GB/s");
    return t;
}

/* Both directions at once, each timed by events in its own stream. PCIe is
 * full duplex on paper; measured, each direction slows a little while the
 * other runs. The steady state of a pipeline has both running, so the model
 * takes these times for it (t->h_beside, t->d_beside). */
static double measure_duplex(report *r, pipeline *p, stage_ms *t)
{
    const shape up = {1, 1, 0, 0}, down = {2, 1, 0, 0}; /* down: item 1 is stream 1's */
    double *hs = (double *)xmalloc(2 * p->reps * sizeof *hs), *ds = hs + p->reps;
    event_timer back;
    event_timer_create(&back);
    for (int i = -WARMUP; i < p->reps; i++) {
        event_timer_start(&p->timer, p->stream[0]);
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[1], p->timer.start, 0));
        event_timer_start(&back, p->stream[1]);
        for (int j = 0; j < STAGE_REPEAT; j++) {
            issue(p, &up, 0, H2D);
            issue(p, &down, 1, D2H);
        }
        event_timer_stop(&p->timer, p->stream[0]);
        event_timer_stop(&back, p->stream[1]);
        double hm = event_timer_ms(&p->timer), dm = event_timer_ms(&back);
        if (i >= 0)
            hs[i] = hm / STAGE_REPEAT, ds[i] = dm / STAGE_REPEAT;
    }
    event_timer_destroy(&back);
    stats h = stats_of(hs, p->reps), d = stats_of(ds, p->reps);
    free(hs);
    report_compare(r, "H2D beside D2H", "time", t->h, &h, "ms");
    report_compare(r, "D2H beside H2D", "time", t->d, &d, "ms");
    report_text(r, "  (predicted = the time alone: each direction of the link has its own "
                "lanes; x1.00 means full duplex;\n   the model below uses these times for "
                "the steady state, where both directions run)\n");
    t->h_beside = max2(h.median, t->h); /* never faster than alone: that would be noise */
    t->d_beside = max2(d.median, t->d);
    return max2(h.median / t->h, d.median / t->d);
}

/* Runs a pipelined variant and reports its time, speedup and efficiency. */
static double pipelined(report *r, pipeline *p, const char *name, const shape *sh, stage_ms t,
                        int engines, double serial_ms)
{
    stats m = run_verified(p, sh, name);
    double ideal_speedup = p->n * (t.h + t.k + t.d) / engines_ms(t, sh->chunks, p->n, engines);
    double speedup = serial_ms / m.median, efficiency = speedup / ideal_speedup;
    report_compare(r, name, "time", predicted_ms(t, sh, p->n, engines), &m, "ms");
    report_value(r, name, "speedup", speedup, "x");
    report_value(r, name, "efficiency", efficiency * 100, "%");
    return efficiency;
}

static void run_variants(report *r, pipeline *p, stage_ms t, int engines, double slowdown)
{
    const int n = p->n;
    const shape serial = {1, 1, 0, 0}, twice = {2, 1, 0, 0};
    double serial_model = n * (t.h + t.k + t.d), ideal = engines_ms(t, 1, n, engines);
    report_section(r, "The model (from the stage times above)");
    report_value(r, "model", "serial_time", serial_model, "ms");
    report_value(r, "model", "ideal_time", ideal, "ms");
    report_value(r, "model", "ideal_speedup", serial_model / ideal, "x");
    stage_ms duplex = t;
    duplex.h_beside = t.h, duplex.d_beside = t.d;
    report_value(r, "model", "ideal_speedup_full_duplex",
                 serial_model / engines_ms(duplex, 1, n, engines), "x");
    report_value(r, "model", "speedup_limit", (t.h + t.k + t.d) /
                 (engines >= 2 ? max2(max2(t.h_beside, t.k), t.d_beside) : max2(t.h + t.d, t.k)),
                 "x");
    report_text(r, "  serial = n(h+k+d); ideal = %s: fill, drain and the steady state\n  "
                "(h', d': the copies beside each other, measured above; with a perfectly full-"
                "duplex link\n  the ideal would be the full_duplex line); its speedup tends to "
                "the limit as batches grow\n  (chunked batches get closer)\n",
                engines >= 2 ? "(h+k+d) + (n-1) max(h',k,d')" : "max(n(h+d), h+d + nk)");

    report_section(r, "(a) Serial: one stream, one buffer set");
    stats s = run_verified(p, &serial, "serial");
    report_compare(r, "serial", "time", serial_model, &s, "ms");
    report_text(r, "  (predicted = n(h+k+d): the engines and the SMs take turns)\n");

    const char *best = "double buffered";
    report_section(r, "(b) Double buffered: two streams, two buffer sets, batch i on stream i%2");
    double best_eff = pipelined(r, p, "double buffered", &twice, t, engines, s.median);
    report_text(r, "  (predicted = the streams' bound if larger than the engines': each stream runs "
                "upload,\n   kernel, download in turn, so two streams keep at most two of the "
                "three stages busy)\n");

    report_section(r, "(c) N streams, each batch cut into N chunks (one buffer set, a chunk per "
                   "stream)");
    report_text(r, "  1 stream is the serial run above. depth: H2D, kernel, D2H of one chunk, "
                "then the next;\n  breadth: the H2D of every chunk, then every kernel, then "
                "every D2H (the CUDA blog's two versions)\n");
    static const int counts[] = {2, 3, 4, 8};
    static const char *names[][2] = {{"2 streams depth", "2 streams breadth"},
                                     {"3 streams depth", "3 streams breadth"},
                                     {"4 streams depth", "4 streams breadth"},
                                     {"8 streams depth", "8 streams breadth"}};
    /* --quick keeps its budget with the 3- and 4-stream variants alone. */
    for (int i = p->quick ? 1 : 0; i < (p->quick ? 3 : 4); i++)
        for (int breadth = 0; breadth < 2; breadth++) {
            shape sh = {counts[i], counts[i], breadth, 0};
            double eff = pipelined(r, p, names[i][breadth], &sh, t, engines, s.median);
            if (eff > best_eff)
                best_eff = eff, best = names[i][breadth];
        }
    report_text(r, "  (predicted = fill + drain + steady state of 1/N-batch chunks, or the "
                "streams' bound if larger)\n");

    report_section(r, "(d) Pageable host memory: the double buffer from malloc'd buffers");
    size_t bytes = (size_t)n * p->batch * sizeof(uint32_t);
    p->p_in = (uint32_t *)xmalloc(bytes);
    p->p_out = (uint32_t *)xmalloc(bytes);
    memcpy(p->p_in, p->h_in, bytes);
    memset(p->p_out, 0xff, bytes); /* its pages faulted in now, not while a copy is timed */
    stage_ms pt = t;
    stats ph = stage_alone(p, H2D, 1), pd = stage_alone(p, D2H, 1);
    pt.h = ph.median, pt.d = pd.median;
    report_stats(r, "pageable H2D", "time", &ph, "ms");
    report_stats(r, "pageable D2H", "time", &pd, "ms");
    const shape paged = {2, 1, 0, 1};
    stats pm = run_verified(p, &paged, "pageable");
    report_compare(r, "pageable", "time", n * (pt.h + pt.k + pt.d), &pm, "ms");
    report_value(r, "pageable", "speedup", s.median / pm.median, "x");
    report_text(r, "  (predicted = n(h+k+d) with the pageable copy times: no overlap. The driver "
                "stages a pageable\n   copy through its own pinned buffer and returns from a D2H "
                "only when it is done,\n   so the host cannot queue the next batch in time)\n");

    report_section(r, "Checks");
    report_check(r, "outputs_verified", p->bad == 0, "%zu of %zu outputs differ from the CPU "
                 "reference (every element of every variant%s%s)", p->bad, p->checked,
                 p->bad ? "; first in " : "", p->first_wrong);
    report_verdict(r, "pipeline_reaches_ideal", best_eff >= 0.90, "best: %s at %.0f%% of its "
                   "ideal speedup (limit 90%%)", best, best_eff * 100);
    report_hint(r, "%s", slowdown > 1.30
                ? "copies in the two directions slowed each other down a lot when run together "
                  "(see 'H2D beside D2H'): the link or the host's memory is the bottleneck"
                : "another process may be using this GPU or its link (see nvidia-smi), or "
                  "CUDA_DEVICE_MAX_CONNECTIONS is below 8 and streams share hardware queues");
}

/* Speedup as the kernel's share grows: the double buffer (2 streams) and a
 * 4-stream chunked pipeline, against the serial run at each kernel time. */
static void run_sweep(report *r, pipeline *p, const affine_calibration *cal, stage_ms copies,
                      int engines)
{
    static const double ratios[] = {0.125, 0.25, 0.5, 1, 2, 4, 8};
    const shape serial = {1, 1, 0, 0}, twice = {2, 1, 0, 0}, four = {4, 4, 0, 0};
    double peak = 0, peak_ratio = 0;
    report_section(r, "Sweep: kernel time from 1/8 to 8 x the H2D time");
    report_text(r, "  per kernel time: the kernel alone, then the speedup over the serial run of "
                "the double buffer\n  (2 streams) and of 4 streams with chunked batches, "
                "predicted and measured\n");
    for (int i = 0; i < (int)(sizeof ratios / sizeof ratios[0]); i++) {
        char name[32];
        snprintf(name, sizeof name, "sweep %gx", ratios[i]);
        stage_ms t = copies;
        p->steps = affine_steps_for_ms(cal, ratios[i] * copies.h);
        t.k = stage_alone(p, KERNEL, 0).median;
        double serial_model = p->n * (t.h + t.k + t.d);
        stats s = run_verified(p, &serial, name), two = run_verified(p, &twice, name),
              many = run_verified(p, &four, name);
        stats s2 = stats_over(s.median, &two), s4 = stats_over(s.median, &many);
        report_value(r, name, "kernel_to_copy", t.k / t.h, "ratio");
        report_compare(r, name, "speedup_2_streams",
                       serial_model / predicted_ms(t, &twice, p->n, engines), &s2, "x");
        report_compare(r, name, "speedup_4_streams",
                       serial_model / predicted_ms(t, &four, p->n, engines), &s4, "x");
        if (s4.median > peak)
            peak = s4.median, peak_ratio = t.k / t.h;
    }
    report_section(r, "Checks");
    report_check(r, "outputs_verified", p->bad == 0, "%zu of %zu outputs differ from the CPU "
                 "reference (every element of every run%s%s)", p->bad, p->checked,
                 p->bad ? "; first in " : "", p->first_wrong);
    report_verdict(r, "speedup_peaks_at_balance", peak_ratio >= 0.5 && peak_ratio <= 2,
                   "the 4-stream speedup peaks at %.2fx with the kernel %.2f x the H2D time "
                   "(limit: between 0.5 and 2)", peak, peak_ratio);
    report_hint(r, "another process may be using this GPU or its link (see nvidia-smi)");
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick) {
        batches = batches < 8 ? batches : 8;
        batch_mib = batch_mib < 8 ? batch_mib : 8;
        opt.reps = opt.reps < 2 ? opt.reps : 2;
    }
    if ((long)batches * batch_mib > HOST_LIMIT_MIB)
        fail_usage("--batches %d x --batch-mib %d is more than %d MiB of input", batches,
                   batch_mib, HOST_LIMIT_MIB);
    device_info dev;
    device_select(&opt, &dev);
    device_require(dev.async_engines >= 1, "this GPU has no copy engine that runs beside "
                   "kernels (asyncEngineCount 0): copies and kernels take turns, nothing overlaps");
    device_require(!dev.launch_blocking, "CUDA_LAUNCH_BLOCKING=1 makes every launch wait for "
                   "the last: nothing can overlap");
    if (((size_t)batch_mib << 22) > dev.free_memory / 2) /* 4 batches on the device */
        fail_usage("--batch-mib %d: four batches need more than half of this GPU's free memory "
                   "(%zu MiB)", batch_mib, dev.free_memory >> 20);
    report *r = report_begin(&lab, &opt, &dev);
    report_param(r, "batches", batches, "count");
    report_param(r, "kernel_ratio", kernel_ratio, "ratio");
    timeline_start(&opt);

    report_section(r, "What this GPU can overlap");
    report_fact(r, "copy_engines", dev.async_engines, "", "%s", dev.async_engines >= 2
                ? "an H2D and a D2H copy at once, beside a kernel: all three stages overlap, "
                  "steady state max(h,k,d) per batch"
                : "one copy at a time: H2D and D2H take turns, steady state max(h+d,k) per batch");
    if (dev.max_connections < MAX_STREAMS)
        report_fact(r, "max_connections", dev.max_connections, "", "fewer hardware queues than "
                    "the %d streams used: streams share queues and can wait on each other",
                    MAX_STREAMS);

    pipeline p;
    memset(&p, 0, sizeof p);
    p.n = batches;
    p.quick = opt.quick;
    p.batch = (size_t)batch_mib << 18; /* words of 4 bytes */
    p.reps = opt.reps;
    size_t total = (size_t)p.n * p.batch, bytes = total * sizeof(uint32_t);
    size_t device_bytes = 2 * p.batch * sizeof(uint32_t);
    CUDA_CHECK(cudaMallocHost((void **)&p.h_in, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_out, bytes));
    CUDA_CHECK(cudaMalloc((void **)&p.d_in, device_bytes));
    CUDA_CHECK(cudaMalloc((void **)&p.d_out, device_bytes));
    fill_random_u32(p.h_in, total, fresh_seed());
    /* Calibrated on real inputs, and no device byte is ever read unwritten. */
    CUDA_CHECK(cudaMemcpy(p.d_in, p.h_in, device_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(p.d_out, 0xff, device_bytes));
    for (int s = 0; s < MAX_STREAMS; s++) {
        char name[32];
        /* Non-blocking: the legacy default stream never orders them behind its work. */
        CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream[s], cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&p.joined[s], cudaEventDisableTiming));
        snprintf(name, sizeof name, "stream %d", s);
        timeline_name_stream(p.stream[s], name);
    }
    event_timer_create(&p.timer);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream */

    affine_calibration cal = affine_calibrate(p.d_in, p.d_out, p.batch, p.stream[0]);
    stage_ms t = measure_stages(r, &p, &cal);
    double slowdown = dev.async_engines >= 2 ? measure_duplex(r, &p, &t) : 1;
    if (sweep)
        run_sweep(r, &p, &cal, t, dev.async_engines);
    else
        run_variants(r, &p, t, dev.async_engines, slowdown);

    for (int s = 0; s < MAX_STREAMS; s++) {
        CUDA_CHECK(cudaEventDestroy(p.joined[s]));
        CUDA_CHECK(cudaStreamDestroy(p.stream[s]));
    }
    event_timer_destroy(&p.timer);
    CUDA_CHECK(cudaFree(p.d_out));
    CUDA_CHECK(cudaFree(p.d_in));
    CUDA_CHECK(cudaFreeHost(p.h_out));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    free(p.p_out);
    free(p.p_in);
    timeline_finish(r, &opt);
    return report_finish(r);
}
