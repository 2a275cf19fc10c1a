/* ex01: make two streams overlap without removing the legacy-stream call.
 *
 * The task: the program runs two independent kernels of --kernel-ms (20 ms;
 * 5 with --quick) in two streams, and between their launches one tiny kernel
 * in the legacy default stream, as a library call might (a cudaMemset, a
 * synchronous copy, a kernel launched on stream 0). As given the kernels take
 * turns. Make them run side by side WITHOUT removing or moving that call:
 * complete the TODO(student) in create_work_streams(), and explain there, in
 * a comment, why your change works. issue_work() stays as it is.
 *
 * The target: your streams at least 1.8x faster than the given blocking
 * streams on the same work in the same run (2x would be perfect overlap).
 * --json reports both times beside their predictions (the sum of the kernels,
 * the longest kernel) and the ratio in the verdict.
 *
 * Build and run:   make ex01 && ./ex01          (./ex01 --quick: 5 ms kernels)
 * As given both measurements take the sum, the verdict is NO, and it exits 4.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdlib.h>
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

/* given/yours: 80% of the way from 1 to 2 (perfect) */
static const verdict OVERLAP = {
    "your_streams_overlap", 1.8, INFINITY, "x",
    "kernel 2 still waits for the legacy-stream call, which waits for kernel 1: complete "
    "TODO(student) in create_work_streams() (if you did, another process may be using this "
    "GPU: see nvidia-smi)"};

enum { WARMUP = 1, RECORDS_PER_RUN = 3, MEASUREMENTS = 2 };

/* ---- given: the bench; spin_and_log (kernels/) leaves a record of each run ---- */

typedef struct {
    cudaStream_t first, second;
    uint64_t ns, tag_base;
    launch_record *d_log; /* RECORDS_PER_RUN records per run, poisoned first */
    int runs, capacity;
} bench;

/* ---- yours: the streams ------------------------------------------------------- */

static void create_work_streams(cudaStream_t streams[2])
{
    /* TODO(student): with these streams, the tiny kernel that issue_work()
     * puts in the legacy stream waits for kernel 1, and kernel 2 waits for
     * it: the kernels take turns. Create the two streams so that the kernels
     * overlap, without touching issue_work(), and explain in this comment
     * why that works. (cudaStreamCreateWithFlags; lab01 shows the choices.) */
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamCreate(&streams[i]));
}

/* ---- given: the work, its timing and its checks ------------------------------- */

/* Kernel 1, the legacy-stream call, kernel 2: in this order, always. */
static void issue_work(bench *b)
{
    if (b->runs >= b->capacity)
        fail_wrong("more runs than the log has room for (%d)", b->capacity);
    launch_record *rec = b->d_log + (size_t)RECORDS_PER_RUN * b->runs;
    uint64_t tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * b->runs;
    spin_and_log<<<1, 1, 0, b->first>>>(b->ns, tag, rec);
    CHECK_LAUNCH();
    /* The legacy-stream call: do not remove or move it. cudaStreamLegacy is
     * what stream 0 means in a default build, spelled out. */
    spin_and_log<<<1, 1, 0, cudaStreamLegacy>>>(0, tag + 1, rec + 1);
    CHECK_LAUNCH();
    spin_and_log<<<1, 1, 0, b->second>>>(b->ns, tag + 2, rec + 2);
    CHECK_LAUNCH();
    b->runs++;
}

/* The host clock from an idle GPU to cudaDeviceSynchronize, which waits for
 * every stream whatever its flags: the same fair timer for both. */
static double time_on_host(void *ctx)
{
    bench *b = (bench *)ctx;
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    issue_work(b);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* Every run left three records with its own tags (the legacy-stream call
 * included), and each kernel spun at least its time. */
static void verify_log(report *r, const bench *b)
{
    size_t count = (size_t)RECORDS_PER_RUN * b->capacity, bad = 0;
    launch_record *log = (launch_record *)xmalloc(count * sizeof *log);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(log, b->d_log, count * sizeof *log, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++) {
        int spins = i % RECORDS_PER_RUN != 1;
        int ran = log[i].tag == b->tag_base + i &&
                  (!spins || log[i].end_ns - log[i].start_ns >= b->ns);
        int untouched = log[i].tag == ~0ull;
        bad += i < (size_t)RECORDS_PER_RUN * b->runs ? !ran : !untouched;
    }
    report_check(r, "every_launch_logged", bad == 0, "%zu of %zu launch records wrong (both "
                 "kernels and the legacy-stream call ran once per run)", bad, count);
    free(log);
}

static stats run(report *r, bench *b, cudaStream_t streams[2], const char *name, int reps,
                 const char *model, double predicted)
{
    b->first = streams[0];
    b->second = streams[1];
    timeline_span_begin(name);
    stats t = measure(time_on_host, b, WARMUP, reps);
    timeline_span_end();
    report_compare(r, name, "time", model, predicted, &t, "ms");
    return t;
}

int main(int argc, char **argv)
{
    lab_run lab;
    lab_begin(&lab, argc, argv, &ex);
    report *r = lab.r;

    bench b;
    memset(&b, 0, sizeof b);
    b.ns = ns_from_ms(kernel_ms);
    b.tag_base = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    b.capacity = MEASUREMENTS * (WARMUP + lab.opt.reps);
    size_t log_bytes = (size_t)RECORDS_PER_RUN * b.capacity * sizeof(launch_record);
    b.d_log = (launch_record *)lab_device(&lab, log_bytes);
    CUDA_CHECK(cudaMemset(b.d_log, 0xff, log_bytes));
    cudaStream_t given[2], yours[2];
    given[0] = lab_stream(&lab, "given stream 1", cudaStreamDefault, 0); /* blocking */
    given[1] = lab_stream(&lab, "given stream 2", cudaStreamDefault, 0);
    create_work_streams(yours);
    CUDA_CHECK(cudaDeviceSynchronize());
    timeline_name_stream(yours[0], "your stream 1");
    timeline_name_stream(yours[1], "your stream 2");

    report_section(r, "Kernel 1, a call in the legacy stream, kernel 2");
    stats t_given = run(r, &b, given, "given blocking", lab.opt.reps, "the sum of the kernels",
                        2 * kernel_ms);
    stats t_yours = run(r, &b, yours, "your streams", lab.opt.reps, "the longest kernel",
                        kernel_ms);
    verify_log(r, &b);
    double ratio = t_given.median / t_yours.median;
    report_verdict(r, &OVERLAP, ratio, "given %.2f ms / yours %.2f ms = %.2f", t_given.median,
                   t_yours.median, ratio);

    /* Yours are not the run's: create_work_streams() made them. */
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamDestroy(yours[i]));
    return lab_end(&lab);
}
