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
 *
 * Level two, measured after level one in the same run: the same three
 * launches from three host threads. Two worker threads (pthreads), each
 * with the stream the student's level2_worker_stream() returned in that
 * thread; per run, worker 0 launches kernel 1, the main thread the tiny
 * kernel in the legacy stream, worker 1 kernel 2, each after the one before
 * has been launched (a handshake on the host, microseconds). Timed as level
 * one, in pairs against each worker's own cudaStreamPerThread, the stream
 * each worker uses as handed out (how long the three take there is the
 * student's prediction, from lab01's model: the report gives the model's
 * value only once the student has written one, grading_predicted()). Its
 * metrics:
 *   level2_per_thread_ms, level2_yours_ms   the medians on each
 *   level2_speedup_vs_per_thread   the median of the pairs' ratios
 *   level2_overlap_fraction        on the student's streams, how long kernel 1
 *                                  and kernel 2 ran at once by their own
 *                                  records (%globaltimer), over a kernel's
 *                                  time, the median run: 1 overlapped, 0 not
 *   level2_launches_wrong          as launches_wrong, for level two's log
 *   level2_predicted_per_thread_kernels   the student's prediction, printed
 * --check: 1 ms kernels, one pair, both levels. */
#include "ex01.h"
#include "grading.h"
#include "kernels.h"

#include <pthread.h>
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

/* The check pass (--check): 1 ms kernels, one pair. grading_begin() calls
 * it before the settings are printed or judged. */
static void check_pass_sizes(common_options *opt)
{
    kernel_ms = 1;
    opt->reps = 1; /* pairs */
}

/* blocking/yours: 80% of the way from 1 to 2 (perfect), as the rubric's target */
static const verdict OVERLAP = {
    "your_streams_overlap", 1.8, INFINITY, "x",
    "kernel 2 still waits for the legacy-stream call, which waits for kernel 1: complete "
    "TODO(student) in create_work_streams() (if you did, another process may be using this "
    "GPU: see nvidia-smi)"};

enum { WARMUP = 1, RECORDS_PER_RUN = 3 };

/* A log of launch records, RECORDS_PER_RUN a run, poisoned first: each level
 * has its own. Static, so that the student's file cannot name it. */
typedef struct {
    uint64_t ns, tag_base;
    launch_record *d_log;
    int runs, capacity;
    unsigned char *yours; /* per run: was it on the student's streams? */
} run_log;

static run_log bench, bench2;

static void log_open(lab_run *lab, run_log *b, int capacity)
{
    b->ns = ns_from_ms(kernel_ms);
    b->tag_base = fresh_seed() >> 1; /* fresh every run; never the all-ones poison */
    b->capacity = capacity;
    size_t bytes = (size_t)RECORDS_PER_RUN * capacity * sizeof(launch_record);
    b->d_log = (launch_record *)lab_device(lab, bytes);
    CUDA_CHECK(cudaMemset(b->d_log, 0xff, bytes));
    b->yours = (unsigned char *)lab_pageable(lab, (size_t)capacity);
}

/* The next run's first record and tag. */
static launch_record *log_next(run_log *b, uint64_t *tag, int yours)
{
    if (b->runs >= b->capacity)
        fail_wrong("more runs than the log has room for (%d)", b->capacity);
    *tag = b->tag_base + (uint64_t)RECORDS_PER_RUN * b->runs;
    b->yours[b->runs] = (unsigned char)yours;
    return b->d_log + (size_t)RECORDS_PER_RUN * b->runs++;
}

/* The legacy-stream call: cudaStreamLegacy is what stream 0 means in a
 * default build, spelled out. */
static void legacy_call(uint64_t tag, launch_record *rec)
{
    spin_and_log<<<1, 1, 0, cudaStreamLegacy>>>(0, tag, rec);
    CHECK_LAUNCH();
}

/* Kernel 1, the legacy-stream call, kernel 2: in this order, always. */
static void issue_work(const cudaStream_t *s)
{
    uint64_t tag;
    launch_record *rec = log_next(&bench, &tag, 0);
    spin_and_log<<<1, 1, 0, s[0]>>>(bench.ns, tag, rec);
    CHECK_LAUNCH();
    legacy_call(tag + 1, rec + 1);
    spin_and_log<<<1, 1, 0, s[1]>>>(bench.ns, tag + 2, rec + 2);
    CHECK_LAUNCH();
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
 * the log's unused records are untouched. Copies the log to *out when asked
 * (the caller frees it). */
static int wrong_records(const run_log *b, launch_record **out)
{
    size_t count = (size_t)RECORDS_PER_RUN * b->capacity;
    int bad = 0;
    launch_record *log = (launch_record *)xmalloc(count * sizeof *log);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(log, b->d_log, count * sizeof *log, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++) {
        int spins = i % RECORDS_PER_RUN != 1;
        int ran = log[i].tag == b->tag_base + i &&
                  (!spins || log[i].end_ns - log[i].start_ns >= b->ns);
        bad += i < (size_t)RECORDS_PER_RUN * b->runs ? !ran : log[i].tag != ~0ull;
    }
    if (out)
        *out = log;
    else
        free(log);
    return bad;
}

/* ---- Level two: the workers ----
 * Two threads, each launching one kernel per run into its stream when the
 * main thread posts a job, and saying when it has launched it. */
typedef struct {
    int index, device;
    pthread_t thread;
    cudaStream_t yours;  /* what level2_worker_stream() returned in this thread */
    int ready, posted, done, quit;
    int use_yours;       /* the posted job: which stream */
    uint64_t tag;
    launch_record *rec;
} worker;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    worker w[2];
} crew = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {}};

static void *worker_main(void *arg)
{
    worker *w = (worker *)arg;
    CUDA_CHECK(cudaSetDevice(w->device)); /* the current device is per thread */
    cudaStream_t mine = level2_worker_stream(w->index); /* the student's, in this thread */
    pthread_mutex_lock(&crew.lock);
    w->yours = mine;
    w->ready = 1;
    pthread_cond_broadcast(&crew.cond);
    for (;;) {
        while (w->posted == w->done && !w->quit)
            pthread_cond_wait(&crew.cond, &crew.lock);
        if (w->quit)
            break;
        cudaStream_t s = w->use_yours ? mine : cudaStreamPerThread; /* this thread's own */
        uint64_t tag = w->tag;
        launch_record *rec = w->rec;
        pthread_mutex_unlock(&crew.lock);
        spin_and_log<<<1, 1, 0, s>>>(bench2.ns, tag, rec);
        CHECK_LAUNCH();
        pthread_mutex_lock(&crew.lock);
        w->done++;
        pthread_cond_broadcast(&crew.cond);
    }
    pthread_mutex_unlock(&crew.lock);
    return NULL;
}

/* Has worker i launch its kernel, and waits until it has. */
static void worker_launch(int i, int use_yours, uint64_t tag, launch_record *rec)
{
    worker *w = &crew.w[i];
    pthread_mutex_lock(&crew.lock);
    w->use_yours = use_yours;
    w->tag = tag;
    w->rec = rec;
    w->posted++;
    pthread_cond_broadcast(&crew.cond);
    while (w->done != w->posted)
        pthread_cond_wait(&crew.cond, &crew.lock);
    pthread_mutex_unlock(&crew.lock);
}

/* Starts worker 0, then worker 1, each calling level2_worker_stream() first. */
static void crew_start(int device)
{
    for (int i = 0; i < 2; i++) {
        worker *w = &crew.w[i];
        w->index = i;
        w->device = device;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            fail_wrong("cannot start worker thread %d", i);
        pthread_mutex_lock(&crew.lock);
        while (!w->ready)
            pthread_cond_wait(&crew.cond, &crew.lock);
        pthread_mutex_unlock(&crew.lock);
    }
}

static void crew_stop(void)
{
    pthread_mutex_lock(&crew.lock);
    crew.w[0].quit = crew.w[1].quit = 1;
    pthread_cond_broadcast(&crew.cond);
    pthread_mutex_unlock(&crew.lock);
    for (int i = 0; i < 2; i++)
        pthread_join(crew.w[i].thread, NULL);
}

/* One level-two run, timed as level one's: kernel 1 from worker 0, the
 * legacy-stream call from this thread, kernel 2 from worker 1. */
static double time_workers(void *use_yours)
{
    int yours = *(const int *)use_yours;
    uint64_t tag;
    CUDA_CHECK(cudaDeviceSynchronize()); /* waits for every stream, every thread's */
    double t0 = host_time_ms();
    launch_record *rec = log_next(&bench2, &tag, yours);
    worker_launch(0, yours, tag, rec);
    legacy_call(tag + 1, rec + 1);
    worker_launch(1, yours, tag + 2, rec + 2);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

/* The worker streams at least 1.8x faster than the per-thread ones: level
 * one's target, for the same two kernels (the rubric's). */
static const verdict LEVEL2_OVERLAP = {
    "level2_workers_overlap", 1.8, INFINITY, "x",
    "the workers' kernels did not run side by side: what orders them, by lab01's model? "
    "complete TODO(student) in level2_worker_stream() (if you did, another process may be "
    "using this GPU: see nvidia-smi)"};

static void level2(lab_run *lab, int pairs)
{
    report *r = lab->r;
    log_open(lab, &bench2, 2 * (WARMUP + pairs));
    crew_start(lab->dev.index);
    CUDA_CHECK(cudaDeviceSynchronize());
    timeline_name_stream(crew.w[0].yours, "worker 0's stream");
    timeline_name_stream(crew.w[1].yours, "worker 1's stream");
    static const int per_thread = 0, yours = 1;
    timeline_span_begin("level 2: per-thread default streams, your worker streams, in turns");
    paired p = measure_paired(time_workers, (void *)&per_thread, time_workers, (void *)&yours,
                              WARMUP, pairs);
    timeline_span_end();
    crew_stop();

    launch_record *log;
    int wrong = wrong_records(&bench2, &log);
    double *overlap = (double *)xmalloc((size_t)bench2.runs * sizeof *overlap);
    int n = 0;
    for (int run = 0; run < bench2.runs; run++) {
        const launch_record *k1 = log + RECORDS_PER_RUN * run, *k2 = k1 + 2;
        if (!bench2.yours[run])
            continue;
        double from = (double)(k1->start_ns > k2->start_ns ? k1->start_ns : k2->start_ns);
        double to = (double)(k1->end_ns < k2->end_ns ? k1->end_ns : k2->end_ns);
        overlap[n++] = to > from ? (to - from) / bench2.ns : 0;
    }
    double overlap_fraction = stats_of(overlap, n).median;
    free(overlap);
    free(log);

    report_section(r, "Level 2: kernel 1 from worker 0, the legacy call, kernel 2 from worker 1");
    report_value(r, "your prediction", "per_thread", LEVEL2_PREDICTED_PER_THREAD_KERNELS * kernel_ms,
                 "ms");
    report_text(r, "  (LEVEL2_PREDICTED_PER_THREAD_KERNELS = %g kernel lengths, of %g ms)\n",
                LEVEL2_PREDICTED_PER_THREAD_KERNELS, kernel_ms);
    /* the model's time on the per-thread streams is the prediction's answer:
     * beside it only once the student has predicted */
    grading_compare(r, grading_predicted(r, LEVEL2_PREDICTED_PER_THREAD_KERNELS, 0,
                                         "LEVEL2_PREDICTED_PER_THREAD_KERNELS"),
                    "per-thread streams", "time", "the sum of the kernels", 2 * kernel_ms, &p.a,
                    "ms");
    report_compare(r, "your worker streams", "time", "the longest kernel", kernel_ms, &p.b, "ms");
    report_value(r, "your worker streams", "overlap_on_gpu", overlap_fraction * kernel_ms, "ms");
    report_check(r, "level2_every_launch_logged", wrong == 0, "%d of %d launch records wrong "
                 "(both kernels and the legacy-stream call ran once per run)", wrong,
                 RECORDS_PER_RUN * bench2.capacity);
    report_verdict(r, &LEVEL2_OVERLAP, p.ratio.median, "per-thread %.2f ms / yours %.2f ms, "
                   "the median of %d pairs: %.2f", p.a.median, p.b.median, pairs, p.ratio.median);

    grading_value("level2_per_thread_ms", p.a.median);
    grading_value("level2_yours_ms", p.b.median);
    grading_value("level2_speedup_vs_per_thread", p.ratio.median);
    grading_value("level2_overlap_fraction", overlap_fraction);
    grading_value("level2_launches_wrong", wrong);
    grading_value("level2_predicted_per_thread_kernels", LEVEL2_PREDICTED_PER_THREAD_KERNELS);
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex, check_pass_sizes);
    report *r = lab.r;
    int pairs = lab.opt.reps;

    log_open(&lab, &bench, 2 * (WARMUP + pairs));
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
    int wrong = wrong_records(&bench, NULL);
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

    level2(&lab, pairs);
    return grading_finish(&lab);
}
