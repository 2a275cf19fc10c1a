/* lab07: concurrent kernels and hardware queues.
 *
 * The question: eight kernels of 2 ms in eight streams: 2 ms or 16? And
 * kernel pairs A_i -> B_i in sixteen streams: does the ORDER in which the
 * host issues them change how long they take?
 *
 * Build and run:   make lab07 && ./lab07        (./lab07 --help for options)
 *                  ./lab07 --connections 1      every stream through one hardware queue
 *
 * What to look for: (1) streams let kernels share the GPU only where SMs sit
 * idle: eight kernels of an eighth of the SMs each take T on eight streams,
 * eight that each fill the GPU take 8T, streams or not; (2) streams reach the
 * GPU through a few hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8 unless
 * set). Issued depth-first (A0 B0 A1 B1 ...), a B waiting for its A blocks
 * the next stream's A queued behind it: a false dependency, (ceil(n/c)+1)T
 * instead of 2T. Issued breadth-first (every A, then every B): 2T. The
 * kernels' own start times show which ones waited.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double kernel_ms = 2; /* T: every kernel's known duration */
static int pair_streams = 16; /* n: streams of part 2, one pair A_i -> B_i each */
static int connections = 0;   /* c asked for; 0: as the environment says */

static const option lab_options[] = {
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 0.5, 100, 1, "MS", "how long every kernel spins (T)"},
    {"streams", OPT_INT, &pair_streams, 2, 128, NO_QUICK, "N",
     "streams of part 2, one pair of kernels each (at most the GPU's SMs)"},
    {"connections", OPT_INT, &connections, 1, 32, NO_QUICK, "C", "hardware queues: sets "
     "CUDA_DEVICE_MAX_CONNECTIONS before the context exists; 0 leaves it as it is"},
    {NULL},
};

/* The driver reads CUDA_DEVICE_MAX_CONNECTIONS once, when it creates the
 * context: lab_begin() calls this before its first CUDA call. Set later, it
 * would change nothing, silently. */
static void set_connections(void)
{
    char value[16];
    if (!connections)
        return;
    snprintf(value, sizeof value, "%d", connections);
    if (setenv("CUDA_DEVICE_MAX_CONNECTIONS", value, 1) != 0)
        fail_cannot_run("cannot set CUDA_DEVICE_MAX_CONNECTIONS");
}

static const program_info program = {
    .name = "lab07", .title = "concurrent kernels: streams fill idle SMs, through few hardware queues",
    .handout = "labs/lab07_concurrent_kernels/README.md",
    .options = lab_options, .reps = 10, .quick_reps = 3, /* rounds */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
    .before_context = set_connections,
};

enum { KERNELS = 8, SIZES = 3, WAYS = 2 * SIZES, WARMUP = 1, MAX_LAUNCHES = 256 };
/* %globaltimer ticks by up to a microsecond on some GPUs: two blocks one
 * after the other may read a tick apart the wrong way. */
static const unsigned long long SLACK_NS = 2000;

typedef struct way {
    char name[48];
    int n, records;       /* launches, in issue order; blocks in all */
    launch_slot *l;
    block_record *h_log;  /* its latest run's records, by slot */
    struct bench *b;
} way;

typedef struct bench {
    uint64_t ns, tag_base, runs;
    size_t footprint;           /* shared memory that makes a block hold an SM */
    int sms, reps, c;           /* SMs, --reps, connections in effect */
    cudaStream_t *s;
    block_record *d_log, *sorted;
    double *samples;            /* an attempt's times, WAYS rows of --reps; then per launch */
    tally blocks, alone, order; /* every block's record; one per SM; stream order */
} bench;

/* ---- one run of a way, and its log verified ------------------------------- */

/* The host clock from an idle GPU to cudaDeviceSynchronize, which waits for
 * every stream: the question is how the streams' kernels share the GPU, so
 * no one stream's events can time it (v[0]). Launches add microseconds to
 * ms: v[1], the host's time to issue one launch. Then the log: every block
 * ran once, for its time, on a real SM (its slot holds this launch's tag and
 * its own index); a launch began after the one before it in its stream had
 * ended; no two blocks shared an SM at once. */
static void timed_run(void *ctx, double *v)
{
    way *w = (way *)ctx;
    bench *b = w->b; /* each launch its own tag, fresh every run */
    uint64_t tag = b->tag_base + MAX_LAUNCHES * b->runs++;
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    for (int k = 0; k < w->n; k++)
        spin_blocks_launch(w->l[k].blocks, b->footprint, b->ns, tag + k, b->d_log + w->l[k].slot,
                           b->s[w->l[k].stream]);
    v[1] = (host_time_ms() - t0) / w->n;
    CUDA_CHECK(cudaDeviceSynchronize());
    v[0] = host_time_ms() - t0;
    CUDA_CHECK(cudaMemcpy(w->h_log, b->d_log, w->records * sizeof *w->h_log, cudaMemcpyDeviceToHost));
    b->blocks.where = b->alone.where = b->order.where = w->name;
    verify_launches(w->h_log, w->l, w->n, tag, b->ns, b->sms, SLACK_NS, &b->blocks, &b->order);
    memcpy(b->sorted, w->h_log, w->records * sizeof *w->h_log);
    verify_one_block_per_sm(b->sorted, w->records, SLACK_NS, &b->alone);
}

/* Ways in rotating rounds; ratio[p] = way 2p / way 2p+1, round by round. */
typedef struct demo {
    way *w;
    int k; /* ways */
    stats time[WAYS], ratio[SIZES];
    double launch_ms; /* L: the host's time to issue one launch, the median run */
    int (*holds)(const struct demo *d);
} demo;

static int attempt(void *ctx, double *spread)
{
    demo *d = (demo *)ctx;
    bench *b = d->w[0].b;
    stats launch[WAYS];
    measure_ways(timed_run, d->w, sizeof d->w[0], d->k, 2, WARMUP, b->reps, b->samples); /* afresh */
    stats_of_rows(b->samples, d->k, b->reps, d->time);
    stats_of_rows(b->samples + d->k * b->reps, d->k, b->reps, launch);
    d->launch_ms = 0;
    for (int i = 0; i < d->k; i++)
        d->launch_ms = fmax(d->launch_ms, launch[i].median);
    *spread = stats_of_row_pairs(b->samples, 0, d->k / 2, b->reps, d->ratio);
    return d->holds(d);
}

/* A way of n launches, to add; its log as large as any way's: n x every SM. */
static way new_way(lab_run *run, bench *b, int n, const char *name)
{
    way w = {"", n, 0, (launch_slot *)lab_pageable(run, n * sizeof(launch_slot)),
             (block_record *)lab_pageable(run, KERNELS * b->sms * sizeof(block_record)), b};
    snprintf(w.name, sizeof w.name, "%s", name);
    return w;
}

static void add_launch(way *w, int k, int stream, int blocks, int slot)
{
    w->l[k] = (launch_slot){stream, blocks, slot};
    w->records += blocks;
}

/* ---- part 1: kernels share the GPU where SMs are idle --------------------- */

/* Eight kernels of an eighth of the SMs fit the GPU at once: the model's 8x,
 * whatever the SM count. 20% below it allows for eight launches and the
 * host's clock around T (H100 probe: 16.0 -> 2.0 ms, 8.0x). */
static const verdict SMALL_CONCURRENT = {
    "small_kernels_concurrent", 0.8 * KERNELS, INFINITY, "x",
    "eight kernels of an eighth of the SMs did not run at once: another process may hold SMs "
    "(see nvidia-smi), or MPS or a partition limits this context's SMs"};
/* Kernels that each fill every SM leave none idle for another: 1x, within 10%. */
static const verdict WHOLE_SERIAL = {
    "whole_gpu_kernels_not_concurrent", 0.9, 1.1, "x",
    "kernels that each hold every SM overlapped: a block's shared memory did not keep the "
    "next off its SM (see the check one_block_per_sm), or the kernels ended early"};

static int part1_holds(const demo *d)
{
    return verdict_holds(&SMALL_CONCURRENT, d->ratio[0].median) &&
           verdict_holds(&WHOLE_SERIAL, d->ratio[2].median);
}

static void concurrent_kernels(lab_run *run, bench *b)
{
    static const char *const size_name[SIZES] = {"1/8 GPU", "1/2 GPU", "whole GPU"};
    const int blocks[SIZES] = {b->sms / 8 ? b->sms / 8 : 1, b->sms / 2 ? b->sms / 2 : 1, b->sms};
    way w[WAYS];
    char name[48];
    for (int i = 0; i < SIZES; i++)
        for (int eight = 0; eight < 2; eight++) {
            snprintf(name, sizeof name, "%s, %d stream%s", size_name[i], eight ? KERNELS : 1,
                     eight ? "s" : "");
            w[2 * i + eight] = new_way(run, b, KERNELS, name);
            for (int k = 0; k < KERNELS; k++)
                add_launch(&w[2 * i + eight], k, eight ? k : 0, blocks[i], k * blocks[i]);
        }
    demo d = {w, WAYS};
    d.holds = part1_holds;
    report_section(run->r, "Part 1: eight kernels of T ms, in one stream and in eight");
    lab_attempt(run, "one stream vs eight", attempt, &d);
    for (int i = 0; i < SIZES; i++) {
        double waves = ceil((double)KERNELS * blocks[i] / b->sms);
        report_text(run->r, "  %s: %d blocks per kernel, each holding an SM\n", size_name[i], blocks[i]);
        report_compare(run->r, w[2 * i].name, "time", "n x T", KERNELS * kernel_ms, &d.time[2 * i], "ms");
        report_compare(run->r, w[2 * i + 1].name, "time", "T x ceil(n x blocks / SMs)",
                       waves * kernel_ms, &d.time[2 * i + 1], "ms");
        report_compare(run->r, size_name[i], "speedup", "n / ceil(n x blocks / SMs)",
                       KERNELS / waves, &d.ratio[i], "x");
    }
    report_section(run->r, "Did the streams run kernels at once, and only on idle SMs?");
    report_verdict(run->r, &SMALL_CONCURRENT, d.ratio[0].median, "1/8-GPU kernels: one stream "
                   "%.2f ms, eight %.2f ms: %.2fx round by round (model %dx)", d.time[0].median,
                   d.time[1].median, d.ratio[0].median, KERNELS);
    report_verdict(run->r, &WHOLE_SERIAL, d.ratio[2].median, "whole-GPU kernels: one stream "
                   "%.2f ms, eight %.2f ms: %.2fx round by round (model 1x)", d.time[4].median,
                   d.time[5].median, d.ratio[2].median);
}

/* ---- part 2: false dependencies through shared hardware queues ------------ */

/* The models of part 2, with the host's launches in them: the host issues
 * one launch every L, so with many streams the last A starts (n-1)L late.
 * Breadth-first, every A is at its queue's head before any B: 2T + (n-1)L.
 * Depth-first, each queue runs its ceil(n/c) pairs one A at a time, and no
 * faster than the 2n launches arrive. */
static double breadth_model(int n, double launch_ms)
{
    return 2 * kernel_ms + (n - 1) * launch_ms;
}

static double depth_model(int n, int c, double launch_ms)
{
    return fmax(((n + c - 1) / c + 1) * kernel_ms, 2 * kernel_ms + 2 * (n - 1) * launch_ms);
}

/* Breadth-first against its model, within 15% (the host's clock; H100:
 * 4.11 ms against 4.09 at T = 2 ms with 16 streams). */
static const verdict BREADTH_2T = {
    "breadth_first_takes_2T", 0.95, 1.15, "x",
    "breadth-first pairs took longer than 2T + (n-1)L: the A kernels did not all run at once "
    "(another process holding SMs?)"};
/* Depth-first over breadth-first, as the models' ratio, within 15%: about
 * (ceil(n/c)+1) / 2, 1.5 for n = 16, c = 8, against 1.0 were there no false
 * dependency (H100 probe: 15.1 / 10.0 ms; with c = 1, 85 / 10). */
static const verdict DEPTH_FOLLOWS = {
    "depth_first_follows_queues", 0.85, 1.15, "x",
    "depth-first pairs did not take the model's time for the connections in effect: the driver "
    "may not have read CUDA_DEVICE_MAX_CONNECTIONS as set, or MPS maps streams its own way"};

static int part2_holds(const demo *d)
{
    int n = pair_streams, c = d->w[0].b->c;
    double breadth = breadth_model(n, d->launch_ms);
    return verdict_holds(&BREADTH_2T, d->time[1].median / breadth) &&
           verdict_holds(&DEPTH_FOLLOWS, d->ratio[0].median /
                                             (depth_model(n, c, d->launch_ms) / breadth));
}

/* When each kernel of the latest run began, in T after the first: 0 ran at
 * once, 1 waited for one kernel's time. Returns the A kernels that waited:
 * that began over T/2 later than their launch could reach the GPU, A_i's
 * launch being issued i x `a_every_ns` after A0's. */
static int report_starts(report *r, const way *w, int n, double ns, double a_every_ns)
{
    unsigned long long first = ~0ull;
    int waited = 0;
    for (int i = 0; i < 2 * n; i++)
        first = w->h_log[i].start_ns < first ? w->h_log[i].start_ns : first;
    for (int ab = 0; ab < 2; ab++) {
        char line[1024];
        int used = 0;
        for (int i = 0; i < n && used < (int)sizeof line; i++) {
            double t = (w->h_log[2 * i + ab].start_ns - first) / ns;
            waited += !ab && t > 0.5 + i * a_every_ns / ns;
            used += snprintf(line + used, sizeof line - used, " %.0f", t);
        }
        report_text(r, "    %c0..%c%d began, in T after the first:%s\n", 'A' + ab, 'A' + ab,
                    n - 1, line);
    }
    return waited;
}

static void false_dependencies(lab_run *run, bench *b)
{
    int n = pair_streams, c = b->c;
    way w[2] = {new_way(run, b, 2 * n, "depth-first"), new_way(run, b, 2 * n, "breadth-first")};
    for (int i = 0; i < n; i++) { /* A_i's record in slot 2i, B_i's in 2i + 1 */
        add_launch(&w[0], 2 * i, i, 1, 2 * i), add_launch(&w[0], 2 * i + 1, i, 1, 2 * i + 1);
        add_launch(&w[1], i, i, 1, 2 * i), add_launch(&w[1], n + i, i, 1, 2 * i + 1);
    }
    demo d = {w, 2};
    d.holds = part2_holds;
    report_section(run->r, "Part 2: pairs A_i -> B_i on n streams, issued depth-first and breadth-first");
    report_param(run->r, "streams", n, "");
    lab_attempt(run, "depth-first vs breadth-first", attempt, &d);
    for (int i = 0; i < 2; i++) /* --trace: for a figure; the "latest run" printed below */
        timeline_traced_run(w[i].name, timed_run, &w[i]);
    double L = d.launch_ms, depth = depth_model(n, c, L), breadth = breadth_model(n, L);
    report_value(run->r, "launch", "host_time", L * 1000, "us");
    report_text(run->r, "  the host issues a launch every L = %.1f us (the median run)\n", L * 1000);
    report_compare(run->r, w[0].name, "time", "max((ceil(n/c)+1)T, 2T + 2(n-1)L)", depth,
                   &d.time[0], "ms");
    report_compare(run->r, w[1].name, "time", "2T + (n-1)L", breadth, &d.time[1], "ms");
    for (int i = 0; i < 2; i++) {
        report_text(run->r, "  %s (A0 B0 A1 B1 ... / A0 A1 ... B0 B1 ...), latest run:\n", w[i].name);
        int waited = report_starts(run->r, &w[i], n, (double)b->ns, (i ? 1 : 2) * L * 1e6);
        report_value(run->r, w[i].name, "a_kernels_waited", waited, "count");
        report_text(run->r, "    %d A kernels waited (model: %d)\n", waited, i || n <= c ? 0 : n - c);
    }
    report_section(run->r, "Did the issue order make false dependencies?");
    report_verdict(run->r, &BREADTH_2T, d.time[1].median / breadth, "breadth-first %.2f ms "
                   "against 2T + (n-1)L = %.2f ms", d.time[1].median, breadth);
    report_verdict(run->r, &DEPTH_FOLLOWS, d.ratio[0].median / (depth / breadth), "depth-first "
                   "/ breadth-first %.2fx round by round, model %.2f / %.2f ms = %.2fx (%d "
                   "streams, %d queues)", d.ratio[0].median, depth, breadth, depth / breadth, n, c);
}

/* ---- setup: the run owns these, lab_end() releases them ------------------- */

static void bench_open(lab_run *run, bench *b)
{
    bench init = {.ns = ns_from_ms(kernel_ms), .tag_base = fresh_seed() >> 1,
                  .footprint = spin_blocks_footprint(), .sms = run->dev.sm_count,
                  .reps = run->opt.reps, .c = run->dev.max_connections};
    *b = init;
    if (pair_streams > b->sms)
        fail_usage("--streams %d: each kernel of a pair holds an SM, and this GPU has %d: here "
                   "--streams accepts 2 to %d", pair_streams, b->sms, b->sms);
    int records = KERNELS * b->sms, streams = pair_streams > KERNELS ? pair_streams : KERNELS;
    b->d_log = (block_record *)lab_device(run, records * sizeof(block_record));
    b->sorted = (block_record *)lab_pageable(run, records * sizeof(block_record));
    b->samples = (double *)lab_pageable(run, 2 * WAYS * b->reps * sizeof(double));
    b->s = (cudaStream_t *)lab_pageable(run, streams * sizeof(cudaStream_t));
    lab_streams(run, b->s, streams, "stream", cudaStreamNonBlocking);
    report_section(run->r, "The setup");
    report_fact(run->r, "sm_count", b->sms, "", "a kernel of b blocks holds b of them");
    report_fact(run->r, "block_footprint", b->footprint >> 10, "KiB", "shared memory per block: "
                "one block fills an SM");
    report_fact(run->r, "max_connections", b->c, "", "hardware queues (%s)", connections
                ? "--connections" : run->dev.max_connections_set
                ? "CUDA_DEVICE_MAX_CONNECTIONS" : "the driver's default");
    report_param(run->r, "kernel_ms", kernel_ms, "ms");
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    bench b;
    bench_open(&run, &b);
    concurrent_kernels(&run, &b);
    false_dependencies(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "every_block_logged", &b.blocks, "block records wrong (each block ran "
                 "once, on an SM, for at least T)");
    report_tally(run.r, "one_block_per_sm", &b.alone, "blocks that shared an SM with another "
                 "at the same moment");
    report_tally(run.r, "stream_order_kept", &b.order, "launches that began before the one "
                 "before them in their stream had ended");
    return lab_end(&run);
}
