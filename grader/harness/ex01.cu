/* Grading harness for ex01: do the student's two streams overlap two kernels
 * that have a legacy-stream call between them?
 *
 * The student wrote create_work_streams(). The harness puts its own work on
 * those streams, in the exercise's order: kernel 1 on stream 1, a tiny kernel
 * on the legacy stream, kernel 2 on stream 2. It times the three with the host
 * clock from an idle GPU to cudaDeviceSynchronize, which waits for every
 * stream whatever its flags. The reference is the same work on two blocking
 * streams the harness makes itself, in the same run: there the kernels take
 * turns (the sum of the two), on the right streams they overlap (the longer
 * one), so the model's speedup is 2.
 *
 * Prints: kernel_ms, blocking_ms, yours_ms, speedup_vs_blocking,
 * launches, launches_wrong (a launch that left no tag, or a wrong one). */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

/* Spins `ns` of the GPU's clock, then stores its tag: the proof that it ran. */
__global__ void grader_spin_and_tag(uint64_t ns, unsigned long long tag, unsigned long long *slot)
{
    uint64_t start = globaltimer_ns();
    while (globaltimer_ns() - start < ns) {
    }
    *slot = tag;
}

typedef struct {
    uint64_t ns;
    unsigned long long tag_base, *d_tags; /* one slot per launch, poisoned first */
    int launches, capacity;
} grader_log;

static void grader_launch(grader_log *g, uint64_t ns, cudaStream_t s)
{
    if (g->launches == g->capacity)
        fail_wrong("grading harness: more launches than tag slots (%d)", g->capacity);
    grader_spin_and_tag<<<1, 1, 0, s>>>(ns, g->tag_base + g->launches, g->d_tags + g->launches);
    CHECK_LAUNCH();
    g->launches++;
}

/* Kernel 1, the legacy-stream call, kernel 2: from an idle GPU until all are done. */
static double grader_time_work(grader_log *g, const cudaStream_t s[2])
{
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    grader_launch(g, g->ns, s[0]);
    grader_launch(g, 0, cudaStreamLegacy);
    grader_launch(g, g->ns, s[1]);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

int main(int argc, char **argv)
{
    int check = grading_begin("ex01", argc, argv);
    double ms = check ? 1 : 10;
    int reps = check ? 1 : 5;

    cudaStream_t given[2], yours[2];
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamCreate(&given[i])); /* blocking: the exercise as given */
    create_work_streams(yours);                  /* the student's */

    grader_log g = {ns_from_ms(ms), fresh_seed() >> 1, NULL, 0, 3 * 2 * (reps + 1)};
    size_t bytes = (size_t)g.capacity * sizeof *g.d_tags;
    CUDA_CHECK(cudaMalloc((void **)&g.d_tags, bytes));
    CUDA_CHECK(cudaMemset(g.d_tags, 0xff, bytes));

    /* Alternate the two, so both see the same GPU; the first round warms up. */
    double *t_given = (double *)xmalloc(reps * sizeof(double));
    double *t_yours = (double *)xmalloc(reps * sizeof(double));
    for (int r = -1; r < reps; r++) {
        double a = grader_time_work(&g, given), b = grader_time_work(&g, yours);
        if (r >= 0) {
            t_given[r] = a;
            t_yours[r] = b;
        }
    }
    stats sg = stats_of(t_given, reps), sy = stats_of(t_yours, reps);

    unsigned long long *tags = (unsigned long long *)xmalloc(bytes);
    CUDA_CHECK(cudaMemcpy(tags, g.d_tags, bytes, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int i = 0; i < g.capacity; i++)
        wrong += tags[i] != (i < g.launches ? g.tag_base + i : ~0ull);

    grading_value("kernel_ms", ms);
    grading_value("blocking_ms", sg.median);
    grading_value("yours_ms", sy.median);
    grading_value("speedup_vs_blocking", sg.median / sy.median);
    grading_value("launches", g.launches);
    grading_value("launches_wrong", wrong);
    /* The student's streams are left to the process's exit: they may be
     * streams nobody may destroy (cudaStreamPerThread, say). */
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamDestroy(given[i]));
    CUDA_CHECK(cudaFree(g.d_tags));
    free(tags);
    free(t_yours);
    free(t_given);
    return grading_finish();
}
