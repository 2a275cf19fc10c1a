/* Grading harness for ex06: does the student's handoff between two streams
 * get every result right, run after run, without the host waiting?
 *
 * The student wrote issue_pipeline(). The harness runs it 20 times, each on
 * fresh random inputs with every buffer poisoned first, and checks every
 * result against the CPU reference (two rounds of the affine map). It times
 * the call itself on the host clock, and asks whether stream produce is still
 * busy when the call returns: had the host waited for stage 1, it would be
 * idle. In the measure pass each device buffer has a guard zone after it,
 * filled with a known pattern and checked at the end: a write past the end
 * of a buffer shows there even without compute-sanitizer. It prints:
 *   mismatches, checked, runs_wrong  results that differ, over every run;
 *   guard_words_changed              words written past the ends of buffers;
 *   spin_ms, issue_ms                stage 1's delay; the median issue call;
 *   issue_fraction                   issue_ms / spin_ms (model: near 0 when
 *                                    the GPU waits, 1 when the host does);
 *   producer_idle_runs               runs where stage 1 had finished when
 *                                    issue_pipeline() returned. */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

enum { GRADER_GUARD_WORDS = 16384, GRADER_GUARD = 0x5a };

/* A device buffer of `bytes`, followed by `guard` bytes of GRADER_GUARD. */
static uint32_t *grader_alloc(size_t bytes, size_t guard)
{
    uint32_t *d;
    CUDA_CHECK(cudaMalloc((void **)&d, bytes + guard));
    CUDA_CHECK(cudaMemset((char *)d + bytes, GRADER_GUARD, guard));
    return d;
}

/* Words of the guard zone after a buffer that no longer hold the pattern. */
static size_t grader_guard_changed(const uint32_t *d, size_t bytes, size_t guard)
{
    unsigned char *g = (unsigned char *)xmalloc(guard + 1);
    CUDA_CHECK(cudaMemcpy(g, (const char *)d + bytes, guard, cudaMemcpyDeviceToHost));
    size_t changed = 0;
    for (size_t w = 0; w < guard / 4; w++)
        changed += g[4 * w] != GRADER_GUARD || g[4 * w + 1] != GRADER_GUARD ||
                   g[4 * w + 2] != GRADER_GUARD || g[4 * w + 3] != GRADER_GUARD;
    free(g);
    return changed;
}

int main(int argc, char **argv)
{
    int check = grading_begin("ex06", argc, argv);
    int runs = check ? 3 : 20;
    double delay_ms = check ? 0.5 : 2;
    /* The check pass allocates buffers of their exact size, so that
     * compute-sanitizer sees any write past one. */
    size_t guard = check ? 0 : GRADER_GUARD_WORDS * sizeof(uint32_t);

    pipeline p; /* the exercise's own struct */
    memset(&p, 0, sizeof p);
    p.bytes = (size_t)(check ? 1 : 4) << 20;
    p.n = p.bytes / sizeof(uint32_t);
    p.spin_ns = ns_from_ms(delay_ms);
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.produce, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.consume, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&p.produced, cudaEventDisableTiming));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_in, p.bytes));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_out, p.bytes));
    p.d_in = grader_alloc(p.bytes, guard);
    p.d_mid = grader_alloc(p.bytes, guard);
    p.d_out = grader_alloc(p.bytes, guard);

    double issue[20];
    tally results = {0};
    int runs_wrong = 0, producer_idle = 0;
    for (int run = -1; run < runs; run++) { /* run -1 warms up; its results count too */
        CUDA_CHECK(cudaDeviceSynchronize()); /* a racy run may still be going */
        fill_random_u32(p.h_in, p.n, fresh_seed());
        memset(p.h_out, 0xff, p.bytes);
        CUDA_CHECK(cudaMemset(p.d_in, 0xff, p.bytes));
        CUDA_CHECK(cudaMemset(p.d_mid, 0xff, p.bytes));
        CUDA_CHECK(cudaMemset(p.d_out, 0xff, p.bytes));
        CUDA_CHECK(cudaDeviceSynchronize());

        double t0 = host_time_ms();
        issue_pipeline(&p); /* the student's */
        double issued = host_time_ms() - t0;
        cudaError_t busy = cudaStreamQuery(p.produce);
        if (busy == cudaErrorNotReady)
            (void)cudaGetLastError(); /* an answer, not an error */
        else
            CUDA_CHECK(busy);
        CUDA_CHECK(cudaDeviceSynchronize()); /* whatever streams the student used */

        size_t bad = verify_affine(p.h_in, p.h_out, p.n, 2, &results);
        runs_wrong += bad > 0;
        if (run >= 0) {
            issue[run] = issued;
            producer_idle += busy != cudaErrorNotReady;
        }
    }
    size_t guards = 0;
    if (guard)
        guards = grader_guard_changed(p.d_in, p.bytes, guard) +
                 grader_guard_changed(p.d_mid, p.bytes, guard) +
                 grader_guard_changed(p.d_out, p.bytes, guard);
    double issue_ms = stats_of(issue, runs).median;

    grading_value("runs", runs + 1);
    grading_value("mismatches", (double)results.wrong);
    grading_value("checked", (double)results.checked);
    grading_value("runs_wrong", runs_wrong);
    grading_value("guard_words_changed", (double)guards);
    grading_value("spin_ms", delay_ms);
    grading_value("issue_ms", issue_ms);
    grading_value("issue_fraction", issue_ms / delay_ms);
    grading_value("producer_idle_runs", producer_idle);

    CUDA_CHECK(cudaFree(p.d_out));
    CUDA_CHECK(cudaFree(p.d_mid));
    CUDA_CHECK(cudaFree(p.d_in));
    CUDA_CHECK(cudaFreeHost(p.h_out));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    CUDA_CHECK(cudaEventDestroy(p.produced));
    CUDA_CHECK(cudaStreamDestroy(p.consume));
    CUDA_CHECK(cudaStreamDestroy(p.produce));
    return grading_finish();
}
