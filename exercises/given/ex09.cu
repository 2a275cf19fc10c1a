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
 * A warm-up loop of 3 steps runs first, checked too. --check: 3 steps of 0.1 ms. */
#include "ex09.h"
#include "grading.h"
#include "kernels.h"

#include <math.h>
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
                                        uint64_t seed, int step, uint64_t g_ns)
{
    uint64_t start = globaltimer_ns();
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
                                     double *losses, int step)
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
    if (threadIdx.x == 0)
        losses[step] = part[0] / n;
}

static void gradients(const train_state *t, int step, double *workspace)
{
    gradients_kernel<<<1, THREADS, 0, t->stream>>>(t->d_params, t->d_grads, workspace, t->n,
                                                   bench.seed, step, bench.g_ns);
    CHECK_LAUNCH();
}

static void update(const train_state *t, int step, const double *workspace)
{
    update_kernel<<<1, THREADS, 0, t->stream>>>(t->d_params, t->d_grads, workspace, t->n,
                                                t->d_losses, step);
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

/* The CPU trains the same model; counts the losses and parameters that differ. */
static int check_results(const train_state *t, int *params_wrong)
{
    int n = t->n, losses_wrong = 0;
    for (int s = 0; s < t->steps; s++) {
        double loss = 0;
        for (int i = 0; i < n; i++) {
            double e = bench.h_params[i] - target(bench.seed, i, s);
            loss += e * e;
            bench.h_params[i] -= LR * (2 * e / n);
        }
        loss /= n;
        losses_wrong += !(fabs(t->h_losses[s] - loss) <= 1e-9 * fabs(loss) + 1e-15);
    }
    CUDA_CHECK(cudaMemcpy(bench.got, t->d_params, n * sizeof(double), cudaMemcpyDeviceToHost));
    *params_wrong = 0;
    for (int i = 0; i < n; i++)
        *params_wrong += !(fabs(bench.got[i] - bench.h_params[i]) <= 1e-12 * fabs(bench.h_params[i]) + 1e-15);
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

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    if (grading_check())
        steps = 3, step_ms = 0.1;
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
    return grading_finish(&lab);
}
