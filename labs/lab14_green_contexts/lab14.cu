/* lab14: give urgent work its own SMs (green contexts).
 *
 * The question: lab05 ended on a wall. A stream's priority lets an urgent
 * kernel take only the next SM that frees, so behind a GPU-filling background
 * it still waits for a background block. Can we keep SMs free for it instead?
 * CUDA's green contexts split the SMs: work in a partition runs only on its
 * SMs, and nothing else can take them. Where do the kernels really run? How
 * long does the urgent kernel wait in its own partition, against the same
 * and the greatest priority? And what does the partition cost the background,
 * which now has fewer SMs? And on two GPUs (part 3), can a partition give
 * NCCL's kernels the SMs that lab13's backward pass took from them?
 *
 * Build and run:   make lab14 && ./lab14        (./lab14 --help for options)
 *                  ./lab14 --no-comm            parts 1 and 2 alone (one GPU, no NCCL)
 *
 * What to look for: (1) the split the device gives (it rounds up to its
 * granularity: 8 SMs on Hopper), and a kernel in each partition running on
 * exactly its partition's SMs, none shared, in the waves the partition's
 * size predicts. (2) the urgent kernel: the rest of the background at the
 * same priority, the rest of one background block at the greatest, about its own
 * time alone in its partition; the background, on SMs - k SMs, about
 * SMs / (SMs - k) times as long; the sweep over k shows the trade. (3) on
 * two GPUs (comm.cu), the layers in a green context of SMs - k SMs and
 * NCCL's calls in the primary context: the overlap that every SM held lost
 * comes back, for a compute cost of about SMs / (SMs - k). On one GPU part 3
 * checks its sums on one rank and exits 3: it needs two.
 *
 * Contexts: the runtime's streams and every event belong to the device's
 * primary context. A green context is that primary context with fewer SMs:
 * its streams (cuGreenCtxStreamCreate) take runtime launches (<<<>>>) and
 * runtime events, and an event recorded in a green context's stream marks
 * that stream's work only. Each event below says in which stream, and so in
 * which context, it is recorded.
 */
#include "lab14.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int partition_sms = 16;   /* the issue's split: 16 of the H100's 132 */
double block_us = 100;    /* lab05's background block */
int waves = 50;           /* lab05's background, 50 waves */
int urgent_blocks = 16;   /* the urgent kernel fills a 16-SM partition once */
double urgent_us = 10;
int no_sweep = 0;
int comm_sms = 16;        /* part 3: the issue's 16 of 132, now for NCCL */
double layer_ms = 0.148;  /* part 3: lab13's layer (24 of them) */
double grad_mib = 1024;   /* part 3: lab13's gradients per GPU */
int comm_rounds = 7;      /* part 3: lab13's rounds */
int no_comm = 0;
static double spread_us = 50; /* part 1: each block of the kernels that show the split */
static int spread_waves = 4;  /* part 1: blocks = 4 x SMs, 528 on an H100, as the issue's */

static const option lab_options[] = {
    {"partition-sms", OPT_INT, &partition_sms, 1, MAX_SMS, NO_QUICK, "K",
     "SMs split off for the urgent work (the driver rounds up to its granularity)"},
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, NO_QUICK, "US", "part 2: one background block"},
    {"waves", OPT_INT, &waves, 5, 1000, 10, "N", "part 2: background blocks, in waves of the whole GPU"},
    {"urgent-blocks", OPT_INT, &urgent_blocks, 1, MAX_SMS, NO_QUICK, "N", "part 2: the urgent kernel's blocks"},
    {"urgent-us", OPT_DOUBLE, &urgent_us, 2, 1000, NO_QUICK, "US", "part 2: each urgent block's spin"},
    {"spread-us", OPT_DOUBLE, &spread_us, 10, 10000, NO_QUICK, "US", "part 1: each block's spin"},
    {"no-sweep", OPT_FLAG, &no_sweep, 0, 0, NO_QUICK, NULL, "parts 2 and 3: leave out the sweeps over k"},
    {"comm-sms", OPT_INT, &comm_sms, 1, MAX_SMS, NO_QUICK, "K",
     "part 3: SMs kept free of the layers for NCCL (rounded up as --partition-sms)"},
    {"layer-ms", OPT_DOUBLE, &layer_ms, 0.01, 20, 0.074, "MS", "part 3: each layer's compute on every SM"},
    {"grad-mib", OPT_DOUBLE, &grad_mib, 8, 8192, 256, "MIB", "part 3: gradients per GPU"},
    {"comm-rounds", OPT_INT, &comm_rounds, 3, 100, 3, "N", "part 3: rounds of its ways, paired"},
    {"no-comm", OPT_FLAG, &no_comm, 0, 0, NO_QUICK, NULL,
     "leave out part 3 (two GPUs, NCCL): the exit code is parts 1 and 2's"},
    {NULL},
};

static const program_info program = {
    .name = "lab14", .title = "green contexts: urgent work on SMs of its own",
    .handout = "labs/lab14_green_contexts/README.md",
    .options = lab_options, .reps = 40, .quick_reps = 8, /* urgent samples per way */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP | NEEDS_PRIORITIES,
    .memory_option = "grad-mib", .memory_per_unit = 2 * 1048576.0, /* part 3: gradients + sums */
    .before_context = comm_before_context,
};

/* ---- partitions: one split, two green contexts ------------------------------ */

/* A green context holding `res` on device dev, and a non-blocking stream in
 * it at `priority` (part 2: the least, the background's: what it shows is
 * the partition, not a priority). CU_GREEN_CTX_DEFAULT_STREAM is required
 * by CUDA 13. */
static CUgreenCtx green_context(CUdevice dev, CUdevResource *res, int priority, cudaStream_t *s)
{
    CUdevResourceDesc desc;
    CUgreenCtx g;
    CUstream cs;
    CU_CHECK(cu.cuDevResourceGenerateDesc(&desc, res, 1));
    CU_CHECK(cu.cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CU_CHECK(cu.cuGreenCtxStreamCreate(&cs, g, CU_STREAM_NON_BLOCKING, priority));
    *s = cs;
    return g;
}

void partition_split(CUdevice dev, CUdevResource *all, int priority, int k, partition *p)
{
    CUdevResource part, rest;
    unsigned int groups = 1;
    CUresult e = cu.cuDevSmResourceSplitByCount(&part, &groups, all, &rest, 0, (unsigned)k);
    if (e == CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION || e == CUDA_ERROR_INVALID_VALUE ||
        (e == CUDA_SUCCESS && groups == 0))
        fail_cannot_run("the device refuses a partition of %d SMs (%s; it has %u, split in "
                        "partitions of at least %u, in steps of %u)", k,
                        e == CUDA_SUCCESS ? "no group made" : cu_error_name(e), all->sm.smCount,
                        all->sm.minSmPartitionSize, all->sm.smCoscheduledAlignment);
    cu_check(e, "cuDevSmResourceSplitByCount", __FILE__, __LINE__);
    p->asked = k, p->sms = (int)part.sm.smCount, p->rest_sms = (int)rest.sm.smCount;
    if (p->rest_sms < 1)
        fail_cannot_run("a partition of %d SMs (%d asked) leaves none of the %u for the rest",
                        p->sms, k, all->sm.smCount);
    p->ctx = green_context(dev, &part, priority, &p->stream);
    p->rest_ctx = green_context(dev, &rest, priority, &p->rest_stream);
}

void partition_open(bench *b, int k, partition *p)
{
    partition_split(b->cudev, &b->all, b->least, k, p);
}

void partition_close(partition *p)
{
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    CUDA_CHECK(cudaStreamSynchronize(p->rest_stream));
    CU_CHECK(cu.cuStreamDestroy(p->stream));
    CU_CHECK(cu.cuStreamDestroy(p->rest_stream));
    CU_CHECK(cu.cuGreenCtxDestroy(p->ctx));
    CU_CHECK(cu.cuGreenCtxDestroy(p->rest_ctx));
    memset(p, 0, sizeof *p);
}

/* ---- kernels that say where they ran ---------------------------------------- */

uint64_t blocks_launch(bench *b, int blocks, uint64_t ns, int slot, cudaStream_t s)
{
    if (slot + blocks > b->log_len)
        fail_wrong("lab14: %d records from %d overflow the log of %d", blocks, slot, b->log_len);
    spin_blocks_launch(blocks, b->footprint, ns, ++b->tag, b->d_log + slot, s);
    return b->tag;
}

double blocks_collect(bench *b, int blocks, uint64_t tag, uint64_t ns, int slot,
                      unsigned char *used)
{
    block_record *r = b->h_log + slot;
    unsigned long long first;
    CUDA_CHECK(cudaMemcpy(r, b->d_log + slot, blocks * sizeof *r, cudaMemcpyDeviceToHost));
    verify_block_records(r, blocks, tag, ns, b->sm_count, &first, &b->records);
    return (double)block_records_span(r, blocks, used, MAX_SMS) * 1e-3;
}

static int count_sms(const unsigned char *used) { return sms_marked(used, MAX_SMS); }

/* ---- part 1: partitions, seen ------------------------------------------------ */

/* Exact: the issue's H100 run used exactly 16 and 116 SMs, none shared. CUDA
 * documents two ways to use more SMs than provisioned (never fewer): an MPS
 * client's thread percentage, and a loaded module with dynamic parallelism. */
static const verdict ON_OWN_SMS = {
    "kernels_on_partition_sms", 0, 0, "SMs",
    "a partition's kernel ran on SMs it was not given, or not on all of them: under MPS "
    "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) or with a dynamic-parallelism module loaded a green "
    "context may use more SMs; another process's kernels on the GPU can hold some of its SMs"};
/* A kernel of B whole-SM blocks on g SMs runs in ceil(B/g) waves of a block
 * each. Blocks spin at least their time, so the ratio is not below 1 but for
 * the clock's tick; 15% above allows each wave's block launches (a few us
 * of a 50 us block). */
static const verdict IN_WAVES = {
    "partition_runs_in_waves", 0.97, 1.15, "x",
    "the small partition's kernel took longer than its waves: another process using the GPU, "
    "or the partition's SMs slower to start blocks than this model allows"};

static stats one(double v) { return stats_of(&v, 1); }

static void partitions_seen(lab_run *run, bench *b)
{
    report *r = run->r;
    partition *p = &b->p;
    int n = spread_waves * b->sm_count;
    uint64_t ns = ns_from_ms(spread_us / 1e3);
    report_section(r, "The SMs and how this device splits them (cuDeviceGetDevResource)");
    report_fact(r, "sm_count", b->sm_count, "SMs", "what the split starts from");
    report_fact(r, "min_partition", b->min_sms, "SMs", "minSmPartitionSize: the least a partition holds");
    report_fact(r, "alignment", b->align, "SMs", "smCoscheduledAlignment: partitions grow in these steps");
    partition_open(b, partition_sms, p);
    report_fact(r, "partition_sms", p->sms, "SMs", "what cuDevSmResourceSplitByCount gave for %d asked",
                p->asked);
    report_fact(r, "rest_sms", p->rest_sms, "SMs", "the remainder: a second green context");

    report_section(r, "Where each partition's kernel ran (each block logs %smid)");
    report_param(r, "blocks_per_kernel", n, "");
    report_param(r, "block_us", spread_us, "us");
    /* Warm-ups, one block in each stream: a first launch may load the module. */
    cudaStream_t warm[2] = {p->stream, p->rest_stream};
    for (int i = 0; i < 2; i++) { /* cudaMemcpy's legacy stream does not wait for these */
        uint64_t t = blocks_launch(b, 1, 0, 0, warm[i]);
        CUDA_CHECK(cudaStreamSynchronize(warm[i]));
        blocks_collect(b, 1, t, 0, 0, NULL);
    }
    /* Both partitions at once: disjoint SMs mean neither took the other's. */
    uint64_t tp = blocks_launch(b, n, ns, 0, p->stream), tr = blocks_launch(b, n, ns, n, p->rest_stream);
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    CUDA_CHECK(cudaStreamSynchronize(p->rest_stream));
    uint64_t tw = blocks_launch(b, n, ns, 2 * n, b->whole); /* then the whole GPU, alone */
    CUDA_CHECK(cudaStreamSynchronize(b->whole));
    unsigned char in_whole[MAX_SMS] = {0};
    memset(b->in_part, 0, MAX_SMS), memset(b->in_rest, 0, MAX_SMS);
    double span[3] = {blocks_collect(b, n, tp, ns, 0, b->in_part),
                      blocks_collect(b, n, tr, ns, n, b->in_rest),
                      blocks_collect(b, n, tw, ns, 2 * n, in_whole)};
    int sms[3] = {p->sms, p->rest_sms, b->sm_count};
    int used[3] = {count_sms(b->in_part), count_sms(b->in_rest), count_sms(in_whole)}, shared = 0;
    const char *name[3] = {"partition", "rest", "whole GPU"};
    for (int i = 0; i < MAX_SMS; i++)
        shared += b->in_part[i] && b->in_rest[i];
    for (int i = 0; i < 3; i++) {
        stats u = one(used[i]), s = one(span[i]);
        report_compare(r, name[i], "sms_used", "its SMs", sms[i], &u, "SMs");
        report_compare(r, name[i], "run", "ceil(blocks / SMs) x block", ceil((double)n / sms[i]) * spread_us,
                       &s, "us");
    }
    report_value(r, "partition and rest", "sms_shared", shared, "SMs");
    int off = abs(used[0] - sms[0]) + abs(used[1] - sms[1]) + shared;
    report_verdict(r, &ON_OWN_SMS, off, "the partition's kernel ran on %d SMs (given %d), the "
                   "rest's on %d (given %d), %d SMs shared", used[0], sms[0], used[1], sms[1], shared);
    double waves_ratio = span[0] / (ceil((double)n / sms[0]) * spread_us);
    report_verdict(r, &IN_WAVES, waves_ratio, "%d blocks on %d SMs: %.0f us against %.0f waves of "
                   "%.0f us", n, sms[0], span[0], ceil((double)n / sms[0]), spread_us);
}

/* ---- setup --------------------------------------------------------------------- */

static void bench_open(lab_run *run, bench *b)
{
    memset(b, 0, sizeof *b);
    driver_open();
    CU_CHECK(cu.cuDeviceGet(&b->cudev, run->dev.index));
    CU_CHECK(cu.cuDeviceGetDevResource(b->cudev, &b->all, CU_DEV_RESOURCE_TYPE_SM));
    b->sm_count = (int)b->all.sm.smCount;
    b->min_sms = (int)b->all.sm.minSmPartitionSize, b->align = (int)b->all.sm.smCoscheduledAlignment;
    if (b->sm_count > MAX_SMS)
        fail_cannot_run("this GPU has %d SMs; lab14 counts up to %d", b->sm_count, MAX_SMS);
    b->footprint = spin_blocks_footprint();
    b->launch_us = run->at_start.launch_us;
    b->least = run->dev.priority_least, b->greatest = run->dev.priority_greatest;
    b->whole = lab_stream(run, "whole GPU, least priority", cudaStreamNonBlocking, b->least);
    b->whole_high = lab_stream(run, "whole GPU, greatest priority", cudaStreamNonBlocking, b->greatest);
    /* The most any step logs: part 1's three kernels, or part 2's background and urgent kernel. */
    int bg = waves * b->sm_count + urgent_blocks, spread = 3 * spread_waves * b->sm_count;
    b->log_len = bg > spread ? bg : spread;
    b->d_log = (block_record *)lab_device(run, b->log_len * sizeof(block_record));
    b->h_log = (block_record *)lab_pinned(run, b->log_len * sizeof(block_record));
    b->tag = fresh_seed();
    b->records.where = "spin_blocks records";
}

int main(int argc, char **argv)
{
    lab_run run;
    static bench b; /* large: the SM maps */
    lab_begin(&run, argc, argv, &program);
    bench_open(&run, &b);
    partitions_seen(&run, &b);
    urgent_work(&run, &b);
    partition_close(&b.p);
    if (!no_comm)
        comm_keeps_sms(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "block_records", &b.records, "block records wrong (tag, block, duration, SM)");
    if (b.sums.checked)
        report_tally(run.r, "sums_verified", &b.sums, "part 3: reduced gradient words that are "
                     "not the sum over the GPUs (fresh words every run, poisoned before it)");
    return lab_end(&run);
}
