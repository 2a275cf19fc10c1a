/* ex09's given program: does the student's training loop run without hidden
 * synchronisations?
 *
 * The student writes start_training(), train_step() and finish_training()
 * (exercises/ex09_hidden_syncs.cu; the contract is ex09.h). This program
 * owns a small model (n parameters, fresh random values every run) and a
 * target that changes every step (a hash of a fresh seed, the element and
 * the step). Before each step it queues the data loader's work for the next
 * batch, a kernel of P ms, on its own blocking stream; the student's step
 * queues gradients() (a kernel that computes and then spins to G ms) and
 * update() on the training stream, also blocking. G and P are drawn around
 * --step-ms every run. With nothing hidden in the step the host only queues
 * work, and the two streams overlap: a step takes max(G, P). A synchronous
 * read-back or a cudaFree stops the host every step; a legacy-stream call
 * makes the step wait for the loader on the GPU: G + P.
 *
 * The metrics (grader/rubrics/ex09.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   g_ms, p_ms              the step's and the loader's GPU time this run
 *   host_wait_ms            the median, over the steps, of the host's time inside
 *                           train_step() (this program's clock, around the call)
 *   host_wait_fraction      host_wait_ms / g_ms
 *   step_ms                 the loop's time (first step to finish_training()
 *                           returned, the GPU idle) / steps
 *   step_over_ideal         step_ms / max(g_ms, p_ms)
 *   losses_wrong, params_wrong, results_wrong   against the CPU's own training
 * A warm-up loop of 3 steps runs first, checked too. --check: 3 steps of 0.1 ms.
 *
 * Level two, measured after level one in the same run: the same loop, with
 * the student's train_step_reported() and finish_reporting() (ex09.h), which
 * must hand every step's loss to report(), this program's logger, within
 * LEVEL2_MAX_LAG steps, through a pinned ring of LEVEL2_SLOTS slots and as
 * many events. Before every LEVEL2_STALL_EVERY-th step this program's host
 * is busy for S = 2.3-2.6 G (host_busy_ms: a checkpoint written); the
 * loader's kernel is 0.5-0.8 G, so the step's stream sets the pace. G, S, P
 * and the model are drawn afresh for each of LEVEL2_ROUNDS timed loops (a
 * warm-up loop first, checked too). The GPU's own record: the gradients
 * kernel writes %globaltimer when it begins, update when it ends, step by
 * step; the GPU was idle between step s-1's end and step s's start (the
 * loader never fills that gap: it is queued with the step). The model: a
 * host that waits for the loss of step i - K leaves K steps queued, K G of
 * work, so a stall of S leaves the GPU idle max(0, S - K G). Metrics:
 *   level2_reports_wrong   steps whose loss was not reported exactly once,
 *                          with the CPU's value, within LEVEL2_MAX_LAG steps
 *                          (this program's record of each report() call),
 *                          and reports of steps that do not exist
 *   level2_params_wrong    against the CPU's own training
 *   level2_results_wrong   the two, over every loop
 *   level2_idle_fraction   the GPU's idle time between steps over the stalls'
 *                          total, the median of the timed loops
 *   level2_lag             the largest lag of a report made inside the loop
 *   level2_model_lag       the model's least lag with no idle time, at the
 *                          largest S / G drawn: the grader's line only, never
 *                          printed (it is level two's design)
 *   level2_model_idle_lag2 the model's idle share of the longest stall the
 *                          program draws (2.6 G, not this run's largest
 *                          draw) at K = 2, the prediction's question:
 *                          printed, with the model's idle at the student's
 *                          lag, only once the student has predicted
 *                          (grading_predicted)
 *   level2_predicted_idle  the student's LEVEL2_PREDICTED_IDLE
 *   level2_g_ms, level2_stall_ms, level2_step_over_ideal (the loop's time per
 *   step over G), level2_host_wait_fraction (the median host time inside
 *   train_step_reported() over G): printed, not scored.
 * --check: level two one loop of 9 steps (two stalls) at 0.1 ms. */
#include "ex09.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int steps = 40;
static double step_ms = 1; /* G and P are drawn from [0.8, 1.2) x this */

static const option ex_options[] = {
    {"steps", OPT_INT, &steps, 3, 1000, 10, "N", "training steps in the measured loop"},
    {"step-ms", OPT_DOUBLE, &step_ms, 0.2, 100, NO_QUICK, "MS",
     "about how long a step's GPU work, and the loader's, take"},
    {NULL},
};
static const program_info ex = {
    .name = "ex09",
    .title = "exercise: a training loop without hidden synchronisations",
    .handout = "labs/lab09_implicit_sync/README.md",
    .options = ex_options, .reps = 1,
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

/* The check pass (--check): 3 steps of 0.1 ms, below --step-ms's least (a
 * check pass checks, it does not time). grading_begin() calls it before the
 * settings are printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    (void)opt; /* --reps: this program times one loop */
    steps = 3;
    step_ms = 0.1;
}

/* A host that only queues work spends tens of microseconds per step; one
 * that waits spends at least G. A fifth of G lies far from both. */
static const verdict HOST_FREE = {
    "host_does_not_wait", 0, 0.2, "x",
    "the host still waits in train_step(): a synchronous copy (the loss read back every "
    "step), or a cudaFree, waits for the GPU; see lab09's catalogue"};
/* Overlapped, max(G, P); in turns, G + P (2x for equal ones): 1.3 allows
 * launches and the host's clock, and stays far below the 1.7x or more of
 * turns with G and P in [0.8, 1.2) x --step-ms. */
static const verdict OVERLAPPED = {
    "step_overlaps_loader", 0, 1.3, "x",
    "the step and the loader take turns on the GPU: a call on the legacy default stream "
    "(cudaMemset, cudaMemcpy) waits for the loader's blocking stream; or the host waits"};

enum { THREADS = 256, N = 1 << 14, WARMUP_STEPS = 3 };
static const double LR = 0.25;

static struct {
    uint64_t seed, g_ns, p_ns;
    unsigned long long *d_span; /* level two: [2 step] start, [2 step + 1] end; else NULL */
    double *h_params;  /* the CPU's own training */
    double *h_losses;  /* the CPU's losses */
    double *got;       /* the GPU's parameters, read back */
} bench;

/* The step's target for element i: a hash of the run's seed, so fresh every run. */
__host__ __device__ static double target(uint64_t seed, int i, int step)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * ((uint64_t)i * 1000003u + (uint64_t)step + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0; /* [-1, 1) */
}

/* grads += d loss / d params for loss = mean((p - target)^2); workspace
 * keeps each squared error for update()'s loss; then spins to g_ns. */
static __global__ void gradients_kernel(const double *p, double *g, double *work, int n,
                                        uint64_t seed, int step, uint64_t g_ns,
                                        unsigned long long *span)
{
    uint64_t start = globaltimer_ns();
    if (span && threadIdx.x == 0)
        span[0] = start; /* level two's record: when the step began */
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        double e = p[i] - target(seed, i, step);
        g[i] += 2 * e / n;
        work[i] = e * e;
    }
    while (globaltimer_ns() - start < g_ns) {
    }
}

/* losses[step] = the mean of the squared errors; params -= LR x grads. */
static __global__ void update_kernel(double *p, const double *g, const double *work, int n,
                                     double *losses, int step, unsigned long long *span)
{
    __shared__ double part[THREADS];
    double sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        sum += work[i];
        p[i] -= LR * g[i];
    }
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        losses[step] = part[0] / n;
        if (span)
            span[1] = globaltimer_ns(); /* level two's record: when the step ended */
    }
}

static void gradients(const train_state *t, int step, double *workspace)
{
    gradients_kernel<<<1, THREADS, 0, t->stream>>>(t->d_params, t->d_grads, workspace, t->n,
                                                   bench.seed, step, bench.g_ns,
                                                   bench.d_span ? bench.d_span + 2 * step : NULL);
    CHECK_LAUNCH();
}

static void update(const train_state *t, int step, const double *workspace)
{
    update_kernel<<<1, THREADS, 0, t->stream>>>(t->d_params, t->d_grads, workspace, t->n,
                                                t->d_losses, step,
                                                bench.d_span ? bench.d_span + 2 * step : NULL);
    CHECK_LAUNCH();
}

/* Fresh parameters on both sides, poison in the gradients and the losses:
 * the student's step must zero the one and finish_training() fill the other. */
static void fresh_model(train_state *t)
{
    bench.seed = fresh_seed();
    for (int i = 0; i < t->n; i++)
        bench.h_params[i] = target(bench.seed ^ 0x5eed, i, 0);
    CUDA_CHECK(cudaMemcpy(t->d_params, bench.h_params, t->n * sizeof(double),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(t->d_grads, 0xff, t->n * sizeof(double)));
    memset(t->h_losses, 0xff, t->steps * sizeof(double));
}

/* The CPU trains the same model for t->steps steps, from the parameters
 * fresh_model() drew: its losses into bench.h_losses, its parameters kept. */
static void cpu_training(const train_state *t)
{
    int n = t->n;
    for (int s = 0; s < t->steps; s++) {
        double loss = 0;
        for (int i = 0; i < n; i++) {
            double e = bench.h_params[i] - target(bench.seed, i, s);
            loss += e * e;
            bench.h_params[i] -= LR * (2 * e / n);
        }
        bench.h_losses[s] = loss / n;
    }
}

static int loss_differs(double got, double want)
{
    return !(fabs(got - want) <= 1e-9 * fabs(want) + 1e-15);
}

/* The GPU's parameters against the CPU's, after cpu_training(): how many differ. */
static int params_differ(const train_state *t)
{
    int n = t->n, wrong = 0;
    CUDA_CHECK(cudaMemcpy(bench.got, t->d_params, n * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        wrong += !(fabs(bench.got[i] - bench.h_params[i]) <= 1e-12 * fabs(bench.h_params[i]) + 1e-15);
    return wrong;
}

/* The CPU trains the same model; counts the losses and parameters that differ. */
static int check_results(const train_state *t, int *params_wrong)
{
    int losses_wrong = 0;
    cpu_training(t);
    for (int s = 0; s < t->steps; s++)
        losses_wrong += loss_differs(t->h_losses[s], bench.h_losses[s]);
    *params_wrong = params_differ(t);
    return losses_wrong;
}

/* One loop of t->steps: the loader's kernel, then the student's step, timed
 * on the host; wait[s] the host's time inside train_step(). Returns the
 * loop's time, the GPU idle at both ends. */
static double training_loop(train_state *t, cudaStream_t loader, double *wait)
{
    fresh_model(t);
    start_training(t);
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    for (int s = 0; s < t->steps; s++) {
        spin_for_ns<<<1, 1, 0, loader>>>(bench.p_ns); /* the next batch's preparation */
        CHECK_LAUNCH();
        double h0 = host_time_ms();
        train_step(t, s);
        wait[s] = host_time_ms() - h0;
    }
    finish_training(t);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* ---- Level two: every loss reported, the GPU kept busy ---- */

/* Level two's target: the GPU idle for under 5% of the stalls. A lag of K
 * leaves max(0, S - K G) of each stall S idle (S = 2.3-2.6 G); a lag that
 * covers the longest stall leaves nothing but the microseconds between
 * kernels in a queued stream, and every shorter lag stayed well above 5% in
 * a simulation of the model (3000 loops with 30 us of launches a step). The
 * reference solution read 1.9% on an H100. */
static const verdict QUEUE_COVERS = {
    "level2_gpu_never_idle", 0, 0.05, "%",
    "the GPU ran dry while the host was away: a host that waits for the step it just issued "
    "(or one too recent) leaves too little work queued to cover the program's stall"};

enum { LEVEL2_ROUNDS = 3 };

/* The host's stall before every LEVEL2_STALL_EVERY-th step, S in units of
 * G, drawn afresh each loop from [STALL_MIN_G, STALL_MAX_G). The
 * prediction's question is at the longest, STALL_MAX_G (ex09.h), and so is
 * the model's answer printed beside it: the run's largest draw lies below
 * it, and a student predicts before the run draws anything. */
static const double STALL_MIN_G = 2.3, STALL_MAX_G = 2.6;

static struct {
    volatile int current;   /* the step whose train_step_reported() runs; steps in finish */
    int steps, out_of_range;
    int *times, *lag;       /* per step: how often reported, the lag of the last report */
    double *value;          /* per step: the last value reported */
    unsigned long long *h_span;
} rec;

/* The program's logger, handed to the student as loss_ring.report. */
static void report_loss(int step, double loss)
{
    if (step < 0 || step >= rec.steps) {
        rec.out_of_range++;
        return;
    }
    rec.times[step]++;
    rec.value[step] = loss;
    rec.lag[step] = rec.current - step;
}

/* The program's own host work: a checkpoint written, say. */
static void host_busy_ms(double ms)
{
    double t0 = host_time_ms();
    while (host_time_ms() - t0 < ms) {
    }
}

/* One level-two loop: fresh model, ring and losses poisoned, the record
 * reset; a stall of stall_ms before every LEVEL2_STALL_EVERY-th step, the
 * loader's kernel, the student's step. Returns the loop's time (the GPU idle
 * at both ends); wait[s] the host's time in train_step_reported(). */
static double level2_loop(train_state *t, const loss_ring *r, cudaStream_t loader,
                          double stall_ms, double *wait)
{
    fresh_model(t);
    for (int k = 0; k < LEVEL2_SLOTS; k++)
        r->ring[k] = NAN;
    CUDA_CHECK(cudaMemset(t->d_losses, 0xff, t->steps * sizeof(double)));
    CUDA_CHECK(cudaMemset(bench.d_span, 0, 2 * t->steps * sizeof(unsigned long long)));
    rec.steps = t->steps, rec.out_of_range = 0, rec.current = 0;
    memset(rec.times, 0, t->steps * sizeof(int));
    start_training(t);
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    for (int s = 0; s < t->steps; s++) {
        if (s > 0 && s % LEVEL2_STALL_EVERY == 0)
            host_busy_ms(stall_ms);
        spin_for_ns<<<1, 1, 0, loader>>>(bench.p_ns);
        CHECK_LAUNCH();
        rec.current = s;
        double h0 = host_time_ms();
        train_step_reported(t, r, s);
        wait[s] = host_time_ms() - h0;
    }
    rec.current = t->steps;
    finish_reporting(t, r);
    finish_training(t);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* What the record says of a loop: reports wrong (not once, not the CPU's
 * value, beyond the lag, out of range), the largest lag inside the loop,
 * and the GPU's idle time between steps (ms) from its own clock. */
static int level2_check(const train_state *t, int *max_lag, double *idle_ms)
{
    int wrong = rec.out_of_range;
    cpu_training(t);
    *max_lag = 0;
    for (int s = 0; s < t->steps; s++) {
        wrong += rec.times[s] != 1 || loss_differs(rec.value[s], bench.h_losses[s]) ||
                 rec.lag[s] > LEVEL2_MAX_LAG;
        if (rec.times[s] && s + rec.lag[s] < t->steps && rec.lag[s] > *max_lag)
            *max_lag = rec.lag[s];
    }
    CUDA_CHECK(cudaMemcpy(rec.h_span, bench.d_span, 2 * t->steps * sizeof(unsigned long long),
                          cudaMemcpyDeviceToHost));
    *idle_ms = 0;
    for (int s = 1; s < t->steps; s++) {
        unsigned long long end = rec.h_span[2 * s - 1], start = rec.h_span[2 * s];
        if (start > end)
            *idle_ms += (start - end) * 1e-6;
    }
    return wrong;
}

static void level2(lab_run *lab, train_state base, cudaStream_t loader, int check)
{
    report *r = lab->r;
    int steps = base.steps, rounds = check ? 1 : LEVEL2_ROUNDS;
    if (steps < 2 * LEVEL2_STALL_EVERY + 1) /* two stalls at least (--check: 3 steps) */
        steps = 2 * LEVEL2_STALL_EVERY + 1;
    double ms = step_ms; /* --check: 0.1 */
    train_state t = base;
    t.steps = steps;
    t.d_losses = (double *)lab_device(lab, steps * sizeof(double));
    t.h_losses = (double *)lab_pinned(lab, steps * sizeof(double));
    loss_ring ring = {(double *)lab_pinned(lab, LEVEL2_SLOTS * sizeof(double))};
    lab_events(lab, ring.event, LEVEL2_SLOTS, cudaEventDisableTiming);
    ring.report = report_loss;
    bench.h_losses = (double *)lab_pageable(lab, steps * sizeof(double));
    bench.d_span = (unsigned long long *)lab_device(lab, 2 * steps * sizeof(unsigned long long));
    rec.h_span = (unsigned long long *)lab_pageable(lab, 2 * steps * sizeof(unsigned long long));
    rec.times = (int *)lab_pageable(lab, steps * sizeof(int));
    rec.lag = (int *)lab_pageable(lab, steps * sizeof(int));
    rec.value = (double *)lab_pageable(lab, steps * sizeof(double));
    double *wait = (double *)lab_pageable(lab, steps * sizeof(double));
    double idle[LEVEL2_ROUNDS], idle_pct[LEVEL2_ROUNDS], over[LEVEL2_ROUNDS], host[LEVEL2_ROUNDS], g[LEVEL2_ROUNDS];
    double stall[LEVEL2_ROUNDS], ratio_max = 0;
    int stalls = (steps - 1) / LEVEL2_STALL_EVERY, wrong = 0, params_wrong = 0, lag = 0;

    timeline_span_begin("level 2: every loss reported");
    for (int round = -1; round < rounds; round++) { /* round -1: the warm-up */
        double g_ms = ms * grading_uniform(0.8, 1.2), ratio = grading_uniform(STALL_MIN_G, STALL_MAX_G);
        bench.g_ns = ns_from_ms(g_ms), bench.p_ns = ns_from_ms(g_ms * grading_uniform(0.5, 0.8));
        double loop_ms = level2_loop(&t, &ring, loader, ratio * g_ms, wait);
        int max_lag;
        double idle_ms;
        wrong += level2_check(&t, &max_lag, &idle_ms);
        params_wrong += params_differ(&t);
        if (round < 0)
            continue;
        stats h = stats_of(wait, steps);
        lag = max_lag > lag ? max_lag : lag;
        ratio_max = fmax(ratio_max, ratio);
        idle[round] = idle_ms / (stalls * ratio * g_ms), idle_pct[round] = idle[round] * 100;
        over[round] = loop_ms / steps / g_ms, host[round] = h.median / g_ms;
        g[round] = g_ms, stall[round] = ratio * g_ms;
    }
    timeline_span_end();
    bench.d_span = NULL; /* level one's launches keep no record */
    stats s_idle = stats_of(idle, rounds), s_pct = stats_of(idle_pct, rounds), s_over = stats_of(over, rounds);
    stats s_host = stats_of(host, rounds), s_g = stats_of(g, rounds), s_stall = stats_of(stall, rounds);
    int model_lag = (int)floor(ratio_max) + 1;
    double model_idle = fmax(0, s_stall.median - lag * s_g.median) / s_stall.median;
    double model_idle2 = fmax(0, STALL_MAX_G - 2) / STALL_MAX_G; /* the question's */

    report_section(r, "Level 2: every loss reported, the GPU kept busy");
    report_text(r, "  %d steps, a stall of %.1f-%.1f G before every %dth, each loss reported "
                "within %d steps\n", steps, STALL_MIN_G, STALL_MAX_G, LEVEL2_STALL_EVERY,
                LEVEL2_MAX_LAG);
    report_stats(r, "level 2", "g", &s_g, "ms");
    report_stats(r, "level 2", "stall", &s_stall, "ms");
    /* The model's least lag is the design level two asks for: the grader's
     * line only (level2_model_lag). Its idle share, at lag 2 or at the
     * student's, answers the prediction (and a few lags would give the
     * least): beside it only once the student has predicted. */
    report_value(r, "your prediction", "idle_at_lag_2", LEVEL2_PREDICTED_IDLE * 100, "%");
    int shown = grading_predicted(r, LEVEL2_PREDICTED_IDLE, 0, "LEVEL2_PREDICTED_IDLE");
    if (shown)
        report_value(r, "the model", "idle_at_lag_2", model_idle2 * 100, "%");
    report_value(r, "your loop", "largest_lag", lag, "steps");
    report_text(r, "  (a host that waits for the loss of step i - K leaves K steps queued, K x G,"
                "\n  and a stall S idle max(0, S - K x G); your prediction, at K = 2 and the "
                "longest stall,\n  %.1f G, is LEVEL2_PREDICTED_IDLE)\n", STALL_MAX_G);
    grading_compare(r, shown, "your loop", "gpu_idle", "max(0, S - K x G) / S at your lag K",
                    model_idle * 100, &s_pct, "%");
    report_value(r, "your loop", "step_over_g", s_over.median, "x");
    report_value(r, "your train_step_reported", "host_wait_over_g", s_host.median, "x");
    report_check(r, "level2_reports_right", wrong == 0, "%d of %d losses not reported once, right "
                 "and within %d steps", wrong, (rounds + 1) * steps, LEVEL2_MAX_LAG);
    report_check(r, "level2_params_right", params_wrong == 0, "%d parameters differ from the CPU's",
                 params_wrong);
    char model[48] = ""; /* the model's share, once the student has predicted */
    if (shown)
        snprintf(model, sizeof model, ", the model %.0f%%", model_idle * 100);
    report_verdict(r, &QUEUE_COVERS, s_idle.median, "the GPU idle %.1f%% of the stalls (the "
                   "median of %d loops)%s at your lag %d", s_idle.median * 100, rounds, model,
                   lag);

    grading_value("level2_reports_wrong", wrong);
    grading_value("level2_params_wrong", params_wrong);
    grading_value("level2_results_wrong", wrong + params_wrong);
    grading_value("level2_idle_fraction", s_idle.median);
    grading_value("level2_lag", lag);
    grading_value("level2_model_lag", model_lag);
    grading_value("level2_model_idle_lag2", model_idle2);
    grading_value("level2_predicted_idle", LEVEL2_PREDICTED_IDLE);
    grading_value("level2_g_ms", s_g.median);
    grading_value("level2_stall_ms", s_stall.median);
    grading_value("level2_step_over_ideal", s_over.median);
    grading_value("level2_host_wait_fraction", s_host.median);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    double g_ms = step_ms * grading_uniform(0.8, 1.2), p_ms = step_ms * grading_uniform(0.8, 1.2);
    bench.g_ns = ns_from_ms(g_ms), bench.p_ns = ns_from_ms(p_ms);

    train_state t = {lab_stream(&lab, "training", cudaStreamDefault, 0), N, steps};
    cudaStream_t loader = lab_stream(&lab, "loader", cudaStreamDefault, 0); /* blocking too */
    t.d_params = (double *)lab_device(&lab, N * sizeof(double));
    t.d_grads = (double *)lab_device(&lab, N * sizeof(double));
    t.d_losses = (double *)lab_device(&lab, steps * sizeof(double));
    t.h_losses = (double *)lab_pinned(&lab, steps * sizeof(double));
    t.gradients = gradients, t.update = update;
    bench.h_params = (double *)lab_pageable(&lab, N * sizeof(double));
    bench.h_losses = (double *)lab_pageable(&lab, steps * sizeof(double));
    bench.got = (double *)lab_pageable(&lab, N * sizeof(double));
    double *wait = (double *)lab_pageable(&lab, steps * sizeof(double));

    report_param(r, "steps", steps, "");
    report_param(r, "g_ms", g_ms, "ms");
    report_param(r, "p_ms", p_ms, "ms");
    report_section(r, "The loader's kernel, then your step, for every step");
    int params_wrong, losses_wrong = 0, warm_params_wrong;
    train_state warm = t;
    warm.steps = steps < WARMUP_STEPS ? steps : WARMUP_STEPS;
    training_loop(&warm, loader, wait); /* first launches, first allocations */
    losses_wrong += check_results(&warm, &warm_params_wrong);
    timeline_span_begin("training loop");
    double loop_ms = training_loop(&t, loader, wait);
    timeline_span_end();
    losses_wrong += check_results(&t, &params_wrong);
    params_wrong += warm_params_wrong;

    stats host = stats_of(wait, steps), step = {0};
    step.n = 1, step.median = step.p5 = step.p95 = step.min = step.max = step.mean = loop_ms / steps;
    double ideal = fmax(g_ms, p_ms);
    report_stats(r, "your train_step", "host_wait", &host, "ms");
    report_compare(r, "your loop", "step", "max(G, P): the streams overlapped", ideal, &step, "ms");
    report_text(r, "  (in turns the step would take G + P = %.2f ms)\n", g_ms + p_ms);
    report_check(r, "losses_right", losses_wrong == 0, "%d of %d losses differ from the CPU's",
                 losses_wrong, warm.steps + steps);
    report_check(r, "params_right", params_wrong == 0, "%d of %d parameters differ from the "
                 "CPU's", params_wrong, 2 * N);
    report_verdict(r, &HOST_FREE, host.median / g_ms, "the host spent %.3f ms in train_step() "
                   "(median of %d steps), %.2f of G = %.2f ms", host.median, steps,
                   host.median / g_ms, g_ms);
    report_verdict(r, &OVERLAPPED, step.median / ideal, "%.2f ms per step, %.2fx max(G, P)",
                   step.median, step.median / ideal);

    grading_value("g_ms", g_ms);
    grading_value("p_ms", p_ms);
    grading_value("host_wait_ms", host.median);
    grading_value("host_wait_fraction", host.median / g_ms);
    grading_value("step_ms", step.median);
    grading_value("step_over_ideal", step.median / ideal);
    grading_value("losses_wrong", losses_wrong);
    grading_value("params_wrong", params_wrong);
    grading_value("results_wrong", losses_wrong + params_wrong);
    level2(&lab, t, loader, grading_check());
    return grading_finish(&lab);
}
