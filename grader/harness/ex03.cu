/* Grading harness for ex03: does the student's timing harness measure a
 * kernel of known duration, with a warm-up launch kept out of the samples?
 *
 * The student wrote time_one_launch() and time_kernel(). The harness calls
 * time_kernel() on the exercise's kernel twice, with durations drawn at
 * random every run, one short (1.5-3 ms) and one long (5-8 ms): a constant
 * cannot be within 2% of both. It counts the launches from the kernel's own
 * log on the GPU, not from any counter the student's code keeps. It prints:
 *   short_ms, long_ms      the two durations; short_median_ms, long_median_ms
 *                          what the student's harness measured;
 *   median_error_pct       the larger |median / duration - 1|, in percent;
 *                          100 when time_kernel() returned no samples;
 *   warmup_launches        launches that ran beyond the samples returned (the
 *                          fewer of the two calls): 1 or more with a warm-up;
 *   launches_wrong         log records that are wrong: a launch that did not
 *                          spin its full duration, or a record nobody launched. */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

typedef struct {
    double median_ms, error_pct;
    int warmup, wrong;
} grader_result;

/* One call of the student's time_kernel() on a kernel of `ms`, and its log. */
static grader_result grader_time(harness *h, double ms, int reps)
{
    size_t bytes = (size_t)h->capacity * sizeof(launch_record);
    h->ns = ns_from_ms(ms);
    h->tag_base = fresh_seed() >> 1; /* never the all-ones poison */
    h->launches = 0;
    CUDA_CHECK(cudaMemset(h->d_log, 0xff, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());

    stats s = time_kernel(h, reps); /* the student's */

    CUDA_CHECK(cudaDeviceSynchronize());
    launch_record *log = (launch_record *)xmalloc(bytes);
    CUDA_CHECK(cudaMemcpy(log, h->d_log, bytes, cudaMemcpyDeviceToHost));
    int ran = 0, wrong = 0;
    for (int i = 0; i < h->capacity; i++) {
        if (log[i].tag == h->tag_base + (uint64_t)i && log[i].end_ns - log[i].start_ns >= h->ns)
            ran++;
        else if (log[i].tag != ~0ull)
            wrong++;
    }
    free(log);
    grader_result r = {s.n > 0 ? s.median : 0, s.n > 0 ? fabs(s.median / ms - 1) * 100 : 100,
                       ran - s.n, wrong};
    return r;
}

int main(int argc, char **argv)
{
    int check = grading_begin("ex03", argc, argv);
    int reps = check ? 3 : 10;
    harness h; /* the exercise's own struct */
    memset(&h, 0, sizeof h);
    h.capacity = reps + SPARE_LAUNCHES;
    CUDA_CHECK(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&h.d_log, (size_t)h.capacity * sizeof(launch_record)));
    event_timer_create(&h.timer);

    double short_ms = check ? 0.5 : grading_uniform(1.5, 3);
    double long_ms = check ? 1 : grading_uniform(5, 8);
    grader_result a = grader_time(&h, short_ms, reps), b = grader_time(&h, long_ms, reps);

    grading_value("short_ms", short_ms);
    grading_value("short_median_ms", a.median_ms);
    grading_value("long_ms", long_ms);
    grading_value("long_median_ms", b.median_ms);
    grading_value("median_error_pct", a.error_pct > b.error_pct ? a.error_pct : b.error_pct);
    grading_value("warmup_launches", a.warmup < b.warmup ? a.warmup : b.warmup);
    grading_value("launches_wrong", a.wrong + b.wrong);

    event_timer_destroy(&h.timer);
    CUDA_CHECK(cudaFree(h.d_log));
    CUDA_CHECK(cudaStreamDestroy(h.stream));
    return grading_finish();
}
