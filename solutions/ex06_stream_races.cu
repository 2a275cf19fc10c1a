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

#include <stdlib.h>
#include <string.h>

static int size_mib = 4;   /* 1M elements */
static double spin_ms = 2; /* the slow first stage */

static const option ex_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 256, "MIB", "size of each buffer"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.5, 100, "MS", "how long the slow first stage takes"},
};
static const program_info ex = {
    "sol06", /* named after its binary, so its messages say which program spoke */
    "exercise: make one stream wait for another on the GPU, never on the host",
    ex_options, sizeof ex_options / sizeof ex_options[0], 20, /* runs, each on fresh inputs */
};

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
    common_options opt;
    options_parse(argc, argv, &ex, &opt);
    if (opt.quick && !option_given(argc, argv, "--reps"))
        opt.reps = 5;
    device_info dev;
    device_select(&opt, &dev);
    if (((size_t)size_mib << 20) * 3 > dev.free_memory / 2)
        fail_usage("--size-mib %d: three buffers need more than half of this GPU's free "
                   "memory (%zu MiB)", size_mib, dev.free_memory >> 20);
    report *r = report_begin(&ex, &opt, &dev);
    timeline_start(&opt);

    pipeline p;
    memset(&p, 0, sizeof p);
    p.bytes = (size_t)size_mib << 20;
    p.n = p.bytes / sizeof(uint32_t);
    p.spin_ns = ns_from_ms(spin_ms);
    int runs = opt.reps;
    report_param(r, "elements", (double)p.n, "count");
    report_param(r, "stage1_delay", spin_ms, "ms");
    report_param(r, "runs", runs, "count");

    CUDA_CHECK(cudaStreamCreateWithFlags(&p.produce, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.consume, cudaStreamNonBlocking));
    timeline_name_stream(p.produce, "produce");
    timeline_name_stream(p.consume, "consume");
    CUDA_CHECK(cudaEventCreateWithFlags(&p.produced, cudaEventDisableTiming)); /* orders only */
    CUDA_CHECK(cudaMallocHost((void **)&p.h_in, p.bytes));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_out, p.bytes));
    CUDA_CHECK(cudaMalloc((void **)&p.d_in, p.bytes));
    CUDA_CHECK(cudaMalloc((void **)&p.d_mid, p.bytes));
    CUDA_CHECK(cudaMalloc((void **)&p.d_out, p.bytes));

    double *issue_ms = (double *)xmalloc((size_t)runs * sizeof(double));
    size_t wrong = 0, first_bad;
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
        size_t bad = verify_affine(p.h_in, p.h_out, p.n, 2, &first_bad);
        if (run < 0)
            continue;
        issue_ms[run] = issued;
        producer_busy += busy == cudaErrorNotReady;
        runs_wrong += bad > 0;
        wrong += bad;
    }
    timeline_span_end();
    CUDA_CHECK(cudaDeviceSynchronize());
    stats issue = stats_of(issue_ms, runs);
    free(issue_ms);

    report_section(r, "Two stages, two streams, one buffer between them");
    size_t checked = p.n * (size_t)runs;
    report_value(r, "pipeline", "mismatches", (double)wrong, "count");
    report_value(r, "pipeline", "checked", (double)checked, "count");
    report_stats(r, "pipeline", "host_issue", &issue, "ms");
    report_value(r, "pipeline", "producer_busy_runs", producer_busy, "count");
    report_check(r, "pipeline_correct", wrong == 0, "%zu of %zu results wrong, in %d of %d runs%s",
                 wrong, checked, runs_wrong, runs,
                 wrong ? ": stage 2 read d_mid before stage 1 wrote it. TODO(student) in "
                         "issue_pipeline(): record p->produced in stream produce and make "
                         "stream consume wait for it (cudaStreamWaitEvent)"
                       : "");
    int free_host = issue.median < 0.1 * spin_ms && producer_busy == runs;
    report_verdict(r, "host_never_blocks", free_host, "issuing took %.1f us (limit: under 10%% "
                   "of the %g ms stage, %.0f us); stage 1 still busy on return in %d of %d runs "
                   "(limit: every run)", issue.median * 1e3, spin_ms, spin_ms * 100,
                   producer_busy, runs);
    report_hint(r, "issue_pipeline() waited for the GPU: cudaStreamWaitEvent makes the GPU "
                   "wait; cudaStreamSynchronize and cudaEventSynchronize make the host wait");

    CUDA_CHECK(cudaFree(p.d_out));
    CUDA_CHECK(cudaFree(p.d_mid));
    CUDA_CHECK(cudaFree(p.d_in));
    CUDA_CHECK(cudaFreeHost(p.h_out));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    CUDA_CHECK(cudaEventDestroy(p.produced));
    CUDA_CHECK(cudaStreamDestroy(p.consume));
    CUDA_CHECK(cudaStreamDestroy(p.produce));
    timeline_finish(r, &opt);
    return report_finish(r);
}
