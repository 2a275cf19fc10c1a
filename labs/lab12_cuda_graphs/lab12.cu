/* lab12: CUDA graphs of a multi-stream pipeline.
 *
 * The question: 1,000 tiny kernels, each depending on the one before, take
 * microseconds each on the GPU, but every launch costs the host a few
 * microseconds too. Launched one by one, who sets the pace? Captured once
 * as a CUDA graph and replayed with one call, how much faster, and after how
 * many replays has the capture paid for itself? A fork/join pipeline (four
 * branches of 10 us kernels) captured across streams with events: faster
 * than four streams? Its kernels' arguments changed without building the
 * graph again: at what cost? And what does a capture refuse?
 *
 * Build and run:   make lab12 && ./lab12        (./lab12 --help for options)
 *                  ./lab12 --skip-setters       a graph replayed with stale arguments: caught
 *
 * What to look for: (1) stream launches run at the host's launch rate,
 * N x max(host launch, GPU per kernel); the graph at the GPU's per-node
 * cost, with the host busy for one call. (2) four streams are bound by the
 * host issuing 1,000 launches; the graph by the kernels. (3) each refusal
 * is an ordinary error: cleared, the capture ended, and the GPU still works.
 */
#include "lab12.h"

#include <stdio.h>

static int chain_kernels = 1000; /* part 1: N */
static int branch_kernels = 250; /* part 2: K kernels in each of the four branches */
static double kernel_us = 10;    /* part 2: each kernel's spin */
int skip_setters = 0;            /* part 2b: leave the node setters out (forkjoin.cu) */

static const option lab_options[] = {
    {"kernels", OPT_INT, &chain_kernels, 10, 100000, 200, "N", "part 1: tiny dependent kernels (N)"},
    {"branch-kernels", OPT_INT, &branch_kernels, 2, 5000, 50, "K",
     "part 2: kernels in each of the four branches (K)"},
    {"kernel-us", OPT_DOUBLE, &kernel_us, 2, 1000, NO_QUICK, "US", "part 2: each kernel's spin"},
    {"skip-setters", OPT_FLAG, &skip_setters, 0, 0, NO_QUICK, NULL,
     "part 2b: new increments but no cudaGraphExecKernelNodeSetParams: the stale graph is caught "
     "(exit 1, for tests)"},
    {NULL},
};

static const program_info program = {
    .name = "lab12", .title = "CUDA graphs: one launch for a thousand kernels, and what capture refuses",
    .handout = "labs/lab12_cuda_graphs/README.md",
    .options = lab_options, .reps = 7, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

/* "GPU only": a gate kernel of 3 ms holds the GPU while the host queues
 * the work, at most 256 launches (a stream's queue of pending launches is
 * finite: a host that fills it waits, and the GPU would then run at the
 * host's pace again), about a millisecond at the probe's 4.24 us a launch;
 * gate_ended_early counts the samples where the launches outlasted it. */
enum { GATE_MS = 3, GPU_ONLY_KERNELS = 256 };

__global__ void chain_step(uint32_t *word, uint32_t add)
{
    *word = pipeline_stage_reference(*word, add);
}

cudaGraph_t capture(bench *b, void (*issue)(bench *), double *ms)
{
    cudaGraph_t g;
    double t0 = host_time_ms();
    CUDA_CHECK(cudaStreamBeginCapture(b->s[0], cudaStreamCaptureModeGlobal));
    issue(b);
    CUDA_CHECK(cudaStreamEndCapture(b->s[0], &g));
    *ms = host_time_ms() - t0;
    return g;
}

/* ---- part 1: launch overhead -------------------------------------------- */

enum chain_way { STREAM, SYNC_EACH, STREAM_GPU, GRAPH, GRAPH_GPU, CHAIN_WAYS };
static const char *const chain_name[] = {"stream launches", "launch + sync each",
                                         "stream, GPU only", "graph replay", "graph, GPU only"};
typedef struct {
    bench *b;
    enum chain_way how;
} chain_ctx;

/* Kernels a way launches: all N, but the "GPU only" stream's 256. */
static int kernels_of(enum chain_way how)
{
    return how == STREAM_GPU && chain_kernels > GPU_ONLY_KERNELS ? GPU_ONLY_KERNELS : chain_kernels;
}

static void issue_chain(bench *b, int n, int sync_each)
{
    for (int k = 0; k < n; k++) {
        chain_step<<<1, 1, 0, b->s[0]>>>(b->d_word, b->add[k]);
        CHECK_LAUNCH();
        if (sync_each)
            CUDA_CHECK(cudaStreamSynchronize(b->s[0]));
    }
}
static void issue_chain_once(bench *b) { issue_chain(b, chain_kernels, 0); }

/* One way on a fresh word: v[0] the run from an idle GPU to the stream's
 * sync on the host clock, or, "GPU only", events behind a gate kernel that
 * holds the GPU until everything is queued (the GPU's own rate); v[1] the
 * host's time until the launches returned. The word is checked every run. */
static void chain_run(void *ctx, double *v)
{
    bench *b = ((chain_ctx *)ctx)->b;
    enum chain_way how = ((chain_ctx *)ctx)->how;
    int gated = how == STREAM_GPU || how == GRAPH_GPU, n = kernels_of(how);
    uint32_t want = (uint32_t)fresh_seed(), got;
    CUDA_CHECK(cudaMemcpy(b->d_word, &want, sizeof want, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* a pageable copy may return before it lands */
    if (gated) {
        spin_for_ns<<<1, 1, 0, b->s[0]>>>(ns_from_ms(GATE_MS));
        CHECK_LAUNCH();
        event_timer_start(&b->timer, b->s[0]);
    }
    double t0 = host_time_ms();
    if (how == GRAPH || how == GRAPH_GPU)
        CUDA_CHECK(cudaGraphLaunch(b->chain, b->s[0]));
    else
        issue_chain(b, n, how == SYNC_EACH);
    v[1] = host_time_ms() - t0;
    if (gated) {
        b->gate_late += event_finished(b->timer.start);
        event_timer_stop(&b->timer, b->s[0]);
    }
    CUDA_CHECK(cudaStreamSynchronize(b->s[0]));
    v[0] = gated ? event_timer_ms(&b->timer) : host_time_ms() - t0;
    CUDA_CHECK(cudaMemcpy(&got, b->d_word, sizeof got, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k++)
        want = pipeline_stage_reference(want, b->add[k]);
    b->words.where = chain_name[how];
    verify_equal_u32(&got, &want, 1, &b->words);
}

/* Stream launches follow N x max(host launch, GPU per kernel), and the
 * graph one launch + N x the GPU's per-node cost, each within 20%: both
 * sides are measured in the same rounds, so only the end of the run (the
 * host waking from its sync, microseconds against milliseconds) and the
 * rounds' jitter separate them. */
static const verdict STREAM_MODEL = {
    "stream_follows_launch_model", 0.8, 1.25, "x",
    "stream launches did not take N x max(host launch, GPU per kernel): a busy CPU slowing "
    "some launches, or another process on the GPU"};
static const verdict GRAPH_MODEL = {
    "graph_follows_node_model", 0.8, 1.25, "x",
    "the replay did not take one launch + N x per-node cost: another process on the GPU?"};
/* Half of the probe's 4.5x (4.24 us against 0.94 us a kernel): a CPU with
 * faster launches narrows the gap, it should not close it. */
static const verdict GRAPH_FASTER = {
    "graph_beats_stream_launches", 2.0, INFINITY, "x",
    "the graph replay was not twice as fast as stream launches: the launches were not the "
    "bottleneck here (a fast CPU, or slow kernels)"};
/* The probe: 7.7 us for 1,000 kernels against 4.24 ms; 5% is far from both. */
static const verdict GRAPH_HOST = {
    "graph_frees_host", -INFINITY, 0.05, "%",
    "cudaGraphLaunch kept the host as long as the launches did: a tool intercepting calls?"};
/* Under --trace or --timeline CUPTI records every node, inside cudaGraphLaunch:
 * about 1.7 us a node against about 8 us a traced launch (H100, 2026-11-23:
 * 339 us for 200 nodes, 1614 us for 200 launches, 21%). The replay still
 * frees most of the host; half is what the tracer's model leaves room for. */
static const verdict GRAPH_HOST_TRACED = {
    "graph_frees_host", -INFINITY, 0.5, "%",
    "cudaGraphLaunch kept the host as long as the launches did, even for a traced run"};

typedef struct {
    chain_ctx w[CHAIN_WAYS];
    stats t[CHAIN_WAYS], host[CHAIN_WAYS], speedup;
    double stream_model, graph_model;
    const verdict *host_verdict; /* GRAPH_HOST, or GRAPH_HOST_TRACED under --trace/--timeline */
} part1;

static int attempt_part1(void *ctx, double *spread)
{
    part1 *p = (part1 *)ctx;
    bench *b = p->w[0].b;
    int n = b->reps, N = chain_kernels;
    measure_ways(chain_run, p->w, sizeof p->w[0], CHAIN_WAYS, 2, WARMUP, n, b->v);
    for (int i = 0; i < CHAIN_WAYS; i++)
        p->t[i] = stats_of(b->v + i * n, n), p->host[i] = stats_of(b->v + (CHAIN_WAYS + i) * n, n);
    p->speedup = stats_of_ratios(b->v + STREAM * n, b->v + GRAPH * n, n);
    *spread = stats_spread(&p->speedup);
    /* The host's launch from the plain stream run, where the GPU keeps up
     * and the queue never fills; the GPU's per kernel with the host out. */
    b->host_launch_us = p->host[STREAM].median / N * 1e3;
    b->stream_gpu_us = p->t[STREAM_GPU].median / kernels_of(STREAM_GPU) * 1e3;
    b->node_us = p->t[GRAPH_GPU].median / N * 1e3;
    b->graph_launch_ms = p->host[GRAPH].median;
    p->stream_model = N * fmax(b->host_launch_us, b->stream_gpu_us) * 1e-3;
    p->graph_model = b->graph_launch_ms + N * b->node_us * 1e-3;
    return verdict_holds(&STREAM_MODEL, p->t[STREAM].median / p->stream_model) &&
           verdict_holds(&GRAPH_MODEL, p->t[GRAPH].median / p->graph_model) &&
           verdict_holds(&GRAPH_FASTER, p->speedup.median) &&
           verdict_holds(p->host_verdict, p->host[GRAPH].median / p->host[STREAM].median);
}

/* Capture, instantiate and upload, --reps times: their costs. The last
 * graph stays for the replays. */
static void build_chain(lab_run *run, bench *b)
{
    int n = b->reps;
    double *c = b->v, *in = c + n, *up = in + n;
    for (int i = 0; i < n; i++) {
        cudaGraphExec_t e;
        cudaGraph_t g = capture(b, issue_chain_once, &c[i]);
        double t0 = host_time_ms();
        CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
        double t1 = host_time_ms();
        CUDA_CHECK(cudaGraphUpload(e, b->s[0])); /* its work onto the GPU ahead of the launch */
        CUDA_CHECK(cudaStreamSynchronize(b->s[0]));
        in[i] = t1 - t0, up[i] = host_time_ms() - t1;
        CUDA_CHECK(cudaGraphDestroy(g));
        if (i < n - 1)
            CUDA_CHECK(cudaGraphExecDestroy(e));
        b->chain = e;
    }
    stats s[3] = {stats_of(c, n), stats_of(in, n), stats_of(up, n)};
    const char *what[3] = {"capture", "instantiate", "upload"};
    for (int i = 0; i < 3; i++)
        report_stats(run->r, "graph", what[i], &s[i], "ms");
    b->v[0] = s[0].median + s[1].median + s[2].median; /* kept for the break-even */
}

static void launch_overhead(lab_run *run, bench *b)
{
    part1 p;
    for (int i = 0; i < CHAIN_WAYS; i++)
        p.w[i] = (chain_ctx){b, (enum chain_way)i};
    p.host_verdict = run->opt.trace || run->opt.timeline ? &GRAPH_HOST_TRACED : &GRAPH_HOST;
    report_section(run->r, "Part 1: N tiny dependent kernels, launched or replayed");
    report_param(run->r, "kernels", chain_kernels, "");
    build_chain(run, b);
    double once_ms = b->v[0];
    lab_attempt(run, "stream launches vs graph replay", attempt_part1, &p);
    for (int i = 0; i < CHAIN_WAYS; i++) {
        report_stats(run->r, chain_name[i], "time", &p.t[i], "ms");
        report_stats(run->r, chain_name[i], "host_busy", &p.host[i], "ms");
        report_value(run->r, chain_name[i], "per_kernel",
                     p.t[i].median * 1e3 / kernels_of((enum chain_way)i), "us");
    }
    report_value(run->r, "GPU only", "gate_ended_early", b->gate_late, "count");
    report_compare(run->r, chain_name[STREAM], "time", "N x max(host launch, GPU per kernel)",
                   p.stream_model, &p.t[STREAM], "ms");
    report_compare(run->r, chain_name[GRAPH], "time", "one launch + N x per-node cost",
                   p.graph_model, &p.t[GRAPH], "ms");
    double saved = p.t[STREAM].median - p.t[GRAPH].median;
    if (saved > 0) /* the graph's one-time cost over what each replay saves */
        report_value(run->r, "graph", "break_even_replays", once_ms / saved, "replays");
    report_text(run->r, "  break-even: capture + instantiate + upload %.3f ms, %.3f ms saved a "
                "replay\n", once_ms, saved);
    report_section(run->r, "Did one launch replace a thousand?");
    report_verdict(run->r, &STREAM_MODEL, p.t[STREAM].median / p.stream_model, "stream launches "
                   "%.3f ms: host launch %.2f us, GPU %.2f us a kernel", p.t[STREAM].median,
                   b->host_launch_us, b->stream_gpu_us);
    report_verdict(run->r, &GRAPH_MODEL, p.t[GRAPH].median / p.graph_model, "graph replay %.3f ms:"
                   " launch %.3f ms + %.2f us a node", p.t[GRAPH].median, b->graph_launch_ms,
                   b->node_us);
    report_verdict(run->r, &GRAPH_FASTER, p.speedup.median, "%.2f us -> %.2f us a kernel, %.2fx "
                   "round by round", p.t[STREAM].median * 1e3 / chain_kernels,
                   p.t[GRAPH].median * 1e3 / chain_kernels, p.speedup.median);
    report_verdict(run->r, p.host_verdict, p.host[GRAPH].median / p.host[STREAM].median, "the host "
                   "was busy %.1f us for the replay, %.0f us for the launches",
                   p.host[GRAPH].median * 1e3, p.host[STREAM].median * 1e3);
}

/* ---- setup: the run owns these, lab_end() releases them ------------------- */

static void bench_open(lab_run *run, bench *b)
{
    int K = branch_kernels, n = K * BRANCHES;
    bench init = {.reps = run->opt.reps, .branch_kernels = K};
    *b = init;
    lab_streams(run, b->s, BRANCHES, "branch", cudaStreamNonBlocking);
    b->fork = lab_event(run, cudaEventDisableTiming); /* ordering only: cheaper */
    for (int i = 0; i < BRANCHES; i++)
        b->join[i] = lab_event(run, cudaEventDisableTiming);
    b->timer = lab_timer(run);
    b->v = (double *)lab_pageable(run, 2 * CHAIN_WAYS * b->reps * sizeof(double));
    b->d_word = (uint32_t *)lab_device(run, sizeof(uint32_t));
    b->add = (uint32_t *)lab_pageable(run, chain_kernels * sizeof(uint32_t));
    fill_random_u32(b->add, chain_kernels, fresh_seed()); /* the chain's graph holds them */
    b->ns = (uint64_t *)lab_pageable(run, K * sizeof(uint64_t));
    for (int k = 0; k < K; k++)
        b->ns[k] = ns_from_ms(kernel_us * 1e-3);
    pipeline_buffers p = {K, BRANCHES, (uint32_t *)lab_device(run, BRANCHES * sizeof(uint32_t)),
                          (uint32_t *)lab_pageable(run, (2 + K) * BRANCHES * sizeof(uint32_t))};
    p.seed = p.h_value + BRANCHES, p.add = p.seed + BRANCHES;
    p.d_span = (stage_span *)lab_device(run, n * sizeof(stage_span));
    p.h_span = (stage_span *)lab_pageable(run, n * sizeof(stage_span));
    b->p = p;
    fill_random_u32(p.add, n, fresh_seed());
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b;
    bench_open(&run, &b);
    launch_overhead(&run, &b);
    fork_join(&run, &b);
    capture_refusals(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "words_verified", &b.words, "runs whose word is not the CPU reference "
                 "(fresh words every run)");
    report_tally(run.r, "branches_in_order", &b.order, "kernels that began before the one before "
                 "them in their branch ended, or spun less than asked (the GPU's clock)");
    report_tally(run.r, "context_usable_after_refusals", &b.usable, "kernels after a refusal "
                 "whose word is wrong");
    CUDA_CHECK(cudaGraphExecDestroy(b.chain));
    return lab_end(&run);
}
