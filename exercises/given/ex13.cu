/* ex13's given program: does the student's backward pass reduce each bucket
 * of gradients on the communication streams while the next layers compute,
 * with every sum right on every GPU?
 *
 * The student writes run_backward() (exercises/ex13_gradient_overlap.cu; the
 * contract is ex13.h), which this program hands every GPU's two streams,
 * an event per layer and three functions: layer(g, l) (grad_layer, kernels/
 * gradients.h: the layer spins its time, then writes its gradients, small
 * integers held as floats, so a sum is exact in any order), last_layer(k)
 * and all_reduce(k) (one NCCL group over every GPU, ranks.h). Never the
 * gradients, the sums, the layers' length or the communicator. The layers'
 * length is drawn afresh every run of the program, uniform in [0.12, 0.18)
 * ms (lab13's default is 0.148), every pass fresh gradients.
 *
 * It measures in rounds, each in another order (measure_ways): compute only
 * (the layers, no all-reduce), the program's own serial pass (every layer,
 * then every bucket: the exercise as handed out) and the student's. Each run
 * is timed on the host clock from idle GPUs to idle GPUs (no one stream's
 * events time two GPUs), on buffers poisoned (NaN) before it; after every
 * reducing run every reduced word of every GPU is checked against the CPU's
 * formula on the GPU, and a window of each on the CPU (grad_verify). An
 * all-reduce sweep fits t(S) = alpha + S/B for lab13's model: serial =
 * compute + the buckets' t(S); overlapped, bucket k starts when its last
 * layer and bucket k-1 are done.
 *
 * The metrics (grader/rubrics/ex13.ini scores them), medians over the rounds:
 *   gpus                  GPUs (one NCCL rank each);
 *   runs                  reducing runs checked: the warm-up's and the rounds';
 *   mismatches, checked   reduced words wrong (every GPU, every run), of all checked;
 *   calls_wrong           (GPU, layer) pairs and buckets of the student's runs
 *                         not queued exactly once;
 *   compute_ms, serial_ms, yours_ms   the three ways;
 *   speedup               serial / yours, round by round;
 *   model_speedup         the model's serial / overlapped;
 *   efficiency            speedup / model_speedup.
 *
 * Level two, after level one, in the same run: how many layers a bucket.
 * Its all-reduces go through a second communicator of one block per
 * collective (lab13's part 4: about 21 GB/s on two H200s, where lab13's
 * overlap followed its model within 1%), every size in NCCL's Simple
 * protocol (kernels/ranks.h, ranks_one_protocol, says why), fitted first:
 * t(S) = alpha + S/B over three sizes, least squares. Then a job drawn
 * afresh: first the model's best m, uniform over the divisors of L (but L)
 * that the ranges below can make the best; then L = --layers layers of
 * t = alpha / q, q in [0.4, 3) (a q for which some r gives that best, in
 * the model; the spin set from a first measurement of the layers alone, t
 * then measured again), g = r t B bytes of gradients a layer, r in
 * [0.1, 1), r drawn again (up to 64 times) until the model at this run's
 * alpha, B and t has that best m, with one layer a bucket and one bucket
 * for all 20% or more above it. So the best m moves from job to job, and no
 * one m is near the best in most of them. The student's
 * level2_bucket_layers() gets L, t, g, alpha and B (ex13.h) and returns m
 * and the pass time the model predicts at that m (the model's own number,
 * held to the program's: a fixed m cannot carry it); the program
 * runs the student's run_backward() with buckets of m layers,
 * its own serial pass (every layer, then one all-reduce of everything: one
 * bucket), and its own overlapped pass (lab13's, kernels/overlap.cu) at
 * every divisor of L and at the model's best m: the candidates, all in the
 * same rounds (2 x --reps - 1 of them), each run on poisoned buffers, its
 * sums checked. The model, buckets of m layers, K = ceil(L / m) of them,
 * each all-reduce c = alpha + m g / B: bucket k starts when its last layer
 * and bucket k-1 are done, T(m) = max(L t + c, m t + K c) when m divides L.
 * A call of layer(), last_layer() or all_reduce() out of range is counted
 * there (a level-two error), not fatal: level one's points stand.
 *
 * Level two's metrics:
 *   level2_layers, level2_layer_ms, level2_layer_mib   the job (L, t, g);
 *   level2_alpha_us, level2_gbps   the slow link's fit (alpha, B);
 *   level2_m, level2_model_m, level2_best_m   the student's m, the model's
 *                         best, the fastest candidate (1 to L);
 *   level2_predicted      the student's LEVEL2_PREDICTED_SPEEDUP;
 *   level2_speedup, level2_model_speedup   serial over the student's pass
 *                         (median round), and the model's at the student's m;
 *   level2_best_speedup   the fastest candidate's, serial over it;
 *   level2_of_best        the fastest candidate's time over the student's
 *                         pass, round by round, the median;
 *   level2_model_gap      the student's m by the model at the job handed in:
 *                         T(m) over the least T of the candidates, less 1
 *                         (0 at the model's best);
 *   level2_predicted_ms, level2_model_ms   the student's predicted T(m) and
 *                         the program's, at the student's m;
 *   level2_prediction_off |predicted / the program's T(m) - 1|;
 *   level2_model_off      0 when level2_model_gap <= L2_GAP_MAX and
 *                         level2_prediction_off <= L2_PREDICTION_MAX, else 1;
 *   level2_mismatches, level2_checked, level2_calls_wrong   reduced words
 *                         wrong in level two's runs (every way's), of all
 *                         checked; the student's calls out of range, and
 *                         layers and buckets not queued exactly once;
 *   level2_wrong          their sum, plus 1 when m was out of range
 *                         (nothing else is then measured).
 * The model's best m, the candidates' speedups (the fastest is the bar) and
 * the model's T at the student's m (the prediction's bar) are level two's
 * answers: the grader's line carries them; a student's run prints none of
 * them, nor level2_prediction_off, from which T follows; the model's
 * example speedup only once LEVEL2_PREDICTED_SPEEDUP is written.
 * --check: 4 layers, 16 MiB of gradients in 2 MiB buckets, one round, both
 * levels (level two's job at 4 layers). On one GPU everything runs on a
 * one-rank communicator, is checked, and the program exits 3: the overlap
 * needs two GPUs. */
#include "ex13.h"
#include "grading.h"
#include "gpus.h"
#include "gradients.h"
#include "ranks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int layers = 24;
static double grad_mib = 1024; /* lab13's default: 1.44x on two H200s */
static double bucket_mib = 25; /* DDP's bucket_cap_mb */

static const option ex_options[] = {
    {"layers", OPT_INT, &layers, 2, 256, 12, "L", "layers of the backward pass"},
    {"grad-mib", OPT_DOUBLE, &grad_mib, 8, 8192, 256, "MIB", "gradients per GPU"},
    {"bucket-mib", OPT_DOUBLE, &bucket_mib, 0.25, 8192, NO_QUICK, "MIB", "the bucket size"},
    {NULL},
};

static const program_info ex = {
    .name = "ex13",
    .title = "exercise: all-reduce each bucket of gradients while the backward pass goes on",
    .handout = "labs/lab13_gradient_overlap/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
    .memory_option = "grad-mib", .memory_per_unit = 2 * 1048576.0, /* gradients + sums */
    .before_context = ranks_before_context,
};

/* The check pass (--check): 4 layers, 16 MiB of gradients in 2 MiB
 * buckets, one round. grading_begin() calls it before the settings are
 * printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    layers = 4;
    grad_mib = 16;
    bucket_mib = 2;
    opt->reps = 1; /* rounds */
}

/* lab13's tolerance: the model leaves out the SMs NCCL's kernels take from
 * the layers, so it is an upper bound; lab13 reached 0.98 of it on two
 * H200s, and 0.7 leaves a shared host's spread. */
static const verdict OVERLAPS = {
    "buckets_overlap_layers", 0.7, INFINITY, "x",
    "your buckets did not ride behind the layers: is each all_reduce(k) issued inside the layer "
    "loop, right after its last layer, with the comm streams waiting on that layer's event "
    "(cudaStreamWaitEvent) and no host wait?"};

/* Level two: the student's pass at m against the fastest candidate in the
 * same rounds; grader/rubrics/ex13.ini's level2_bucket_size says why 0.9. */
static const verdict BEST_BUCKET = {
    "level2_bucket_size", 0.9, INFINITY, "x",
    "your m is not the bucket size this job wants: each bucket costs alpha + m g / B, and the "
    "pass ends either with the layers and the last bucket, or with the first bucket's layers "
    "and every bucket's all-reduce, one after the other (lab13's handout, Stuck?)"};
/* Level two: the model's own numbers, both of them: the student's m within
 * L2_GAP_MAX of the model's best T at the job handed in (T(m) / min over the
 * candidates of T - 1, 0 at the model's best), and the T(m) the student
 * predicts within L2_PREDICTION_MAX of the program's for that m; the
 * rubric's level2_sized_by_model says why 1% and 2%. 0 when both hold. */
static const double L2_GAP_MAX = 0.01, L2_PREDICTION_MAX = 0.02;
static const verdict SIZED_BY_MODEL = {
    "level2_sized_by_model", 0, 0, "",
    "your m or your predicted time is not the model's at the job handed in: which m makes "
    "lab13's T(m) least at the job's own t, g, alpha and B (the last bucket holding what is "
    "left), and what is T there? A size that is good for most jobs is not this job's"};

enum { WARMUP = 1, CALLS = 3, MAX_BUCKETS = 32768, MAX_WAYS2 = 32 };
static const double MIB = 1048576.0;
/* the program's serial and overlapped passes, the student's, the layers alone */
enum way { COMPUTE_ONLY, SERIAL, YOURS, WAYS, OVERLAPPED = WAYS };

/* Level two's draw (the opening comment): q = alpha / t and r = g / (B t),
 * wide enough that the model's best m moves from job to job (2 to 8 of 24
 * layers; the rubric's level2_sized_by_model gives the shares). */
static const double L2_Q_LO = 0.4, L2_Q_HI = 3.0, L2_R_LO = 0.1, L2_R_HI = 1.0;
static const double L2_MARGIN = 1.2; /* one layer a bucket and one bucket at least 20% slower */
enum { L2_TRIES = 64, L2_PAIRS = 256, L2_GRID = 24, L2_SLOW_CTAS = 1 };

/* The program's own bench: static, so that the student's file reaches it
 * only through layer(), last_layer() and all_reduce(). */
static struct {
    grad_bench g;
    ranks comm, slow; /* level one's, level two's (one block per collective) */
    const ranks *active;
    size_t bucket; /* words */
    int buckets;
    int layer_calls[EX13_MAX_GPUS * 256], bucket_calls[MAX_BUCKETS];
    tally sums, sums2;
    int runs, calls_wrong;
    int level2, calls_out2, calls_wrong2; /* level two: calls out of range counted, not fatal */
} bench;

/* A call out of range: in level one it stops the program (exit 1); in level
 * two it is counted, so that level one's points stand. */
static int bad_call(const char *fmt, ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!bench.level2)
        fail_wrong("%s", why);
    bench.calls_out2++;
    return 0;
}

static void layer(int g, int l)
{
    if (g < 0 || g >= bench.g.gpus || l < 0 || l >= bench.g.layers) {
        bad_call("layer(%d, %d): GPUs are 0 to %d, layers 0 to %d", g, l, bench.g.gpus - 1,
                 bench.g.layers - 1);
        return;
    }
    bench.layer_calls[g * bench.g.layers + l]++;
    grad_layer(&bench.g, g, l);
}

static int last_layer(int k)
{
    if (k < 0 || k >= bench.buckets)
        return bad_call("last_layer(%d): buckets are 0 to %d", k, bench.buckets - 1);
    return grad_bucket_last_layer(&bench.g, bench.bucket, k);
}

static void all_reduce(int k)
{
    if (k < 0 || k >= bench.buckets) {
        bad_call("all_reduce(%d): buckets are 0 to %d", k, bench.buckets - 1);
        return;
    }
    bench.bucket_calls[k]++;
    size_t first = (size_t)k * bench.bucket, left = bench.g.words - first;
    ranks_all_reduce(bench.active, &bench.g, first, left < bench.bucket ? left : bench.bucket);
}

/* The program's own: every layer, then every bucket (the exercise as given). */
static void serial(const backward *b)
{
    for (int l = 0; l < b->layers; l++)
        for (int g = 0; g < b->gpus; g++) {
            b->layer(g, l);
            CUDA_CHECK(cudaEventRecord(b->done[g][l], b->compute[g]));
        }
    for (int g = 0; g < b->gpus; g++)
        CUDA_CHECK(cudaStreamWaitEvent(b->comm[g], b->done[g][b->layers - 1], 0));
    for (int k = 0; k < b->buckets; k++)
        b->all_reduce(k);
}

/* Level two's candidates: lab13's overlapped pass (kernels/overlap.cu),
 * each bucket reduced as soon as its last layer has ended. */
static void overlapped(const backward *b)
{
    int k = 0;
    for (int l = 0; l < b->layers; l++) {
        for (int g = 0; g < b->gpus; g++) {
            b->layer(g, l);
            CUDA_CHECK(cudaEventRecord(b->done[g][l], b->compute[g]));
        }
        for (; k < b->buckets && b->last_layer(k) == l; k++) {
            for (int g = 0; g < b->gpus; g++)
                CUDA_CHECK(cudaStreamWaitEvent(b->comm[g], b->done[g][l], 0));
            b->all_reduce(k);
        }
    }
}

static void compute_only(const backward *b)
{
    for (int l = 0; l < b->layers; l++)
        for (int g = 0; g < b->gpus; g++)
            b->layer(g, l);
}

/* One run of a way on poisoned buffers, timed from idle GPUs to idle GPUs;
 * the sums of a reducing run checked, the student's calls counted. */
static void run_way(enum way w, double *ms)
{
    backward b = {bench.g.gpus, bench.g.layers, bench.buckets}; /* a copy for each run */
    for (int g = 0; g < bench.g.gpus; g++)
        b.compute[g] = bench.g.compute[g], b.comm[g] = bench.g.comm[g], b.done[g] = bench.g.done[g];
    b.layer = layer, b.last_layer = last_layer, b.all_reduce = all_reduce;
    memset(bench.layer_calls, 0, sizeof bench.layer_calls);
    memset(bench.bucket_calls, 0, sizeof bench.bucket_calls);
    grad_poison(&bench.g);
    double t0 = host_time_ms();
    (w == YOURS ? run_backward : w == SERIAL ? serial : w == OVERLAPPED ? overlapped
                                                                        : compute_only)(&b);
    grad_sync(&bench.g);
    *ms = host_time_ms() - t0;
    if (w == COMPUTE_ONLY)
        return;
    tally *t = bench.level2 ? &bench.sums2 : &bench.sums;
    t->where = w == YOURS ? "your pass" : w == SERIAL ? "serial" : "the program's buckets";
    grad_verify(&bench.g, bench.g.words, t);
    bench.runs += !bench.level2;
    if (w != YOURS)
        return;
    int wrong = 0;
    for (int i = 0; i < bench.g.gpus * bench.g.layers; i++)
        wrong += bench.layer_calls[i] != 1;
    for (int k = 0; k < bench.buckets; k++)
        wrong += bench.bucket_calls[k] != 1;
    *(bench.level2 ? &bench.calls_wrong2 : &bench.calls_wrong) += wrong;
}

static void timed_run(void *ctx, double *ms)
{
    run_way(*(const enum way *)ctx, ms);
}

/* Buckets of `words` words each (the last one the rest). */
static void set_buckets(size_t words)
{
    bench.bucket = words == 0 || words > bench.g.words ? bench.g.words : words;
    bench.buckets = grad_buckets(bench.g.words, bench.bucket);
}

typedef struct { size_t words; } sized;

static double allreduce_ms(void *ctx)
{
    size_t words = ((sized *)ctx)->words;
    double t0 = host_time_ms();
    for (int i = 0; i < CALLS; i++) /* back to back, as nccl-tests times them */
        ranks_all_reduce(bench.active, &bench.g, 0, words);
    grad_sync(&bench.g);
    return (host_time_ms() - t0) / CALLS;
}

/* t(S) = alpha + S/B on the active communicator, least squares over sizes. */
static link_fit fit_link(const double *bytes, int n, int reps)
{
    double ms[3];
    for (int i = 0; i < n; i++) {
        sized s = {(size_t)(bytes[i] / sizeof(float))};
        ms[i] = measure(allreduce_ms, &s, WARMUP, reps).median;
    }
    return link_fit_of(bytes, ms, n);
}

static void bench_open(lab_run *lab)
{
    int dev[GRAD_MAX_GPUS], n = gpus_visible(lab->dev.index, dev, GRAD_MAX_GPUS);
    size_t words = (size_t)(grad_mib * MIB / sizeof(float));
    size_t bucket = (size_t)(bucket_mib * MIB / sizeof(float));
    if (grad_buckets(words, bucket == 0 || bucket > words ? words : bucket) > MAX_BUCKETS)
        fail_usage("--bucket-mib %g makes %d buckets of --grad-mib %g: at most %d", bucket_mib,
                   grad_buckets(words, bucket), grad_mib, MAX_BUCKETS);
    grad_open(lab, &bench.g, dev, n, layers, words);
    grad_job(&bench.g, layers, grading_uniform(0.12, 0.18), words,
             grad_shape("half of the SMs", lab->dev.sm_count / 2, 1)); /* NCCL gets the rest */
    set_buckets(bucket);
    grad_warm(&bench.g); /* every kernel on every GPU before the first collective */
    ranks_one_protocol(); /* level two's model needs one alpha and one B (ranks.h) */
    ranks_open(&bench.comm, dev, n, 0);
    ranks_open(&bench.slow, dev, n, L2_SLOW_CTAS);
    bench.active = &bench.comm;
}

/* ---- Level one: run_backward() at --bucket-mib --------------------------- */

typedef struct {
    stats time[WAYS], speedup;
    double serial_model, model;
    link_fit fit;
} level1_result;

static level1_result level_one(lab_run *lab, int check)
{
    report *r = lab->r;
    int rounds = lab->opt.reps;
    level1_result o;
    double all = bench.g.words * (double)sizeof(float);
    double bytes[3] = {bench.bucket * (double)sizeof(float), all / 4, all};
    o.fit = fit_link(bytes, 3, check ? 1 : 3); /* a bucket, a quarter of the gradients, all */
    enum way ways[WAYS] = {COMPUTE_ONLY, SERIAL, YOURS};
    double *v = (double *)lab_pageable(lab, WAYS * (size_t)rounds * sizeof(double));
    measure_ways(timed_run, ways, sizeof ways[0], WAYS, 1, WARMUP, rounds, v);
    stats_of_rows(v, WAYS, rounds, o.time);
    o.speedup = stats_of_ratios(v + SERIAL * rounds, v + YOURS * rounds, rounds);
    o.serial_model = o.time[COMPUTE_ONLY].median;
    for (int k = 0; k < bench.buckets; k++) {
        size_t left = bench.g.words - (size_t)k * bench.bucket;
        o.serial_model += allreduce_model_ms(&o.fit, (left < bench.bucket ? left : bench.bucket) * 4.0);
    }
    o.model = o.serial_model / overlap_model_ms(&o.fit, &bench.g, o.time[COMPUTE_ONLY].median,
                                                bench.bucket);

    report_param(r, "gpus", bench.g.gpus, "");
    report_param(r, "layers", bench.g.layers, "");
    report_param(r, "layer_ms", bench.g.layer_ns * 1e-6, "ms");
    report_param(r, "grad_mib", grad_mib, "MiB");
    report_param(r, "buckets", bench.buckets, "");
    report_value(r, "all-reduce", "alpha", o.fit.alpha_ms * 1e3, "us");
    report_value(r, "all-reduce", "B", o.fit.bytes_per_ms * 1e-6, "GB/s");
    report_section(r, "One backward pass on every GPU: compute only, serial, and yours");
    report_stats(r, "compute only", "time", &o.time[COMPUTE_ONLY], "ms");
    report_compare(r, "serial", "time", "compute + the buckets' alpha + S/B", o.serial_model,
                   &o.time[SERIAL], "ms");
    report_stats(r, "your pass", "time", &o.time[YOURS], "ms");
    report_compare(r, "your pass", "speedup", "serial / overlapped models", o.model, &o.speedup,
                   "x");
    report_tally(r, "sums_verified", &bench.sums, "reduced gradient words that are not the sum "
                 "over the GPUs (fresh words every run, poisoned before it)");
    report_check(r, "calls_once", bench.calls_wrong == 0, "%d (GPU, layer) pairs and buckets not "
                 "queued exactly once by run_backward()", bench.calls_wrong);
    return o;
}

/* ---- Level two: how many layers a bucket (level2_bucket_layers) ---------- */

/* lab13's own model (overlap_model_ms, kernels/gradients.h) for job j in
 * buckets of m layers: bucket k starts when its last layer and bucket k-1
 * are done, each all-reduce alpha + S / B; m = L is the serial pass. That
 * model counts whole words, and a job reaches it only through S / B, so
 * the job is scaled to a million words a layer, B with it: the model's
 * jobs in units of t (draw_best_m, the prediction's example) hold a byte
 * or less a layer, which would be no word at all, and buckets of none. */
static double bucket_model_ms(const bucket_job *j, int m)
{
    enum { WORDS = 1000000 };
    grad_bench g;
    memset(&g, 0, sizeof g); /* the model reads only the gradients' shape */
    g.layers = j->layers;
    g.layer_words = WORDS;
    g.words = (size_t)WORDS * (size_t)j->layers;
    link_fit f = {j->alpha_ms, j->bytes_per_ms * (WORDS * sizeof(float)) / j->layer_bytes};
    return overlap_model_ms(&f, &g, j->layers * j->layer_ms, g.layer_words * (size_t)m);
}

/* The model's best m for job j (the largest of equals: fewer calls). */
static int model_best_m(const bucket_job *j)
{
    int best = j->layers;
    for (int m = j->layers - 1; m >= 1; m--)
        if (bucket_model_ms(j, m) < bucket_model_ms(j, best) * (1 - 1e-9))
            best = m;
    return best;
}

static double model_speedup(const bucket_job *j, int m)
{
    return bucket_model_ms(j, j->layers) / bucket_model_ms(j, m);
}

/* The layers alone, `runs` times, at the bench's job: the median per layer. */
static double layer_time_ms(int runs)
{
    double ms[8];
    enum way w = COMPUTE_ONLY;
    run_way(w, &ms[0]); /* warm-up */
    for (int i = 0; i < runs; i++)
        run_way(w, &ms[i]);
    return stats_of(ms, runs).median / bench.g.layers;
}

/* Sets L layers of `layer_words` words each, spinning `spin_ms`. */
static void level2_job(int L, double spin_ms, size_t layer_words)
{
    grad_job(&bench.g, L, spin_ms, (size_t)L * layer_words,
             grad_shape("half of the SMs", bench.g.shape.blocks, 1));
}

/* 1 when the model puts job j's best m 20% or more below one layer a bucket
 * and below one bucket for all, and that best is `want` (any m when 0). */
static int job_fits(const bucket_job *j, int want)
{
    int best = model_best_m(j);
    double top = model_speedup(j, best);
    return top >= L2_MARGIN && top >= L2_MARGIN * model_speedup(j, 1) && (!want || best == want);
}

/* The job's best m, drawn first: uniform over the divisors of L (but L)
 * that some q and r of the ranges make the model's best with the margins
 * (a grid over the ranges, in the model at t = 1); 0, any m, when none. */
static int draw_best_m(int L)
{
    int reach[257] = {0}, n = 0, pick[256];
    for (int a = 0; a < L2_GRID; a++)
        for (int b = 0; b < L2_GRID; b++) {
            double q = L2_Q_LO + (L2_Q_HI - L2_Q_LO) * (a + 0.5) / L2_GRID;
            double r = L2_R_LO + (L2_R_HI - L2_R_LO) * (b + 0.5) / L2_GRID;
            bucket_job j = {L, 1, r, q, 1}; /* t = 1, alpha = q, g / B = r */
            int m = model_best_m(&j);
            if (L % m == 0 && m < L && job_fits(&j, m))
                reach[m] = 1;
        }
    for (int m = 2; m < L; m++)
        if (reach[m])
            pick[n++] = m;
    if (n == 0)
        return 0;
    int i = (int)grading_uniform(0, n);
    return pick[i < n ? i : n - 1];
}

/* The job, drawn afresh (the opening comment says how): fills *j. */
static void draw_job(bucket_job *j, const link_fit *fit, int check)
{
    int L = bench.g.layers, want = check ? 0 : draw_best_m(L);
    size_t most = bench.g.capacity / L; /* words a layer may hold */
    for (int tries = 0;; tries++) {
        double q;
        for (int k = 0;; k++) { /* a q for which some r makes `want` the best, in the model */
            q = grading_uniform(L2_Q_LO, L2_Q_HI);
            bucket_job nominal = {L, 1, grading_uniform(L2_R_LO, L2_R_HI), q, 1};
            if (!want || k + 1 >= L2_PAIRS || job_fits(&nominal, want))
                break;
        }
        double target = fit->alpha_ms / q;
        size_t lw = (size_t)fmin((double)most, fmax(1, target * fit->bytes_per_ms / 4));
        level2_job(L, target, lw); /* a first measurement, then the spin set from it */
        double over = layer_time_ms(check ? 1 : 3) - target;
        level2_job(L, fmax(0.005, target - over), lw);
        double t = layer_time_ms(check ? 1 : 5);
        *j = (bucket_job){L, t, 0, fit->alpha_ms, fit->bytes_per_ms};
        for (int k = 0; k < L2_TRIES; k++) { /* r again, at the measured t */
            double r = grading_uniform(L2_R_LO, L2_R_HI);
            lw = (size_t)fmin((double)most, fmax(1, r * t * fit->bytes_per_ms / 4));
            j->layer_bytes = lw * 4.0;
            if (check || job_fits(j, want))
                break;
        }
        lw = (size_t)(j->layer_bytes / 4);
        level2_job(L, bench.g.layer_ns * 1e-6, lw);
        if (check || tries >= 7 || job_fits(j, want))
            return; /* on one GPU, or a host far off the model: the last draw stands */
    }
}

typedef struct {
    bucket_job job;
    int m, model_m, best_m, measured, model_off;
    double speedup, model_speedup, best_speedup, of_best, model_gap, wrong;
    double predicted_ms, model_ms, prediction_off;
} level2_result;

typedef struct { enum way w; int m; } bucket_way;

static void timed_run2(void *ctx, double *ms)
{
    const bucket_way *w = (const bucket_way *)ctx;
    set_buckets((size_t)w->m * bench.g.layer_words);
    run_way(w->w, ms);
}

static level2_result level_two(lab_run *lab, int check)
{
    report *r = lab->r;
    level2_result o = {0};
    int rounds = 2 * lab->opt.reps - 1, L = bench.g.layers;
    bench.level2 = 1, bench.active = &bench.slow;
    bench.sums2.where = "level two";
    double most = bench.g.capacity * 4.0, top = fmin(32 * MIB, most);
    double bytes[3] = {top / 64, top / 8, top}; /* one layer's to all of them, about */
    link_fit fit = fit_link(bytes, 3, check ? 1 : 3);
    draw_job(&o.job, &fit, check);
    o.model_m = model_best_m(&o.job);
    o.predicted_ms = NAN; /* poisoned: a function that never sets it fails */
    o.m = level2_bucket_layers(&o.job, &o.predicted_ms);

    report_section(r, "Level 2: how many layers a bucket, on a slower link");
    report_text(r, "  NCCL limited to %d block(s) per collective (lab13's part 4); the job drawn "
                "afresh, the model at\n  this run's numbers: one layer a bucket and one bucket "
                "%.0f%% or more slower than its best\n", L2_SLOW_CTAS, (L2_MARGIN - 1) * 100);
    report_param(r, "level2_layers", L, "");
    report_value(r, "the layers alone", "layer_ms", o.job.layer_ms, "ms");
    report_value(r, "one layer's gradients", "layer_mib", o.job.layer_bytes / MIB, "MiB");
    report_value(r, "slow link", "alpha", fit.alpha_ms * 1e3, "us");
    report_value(r, "slow link", "B", fit.bytes_per_ms * 1e-6, "GB/s");
    /* Level two's answers are the grader's line only (level2_model_m,
     * level2_best_m, level2_best_speedup, level2_model_ms): the model's
     * best m, the candidates' speedups (whose fastest the student's is held
     * to), and the model's T at the student's m (which the prediction is
     * held to), and nothing from which one follows in one step. */
    report_value(r, "your choice", "m", o.m, "layers");
    if (o.m < 1 || o.m > L) { /* nothing to measure: a level-two error */
        report_check(r, "level2_m_in_range", 0, "level2_bucket_layers() returned %d: m is 1 to %d",
                     o.m, L);
        o.wrong = 1;
        bench.level2 = 0, bench.active = &bench.comm;
        return o;
    }

    /* the ways: serial (one bucket), yours, and the candidates (every divisor
     * of L but L, and the model's best) */
    bucket_way ways[MAX_WAYS2];
    int n = 0;
    ways[n++] = (bucket_way){SERIAL, L};
    ways[n++] = (bucket_way){YOURS, o.m};
    for (int m = 1; m < L && n < MAX_WAYS2; m++)
        if (L % m == 0 || m == o.model_m)
            ways[n++] = (bucket_way){OVERLAPPED, m};
    /* the student's m by the model at this job: T(m) over the fastest
     * candidate's T, less 1 (0 at the model's best, one of them) */
    double fastest = INFINITY;
    for (int i = 2; i < n; i++)
        fastest = fmin(fastest, bucket_model_ms(&o.job, ways[i].m));
    o.model_ms = bucket_model_ms(&o.job, o.m);
    o.model_gap = o.model_ms / fastest - 1;
    o.prediction_off = fabs(o.predicted_ms / o.model_ms - 1);
    /* NaN (never set) fails: no comparison with it holds */
    o.model_off = !(o.model_gap <= L2_GAP_MAX && o.prediction_off <= L2_PREDICTION_MAX);
    report_value(r, "your m, by the model", "gap", o.model_gap * 100, "%");
    report_text(r, "  (the model's T at your m over its T at its best m, less 1: the same "
                "alpha, B, t and g\n  your function was handed)\n");
    report_value(r, "your predicted T(m)", "pass_ms", o.predicted_ms, "ms");
    double *v = (double *)lab_pageable(lab, (size_t)n * rounds * sizeof(double));
    measure_ways(timed_run2, ways, sizeof ways[0], n, 1, WARMUP, rounds, v);
    set_buckets((size_t)o.m * bench.g.layer_words);
    stats time[MAX_WAYS2], speedup[MAX_WAYS2];
    stats_of_rows(v, n, rounds, time);
    int best = 0; /* the fastest candidate: serial itself, 1x, unless one beats it */
    for (int i = 0; i < n; i++) {
        speedup[i] = stats_of_ratios(v, v + (size_t)i * rounds, rounds);
        if (ways[i].w != YOURS && speedup[i].median > speedup[best].median)
            best = i;
    }
    report_compare(r, "your m", "speedup", "T(L) / T(m) models", model_speedup(&o.job, o.m),
                   &speedup[1], "x");
    stats of_best = stats_of_ratios(v + (size_t)best * rounds, v + rounds, rounds);
    o.measured = 1;
    o.best_m = ways[best].m;
    o.speedup = speedup[1].median;
    o.model_speedup = model_speedup(&o.job, o.m);
    o.best_speedup = speedup[best].median;
    o.of_best = of_best.median;
    report_value(r, "your prediction", "speedup", LEVEL2_PREDICTED_SPEEDUP, "x");
    bucket_job example = {24, 1, 1, 1, 1}; /* LEVEL2_PREDICTED_SPEEDUP's job (ex13.h) */
    if (grading_predicted(r, LEVEL2_PREDICTED_SPEEDUP, 0, "LEVEL2_PREDICTED_SPEEDUP"))
        report_value(r, "the model, its example", "speedup",
                     model_speedup(&example, model_best_m(&example)), "x");
    report_text(r, "  (your prediction: the model's best for 24 layers of t, alpha = t and g / B "
                "= t)\n");
    report_tally(r, "level2_sums_verified", &bench.sums2, "reduced gradient words that are not "
                 "the sum over the GPUs in level two's runs, every way's");
    int calls = bench.calls_out2 + bench.calls_wrong2;
    report_check(r, "level2_calls_once", calls == 0, "%d calls out of range, and (GPU, layer) "
                 "pairs and buckets not queued exactly once, at your m", calls);
    o.wrong = (double)bench.sums2.wrong + calls;
    bench.level2 = 0, bench.active = &bench.comm;
    return o;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int check = grading_check();
    bench_open(&lab);
    level1_result one = level_one(&lab, check);
    level2_result two = level_two(&lab, check);
    ranks_close(&bench.slow);
    ranks_close(&bench.comm);
    if (bench.g.gpus < 2) { /* nothing to grade: the overlap needs a second GPU */
        report_cannot_show(r, "cannot show the overlap here: needs 2 GPUs (this machine shows "
                           "1; every sum and call was checked on one rank)");
        return lab_end(&lab);
    }
    report_verdict(r, &OVERLAPS, one.speedup.median / one.model, "serial %.2f ms, yours %.2f "
                   "ms: %.2fx (model %.2fx, an upper bound: NCCL's kernels share the GPU)",
                   one.time[SERIAL].median, one.time[YOURS].median, one.speedup.median, one.model);
    if (two.measured)
        report_verdict(r, &BEST_BUCKET, two.of_best, "m = %d: %.2fx over serial (the model "
                       "%.2fx), %.2f of the fastest candidate's speedup in the same rounds",
                       two.m, two.speedup, two.model_speedup, two.of_best);
    if (two.measured)
        report_verdict(r, &SIZED_BY_MODEL, two.model_off, "m = %d: the model's time at yours "
                       "%.2f%% above its best (%.0f%% allowed); your predicted T(m) %.4f ms, %s "
                       "%.0f%% of the model's", two.m, two.model_gap * 100, L2_GAP_MAX * 100,
                       two.predicted_ms, two.prediction_off <= L2_PREDICTION_MAX ? "within"
                       : "not within", L2_PREDICTION_MAX * 100);

    grading_value("gpus", bench.g.gpus);
    grading_value("runs", bench.runs);
    grading_value("mismatches", (double)bench.sums.wrong);
    grading_value("checked", (double)bench.sums.checked);
    grading_value("calls_wrong", bench.calls_wrong);
    grading_value("compute_ms", one.time[COMPUTE_ONLY].median);
    grading_value("serial_ms", one.time[SERIAL].median);
    grading_value("yours_ms", one.time[YOURS].median);
    grading_value("speedup", one.speedup.median);
    grading_value("model_speedup", one.model);
    grading_value("efficiency", one.speedup.median / one.model);
    grading_value("level2_layers", two.job.layers);
    grading_value("level2_layer_ms", two.job.layer_ms);
    grading_value("level2_layer_mib", two.job.layer_bytes / MIB);
    grading_value("level2_alpha_us", two.job.alpha_ms * 1e3);
    grading_value("level2_gbps", two.job.bytes_per_ms * 1e-6);
    grading_value("level2_m", two.m);
    grading_value("level2_model_m", two.model_m);
    grading_value("level2_predicted", LEVEL2_PREDICTED_SPEEDUP);
    grading_value("level2_wrong", two.wrong);
    if (two.measured) { /* m out of range: the concept metrics absent */
        grading_value("level2_best_m", two.best_m);
        grading_value("level2_speedup", two.speedup);
        grading_value("level2_model_speedup", two.model_speedup);
        grading_value("level2_best_speedup", two.best_speedup);
        grading_value("level2_of_best", two.of_best);
        grading_value("level2_model_gap", two.model_gap);
        grading_value("level2_predicted_ms", two.predicted_ms);
        grading_value("level2_model_ms", two.model_ms);
        grading_value("level2_prediction_off", two.prediction_off);
        grading_value("level2_model_off", two.model_off);
        grading_value("level2_mismatches", (double)bench.sums2.wrong);
        grading_value("level2_checked", (double)bench.sums2.checked);
        grading_value("level2_calls_wrong", bench.calls_out2 + bench.calls_wrong2);
    }
    return grading_finish(&lab);
}
