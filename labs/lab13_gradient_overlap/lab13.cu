/* lab13: overlap gradient communication with the backward pass (NCCL).
 *
 * The question: data-parallel training on two GPUs. Each GPU's backward
 * pass makes the gradients layer by layer, and the GPUs must sum them (an
 * all-reduce) before the optimiser step. Summing everything after the last
 * layer costs compute + t(all gradients). Summing each bucket of gradients
 * on a second stream as soon as its layers are done, while the next layers
 * compute, as PyTorch's DDP does: how much faster, which bucket size is
 * best, and what decides it?
 *
 * Build and run:   make lab13 && ./lab13      (one process drives every GPU it sees)
 *                  ./lab13 --no-wait          buckets reduced without waiting for their layers: caught
 *
 * What to look for: (1) an all-reduce costs alpha + S/B (fitted from a size
 * sweep; busbw as nccl-tests reports it). (2) Overlapped, the buckets ride
 * behind the compute: the model says how close to max(compute, comm) it can
 * get. (3) Tiny buckets pay alpha per call, one bucket is the serial run: the
 * best is in between. (4) Compute that fills every SM leaves NCCL's kernels
 * none, and the overlap goes; on a slower link the overlap saves more. One
 * GPU runs it all on a one-rank communicator, its sums checked, and exits 3.
 */
#include "streamlab.h"
#include "gpus.h"
#include "kernels.h"
#include "gradients.h"
#include "ranks.h"
#include "lab13.h"

#include <stdio.h>
#include <stdlib.h>

static int layers = 24;           /* L */
static double layer_ms = 0.148;   /* each layer's compute */
static double grad_mib = 1024;    /* gradients per GPU */
static double bucket_mib = 25;    /* DDP's default bucket_cap_mb */
static int slow_ctas = 1;         /* the slow link: NCCL limited to this many blocks */
static double slow_layer_ms = 1;  /* the sources' case: 24 x 1 ms ... */
static double slow_grad_mib = 256; /* ... of a model whose gradients cross a slow link */
static int no_wait = 0;

static const option lab_options[] = {
    {"layers", OPT_INT, &layers, 2, 256, 12, "L", "layers of the backward pass"},
    {"layer-ms", OPT_DOUBLE, &layer_ms, 0.01, 20, 0.074, "MS", "each layer's compute"},
    {"grad-mib", OPT_DOUBLE, &grad_mib, 8, 8192, 256, "MIB", "gradients per GPU"},
    {"bucket-mib", OPT_DOUBLE, &bucket_mib, 0.25, 8192, NO_QUICK, "MIB", "the bucket size (DDP's bucket_cap_mb)"},
    {"slow-ctas", OPT_INT, &slow_ctas, 1, 32, NO_QUICK, "K", "part 4: the slow link is NCCL on K blocks (maxCTAs)"},
    {"slow-layer-ms", OPT_DOUBLE, &slow_layer_ms, 0.05, 20, 0.5, "MS", "part 4: each layer's compute on the slow link"},
    {"slow-grad-mib", OPT_DOUBLE, &slow_grad_mib, 8, 8192, 64, "MIB", "part 4: gradients on the slow link"},
    {"no-wait", OPT_FLAG, &no_wait, 0, 0, NO_QUICK, NULL,
     "reduce each bucket without waiting for its layers: they race (exit 1, for tests)"},
    {NULL},
};

static const program_info program = {
    .name = "lab13", .title = "gradient all-reduce overlapped with the backward pass (NCCL)",
    .handout = "labs/lab13_gradient_overlap/README.md",
    .options = lab_options, .reps = 7, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
    .memory_option = "grad-mib", .memory_per_unit = 2 * 1048576.0, /* gradients + sums */
    .before_context = ranks_before_context,
};

/* ---- parts 2 and 3: serial, overlapped, and the bucket sweep -------------- */

/* The model leaves out that NCCL's kernels take SMs, memory bandwidth and
 * launch slots from the layers they run beside: it is an upper bound on the
 * speedup. 0.7 of it: the issue's H200 run reached 1.43x of a modelled
 * 1.65x (0.87), and 0.7 leaves the spread of a shared host's rounds; above
 * 1.1 the model (or the fit) is wrong. */
static const verdict OVERLAP_FOLLOWS_MODEL = {
    "overlap_follows_model", 0.7, 1.1, "x",
    "the buckets did not overlap the layers as the model says: compute holding every SM, "
    "another process on a GPU (nvidia-smi), or a link slower now than in part 1's sweep"};
/* The U the sources describe: tiny buckets pay alpha per call, one bucket
 * waits for the last layer. Where the fastest sat in the sweep, from 0 (the
 * smallest) to 1 (one bucket): strictly between. */
static const verdict BEST_BUCKET_BETWEEN = {
    "best_bucket_between", 0.01, 0.99, "",
    "the fastest bucket was the smallest or the whole: alpha (per call) or B far from part 1's "
    "fit, or compute much longer than the communication (--layer-ms)"};

typedef struct {
    lab *b;
    job j;
    way w[MAX_WAYS];
    int n;
    stats time[MAX_WAYS], speedup[MAX_WAYS];
    double model[MAX_WAYS];
    int best;
} sweep;

static double model_speedup(const sweep *p, int i) { return p->model[1] / p->model[i]; }

static int attempt_sweep(void *ctx, double *spread)
{
    sweep *p = (sweep *)ctx;
    overlap_measure(&p->b->o, p->w, p->n, p->time, p->model);
    p->best = 2, *spread = 0;
    for (int i = 2; i < p->n; i++) {
        p->speedup[i] = speedup_of(&p->b->o, 1, i);
        *spread = fmax(*spread, stats_spread(&p->speedup[i]));
        if (p->speedup[i].median > p->speedup[p->best].median)
            p->best = i;
    }
    int dflt = 2; /* the --bucket-mib way */
    for (int i = 2; i < p->n; i++)
        if (p->w[i].bucket == (size_t)(bucket_mib * MIB / sizeof(float)))
            dflt = i;
    return verdict_holds(&OVERLAP_FOLLOWS_MODEL, p->speedup[dflt].median / model_speedup(p, dflt)) &&
           verdict_holds(&BEST_BUCKET_BETWEEN, (p->best - 2.0) / (p->n - 3));
}

static int buckets_of(double *mib)
{
    const double tried[] = {0.5, 2, 8, 64, 256};
    int n = 0;
    for (int i = 0; i < 5; i++) {
        if (bucket_mib > (i ? tried[i - 1] : 0) && bucket_mib <= tried[i] && bucket_mib < grad_mib)
            mib[n++] = bucket_mib;
        if (tried[i] < grad_mib && tried[i] != bucket_mib)
            mib[n++] = tried[i];
    }
    if (bucket_mib > 256 && bucket_mib < grad_mib)
        mib[n++] = bucket_mib;
    mib[n++] = grad_mib; /* one bucket: the serial run's all-reduce, issued last */
    return n;
}

/* Returns the overlapped run's speedup at --bucket-mib, for part 4. */
static double buckets(lab_run *run, lab *b, const job *j)
{
    double mib[MAX_BUCKETS];
    int nb = buckets_of(mib);
    sweep p = {b, *j};
    p.n = nb + 2;
    p.w[0] = make_way(&b->o, &p.j, COMPUTE_ONLY, &b->fast, &b->fast_fit, grad_mib);
    p.w[1] = make_way(&b->o, &p.j, SERIAL, &b->fast, &b->fast_fit, grad_mib);
    for (int i = 0; i < nb; i++)
        p.w[i + 2] = make_way(&b->o, &p.j, OVERLAPPED, &b->fast, &b->fast_fit, mib[i]);
    report_section(run->r, "Parts 2 and 3: serial, and overlapped bucket by bucket");
    report_param(run->r, "layers", layers, "");
    report_param(run->r, "layer_ms", layer_ms, "ms");
    report_param(run->r, "grad_mib", grad_mib, "MiB");
    report_param(run->r, "bucket_mib", bucket_mib, "MiB");
    report_param(run->r, "compute_sms", b->half.blocks, "SMs");
    double spread;
    if (b->o.g.gpus < 2)
        attempt_sweep(&p, &spread);
    else
        lab_attempt(run, "serial vs overlapped buckets", attempt_sweep, &p);
    int dflt = 2;
    for (int i = 0; i < p.n; i++) {
        report_compare(run->r, p.w[i].name, "time", i == 0 ? "L x layer" : i == 1 ?
                       "compute + alpha + G/B" : "bucket k starts after its layer and bucket k-1",
                       p.model[i], &p.time[i], "ms");
        if (i >= 2)
            report_compare(run->r, p.w[i].name, "speedup", "serial / overlapped models",
                           model_speedup(&p, i), &p.speedup[i], "x");
        if (i >= 2 && mib[i - 2] == bucket_mib)
            dflt = i;
    }
    timeline_traced_run("serial", timed_run, &p.w[1]); /* --trace: for the figure */
    timeline_traced_run("overlapped", timed_run, &p.w[dflt]);
    if (b->o.g.gpus < 2)
        return p.speedup[dflt].median;
    report_section(run->r, "Did the buckets hide the communication?");
    report_verdict(run->r, &OVERLAP_FOLLOWS_MODEL, p.speedup[dflt].median / model_speedup(&p, dflt),
                   "%g MiB buckets: serial %.2f ms, overlapped %.2f ms: %.2fx (model %.2fx, an upper "
                   "bound: NCCL's kernels share the GPU)", bucket_mib, p.time[1].median,
                   p.time[dflt].median, p.speedup[dflt].median, model_speedup(&p, dflt));
    report_verdict(run->r, &BEST_BUCKET_BETWEEN, (p.best - 2.0) / (nb - 1), "the fastest bucket: %g "
                   "MiB (%.2fx); %g MiB %.2fx, one bucket %.2fx", mib[p.best - 2],
                   p.speedup[p.best].median, mib[0], p.speedup[2].median, p.speedup[p.n - 1].median);
    return p.speedup[dflt].median;
}


/* ---- setup: every GPU, its streams and buffers, the communicator ---------- */

static void lab_open(lab_run *run, lab *b, gpu_sharing *start)
{
    int dev[GRAD_MAX_GPUS], n = gpus_visible(run->dev.index, dev, GRAD_MAX_GPUS);
    /* one set of buffers serves both jobs: the larger one's gradients */
    size_t words = (size_t)(fmax(grad_mib, slow_grad_mib) * MIB / sizeof(float));
    grad_open(run, &b->o.g, dev, n, layers > 24 ? layers : 24, words);
    b->o.all_reduce = ranks_all_reduce, b->o.no_wait = no_wait, b->o.sm_count = run->dev.sm_count;
    b->o.reps = run->opt.reps;
    b->o.samples = (double *)lab_pageable(run, MAX_WAYS * (size_t)b->o.reps * sizeof(double));
    /* half of the SMs for the layers, the rest free for NCCL's kernels; or every one */
    b->half = grad_shape("half of the SMs", run->dev.sm_count / 2, 1);
    b->full = grad_shape("every SM held", run->dev.sm_count, 1);
    b->one = grad_shape("one block on every SM", run->dev.sm_count, 0);
    gpus_probe_sharing(dev, n, start);
    grad_warm(&b->o.g); /* every kernel on every GPU before the first collective */
    ranks_open(&b->fast, dev, n, 0);
    report_fact(run->r, "gpus", n, "", "one process drives %d GPU(s), one NCCL rank each "
                "(NCCL %d, NCCL_NVLS_ENABLE=0)", n, ranks_version());
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    lab b = {0};
    gpu_sharing start[GRAD_MAX_GPUS], end[GRAD_MAX_GPUS];
    lab_open(&run, &b, start);
    job main_job = {layers, layer_ms, grad_mib, b.half};
    job slow_job = {layers, slow_layer_ms, slow_grad_mib, b.half};
    const double sizes[] = {1, 4, 16, 64, 256, 1024};
    int n_sizes = 0;
    while (n_sizes < 6 && sizes[n_sizes] <= grad_mib)
        n_sizes++;
    report_section(run.r, "Part 1: what an all-reduce of S bytes costs");
    b.fast_fit = allreduce_sweep(&run, &b.o, &b.fast, "full link", sizes, n_sizes, &main_job);
    double half_speedup = buckets(&run, &b, &main_job);
    what_decides(&run, &b, &main_job, &slow_job, bucket_mib, slow_ctas, half_speedup);
    report_section(run.r, "Checks");
    report_tally(run.r, "sums_verified", &b.o.sums, "reduced gradient words that are not the sum "
                 "over the GPUs (fresh words every run, poisoned before it)");
    grad_sync(&b.o.g);
    ranks_close(&b.fast);
    gpus_probe_sharing(b.o.g.dev, b.o.g.gpus, end);
    gpus_report_sharing(run.r, b.o.g.dev, b.o.g.gpus, start, end);
    if (b.o.g.gpus < 2)
        report_cannot_show(run.r, "cannot show the overlap here: needs 2 GPUs (this machine "
                           "shows 1; every sum and event wait was checked on one rank)");
    return lab_end(&run);
}
