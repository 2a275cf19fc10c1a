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
 *                  ./lab04 --kernel-ratio 4     a kernel 4x as long as an upload
 *
 * What to look for: each variant's time beside the model's (the larger of the
 * engines' and the streams' bounds, below), its speedup and its efficiency.
 * On a balanced load two streams reach about 2x, not 3x: a stream runs its
 * own work in order. From pageable memory the overlap vanishes.
 */
#include "streamlab.h"
#include "kernels.h"

#include <string.h>

static int batches = 16;        /* many, so filling and draining is a small part of the run */
static int batch_mib = 16;      /* large, so every copy runs at the link's rate */
static double kernel_ratio = 1; /* kernel time / H2D time per batch: 1 balances the stages */

/* At most 64 x 128 MiB: 8 GiB of input, pinned, and as much output. */
static const option lab_options[] = {
    {"batches", OPT_INT, &batches, 2, 64, 8, "N", "batches in the pipeline"},
    {"batch-mib", OPT_INT, &batch_mib, 1, 128, 8, "MIB", "one batch's input (and output)"},
    {"kernel-ratio", OPT_DOUBLE, &kernel_ratio, 0.05, 20, NO_QUICK, "R",
     "kernel time per batch / H2D time per batch (1: balanced stages)"},
    {NULL},
};

static const program_info program = {
    .name = "lab04", .title = "double buffering: hide copies behind compute",
    .handout = "labs/lab04_double_buffering/README.md",
    .options = lab_options, .reps = 5, .quick_reps = 2,
    .needs = NEEDS_COPY_ENGINE | NEEDS_OVERLAP,
    .memory_option = "batch-mib", .memory_per_unit = 4 << 20, /* two buffer sets of in and out */
};

enum { MAX_STREAMS = 8, WARMUP = 1, STAGE_REPEAT = 4, ROUNDS_MIN = 5, PAGEABLE_ROUNDS = 3 };
enum stage { H2D, KERNEL, D2H, BESIDE, PAGEABLE_H2D, PAGEABLE_D2H, STAGES };

/* How a variant issues the work. */
typedef struct {
    int streams;       /* S: item j goes to stream j % S, into that stream's own buffers */
    int chunks;        /* C: each batch cut into C items */
    int breadth_first; /* per round of S items: all H2D, then all kernels, then all D2H */
    int pageable;      /* host buffers from malloc instead of cudaMallocHost */
} shape;

/* The variants, in lesson order; a section starts where one is named. */
static const struct {
    const char *section, *name;
    shape sh;
} variants[] = {
    {"(a) Serial: one stream, one buffer set", "serial", {1, 1, 0, 0}},
    {"(b) Double buffered: batch i on stream i%2", "double buffered", {2, 1, 0, 0}},
    {"(c) N streams, batches cut into N chunks", "2 streams depth", {2, 2, 0, 0}},
    {NULL, "2 streams breadth", {2, 2, 1, 0}}, {NULL, "3 streams depth", {3, 3, 0, 0}},
    {NULL, "3 streams breadth", {3, 3, 1, 0}}, {NULL, "4 streams depth", {4, 4, 0, 0}},
    {NULL, "4 streams breadth", {4, 4, 1, 0}}, {NULL, "8 streams depth", {8, 8, 0, 0}},
    {NULL, "8 streams breadth", {8, 8, 1, 0}},
    {"(d) Pageable memory: the double buffer from malloc'd buffers", "pageable", {2, 1, 0, 1}},
};
enum { N_VARIANTS = sizeof variants / sizeof variants[0], PAGEABLE = N_VARIANTS - 1 };

/* ms per item (a batch, or a chunk of one): each stage alone; c', the slower
 * copy while both run; pageable copies (whole batches only). */
typedef struct {
    double h, k, d, beside, h_pageable, d_pageable;
} stage_ms;

typedef struct {
    int n, engines, reps, quick; /* batches, copy engines, --reps, --quick */
    size_t batch;                /* elements per batch */
    int steps;                   /* affine_work rounds per element */
    uint32_t *h_in, *h_out;      /* pinned, n batches each */
    uint32_t *p_in, *p_out;      /* pageable, for variant (d) */
    uint32_t *d_in, *d_out;      /* room for two batches each: every stream's buffers */
    cudaStream_t stream[MAX_STREAMS];
    cudaEvent_t joined[MAX_STREAMS];
    event_timer timer;
    tally outputs;               /* every output of every run */
    /* what one attempt measured: the stages, then the variants (time n 0: not run) */
    stats stages[STAGES], time[N_VARIANTS], speedup[N_VARIANTS];
    stats chunk_h[MAX_STREAMS + 1]; /* an upload of 1/C of a batch, for each C measured */
    stage_ms t[MAX_STREAMS + 1]; /* the model's stage times per item of a batch cut in C: t[C] */
    double eff[N_VARIANTS];      /* speedup / the ideal speedup at the variant's chunks */
    int best;                    /* the variant of the best efficiency */
} pipeline;

/* ---- issuing the work ------------------------------------------------------------- */

/* One stage of item j: batch j / C, chunk j % C, on stream j % S with that
 * stream's buffers; the stream's order keeps the items that share them apart
 * (item j + S's upload waits for item j's download). */
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

/* Stream `waiter` goes on only once stream `on` has reached this point. */
static void wait_for(const pipeline *p, int waiter, int on)
{
    CUDA_CHECK(cudaEventRecord(p->joined[on], p->stream[on]));
    CUDA_CHECK(cudaStreamWaitEvent(p->stream[waiter], p->joined[on], 0));
}

typedef struct {
    pipeline *p;
    int variant, calls, last; /* its runs so far; the last round's, checked */
} way;

/* A variant's pipeline once, between two events in stream 0, which the other
 * streams fork from and join: the host queues everything, then waits once.
 * Only the last round's run is checked (every variant writes the same
 * outputs, and the check takes longer than a run) and is a timeline span. */
static double run_once(void *ctx)
{
    way *w = (way *)ctx;
    pipeline *p = w->p;
    const shape *sh = &variants[w->variant].sh;
    int m = p->n * sh->chunks, S = sh->streams, last = ++w->calls == w->last;
    uint32_t *in = sh->pageable ? p->p_in : p->h_in, *out = sh->pageable ? p->p_out : p->h_out;
    size_t total = (size_t)p->n * p->batch;
    if (last) { /* on outputs poisoned just before it, checked just after */
        memset(out, 0xff, total * sizeof(uint32_t));
        p->outputs.where = variants[w->variant].name;
        timeline_span_begin(p->outputs.where);
    }
    event_timer_start(&p->timer, p->stream[0]);
    for (int s = 1; s < S; s++) /* they start where stream 0's start event is */
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
    for (int s = 1; s < S; s++)
        wait_for(p, 0, s);
    event_timer_stop(&p->timer, p->stream[0]);
    double ms = event_timer_ms(&p->timer);
    if (last) {
        timeline_span_end();
        verify_affine(in, out, total, p->steps, &p->outputs);
    }
    return ms;
}

/* One stage of one batch, timed alone: H2D, KERNEL, D2H (from pageable
 * memory if asked), or BESIDE, an upload and a download at once. */
typedef struct {
    pipeline *p;
    int stage, pageable, chunks; /* items of 1/chunks of a batch */
} stage_of;

/* The i-th of STAGE_REPEAT batches of one stage, back to back in stream 0;
 * BESIDE: an upload there and a download in stream 1 (item 1's), which forks
 * from stream 0 before the first and joins it after the last. */
static void issue_stage(void *ctx, int i)
{
    const stage_of *so = (const stage_of *)ctx;
    pipeline *p = so->p;
    const shape one = {1, so->chunks, 0, so->pageable}, two = {2, so->chunks, 0, 0};
    if (so->stage != BESIDE) {
        issue(p, &one, i % (p->n * so->chunks), so->stage);
        return;
    }
    if (i == 0)
        wait_for(p, 1, 0);
    issue(p, &two, 0, H2D);
    issue(p, &two, 1, D2H);
    if (i == STAGE_REPEAT - 1)
        wait_for(p, 0, 1);
}

/* The time of one batch's stage on its own, timed by events in stream 0. */
static stats stage_alone(pipeline *p, int stage, int pageable)
{
    stage_of so = {p, stage, pageable, 1};
    return measure_issued(issue_stage, &so, p->stream[0], STAGE_REPEAT, WARMUP,
                          p->reps < ROUNDS_MIN ? ROUNDS_MIN : p->reps);
}

/* ---- the model -------------------------------------------------------------------- */

/* The engines' bound over m items of stage times t each: the busiest engine
 * does its stage of all m items, the other stages before its first and after
 * its last (fill, drain); with one copy engine, uploads and downloads take
 * turns on it. */
static double engines_ms(stage_ms t, int m, int engines)
{
    if (engines >= 2)
        return t.h + t.k + t.d + (m - 1) * fmax(t.beside, t.k);
    return fmax(m * (t.h + t.d), t.h + t.d + m * t.k);
}

/* The streams' bound: a stream runs its items one after another, and stream
 * s's first upload waits for the s uploads before it. */
static double streams_ms(stage_ms t, const shape *sh, int n)
{
    double item = t.h + t.k + t.d, worst = 0;
    int m = n * sh->chunks;
    for (int s = 0; s < sh->streams && s < m; s++)
        worst = fmax(worst, s * t.h + (m - s + sh->streams - 1) / sh->streams * item);
    return worst;
}

/* The larger bound, from the stages timed at the variant's own chunk size,
 * and in *model which it is. From pageable memory nothing overlaps: the
 * driver stages each copy and the call returns after it. */
static double predicted_ms(const pipeline *p, const shape *sh, const char **model)
{
    stage_ms t = p->t[sh->chunks], b = p->t[1];
    double e = engines_ms(t, p->n * sh->chunks, p->engines), s = streams_ms(t, sh, p->n);
    if (sh->pageable) {
        *model = "n(h+k+d), pageable h and d: no overlap";
        return p->n * (b.h_pageable + b.k + b.d_pageable);
    }
    *model = sh->streams == 1 ? "n(h+k+d)"
             : s > e          ? "streams: the longest stream's h+k+d in turn"
             : p->engines >= 2 ? "engines: fill, drain, (nC-1) max(c',k) per chunk"
                              : "engines: max(n(h+d), h+d+nk), one copy engine";
    return fmax(e, s);
}

/* ---- the lesson ------------------------------------------------------------------- */

static const char *const chunk_names[MAX_STREAMS + 1] = {
    "", "", "H2D of 1/2 batch", "H2D of 1/3 batch", "H2D of 1/4 batch", "H2D of 1/5 batch",
    "H2D of 1/6 batch", "H2D of 1/7 batch", "H2D of 1/8 batch"};

/* The stages as measured, and the model they make. */
static void report_model(report *r, const pipeline *p)
{
    const stats *st = p->stages;
    stage_ms t = p->t[1];
    double serial = p->n * (t.h + t.k + t.d), ideal = engines_ms(t, p->n, p->engines);
    report_param(r, "steps", p->steps, "steps");
    report_stats(r, "H2D", "time", &st[H2D], "ms");
    report_compare(r, "kernel", "time", "--kernel-ratio x h", kernel_ratio * t.h, &st[KERNEL],
                   "ms");
    report_stats(r, "D2H", "time", &st[D2H], "ms");
    report_stats(r, "pageable H2D", "time", &st[PAGEABLE_H2D], "ms");
    report_stats(r, "pageable D2H", "time", &st[PAGEABLE_D2H], "ms");
    if (p->engines >= 2)
        report_compare(r, "H2D beside D2H", "time", "the slower alone: full duplex",
                       fmax(t.h, t.d), &st[BESIDE], "ms");
    for (int c = 2; c <= MAX_STREAMS; c++) /* the chunked variants' models use these */
        if (p->chunk_h[c].n)
            report_compare(r, chunk_names[c], "time", "h / C: nothing per copy", t.h / c,
                           &p->chunk_h[c], "ms");
    report_section(r, "The model (from the stage times above)");
    report_fact(r, "copy_engines", p->engines, "", "serial = n(h+k+d); ideal = %s",
                p->engines >= 2 ? "(h+k+d) + (n-1) max(c',k): both copies beside a kernel"
                                : "max(n(h+d), h+d+nk): one copy at a time");
    report_value(r, "model", "ideal_speedup", serial / ideal, "x");
    report_value(r, "model", "speedup_limit", (t.h + t.k + t.d) /
                 (p->engines >= 2 ? fmax(t.beside, t.k) : fmax(t.h + t.d, t.k)), "x");
}

/* The best variant's efficiency, against the model of its own round's stages
 * at its own chunk size, so what a copy costs to start is in the model. 85%:
 * what the model still leaves out is how the stages interleave (each timed
 * alone, within milliseconds of the pipeline); H100s measured 91-105%
 * (median 98-102%) over 83 runs, 15% below that is a pipeline that lost a
 * stage's worth of overlap, not noise. */
static const verdict REACHES_IDEAL = {
    "pipeline_reaches_ideal", 0.85, INFINITY, "%",
    "another process may be using this GPU or its link (see nvidia-smi); 'H2D beside D2H' well "
    "above x1: the link or host memory cannot carry both directions at once; fewer than 8 "
    "CUDA_DEVICE_MAX_CONNECTIONS: streams share hardware queues"};
/* Stage times h, k, d and c' as the model takes them: c' never below the
 * slower copy alone (that would be noise), and the slower copy where one
 * engine never runs both at once. */
static stage_ms stage_times(double h, double k, double d, double beside, int engines)
{
    stage_ms t = {h, k, d, fmax(engines >= 2 ? beside : 0, fmax(h, d)), 0, 0};
    return t;
}

/* The stage times in round j of the samples, from way `first` on (H2D,
 * KERNEL, D2H, BESIDE). */
static stage_ms stages_in_round(const double *ms, int rounds, int first, int j, int engines)
{
    const double *at = ms + (size_t)first * rounds + j;
    return stage_times(at[H2D * rounds], at[KERNEL * rounds], at[D2H * rounds],
                       at[BESIDE * rounds], engines);
}

/* One attempt, afresh, in rounds, each in another order: the stages alone at
 * every chunk size a variant uses (h, k, d, and c', an upload and a download
 * at once), the serial run, and the pipelined variants. A variant's
 * efficiency in a round is its speedup over that round's serial run against
 * the ideal speedup of that round's stages at its own chunk size, so the
 * model shares the measurement's moment (a link or a host memory another
 * process slows for a while slows both) and its cost per copy (a chunk's
 * copy takes more than its share of a batch's). The verdict reads the median
 * over the rounds. The pageable variant has PAGEABLE_ROUNDS at most of its
 * own with the serial run: a run of it takes four serial ones' time, and
 * what it shows (no overlap) is a gap of 4x. */
static int attempt_pipeline(void *ctx, double *spread)
{
    pipeline *p = (pipeline *)ctx;
    enum { PER = BESIDE + 1, MAX_WAYS = PER * (MAX_STREAMS + 1) + N_VARIANTS };
    int rounds = p->reps < ROUNDS_MIN ? ROUNDS_MIN : p->reps;
    int paged = p->reps < PAGEABLE_ROUNDS ? p->reps : PAGEABLE_ROUNDS;
    int k = 0, first_of[MAX_STREAMS + 1] = {0}, run_way[N_VARIANTS];
    stage_of so[MAX_WAYS];
    issued alone[MAX_WAYS];
    way w[N_VARIANTS] = {{0}}, pageable = {p, PAGEABLE, 0, WARMUP + paged};
    timed_fn fn[MAX_WAYS];
    void *of[MAX_WAYS];
    for (int i = 0; i < PAGEABLE; i++) { /* --quick: 2 streams, then 3 and 4 chunked */
        const shape *sh = &variants[i].sh;
        run_way[i] = -1;
        if (p->quick && sh->chunks > 1 && (sh->streams == 2 || sh->streams == 8))
            continue;
        w[i] = (way){p, i, 0, WARMUP + rounds};
        fn[k] = run_once, of[k] = &w[i], run_way[i] = k++;
        if (first_of[sh->chunks])
            continue;
        first_of[sh->chunks] = k; /* this chunk size's stages: the next PER ways */
        for (int st = H2D; st <= BESIDE; st++, k++) {
            so[k] = (stage_of){p, st, 0, sh->chunks};
            alone[k] = (issued){issue_stage, &so[k], p->stream[0], STAGE_REPEAT, {0, 0}};
            event_timer_create(&alone[k].timer);
            fn[k] = time_issued, of[k] = &alone[k];
        }
    }
    double *ms = (double *)xmalloc(k * rounds * sizeof *ms);
    double *eff = (double *)xmalloc(rounds * sizeof *eff);
    measure_rounds(fn, of, k, WARMUP, rounds, ms);
    for (int c = 1; c <= MAX_STREAMS; c++) {
        int f = first_of[c];
        if (!f)
            continue;
        stats at[PER];
        for (int st = H2D; st <= BESIDE; st++) {
            at[st] = stats_of(ms + (size_t)(f + st) * rounds, rounds);
            event_timer_destroy(&alone[f + st].timer);
        }
        p->t[c] = stage_times(at[H2D].median, at[KERNEL].median, at[D2H].median,
                              at[BESIDE].median, p->engines);
        p->chunk_h[c] = at[H2D];
        if (c == 1)
            memcpy(p->stages, at, sizeof at);
    }
    stats *st = p->stages;
    st[PAGEABLE_H2D] = stage_alone(p, H2D, 1), st[PAGEABLE_D2H] = stage_alone(p, D2H, 1);
    p->t[1].h_pageable = st[PAGEABLE_H2D].median, p->t[1].d_pageable = st[PAGEABLE_D2H].median;
    const double *serial_ms = ms + (size_t)run_way[0] * rounds;
    stats best_eff = {0};
    p->best = 1; /* the double buffer, unless one does better */
    for (int i = 1; i < PAGEABLE; i++) {
        if (run_way[i] < 0)
            continue;
        int c = variants[i].sh.chunks;
        const double *row = ms + (size_t)run_way[i] * rounds;
        for (int r = 0; r < rounds; r++) {
            stage_ms batch = stages_in_round(ms, rounds, first_of[1], r, p->engines);
            stage_ms item = stages_in_round(ms, rounds, first_of[c], r, p->engines);
            eff[r] = serial_ms[r] / row[r] * engines_ms(item, p->n * c, p->engines) /
                     (p->n * (batch.h + batch.k + batch.d));
        }
        stats e = stats_of(eff, rounds);
        p->time[i] = stats_of(row, rounds);
        p->speedup[i] = stats_of_ratios(serial_ms, row, rounds);
        p->eff[i] = e.median;
        if (i == 1 || p->eff[i] > p->eff[p->best])
            p->best = i, best_eff = e;
    }
    p->time[0] = stats_of(serial_ms, rounds);
    free(eff);
    free(ms); /* the serial run was checked in the rounds: not again */
    way serial = {p, 0, 0, 0};
    paired pp = measure_paired(run_once, &serial, run_once, &pageable, WARMUP, paged);
    p->time[PAGEABLE] = pp.b, p->speedup[PAGEABLE] = pp.ratio;
    *spread = stats_spread(&best_eff);
    return verdict_holds(&REACHES_IDEAL, p->eff[p->best]);
}

/* Each variant's time beside its model; the speedup over the serial run; the efficiency. */
static void report_variants(report *r, const pipeline *p)
{
    const char *model;
    for (int i = 0; i < N_VARIANTS; i++) {
        const char *name = variants[i].name;
        if (variants[i].section)
            report_section(r, variants[i].section);
        if (!p->time[i].n)
            continue;
        double predicted = predicted_ms(p, &variants[i].sh, &model);
        report_compare(r, name, "time", model, predicted, &p->time[i], "ms");
        if (i == 0)
            continue; /* the serial run: what the speedups are over */
        report_compare(r, name, "speedup", "serial / predicted",
                       p->n * (p->t[1].h + p->t[1].k + p->t[1].d) / predicted, &p->speedup[i],
                       "x");
        if (i != PAGEABLE)
            report_value(r, name, "efficiency", p->eff[i] * 100, "%");
    }
    report_section(r, "Checks");
    report_tally(r, "outputs_verified", &p->outputs,
                 "outputs differ from the CPU reference (every element of every variant)");
    report_verdict(r, &REACHES_IDEAL, p->eff[p->best], "best: %s at %.0f%% of its ideal speedup",
                   variants[p->best].name, p->eff[p->best] * 100);
}

/* ---- setup: the run owns these, lab_end() releases them ---------------------------- */

/* Fresh random inputs; non-blocking streams: the legacy stream never orders them. */
static pipeline pipeline_open(lab_run *run)
{
    pipeline p = {.n = batches, .engines = run->dev.async_engines, .reps = run->opt.reps,
                  .quick = run->opt.quick, .batch = (size_t)batch_mib << 18}; /* 4-byte words */
    size_t total = (size_t)p.n * p.batch, bytes = total * sizeof(uint32_t);
    size_t device_bytes = 2 * p.batch * sizeof(uint32_t);
    p.h_in = (uint32_t *)lab_pinned(run, bytes), p.h_out = (uint32_t *)lab_pinned(run, bytes);
    p.p_in = (uint32_t *)lab_pageable(run, bytes), p.p_out = (uint32_t *)lab_pageable(run, bytes);
    p.d_in = (uint32_t *)lab_device(run, device_bytes);
    p.d_out = (uint32_t *)lab_device(run, device_bytes);
    fill_random_u32(p.h_in, total, fresh_seed());
    memcpy(p.p_in, p.h_in, bytes);
    memset(p.p_out, 0xff, bytes); /* its pages faulted in now, not while a copy is timed */
    CUDA_CHECK(cudaMemcpy(p.d_in, p.h_in, device_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(p.d_out, 0xff, device_bytes)); /* no device byte is read unwritten */
    lab_streams(run, p.stream, MAX_STREAMS, "stream", cudaStreamNonBlocking);
    for (int s = 0; s < MAX_STREAMS; s++)
        p.joined[s] = lab_event(run, cudaEventDisableTiming);
    p.timer = lab_timer(run);
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memset ran on the legacy stream */
    stats h = stage_alone(&p, H2D, 0); /* the kernel's steps, once: --kernel-ratio x an upload */
    affine_calibration cal = affine_calibrate(p.d_in, p.d_out, p.batch, p.stream[0]);
    p.steps = affine_steps_for_ms(&cal, kernel_ratio * h.median);
    return p;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    pipeline p = pipeline_open(&run);
    report_section(run.r, "Each stage alone (per batch), then both copies at once");
    lab_attempt(&run, "pipeline vs serial", attempt_pipeline, &p);
    report_model(run.r, &p);
    report_variants(run.r, &p);
    return lab_end(&run);
}
