/* ex01's given program: do the student's two streams overlap two kernels
 * that have a legacy-stream call between them?
 *
 * The student writes create_work_streams() (exercises/ex01_default_stream.cu;
 * the contract is ex01.h). This program puts its own work on those streams:
 * kernel 1 on stream 1, a tiny kernel on the legacy stream, kernel 2 on
 * stream 2, each a spin_and_log (kernels/) that leaves a record with a tag
 * drawn fresh every run. It times the three with the host clock, from an idle
 * GPU to cudaDeviceSynchronize, which waits for every stream whatever its
 * flags: on the student's streams and on two blocking streams of its own, in
 * pairs (measure_paired), so that both see the same GPU. On blocking streams
 * the legacy-stream call makes the kernels take turns (the sum), on the right
 * streams they overlap (the longer one): the model's speedup is 2.
 *
 * The metrics (grader/rubrics/ex01.ini scores them; grading.h says how they
 * reach the student and the grader):
 *   kernel_ms             each kernel's duration (--kernel-ms)
 *   blocking_ms, yours_ms the median time of the three on each pair of streams
 *   speedup_vs_blocking   the median of the pairs' ratios, blocking / yours
 *   launches              the kernels launched, the legacy-stream call's included
 *   launches_wrong        records that are wrong: a launch that did not run once
 *                         for its full time, or a record written without a launch
 * --check: 1 ms kernels, one pair. */
#include "ex01.h"
#include "grading.h"
#include "kernels.h"

#include <string.h>

static double kernel_ms = 20; /* each kernel's known duration */

static const option ex_options[] = {
    {"kernel-ms", OPT_DOUBLE, &kernel_ms, 1, 1000, 5, "MS",
     "how long each of the two kernels spins"},
    {NULL},
};
static const program_info ex = {
    .name = "ex01",
    .title = "exercise: two streams that overlap despite a legacy-stream call between them",
    .handout = "labs/lab01_default_stream/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3,
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP,
};

/* blocking/yours: 80% of the way from 1 to 2 (perfect), as the rubric's target */
static const verdict OVERLAP = {
    "your_streams_overlap", 1.8, INFINITY, "x",
    "kernel 2 still waits for the legacy-stream call, which waits for kernel 1: complete "
    "TODO(student) in create_work_streams() (if you did, another process may be using this "
    "GPU: see nvidia-smi)"};

enum { WARMUP = 1, RECORDS_PER_RUN = 3 };

/* The program's own bench: static, so that the student's file cannot name it. */
static struct {
    uint64_t ns, tag_base;
    launch_record *d_log; /* RECORDS_PER_RUN records per run, poisoned first */
    int runs, capacity;
} bench;

/* Kernel 1, the legacy-stream call, kernel 2: in this order, always. */
static void issue_work(const cudaStream_t *s)
{
    if (bench.runs >= bench.capacity)
        fail_wrong("more runs than the log has room for (%d)", bench.capacity);
    launch_record *rec = bench.d_log + (size_t)RECORDS_PER_RUN * bench.runs;
    uint64_t tag = bench.tag_base + (uint64_t)RECORDS_PER_RUN * bench.runs;
    spin_and_log<<<1, 1, 0, s[0]>>>(bench.ns, tag, rec);
    CHECK_LAUNCH();
    /* the legacy-stream call: cudaStreamLegacy is what stream 0 means in a
     * default build, spelled out */
    spin_and_log<<<1, 1, 0, cudaStreamLegacy>>>(0, tag + 1, rec + 1);
    CHECK_LAUNCH();
    spin_and_log<<<1, 1, 0, s[1]>>>(bench.ns, tag + 2, rec + 2);
    CHECK_LAUNCH();
    bench.runs++;
}

/* One run on a pair of streams, from an idle GPU until all of it is done:
 * the same fair timer for both pairs. */
static double time_on_host(void *streams)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    issue_work((const cudaStream_t *)streams);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* Records that are wrong: each run left three with its own tags (the
 * legacy-stream call's included), each kernel spun at least its time, and
 * the log's unused records are untouched. */
static int wrong_records(void)
{
    size_t count = (size_t)RECORDS_PER_RUN * bench.capacity;
    int bad = 0;
    launch_record *log = (launch_record *)xmalloc(count * sizeof *log);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(log, bench.d_log, count * sizeof *log, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++) {
        int spins = i % RECORDS_PER_RUN != 1;
        int ran = log[i].tag == bench.tag_base + i &&
                  (!spins || log[i].end_ns - log[i].start_ns >= bench.ns);
        bad += i < (size_t)RECORDS_PER_RUN * bench.runs ? !ran : log[i].tag != ~0ull;
    }
    free(log);
    return bad;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int pairs = lab.opt.reps;
    if (grading_check()) {
        kernel_ms = 1;
        pairs = 1;
    }

    bench.ns = ns_from_ms(kernel_ms);
    bench.tag_base = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    bench.capacity = 2 * (WARMUP + pairs);
    size_t log_bytes = (size_t)RECORDS_PER_RUN * bench.capacity * sizeof(launch_record);
    bench.d_log = (launch_record *)lab_device(&lab, log_bytes);
    CUDA_CHECK(cudaMemset(bench.d_log, 0xff, log_bytes));
    cudaStream_t given[2], yours[2];
    given[0] = lab_stream(&lab, "given stream 1", cudaStreamDefault, 0); /* blocking */
    given[1] = lab_stream(&lab, "given stream 2", cudaStreamDefault, 0);
    create_work_streams(yours); /* the student's; they live until the program ends */
    CUDA_CHECK(cudaDeviceSynchronize());
    timeline_name_stream(yours[0], "your stream 1");
    timeline_name_stream(yours[1], "your stream 2");

    report_param(r, "kernel_ms", kernel_ms, "ms");
    report_section(r, "Kernel 1, a call in the legacy stream, kernel 2");
    timeline_span_begin("given blocking, your streams, in turns");
    paired p = measure_paired(time_on_host, given, time_on_host, yours, WARMUP, pairs);
    timeline_span_end();
    report_compare(r, "given blocking", "time", "the sum of the kernels", 2 * kernel_ms, &p.a,
                   "ms");
    report_compare(r, "your streams", "time", "the longest kernel", kernel_ms, &p.b, "ms");
    int wrong = wrong_records();
    report_check(r, "every_launch_logged", wrong == 0, "%d of %d launch records wrong (both "
                 "kernels and the legacy-stream call ran once per run)", wrong,
                 RECORDS_PER_RUN * bench.capacity);
    report_verdict(r, &OVERLAP, p.ratio.median, "given %.2f ms / yours %.2f ms, the median of "
                   "%d pairs: %.2f", p.a.median, p.b.median, pairs, p.ratio.median);

    grading_value("kernel_ms", kernel_ms);
    grading_value("blocking_ms", p.a.median);
    grading_value("yours_ms", p.b.median);
    grading_value("speedup_vs_blocking", p.ratio.median);
    grading_value("launches", RECORDS_PER_RUN * bench.runs);
    grading_value("launches_wrong", wrong);
    return grading_finish(&lab);
}
