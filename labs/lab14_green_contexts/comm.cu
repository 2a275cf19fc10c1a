/* lab14, part 3: communication keeps its SMs (two GPUs, NCCL).
 *
 * lab13 ended on a wall: layers whose blocks hold every SM leave NCCL's
 * kernels none, and the overlap of the gradients' all-reduce with the
 * backward pass goes (two H200s: 1.44x with the layers on half of the SMs,
 * 0.97x on all of them, 0.96x with NCCL's stream at the greatest priority).
 * Here the same backward pass (lab13's pipeline, kernels/overlap.h) runs its
 * layers in a green context of SMs - k SMs on each GPU, and NCCL's calls stay
 * in the primary context's comm stream: the layers can never take the other
 * k SMs, so NCCL's kernels always find them free. How much of the overlap
 * comes back, and what do the k SMs cost the layers?
 *
 * The layers: a fixed amount of work, LAYER_WAVES waves of whole-SM blocks
 * of the whole GPU (so every SM of whichever context runs them is held, as
 * a large GEMM's tiles hold them), each block spinning layer_ms /
 * LAYER_WAVES. On every SM a layer takes layer_ms; on SMs - k it takes
 * ceil(LAYER_WAVES x SMs / (SMs - k)) waves, about SMs / (SMs - k) as long.
 *
 * Contexts: the runtime's streams and events are each GPU's primary
 * context's; the green contexts' streams are made by cuGreenCtxStreamCreate.
 * Layer l's event is recorded in the green context's stream (after the
 * layer) and waited on by the primary context's comm stream before the
 * bucket's all-reduce: a stream may wait on an event recorded in another
 * context's stream. Every run's sums are checked: a wait that did not hold
 * would sum poison. Runs are timed on the host's clock, idle to idle: no
 * one stream's events time two GPUs. NCCL_NVLS_ENABLE=0 (ranks.h). */
#include "lab14.h"
#include "gpus.h"
#include "gradients.h"
#include "overlap.h"
#include "ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LAYERS = 24, LAYER_WAVES = 8 };
static const double BUCKET_MIB = 25; /* DDP's default bucket_cap_mb, lab13's */

/* The ways, measured in the same rounds: lab13's half-SM case (its
 * reference gain), the layers on every SM, the same layers in the green
 * context of SMs - k; each compute only, serial, overlapped. */
enum { HALF_C, HALF_S, HALF_O, FULL_C, FULL_S, FULL_O, PART_C, PART_S, PART_O, WAYS };

typedef struct {
    overlap_bench o;
    ranks rk;
    link_fit fit;
    CUdevice cudev[GRAD_MAX_GPUS];
    CUdevResource all[GRAD_MAX_GPUS];  /* each GPU's SMs: each GPU splits its own */
    partition part[GRAD_MAX_GPUS];     /* k SMs (left idle: NCCL's) and the rest (the layers') */
    cudaStream_t layers_in[GRAD_MAX_GPUS]; /* each GPU's rest_stream */
    job half, waves;
    way w[WAYS];
    stats time[WAYS], half_speedup, full_speedup, part_speedup, beats, cost;
    double model[WAYS];
} comm_bench;

/* Before the first CUDA call (program_info's before_context): NCCL without
 * multicast, and every module loaded with its context, as lab13 (ranks.h).
 * Unlike lab13 it does not exit when NCCL is missing: parts 1 and 2 need
 * none. */
void comm_before_context(void)
{
    ranks_environment();
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
}

/* Each GPU split afresh: k SMs off (rounded to its step), the layers' green
 * context on the rest. Then every kernel once in it: a module loaded on one
 * GPU while the other waits in a collective can hang both. */
static void split_every_gpu(comm_bench *c, int k, int priority)
{
    grad_bench *g = &c->o.g;
    for (int r = 0; r < g->gpus; r++) {
        partition_split(c->cudev[r], &c->all[r], priority, k, &c->part[r]);
        c->layers_in[r] = c->part[r].rest_stream;
        if (c->part[r].rest_sms != c->part[0].rest_sms)
            fail_cannot_run("GPU %d leaves %d SMs after a split of %d, GPU %d %d: part 3 wants "
                            "alike GPUs", g->dev[0], c->part[0].rest_sms, k, g->dev[r],
                            c->part[r].rest_sms);
    }
    grad_compute_streams(g, c->layers_in);
    grad_warm(g);
    grad_compute_streams(g, NULL);
}

static void close_every_gpu(comm_bench *c)
{
    for (int r = 0; r < c->o.g.gpus; r++) {
        CUDA_CHECK(cudaSetDevice(c->o.g.dev[r]));
        partition_close(&c->part[r]);
    }
    CUDA_CHECK(cudaSetDevice(c->o.g.dev[0]));
}

/* The three ways of `j` whose layers run in compute[] (NULL: the bench's
 * own streams) on `sms` SMs, into w[0..2]. */
static void three_ways(comm_bench *c, way *w, const job *j, const cudaStream_t *compute, int sms,
                       const char *where)
{
    w[0] = make_way(&c->o, j, COMPUTE_ONLY, &c->rk, &c->fit, j->mib);
    w[1] = make_way(&c->o, j, SERIAL, &c->rk, &c->fit, j->mib);
    w[2] = make_way(&c->o, j, OVERLAPPED, &c->rk, &c->fit, BUCKET_MIB);
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s, %s", where, w[i].name);
        memcpy(w[i].name, name, sizeof name);
        w[i].compute = compute, w[i].sms = sms;
    }
}

static double model_speedup(const double *model, int serial) { return model[serial] / model[serial + 1]; }
static double model_cost(const comm_bench *c) { return c->model[PART_C] / c->model[FULL_C]; }

/* lab13's overlap_follows_model: the model leaves out what NCCL's kernels
 * take from the layers beside them (memory bandwidth, launch slots), so it
 * bounds the speedup; two H200s reached 1.02 of it with half of the SMs.
 * 0.7 leaves a shared host's spread, as lab13's; above 1.1 the model is wrong. */
static const verdict PART_FOLLOWS_MODEL = {
    "partition_overlap_follows_model", 0.7, 1.1, "x",
    "the buckets did not overlap the layers in their partition as the model says: NCCL slower "
    "on k SMs than part 3's fit (try a larger --comm-sms), or another process on a GPU"};
/* The mirror of lab13's full_sms_hide_less (every SM held: at most half of
 * the half-SM gain, 0.97x against 1.44x there): the partition keeps at
 * least half of it. */
static const verdict PART_KEEPS_GAIN = {
    "partition_keeps_the_gain", 0.5, INFINITY, "x",
    "the layers in their partition kept less than half of the half-SM run's gain over serial: "
    "NCCL's kernels did not find their k SMs free (another process?), or NCCL is slow on k SMs"};
/* Part 2's background_cost_as_modelled, widened below: whole-SM blocks make
 * the waves exact, but each layer's gradient writes and launch (about 0.4
 * ms of lab13's 3.96 ms on every SM) do not grow with the waves, which
 * pulls the ratio toward 1 (at k = 64: ~0.96 of the model's 2x). */
static const verdict COST_AS_MODELLED = {
    "compute_cost_as_modelled", 0.85, 1.1, "x",
    "the layers on SMs - k did not slow as their waves predict: another process on a GPU, or a "
    "partition other than reported"};

static int attempt_comm(void *ctx, double *spread)
{
    comm_bench *c = (comm_bench *)ctx;
    overlap_measure(&c->o, c->w, WAYS, c->time, c->model);
    c->half_speedup = speedup_of(&c->o, HALF_S, HALF_O);
    c->full_speedup = speedup_of(&c->o, FULL_S, FULL_O);
    c->part_speedup = speedup_of(&c->o, PART_S, PART_O);
    c->beats = speedup_of(&c->o, FULL_O, PART_O);
    c->cost = speedup_of(&c->o, PART_C, FULL_C);
    *spread = stats_spread(&c->part_speedup);
    return verdict_holds(&PART_FOLLOWS_MODEL, c->part_speedup.median / model_speedup(c->model, PART_S)) &&
           verdict_holds(&PART_KEEPS_GAIN, (c->part_speedup.median - 1) / (c->half_speedup.median - 1)) &&
           verdict_holds(&COST_AS_MODELLED, c->cost.median / model_cost(c));
}

static void report_comm(lab_run *run, comm_bench *c)
{
    report *r = run->r;
    const char *model[3] = {"L x ceil(blocks / SMs) x block", "compute + alpha + G/B",
                            "bucket k starts after its layer and bucket k-1"};
    for (int i = 0; i < WAYS; i++)
        report_compare(r, c->w[i].name, "time", model[i % 3], c->model[i], &c->time[i], "ms");
    const char *case_name[3] = {"half of the SMs", "every SM held", "SMs - k, green context"};
    stats *speedup[3] = {&c->half_speedup, &c->full_speedup, &c->part_speedup};
    for (int i = 0; i < 3; i++)
        report_compare(r, case_name[i], "speedup", "serial / overlapped models",
                       model_speedup(c->model, 3 * i + 1), speedup[i], "x");
    report_compare(r, "SMs - k, green context", "compute_cost", "ceil(waves x SMs / (SMs - k)) / waves",
                   model_cost(c), &c->cost, "x");
    if (c->o.g.gpus < 2)
        return;
    int k = c->part[0].sms, rest = c->part[0].rest_sms;
    report_section(r, "Did the communication keep its SMs?");
    report_verdict(r, &PART_FOLLOWS_MODEL, c->part_speedup.median / model_speedup(c->model, PART_S),
                   "layers on %d SMs, NCCL's %d kept free: serial %.2f ms, overlapped %.2f ms: %.2fx "
                   "(model %.2fx, an upper bound)", rest, k, c->time[PART_S].median,
                   c->time[PART_O].median, c->part_speedup.median, model_speedup(c->model, PART_S));
    report_verdict(r, &PART_KEEPS_GAIN, (c->part_speedup.median - 1) / (c->half_speedup.median - 1),
                   "in the partition %.2fx, on half of the SMs %.2fx, on every SM %.2fx: %.0f%% of "
                   "the half-SM gain kept", c->part_speedup.median, c->half_speedup.median,
                   c->full_speedup.median,
                   100 * (c->part_speedup.median - 1) / (c->half_speedup.median - 1));
    /* Whether the partition also wins on the clock is the trade, not a
     * verdict: it wins where the communication it frees outweighs the
     * compute it costs (two H200s, default job: 1.07x at k = 16, best near
     * k = 32 in the sweep; the --quick job, with a quarter of the
     * gradients, loses: 0.92x at k = 16). */
    report_stats(r, "every SM held over SMs - k", "overlapped_ratio", &c->beats, "x");
    report_verdict(r, &COST_AS_MODELLED, c->cost.median / model_cost(c), "compute alone on %d of "
                   "%d SMs took %.2fx as long; the model, in whole waves, %.2fx (the plain ratio "
                   "SMs / (SMs - k): %.2fx)", rest, c->o.sm_count, c->cost.median, model_cost(c),
                   (double)c->o.sm_count / rest);
}

/* The trade, k by k in the device's steps up to about half the GPU: what
 * the layers pay (compute cost), and what the overlap gives back. */
static void sweep_k(lab_run *run, comm_bench *c, int priority)
{
    report *r = run->r;
    int step = (int)fmax(c->all[0].sm.minSmPartitionSize, c->all[0].sm.smCoscheduledAlignment);
    double worst = 1;
    report_section(r, "The trade: k SMs kept for NCCL, SMs - k for the layers");
    for (int k = step; k <= c->o.sm_count / 2; k *= 2) {
        way w[4] = {c->w[FULL_C]};
        stats time[4];
        double model[4];
        char name[32];
        close_every_gpu(c);
        split_every_gpu(c, k, priority);
        snprintf(name, sizeof name, "k=%d for NCCL", c->part[0].sms);
        three_ways(c, w + 1, &c->waves, c->layers_in, c->part[0].rest_sms, name);
        overlap_measure(&c->o, w, 4, time, model);
        stats cost = speedup_of(&c->o, 1, 0), speedup = speedup_of(&c->o, 2, 3);
        report_compare(r, name, "compute_cost", "ceil(waves x SMs / (SMs - k)) / waves",
                       model[1] / model[0], &cost, "x");
        report_compare(r, name, "speedup", "serial / overlapped models", model[2] / model[3],
                       &speedup, "x");
        report_stats(r, name, "overlapped", &time[3], "ms");
        double share = cost.median / (model[1] / model[0]);
        if (fabs(share - 1) > fabs(worst - 1))
            worst = share;
    }
    static const verdict SWEEP = {
        "sweep_compute_cost_as_modelled", 0.85, 1.1, "x",
        "at some k the layers' compute cost left its waves' model: see compute_cost_as_modelled"};
    report_verdict(r, &SWEEP, worst, "the layers' compute cost at every k within %.2fx of its "
                   "waves' model (the farthest)", worst);
}

/* Part 3 needs NCCL, two GPUs, and no CUDA_LAUNCH_BLOCKING; on one GPU it
 * runs on one rank, its sums and waits checked, and says it needs two. */
static const char *cannot_run_part3(void)
{
    const char *blocking = getenv("CUDA_LAUNCH_BLOCKING");
    if (ranks_available())
        return "part 3 needs NCCL, and this lab14 was built without it (parts 1 and 2 ran): "
               "install it (the CUDA toolkit's, NCCL_HOME=dir, or pip install nvidia-nccl-cu13) "
               "and run make again";
    if (blocking && strcmp(blocking, "1") == 0)
        return "part 3: CUDA_LAUNCH_BLOCKING=1 makes each GPU's all-reduce wait for the others, "
               "which one thread launches after it: it would hang (parts 1 and 2 ran); unset it";
    return NULL;
}

void comm_keeps_sms(lab_run *run, bench *b)
{
    report *r = run->r;
    const char *why = cannot_run_part3();
    report_section(r, "Part 3: communication keeps its SMs (every GPU, NCCL)");
    if (why) {
        report_cannot_show(r, "%s", why);
        return;
    }
    static comm_bench c; /* large: the ways and their names */
    memset(&c, 0, sizeof c);
    int dev[GRAD_MAX_GPUS], n = gpus_visible(run->dev.index, dev, GRAD_MAX_GPUS);
    gpu_sharing start[GRAD_MAX_GPUS], end[GRAD_MAX_GPUS];
    grad_open(run, &c.o.g, dev, n, LAYERS, (size_t)(grad_mib * MIB / sizeof(float)));
    c.o.all_reduce = ranks_all_reduce, c.o.sm_count = b->sm_count, c.o.reps = comm_rounds;
    c.o.samples = (double *)lab_pageable(run, MAX_WAYS * (size_t)comm_rounds * sizeof(double));
    for (int i = 0; i < n; i++) {
        CU_CHECK(cu.cuDeviceGet(&c.cudev[i], dev[i]));
        CU_CHECK(cu.cuDeviceGetDevResource(c.cudev[i], &c.all[i], CU_DEV_RESOURCE_TYPE_SM));
    }
    gpus_probe_sharing(dev, n, start);
    grad_warm(&c.o.g); /* every kernel on every GPU before the first collective */
    split_every_gpu(&c, comm_sms, b->least);
    ranks_open(&c.rk, dev, n, 0);
    report_fact(r, "gpus", n, "", "one process drives %d GPU(s), one NCCL rank each (NCCL %d, "
                "NCCL_NVLS_ENABLE=0)", n, ranks_version());
    job half = {LAYERS, layer_ms, grad_mib, grad_shape("half of the SMs", b->sm_count / 2, 1)};
    job waves = {LAYERS, layer_ms / LAYER_WAVES, grad_mib,
                 grad_shape("every SM held, in waves", LAYER_WAVES * b->sm_count, 1)};
    c.half = half, c.waves = waves;
    const double sizes[] = {1, 4, 16, 64, 256, 1024};
    int n_sizes = 0;
    while (n_sizes < 6 && sizes[n_sizes] <= grad_mib)
        n_sizes++;
    c.fit = allreduce_sweep(run, &c.o, &c.rk, "full link", sizes, n_sizes, &c.half);
    three_ways(&c, c.w + HALF_C, &c.half, NULL, b->sm_count, "half of the SMs");
    three_ways(&c, c.w + FULL_C, &c.waves, NULL, b->sm_count, "every SM held");
    three_ways(&c, c.w + PART_C, &c.waves, c.layers_in, c.part[0].rest_sms, "SMs - k");
    report_param(r, "layers", LAYERS, "");
    report_param(r, "layer_ms", layer_ms, "ms");
    report_param(r, "layer_blocks", c.waves.shape.blocks, "");
    report_param(r, "grad_mib", grad_mib, "MiB");
    report_param(r, "bucket_mib", BUCKET_MIB, "MiB");
    report_fact(r, "comm_sms", c.part[0].sms, "SMs", "k: kept free of the layers for NCCL (%d "
                "asked)", comm_sms);
    report_fact(r, "layer_sms", c.part[0].rest_sms, "SMs", "SMs - k: the layers' green context");
    if (n < 2) {
        double spread;
        attempt_comm(&c, &spread);
    } else {
        lab_attempt(run, "every SM, half, SMs - k", attempt_comm, &c);
    }
    report_comm(run, &c);
    if (n >= 2 && !no_sweep)
        sweep_k(run, &c, b->least);
    grad_sync(&c.o.g);
    ranks_close(&c.rk);
    close_every_gpu(&c);
    b->sums = c.o.sums; /* main's checks report them */
    gpus_probe_sharing(dev, n, end);
    gpus_report_sharing(r, dev, n, start, end);
    if (n < 2)
        report_cannot_show(r, "part 3 needs 2 GPUs (this machine shows 1; parts 1 and 2 ran, and "
                           "part 3's sums and cross-context event waits were checked on one rank)");
}
