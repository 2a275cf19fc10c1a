/* Grading harness for ex05: does a kernel on the student's stream jump the
 * queue of a background that fills the GPU?
 *
 * The student wrote create_critical_stream(). The harness starts its own
 * background on a stream of the least priority: many waves of blocks, each
 * spinning 100 us, far more than the GPU holds at once. At a random moment in
 * the first half of it, it launches a short kernel of checkable work and
 * measures the latency on the host clock, launch to completion. It does so
 * alternately on a stream of the background's priority (the reference, made
 * here) and on the student's stream. The model: on the reference the kernel
 * waits for the queued background, about half of it; on a stream that jumps
 * the queue it waits for one block to end. It prints:
 *   critical_priority          the priority of the student's stream;
 *   same_priority_us, yours_us the medians of the latencies;
 *   latency_ratio              the first over the second;
 *   outputs_wrong, checked     outputs of the kernel on the student's stream
 *                              that differ from the CPU reference;
 *   late_samples               launches that came after the background had
 *                              finished, retried up to 3 times. */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

enum { GRADER_THREADS = 256, GRADER_STEPS = 2000 };

typedef struct {
    cudaStream_t low; /* the background's */
    unsigned int blocks;
    uint64_t block_ns;
    double background_ms;
    int n;
    uint32_t *h_in, *h_out, *d_in, *d_out;
    cudaEvent_t background_done, done;
    tally outputs; /* the student's stream's */
    int late;
} grader_bench;

/* One latency in us: the critical kernel on `s`, `after_ms` into a fresh
 * background (< 0: on an idle GPU). graded = 1 for the student's stream: its
 * outputs are checked, and a launch that came too late (the background had
 * finished) counted when 3 tries all were. */
static double grader_sample(grader_bench *b, cudaStream_t s, double after_ms, int graded)
{
    double latency = 0;
    int late = 0;
    for (int tries = 0; tries < 3; tries++) {
        CUDA_CHECK(cudaMemset(b->d_out, 0xff, b->n * sizeof(uint32_t))); /* poison */
        CUDA_CHECK(cudaDeviceSynchronize());
        double t0 = host_time_ms();
        if (after_ms >= 0) {
            spin_for_ns<<<b->blocks, GRADER_THREADS, 0, b->low>>>(b->block_ns);
            CHECK_LAUNCH();
            CUDA_CHECK(cudaEventRecord(b->background_done, b->low));
            while (host_time_ms() - t0 < after_ms) {
            }
            late = event_finished(b->background_done);
        }
        double h0 = host_time_ms();
        affine_work<<<(b->n + GRADER_THREADS - 1) / GRADER_THREADS, GRADER_THREADS, 0, s>>>(
            b->d_in, b->d_out, b->n, AFFINE_A, AFFINE_B, GRADER_STEPS, NULL);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(b->done, s));
        while (!event_finished(b->done)) {
        }
        latency = (host_time_ms() - h0) * 1e3;
        CUDA_CHECK(cudaDeviceSynchronize()); /* the background too */
        if (graded) {
            CUDA_CHECK(cudaMemcpy(b->h_out, b->d_out, b->n * sizeof(uint32_t),
                                  cudaMemcpyDeviceToHost));
            verify_affine(b->h_in, b->h_out, b->n, GRADER_STEPS, &b->outputs);
        }
        if (!late)
            break;
    }
    b->late += graded && late;
    return latency;
}

int main(int argc, char **argv)
{
    int check = grading_begin("ex05", argc, argv);
    const device_info *dev = &grading.dev;
    if (dev->priority_greatest >= dev->priority_least)
        fail_cannot_run("this GPU has no stream priorities");
    int samples = check ? 3 : 15;

    grader_bench b;
    memset(&b, 0, sizeof b);
    int per_sm = 0, waves = 30;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin_for_ns, GRADER_THREADS,
                                                             0));
    b.blocks = (unsigned int)(waves * dev->sm_count * per_sm);
    b.block_ns = ns_from_ms(0.1);
    b.background_ms = waves * 0.1;
    b.n = dev->sm_count * GRADER_THREADS;
    size_t bytes = b.n * sizeof(uint32_t);
    b.h_in = (uint32_t *)xmalloc(bytes);
    b.h_out = (uint32_t *)xmalloc(bytes);
    CUDA_CHECK(cudaMalloc((void **)&b.d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_out, bytes));
    fill_random_u32(b.h_in, b.n, fresh_seed());
    CUDA_CHECK(cudaMemcpy(b.d_in, b.h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventCreateWithFlags(&b.background_done, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming));
    CUDA_CHECK(cudaStreamCreateWithPriority(&b.low, cudaStreamNonBlocking, dev->priority_least));
    cudaStream_t same;
    CUDA_CHECK(cudaStreamCreateWithPriority(&same, cudaStreamNonBlocking, dev->priority_least));

    cudaStream_t yours = create_critical_stream(); /* the student's */
    int priority;
    CUDA_CHECK(cudaStreamGetPriority(yours, &priority));

    /* The check pass runs the kernel on the student's stream on an idle GPU
     * only: the outputs are what it checks. */
    double *lat_same = (double *)xmalloc(samples * sizeof(double));
    double *lat_yours = (double *)xmalloc(samples * sizeof(double));
    double warm = check ? -1 : b.background_ms / 4; /* warm-up: every kernel loaded */
    grader_sample(&b, same, warm, 0);
    grader_sample(&b, yours, warm, 0);
    for (int i = 0; i < samples; i++) {
        double after = check ? -1 : b.background_ms * grading_uniform(0.1, 0.5);
        lat_same[i] = check ? 0 : grader_sample(&b, same, after, 0);
        lat_yours[i] = grader_sample(&b, yours, after, 1);
    }
    double m_same = stats_of(lat_same, samples).median, m_yours = stats_of(lat_yours, samples).median;

    grading_value("priority_least", dev->priority_least);
    grading_value("priority_greatest", dev->priority_greatest);
    grading_value("critical_priority", priority);
    grading_value("background_ms", b.background_ms);
    grading_value("same_priority_us", m_same);
    grading_value("yours_us", m_yours);
    grading_value("latency_ratio", m_same / m_yours);
    grading_value("outputs_wrong", (double)b.outputs.wrong);
    grading_value("checked", (double)b.outputs.checked);
    grading_value("late_samples", b.late);

    free(lat_yours);
    free(lat_same);
    CUDA_CHECK(cudaStreamDestroy(same));
    CUDA_CHECK(cudaStreamDestroy(b.low));
    CUDA_CHECK(cudaEventDestroy(b.done));
    CUDA_CHECK(cudaEventDestroy(b.background_done));
    CUDA_CHECK(cudaFree(b.d_out));
    CUDA_CHECK(cudaFree(b.d_in));
    free(b.h_out);
    free(b.h_in);
    return grading_finish();
}
