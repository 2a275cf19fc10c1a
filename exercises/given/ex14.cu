/* ex14's given program: does the student's partition keep the urgent
 * kernel's SMs its own (green contexts), so that it waits for nothing behind
 * a background that fills the rest of the GPU? And, level two, how many SMs
 * does an urgent kernel need to meet its budget, at the least price?
 *
 * The student writes open_partition() and close_partition()
 * (exercises/ex14_green_contexts.cu; the contract is ex14.h): two streams,
 * the urgent kernel's on k SMs and the background's on every other SM. This
 * program never asks the student's contexts what they hold: its kernels
 * (spin_blocks, kernels/: each block holds a whole SM and logs its %smid,
 * its %globaltimer span and the launch's tag, fresh every launch) say where
 * they ran, and it times them itself. Level one, k = --partition-sms (16):
 *   1. where: a kernel of 4 x SMs blocks of 20 us in each stream at once.
 *      The model: the urgent one on exactly the P SMs that the device makes
 *      of k (the program asks cuDevSmResourceSplitByCount for the size
 *      alone, no context), the background's on the other SMs - P, none shared.
 *   2. the background alone, --waves x SMs blocks of --block-us, three
 *      times in the student's background stream and in one of the primary
 *      context's (the whole GPU), each timed by events recorded in its own
 *      stream: the cost, rest / whole, against ceil(B / (SMs - P)) / waves.
 *   3. the urgent kernel, 16 blocks of 10 us, --reps times alone on the idle
 *      GPU and --reps times at moments spread over 10%-90% of the background
 *      (random_strata, fresh every run), both in the student's urgent stream:
 *      latency is the host's clock from its launch to seeing its event (in
 *      the urgent stream) passed. The model in a partition: its time alone.
 * Level two, after level one closed its partition: an urgent kernel of B
 * blocks of t us (t drawn in [30, 50) us) and a budget of launch + (W + 0.5)
 * t, W (2 or 3) waves: B is drawn so that the cheapest partition meeting it
 * is k* SMs, a device size drawn from those whose price differs by 5% or
 * more from a step less and a step more; launch is level one's alone median
 * less its 10 us. The student's choose_partition_sms() gets these numbers
 * (ex14.h), returns k; the program splits k as the device would (a size it
 * refuses: nothing measured, a level-two error), opens the student's
 * partition of k, times the background alone in it, and the urgent kernel
 * at --reps moments of it, as in level one.
 *
 * The metrics (grader/rubrics/ex14.ini scores them):
 *   records_wrong, checked    block records of every level-one kernel wrong
 *                             (tag, block, duration, SM), of all checked;
 *   partition_sms             P, the device's size for k; urgent_sms,
 *   background_sms, sms_shared   SMs each probe used, and both;
 *   sms_off_partition         |urgent_sms - P| + |background_sms - (SMs - P)|
 *                             + sms_shared: 0 when each ran on its own SMs;
 *   alone_us, urgent_us       the median latency alone and behind the background;
 *   latency_over_alone        urgent_us / alone_us (shown, not scored);
 *   past_alone_us             the median over the samples of latency - the
 *                             sample alone taken just before it: the wait;
 *   past_alone_over_wait      past_alone_us over what the greatest priority
 *                             waits without a partition, half a background
 *                             block (or alone_us, where that is longer);
 *   cost, model_cost, cost_error_pct   the background's, its model's, and
 *                             100 |cost / model - 1|;
 *   late_samples              urgent launches after the background they were
 *                             meant to land in had ended, after 3 tries each;
 *   level2_blocks, level2_block_us, level2_budget_us   the job drawn;
 *   level2_k, level2_partition_sms, level2_best_k   the student's k, the
 *                             device's size for it, the cheapest size that meets
 *                             it (level two's answer: the grader's line only);
 *   level2_predicted_us, level2_latency_us   the student's prediction and
 *                             the median latency behind the background;
 *   level2_probe_us, level2_past_launch_us   a launch probe's median alone
 *                             (one wave of 10 us, taken just before each
 *                             sample) and the median over the samples of
 *                             latency - probe + 10 us: the latency past this
 *                             moment's launch;
 *   level2_latency_over_budget   level2_past_launch_us / (level2_budget_us -
 *                             level2_launch_us): the budget judged past the
 *                             launch, which the student's k does not set;
 *   level2_cost, level2_best_cost, level2_cost_error_pct   the background's
 *                             cost in the student's partition, the model's at
 *                             k* (the grader's line only), and 100 |cost / best - 1|
 *                             (withheld from the points preview: with the cost
 *                             it gives k*'s);
 *   level2_wrong              level two's block records wrong, plus 1 when
 *                             the device refused the k returned.
 * --check: 5 waves, 3 samples of each, both levels: the records only. */
#include "ex14.h"
#include "grading.h"
#include "kernels.h"
#include "driver.h"

#include <math.h>
#include <string.h>

static int partition_sms = 16; /* lab14's split: 16 of the H100's 132 */
static double block_us = 100;  /* lab05's and lab14's background */
static int waves = 50;

static const option ex_options[] = {
    {"partition-sms", OPT_INT, &partition_sms, 1, 1024, NO_QUICK, "K",
     "level one's k: the SMs asked for the urgent work"},
    {"block-us", OPT_DOUBLE, &block_us, 20, 10000, NO_QUICK, "US", "one background block"},
    {"waves", OPT_INT, &waves, 5, 1000, 10, "N", "background blocks, in waves of the whole GPU"},
    {NULL},
};

static const program_info ex = {
    .name = "ex14",
    .title = "exercise: give the urgent kernel SMs of its own (green contexts)",
    .handout = "labs/lab14_green_contexts/README.md",
    .options = ex_options, .reps = 20, .quick_reps = 6, /* urgent samples of each kind */
    .needs = NEEDS_CONCURRENT_KERNELS,
};

/* The check pass (--check): 5 waves, 3 samples of each. grading_begin()
 * calls it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    waves = 5;
    opt->reps = 3; /* samples */
}

enum { MAX_SMS = 1024, TRIES = 3, URGENT_BLOCKS = 16, PROBE_WAVES = 4 };
static const double URGENT_US = 10, PROBE_US = 20;

/* Exact, as lab14's kernels_on_partition_sms (the H100: 16 and 116 SMs, none shared). */
static const verdict ON_OWN_SMS = {
    "urgent_on_own_sms", 0, 0, "SMs",
    "the urgent stream's kernel did not run on exactly its partition's SMs, or the background's "
    "shared them: is each stream in a green context of its own, made from the two halves of one "
    "split (cuDevSmResourceSplitByCount)?"};
/* The wait measured in the model's own size, as lab14's
 * partition_latency_near_alone: without a partition, the greatest priority
 * waits for the block running on an SM when it lands, half a block by the
 * median of moments drawn at random (the same priority, the rest of the
 * background: 25 to 50 times more). In a partition it waits for nothing:
 * 0; 0.5 is halfway. Each sample is less one alone just before it, so a
 * launch slower this moment cancels. sol14: -0.02 to 0.10 in 50 runs on
 * two H200s. The plain ratio to its time alone (1.5x before) read up to
 * 1.16 for sol14 in 30 runs on an H100 and 1.48 for lab14 in 52. */
static const verdict NEAR_ALONE = {
    "urgent_waits_for_nothing", -INFINITY, 0.5, "x",
    "the urgent kernel waited for the background: a partition protects only from work outside "
    "it, so is the background's stream in the rest of the SMs, not on the whole GPU?"};
/* 5%: lab14 measured its waves' model within 0.1% at every k; the whole
 * GPU (no partition) is 1 / 1.14, 12% off, at k = 16 of 132 SMs. */
static const verdict COST = {
    "background_cost_as_modelled", 0, 0.05, "%", /* a share: 0.05 prints as 5% */
    "the background did not take as long as its waves on the other SMs predict: is it on "
    "exactly the SMs the urgent work does not have?"};
static const verdict WITHIN_BUDGET = {
    "level2_within_budget", -INFINITY, 1, "x",
    "level two's urgent kernel missed its budget: how many waves may it run in, and how many "
    "SMs does that take? (lab14's sweep over k)"};
/* 2.5%: half the least price gap between the sizes the program draws from (5%). */
static const verdict CHEAPEST = {
    "level2_cheapest", 0, 0.025, "%",
    "the background paid more (or less) than at the cheapest partition that meets the budget: "
    "a larger k costs it waves, a smaller one misses the budget"};

/* The program's own bench: static, so that the student's file cannot name it. */
static struct {
    CUdevice cudev;
    CUdevResource all;
    int sm_count, min_sms, step, bg_blocks, least;
    size_t footprint;
    cudaStream_t whole;         /* the primary context's: the whole GPU, least priority */
    cudaEvent_t done, bg_done;  /* recorded in the urgent kernel's and the background's stream */
    event_timer timer;
    block_record *d_log, *h_log;
    int log_len;
    uint64_t tag;
    tally records, records2;
    tally *into;                /* the level being measured */
    int late;
} bench;

/* ---- kernels that say where they ran ------------------------------------------ */

static uint64_t blocks_launch(int blocks, double us, int slot, cudaStream_t s)
{
    spin_blocks_launch(blocks, bench.footprint, ns_from_ms(us / 1e3), ++bench.tag,
                       bench.d_log + slot, s);
    return bench.tag;
}

/* After the GPU is done with them: the records checked, their SMs marked in
 * used[] (may be NULL); returns their span, first start to last end, in ms. */
static double blocks_collect(int blocks, uint64_t tag, double us, int slot, unsigned char *used)
{
    block_record *r = bench.h_log + slot;
    unsigned long long first;
    CUDA_CHECK(cudaMemcpy(r, bench.d_log + slot, blocks * sizeof *r, cudaMemcpyDeviceToHost));
    verify_block_records(r, blocks, tag, ns_from_ms(us / 1e3), bench.sm_count, &first, bench.into);
    return (double)block_records_span(r, blocks, used, MAX_SMS) * 1e-6;
}

static int count(const unsigned char *used) { return sms_marked(used, MAX_SMS); }

/* The device's size for k SMs, asked of the driver with no context made; 0
 * when it refuses k or leaves nothing for the rest. */
static int device_size(int k)
{
    CUdevResource part, rest;
    unsigned int groups = 1;
    CUresult e = cu.cuDevSmResourceSplitByCount(&part, &groups, &bench.all, &rest, 0, (unsigned)k);
    if (e == CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION || e == CUDA_ERROR_INVALID_VALUE)
        return 0;
    CU_CHECK(e);
    return groups == 1 && rest.sm.smCount > 0 ? (int)part.sm.smCount : 0;
}

/* The background's model: ceil(B / SMs) waves of a block, as a share of the whole GPU's. */
static double model_cost(int sms)
{ return ceil((double)bench.bg_blocks / (bench.sm_count - sms)) / waves; }

/* ---- the measurements ------------------------------------------------------------ */

/* The background alone in s, three times, by events recorded in s (in s's
 * context): the median, in ms. */
static double background_ms(cudaStream_t s)
{
    double ms[3];
    for (int i = 0; i < 3; i++) {
        event_timer_start(&bench.timer, s);
        uint64_t tag = blocks_launch(bench.bg_blocks, block_us, 0, s);
        event_timer_stop(&bench.timer, s);
        ms[i] = event_timer_ms(&bench.timer);
        blocks_collect(bench.bg_blocks, tag, block_us, 0, NULL);
    }
    return stats_of(ms, 3).median;
}

/* The urgent kernel (blocks of us each) in s, after_ms into a background in
 * bgs (after_ms < 0: none), tried again (TRIES at most) when the background
 * had ended before the launch. Its latency, us. */
static double urgent_latency(cudaStream_t s, cudaStream_t bgs, int blocks, double us,
                             double after_ms)
{
    double latency = 0;
    int running = 0;
    for (int t = 0; t < TRIES && !running; t++) {
        uint64_t bg = 0;
        double t0 = host_time_ms(), seen[2];
        running = 1;
        if (after_ms >= 0) {
            bg = blocks_launch(bench.bg_blocks, block_us, 0, bgs);
            CUDA_CHECK(cudaEventRecord(bench.bg_done, bgs));
            while (host_time_ms() - t0 < after_ms) {
            }
            running = !event_finished(bench.bg_done);
        }
        cudaEvent_t ends[2] = {bench.done, bench.bg_done};
        double h0 = host_time_ms();
        uint64_t tag = blocks_launch(blocks, us, bench.bg_blocks, s);
        CUDA_CHECK(cudaEventRecord(bench.done, s));
        events_seen_ms(ends, after_ms < 0 ? 1 : 2, seen); /* the records only after both */
        latency = (seen[0] - h0) * 1e3;
        blocks_collect(blocks, tag, us, bench.bg_blocks, NULL);
        if (after_ms >= 0)
            blocks_collect(bench.bg_blocks, bg, block_us, 0, NULL);
    }
    bench.late += !running;
    return latency;
}

/* n samples behind the background in p at moments over 10%-90% of bg_ms,
 * and, with alone, n of a probe (probe blocks of URGENT_US) on the idle GPU,
 * each just before its pair. With past, the median over the pairs of
 * (latency - probe): so a launch slower or faster this moment than at
 * calibration (9-24 us on a shared H100) cancels. In us. */
static stats behind_background(const partition *p, int blocks, double us, int n, double bg_ms,
                               int probe, stats *alone, double *past)
{
    double *lat = (double *)xmalloc(3 * (size_t)n * sizeof *lat), *at = lat + n, *solo = at + n;
    random_strata(at, n, 0.1 * bg_ms, 0.9 * bg_ms);
    urgent_latency(p->urgent, p->background, blocks, us, -1); /* warm-up */
    for (int i = 0; i < n; i++) {
        if (alone)
            solo[i] = urgent_latency(p->urgent, p->background, probe, URGENT_US, -1);
        lat[i] = urgent_latency(p->urgent, p->background, blocks, us, at[i]);
    }
    if (alone)
        *alone = stats_of(solo, n);
    if (alone && past)
        *past = stats_of_differences(lat, solo, n).median;
    stats s = stats_of(lat, n);
    free(lat);
    return s;
}

/* Level one: where the student's two streams run, what the background pays,
 * how long the urgent kernel waits. Returns its median alone, us. */
static stats one(double v) { return stats_of(&v, 1); }

static double level_one(report *r, int n, int check)
{
    partition p;
    partition_request req = {bench.cudev, partition_sms, bench.least};
    int P = device_size(partition_sms), probe = PROBE_WAVES * bench.sm_count;
    if (!P)
        fail_cannot_run("the device refuses a partition of %d SMs (it has %d, in partitions of "
                        "at least %d, in steps of %d)", partition_sms, bench.sm_count,
                        bench.min_sms, bench.step);
    open_partition(&req, &p); /* the student's */
    timeline_name_stream(p.urgent, "your urgent stream");
    timeline_name_stream(p.background, "your background stream");

    unsigned char in_urgent[MAX_SMS] = {0}, in_bg[MAX_SMS] = {0};
    urgent_latency(p.urgent, p.background, 1, 0, -1); /* a first launch in each stream */
    urgent_latency(p.background, p.urgent, 1, 0, -1);
    uint64_t tu = blocks_launch(probe, PROBE_US, 0, p.urgent);
    uint64_t tb = blocks_launch(probe, PROBE_US, probe, p.background);
    CUDA_CHECK(cudaDeviceSynchronize());
    blocks_collect(probe, tu, PROBE_US, 0, in_urgent);
    blocks_collect(probe, tb, PROBE_US, probe, in_bg);
    int used_u = count(in_urgent), used_b = count(in_bg), shared = 0;
    for (int i = 0; i < MAX_SMS; i++)
        shared += in_urgent[i] && in_bg[i];
    int off = abs(used_u - P) + abs(used_b - (bench.sm_count - P)) + shared;

    double whole = background_ms(bench.whole), rest = background_ms(p.background);
    double cost = rest / whole, model = model_cost(P), error = fabs(cost / model - 1) * 100;
    stats alone;
    double past;
    stats lat = behind_background(&p, URGENT_BLOCKS, URGENT_US, n, rest, URGENT_BLOCKS, &alone,
                                  &past);
    double wait = fmax(block_us / 2, alone.median), over = past / wait;
    CUDA_CHECK(cudaDeviceSynchronize());
    close_partition(&p); /* the student's */

    stats su = one(used_u), sb = one(used_b), sc = one(cost);
    report_section(r, "Level one: where your streams' kernels ran (%smid of each block)");
    report_fact(r, "sm_count", bench.sm_count, "SMs", "the GPU's");
    report_fact(r, "partition_sms", P, "SMs", "the device's size for %d asked", partition_sms);
    report_compare(r, "your urgent stream", "sms_used", "the partition's", P, &su, "SMs");
    report_compare(r, "your background stream", "sms_used", "every other SM",
                   bench.sm_count - P, &sb, "SMs");
    report_value(r, "both streams", "sms_shared", shared, "SMs");
    report_section(r, "What the background pays, and how long the urgent kernel waits");
    report_value(r, "background, whole GPU", "duration", whole, "ms");
    report_compare(r, "background, your stream", "cost", "ceil(B / (SMs - P)) / waves", model,
                   &sc, "x");
    report_stats(r, "urgent kernel, alone", "latency", &alone, "us");
    report_compare(r, "urgent kernel, behind it", "latency", "alone in its partition",
                   alone.median, &lat, "us");
    report_value(r, "urgent kernel", "late_samples", bench.late, "");
    if (!check) {
        report_verdict(r, &ON_OWN_SMS, off, "your urgent stream's kernel ran on %d SMs (its "
                       "partition: %d), your background's on %d (%d), %d shared", used_u, P,
                       used_b, bench.sm_count - P, shared);
        report_verdict(r, &NEAR_ALONE, over, "behind the background %.1f us past its time "
                       "alone (the median over %d samples, each less one alone just before it), "
                       "over %.1f us, what the greatest priority waits without a partition (half "
                       "a block)", past, n, wait);
        report_verdict(r, &COST, error / 100, "the background took %.3fx as long as on the whole "
                       "GPU; its waves on %d SMs predict %.3fx", cost, bench.sm_count - P, model);
    }
    grading_value("sm_count", bench.sm_count);
    grading_value("partition_sms", P);
    grading_value("urgent_sms", used_u);
    grading_value("background_sms", used_b);
    grading_value("sms_shared", shared);
    grading_value("sms_off_partition", off);
    grading_value("alone_us", alone.median);
    grading_value("urgent_us", lat.median);
    grading_value("latency_over_alone", lat.median / alone.median);
    grading_value("past_alone_us", past);
    grading_value("past_alone_over_wait", over);
    grading_value("cost", cost);
    grading_value("model_cost", model);
    grading_value("cost_error_pct", error);
    grading_value("late_samples", bench.late);
    return alone.median;
}

/* Level two's job, drawn afresh; returns k*, the cheapest size that meets it.
 * Sizes whose price is within 5% of a step's neighbour are not drawn, so
 * that the rubric's 2.5% tells a step over (or under) from k* (the check
 * pass's short background prices none apart: it takes the first size). */
static int draw_job(level2_job *job, double launch_us, int check)
{
    int cand[MAX_SMS], n = 0, s = bench.step;
    for (int k = bench.min_sms + s; k <= bench.sm_count / 2; k += s)
        if (model_cost(k) >= 1.05 * model_cost(k - s) && model_cost(k + s) >= 1.05 * model_cost(k))
            cand[n++] = k;
    if (n == 0 && !check)
        fail_cannot_run("level two: no partition size of this GPU (%d SMs, steps of %d) prices "
                        "5%% apart from its neighbours with --waves %d", bench.sm_count, s, waves);
    int best = n ? cand[(int)fmin(n - 1, grading_uniform(0, n))] : bench.min_sms + s;
    int w = grading_uniform(0, 1) < 0.5 ? 2 : 3, lo = (best - s) * w + 1;
    *job = (level2_job){bench.sm_count, bench.min_sms, s};
    job->blocks = lo + (int)fmin(best * w - lo, grading_uniform(0, best * w - lo + 1));
    job->block_us = grading_uniform(30, 50);
    job->launch_us = launch_us;
    job->budget_us = launch_us + (w + 0.5) * job->block_us; /* half a wave each side */
    return best;
}

static void level_two(report *r, int n, double alone_us, int check)
{
    level2_job job;
    double predicted = 0;
    int best = draw_job(&job, alone_us - URGENT_US, check);
    int k = choose_partition_sms(&job, &predicted); /* the student's, before anything runs */
    int P = k >= 1 && k < bench.sm_count ? device_size(k) : 0;
    bench.into = &bench.records2;
    report_section(r, "Level two: the fewest SMs that meet a budget");
    report_param(r, "level2_blocks", job.blocks, "");
    report_param(r, "level2_block_us", job.block_us, "us");
    report_param(r, "level2_launch_us", job.launch_us, "us");
    report_param(r, "level2_budget_us", job.budget_us, "us");
    report_value(r, "your choice", "k", k, "SMs");
    grading_value("level2_blocks", job.blocks);
    grading_value("level2_block_us", job.block_us);
    grading_value("level2_budget_us", job.budget_us);
    grading_value("level2_launch_us", job.launch_us);
    grading_value("level2_k", k);
    grading_value("level2_best_k", best);
    grading_value("level2_predicted_us", predicted);
    if (!P) { /* nothing to measure: a level-two error, the concept metrics absent */
        report_check(r, "level2_k_made", 0, "choose_partition_sms() returned %d: the device "
                     "makes no partition of it with SMs left for the rest", k);
        grading_value("level2_wrong", (double)bench.records2.wrong + 1);
        return;
    }
    partition p;
    partition_request req = {bench.cudev, k, bench.least};
    open_partition(&req, &p); /* the student's, with the student's k */
    double rest = background_ms(p.background), cost = rest / background_ms(bench.whole);
    /* the launch probe: one wave of URGENT_US blocks, as level one's alone
     * median that launch_us came from, in this partition */
    stats probe;
    double past;
    stats lat = behind_background(&p, job.blocks, job.block_us, n, rest,
                                  P < URGENT_BLOCKS ? P : URGENT_BLOCKS, &probe, &past);
    past += URGENT_US; /* past the launch: the probe's own blocks ran URGENT_US */
    CUDA_CHECK(cudaDeviceSynchronize());
    close_partition(&p);
    double best_cost = model_cost(best), error = fabs(cost / best_cost - 1) * 100;
    /* judged past the launch: the budget's launch_us is level one's, and a
     * launch slower this moment would otherwise cost the student the margin
     * their k was chosen to keep, half a block (15-25 us) */
    double over = past / (job.budget_us - job.launch_us);
    double model_lat = job.launch_us + ceil((double)job.blocks / P) * job.block_us;
    report_fact(r, "level2_partition_sms", P, "SMs", "the device's size for your %d", k);
    report_value(r, "your prediction", "latency", predicted, "us");
    stats sc = one(cost);
    /* the model's latency at the student's k is the prediction's answer:
     * beside it only once the student has predicted */
    grading_compare(r, grading_predicted(r, predicted, 0, "*predicted_us"),
                    "level two's urgent kernel", "latency", "launch + ceil(B / P) x t", model_lat,
                    &lat, "us");
    report_compare(r, "background, your partition", "cost", "ceil(B / (SMs - P)) / waves",
                   model_cost(P), &sc, "x");
    /* the cheapest size that meets the budget, and its cost, are level two's
     * answer: the grader's line only (level2_best_k, level2_best_cost) */
    if (!check) {
        report_verdict(r, &WITHIN_BUDGET, over, "%.1f us past its launch (the median over %d "
                       "samples, each less a launch timed just before it) against the budget's "
                       "%.1f us past launch_us (the latency itself: %.1f us, the budget %.1f us)",
                       past, n, job.budget_us - job.launch_us, lat.median, job.budget_us);
        /* the error, with the student's cost, would give the cheapest size's */
        int within = verdict_holds(&CHEAPEST, error / 100);
        grading_verdict_withheld(r, &CHEAPEST, within, "in your partition of %d SMs the "
                                 "background took %.3fx its time on the whole GPU: %s %.1f%% of "
                                 "what the cheapest size that meets the budget costs", P, cost,
                                 within ? "within" : "not within", CHEAPEST.max * 100);
    }
    grading_value("level2_partition_sms", P);
    grading_value("level2_latency_us", lat.median);
    grading_value("level2_past_launch_us", past);
    grading_value("level2_probe_us", probe.median);
    grading_value("level2_latency_over_budget", over);
    grading_value("level2_cost", cost);
    grading_value("level2_best_cost", best_cost);
    grading_value_withheld("level2_cost_error_pct", error); /* with the cost: the best's */
    grading_value("level2_wrong", (double)bench.records2.wrong);
}

static void bench_open(lab_run *lab)
{
    driver_open();
    CU_CHECK(cu.cuDeviceGet(&bench.cudev, lab->dev.index));
    CU_CHECK(cu.cuDeviceGetDevResource(bench.cudev, &bench.all, CU_DEV_RESOURCE_TYPE_SM));
    bench.sm_count = (int)bench.all.sm.smCount;
    bench.min_sms = (int)bench.all.sm.minSmPartitionSize;
    bench.step = (int)bench.all.sm.smCoscheduledAlignment;
    if (bench.sm_count > MAX_SMS || bench.step < 1)
        fail_cannot_run("this GPU has %d SMs in steps of %d; ex14 counts up to %d", bench.sm_count,
                        bench.step, MAX_SMS);
    bench.footprint = spin_blocks_footprint();
    bench.bg_blocks = waves * bench.sm_count;
    /* the background, then the largest urgent kernel: level two's, 3 waves of half the GPU */
    bench.log_len = bench.bg_blocks + (PROBE_WAVES + 2) * bench.sm_count;
    bench.d_log = (block_record *)lab_device(lab, bench.log_len * sizeof(block_record));
    bench.h_log = (block_record *)lab_pinned(lab, bench.log_len * sizeof(block_record));
    bench.least = lab->dev.priority_least;
    bench.whole = lab_stream(lab, "whole GPU, least priority", cudaStreamNonBlocking, bench.least);
    bench.done = lab_event(lab, cudaEventDisableTiming);
    bench.bg_done = lab_event(lab, cudaEventDisableTiming);
    bench.timer = lab_timer(lab);
    bench.tag = fresh_seed();
    bench.records.where = "level one", bench.records2.where = "level two";
    bench.into = &bench.records;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    int check = grading_check(), n = lab.opt.reps;
    bench_open(&lab);
    double alone = level_one(lab.r, n, check);
    report_tally(lab.r, "records_verified", &bench.records, "block records of level one's "
                 "kernels wrong (tag, block, duration, SM)");
    grading_value("records_wrong", (double)bench.records.wrong);
    grading_value("checked", (double)bench.records.checked);
    level_two(lab.r, n, alone, check);
    report_tally(lab.r, "level2_records_verified", &bench.records2, "block records of level "
                 "two's kernels wrong (tag, block, duration, SM)");
    return grading_finish(&lab);
}
