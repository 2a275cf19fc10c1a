/* ex06 (solution): hand a buffer from one stream to another without a race.
 *
 * The task: issue_pipeline() below issues a two-stage pipeline. Stream
 * `produce` uploads fresh inputs, sits through a slow first stage
 * (spin_for_ns, --spin-ms) and writes d_mid = f(in); stream `consume` computes
 * d_out = f(d_mid) and copies it back. As given, nothing tells `consume` to
 * wait for `produce`: stage 2 reads d_mid before stage 1 has written it, and
 * every run comes back wrong. Complete the TODO(student) in issue_pipeline()
 * so that the GPU waits, not the host:
 *   - record the event p->produced in stream `produce` after stage 1;
 *   - make stream `consume` wait for that event before stage 2.
 * No cudaStreamSynchronize, cudaDeviceSynchronize or cudaEventSynchronize in
 * issue_pipeline(): those would be correct too, but the host would block.
 *
 * The target: zero wrong results over every run (--reps runs, each on fresh
 * random inputs with every buffer poisoned first), AND a host that never
 * blocks: issuing a run takes under 10% of the slow stage's delay, and stream
 * `produce` is still busy when issue_pipeline() returns, in every run.
 *
 * Build and run:   make sol06 && ./sol06      (./sol06 --quick: 5 runs; --reps 500: many)
 * This is the reference solution: zero wrong results, the host never blocks, exit 0.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size_mib = 4;   /* 1M elements */
static double spin_ms = 2; /* the slow first stage */

static const option ex_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 256, NO_QUICK, "MIB", "size of each buffer"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.5, 100, NO_QUICK, "MS",
     "how long the slow first stage takes"},
    {NULL},
};
static const program_info ex = {
    .name = "sol06", /* named after its binary, so its messages say which program spoke */
    .title = "exercise: make one stream wait for another on the GPU, never on the host",
    .handout = "labs/lab06_stream_races/README.md",
    .options = ex_options, .reps = 20, .quick_reps = 5, /* runs, each on fresh inputs */
    .memory_option = "size-mib", .memory_per_unit = 3 << 20, /* d_in, d_mid, d_out */
};

static const verdict HOST_NEVER_BLOCKS = {
    "host_never_blocks", -INFINITY, 0.10, "%",
    "issue_pipeline() waited for the GPU: cudaStreamWaitEvent makes the GPU wait; "
    "cudaStreamSynchronize and cudaEventSynchronize make the host wait"};
/* Had the host waited for stage 1 inside issue_pipeline(), stream produce
 * would be idle when it returns: counted over the runs, none may be. */
static const verdict PRODUCER_BUSY = {
    "producer_busy_on_return", 0, 0, "runs",
    "stage 1 had finished when issue_pipeline() returned: the host waited for it. "
    "cudaStreamWaitEvent makes the GPU wait; cudaStreamSynchronize and cudaEventSynchronize make "
    "the host wait"};

enum { POISON = 0xff }; /* every byte: words of 0xffffffff that no run wrote */

typedef struct {
    size_t n, bytes;
    uint64_t spin_ns;
    cudaStream_t produce, consume; /* non-blocking: nothing orders them but you */
    cudaEvent_t produced;          /* created for the handoff */
    uint32_t *h_in, *h_out;        /* pinned: the copies are truly asynchronous */
    uint32_t *d_in, *d_mid, *d_out;
} pipeline;

/* ---- given: a known starting state for every run ------------------------------------ */

static void fresh_run(pipeline *p)
{
    /* A racy run leaves stage 1 running: let it finish before the host
     * rewrites h_in, which its upload may still be reading. */
    CUDA_CHECK(cudaDeviceSynchronize());
    fill_random_u32(p->h_in, p->n, fresh_seed());
    memset(p->h_out, POISON, p->bytes);
    CUDA_CHECK(cudaMemset(p->d_in, POISON, p->bytes));
    CUDA_CHECK(cudaMemset(p->d_mid, POISON, p->bytes));
    CUDA_CHECK(cudaMemset(p->d_out, POISON, p->bytes));
    /* cudaMemset goes to the legacy default stream, which non-blocking
     * streams do not wait for: finish it before the run starts. */
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* ---- the pipeline: your part is here ------------------------------------------------- */

static void issue_pipeline(pipeline *p)
{
    /* Stage 1, stream produce: upload, a slow first stage, d_mid = f(in). */
    CUDA_CHECK(cudaMemcpyAsync(p->d_in, p->h_in, p->bytes, cudaMemcpyHostToDevice, p->produce));
    spin_for_ns<<<1, 1, 0, p->produce>>>(p->spin_ns);
    CHECK_LAUNCH();
    affine_launch(p->d_in, p->d_mid, p->n, 1, p->produce);

    /* SOLUTION: the event marks the point stream produce has reached once
     * stage 1 has written d_mid; cudaStreamWaitEvent puts a wait for it into
     * stream consume. The GPU holds stage 2 back until stage 1 is done, and
     * both calls return to the host at once: it never blocks. (Waiting with
     * cudaStreamSynchronize(produce) here would be correct too, but the host
     * would sit out the whole slow stage before issuing stage 2.) */
    CUDA_CHECK(cudaEventRecord(p->produced, p->produce));
    CUDA_CHECK(cudaStreamWaitEvent(p->consume, p->produced, 0));

    /* Stage 2, stream consume: d_out = f(d_mid), then back to the host. */
    affine_launch(p->d_mid, p->d_out, p->n, 1, p->consume);
    CUDA_CHECK(cudaMemcpyAsync(p->h_out, p->d_out, p->bytes, cudaMemcpyDeviceToHost, p->consume));
}

/* ---- given: runs, verification, report ----------------------------------------------- */

int main(int argc, char **argv)
{
    lab_run lab;
    lab_begin(&lab, argc, argv, &ex);
    report *r = lab.r;

    pipeline p;
    memset(&p, 0, sizeof p);
    p.bytes = (size_t)size_mib << 20;
    p.n = p.bytes / sizeof(uint32_t);
    p.spin_ns = ns_from_ms(spin_ms);
    int runs = lab.opt.reps;
    report_param(r, "elements", (double)p.n, "count");
    report_param(r, "runs", runs, "count");

    p.produce = lab_stream(&lab, "produce", cudaStreamNonBlocking, 0);
    p.consume = lab_stream(&lab, "consume", cudaStreamNonBlocking, 0);
    p.produced = lab_event(&lab, cudaEventDisableTiming); /* orders only */
    p.h_in = (uint32_t *)lab_pinned(&lab, p.bytes);
    p.h_out = (uint32_t *)lab_pinned(&lab, p.bytes);
    p.d_in = (uint32_t *)lab_device(&lab, p.bytes);
    p.d_mid = (uint32_t *)lab_device(&lab, p.bytes);
    p.d_out = (uint32_t *)lab_device(&lab, p.bytes);

    double *issue_ms = (double *)lab_pageable(&lab, (size_t)runs * sizeof(double));
    tally results = {0};
    int runs_wrong = 0, producer_busy = 0;
    timeline_span_begin("pipeline");
    for (int run = -1; run < runs; run++) { /* run -1 warms up: not counted */
        fresh_run(&p);
        double start = host_time_ms();
        issue_pipeline(&p);
        double issued = host_time_ms() - start;
        /* Had the host waited for stage 1, stream produce would be idle now. */
        cudaError_t busy = cudaStreamQuery(p.produce);
        if (busy == cudaErrorNotReady) /* an answer, not an error: keep it out of */
            (void)cudaGetLastError(); /* the next CHECK_LAUNCH()'s cudaGetLastError */
        else
            CUDA_CHECK(busy);
        /* The host needs the result: it waits for the stream it reads from,
         * after the pipeline was issued, not inside it. */
        CUDA_CHECK(cudaStreamSynchronize(p.consume));
        size_t bad = verify_affine(p.h_in, p.h_out, p.n, 2, run < 0 ? NULL : &results);
        if (run < 0)
            continue;
        issue_ms[run] = issued;
        producer_busy += busy == cudaErrorNotReady;
        runs_wrong += bad > 0;
    }
    timeline_span_end();
    CUDA_CHECK(cudaDeviceSynchronize());
    stats issue = stats_of(issue_ms, runs);

    report_section(r, "Two stages, two streams, one buffer between them");
    report_value(r, "pipeline", "mismatches", (double)results.wrong, "count");
    report_value(r, "pipeline", "checked", (double)results.checked, "count");
    report_stats(r, "pipeline", "host_issue", &issue, "ms");
    report_value(r, "pipeline", "producer_busy_runs", producer_busy, "count");
    char what[320];
    snprintf(what, sizeof what, "results wrong, in %d of %d runs%s", runs_wrong, runs,
             results.wrong ? ": stage 2 read d_mid before stage 1 wrote it. TODO(student) in "
                             "issue_pipeline(): record p->produced in stream produce and make "
                             "stream consume wait for it (cudaStreamWaitEvent)"
                           : "");
    report_tally(r, "pipeline_correct", &results, what);
    report_verdict(r, &HOST_NEVER_BLOCKS, issue.median / spin_ms, "issuing took %.1f us, %.1f%% "
                   "of the %g ms stage", issue.median * 1e3, issue.median / spin_ms * 100, spin_ms);
    report_verdict(r, &PRODUCER_BUSY, runs - producer_busy, "stage 1 had already finished when "
                   "issue_pipeline() returned in %d of %d runs", runs - producer_busy, runs);
    return lab_end(&lab);
}
