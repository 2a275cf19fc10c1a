/* ex11's given program: does the student's loader keep the GPU busy while
 * the CPU prepares the batches, without a slot overwritten before the GPU
 * has copied it out?
 *
 * The student writes run_loader() (exercises/ex11_ring_loader.cu; the
 * contract is ex11.h), which this program hands w, 2w pinned slots, an
 * event per slot, and two functions: prepare(b, s), the CPU's work on batch
 * b into slot s (feed_prepare, kernels/: about P = 4 ms of real work, sized
 * by a calibration at start-up), and step(b, s), which queues the copy of
 * slot s and the GPU's step on batch b (feed_step: K = 2 ms on every SM,
 * checking every word against what prepare() must have written, counting
 * the words that differ and logging its span on %globaltimer). Never the
 * durations, never the buffers or the record.
 *
 * It measures in rounds, each in another order: the program's own serial
 * loader (prepare, step, wait) and the student's, timed on the host clock
 * from the call to an idle GPU; the GPU's busy share is the steps' spans
 * by its own clock over that. Then one more run of the student's, checked
 * but not timed, with a quarter of the preparations 3x as long and a
 * quarter of the steps 4x, drawn afresh: a slot reused before its copy ran
 * shows as a wrong batch there if not before. Every run's batches are
 * fresh (a new seed). The model (lab11): serial B(P+C+K); w producers
 * P + B max(P / min(w, cores), C+K); busy B K over that.
 *
 * The metrics (grader/rubrics/ex11.ini scores them; grading.h says how they
 * reach the student and the grader), medians over the rounds:
 *   runs                     runs of yours checked: the warm-up's, the rounds'
 *                            and the slowed ones;
 *   mismatches, checked      batches wrong (a word differed, or never stepped),
 *                            of all checked, over every run of yours;
 *   slowed_mismatches        of those, in the slowed runs;
 *   step_calls_wrong         batches not stepped exactly once, over every run;
 *   threads_used             threads that called prepare() in the median run;
 *   cores                    the host's online cores (sysconf);
 *   serial_ms, yours_ms      the two runs;
 *   speedup                  serial / yours, round by round;
 *   busy, model_busy         the GPU's busy share in your run, and the model's;
 *   efficiency               busy / model_busy, round by round.
 * --check: 12 batches of 1 ms and 0.5 ms, one round. */
#include "ex11.h"
#include "grading.h"
#include "kernels.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

static int batches = 32, producers = 4;

static const option ex_options[] = {
    {"batches", OPT_INT, &batches, 12, 1024, 16, "N", "batches through the loader (B)"},
    {"producers", OPT_INT, &producers, 1, EX11_MAX_PRODUCERS, NO_QUICK, "W",
     "producer threads your loader starts (w)"},
    {NULL},
};

static const program_info ex = {
    .name = "ex11",
    .title = "exercise: feed the GPU from producer threads through a ring of pinned buffers",
    .handout = "labs/lab11_host_feeding/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 3, /* rounds */
    .needs = NEEDS_COPY_ENGINE | NEEDS_OVERLAP,
};

/* The share of the model's busy GPU the exercise asks for; the H100 probe
 * behind lab11 had 4 producers at 90% busy, 0.99 of the model's 90.7%. */
static const verdict BUSY = {
    "gpu_kept_busy", 0.85, INFINITY, "%",
    "the GPU waited for the CPU: prepare() runs on the thread that calls it, so w producer "
    "threads (pthread_create), each preparing its share of the batches into its own slots, "
    "while this thread only calls step() in order"};

enum { WARMUP = 1, BATCH_WORDS = 1 << 20, SLOW_EVERY = 4, SLOW_PREP = 3, SLOW_STEP = 4 };

/* The program's own bench: static, so that the student's file reaches it
 * only through prepare() and step(). */
static struct {
    feed_bench f;
    double p_ms, c_ms, k_ms;
    int blocks, cores, slots, slowed;
    cudaStream_t s;
    cudaEvent_t free_[EX11_MAX_SLOTS];
    uint32_t *slot[EX11_MAX_SLOTS], *d_buf;
    int *steps;                     /* per batch: step() calls */
    unsigned char *slow_prep, *slow_step; /* per batch, in a slowed run */
    pthread_t *thread;              /* per batch: who prepared it */
} bench;

static void check_args(const char *fn, int batch, int slot)
{
    if (batch < 0 || batch >= bench.f.batches || slot < 0 || slot >= bench.slots)
        fail_wrong("%s(%d, %d): batches are 0 to %d, slots 0 to %d", fn, batch, slot,
                   bench.f.batches - 1, bench.slots - 1);
}

static void prepare(int batch, int slot)
{
    check_args("prepare", batch, slot);
    bench.thread[batch] = pthread_self();
    feed_prepare(&bench.f, batch, bench.slot[slot]);
    if (bench.slowed && bench.slow_prep[batch]) /* a slow producer: more of the same work */
        for (int i = 1; i < SLOW_PREP; i++)
            feed_prepare(&bench.f, batch, bench.slot[slot]);
}

static void step(int batch, int slot)
{
    check_args("step", batch, slot);
    __atomic_fetch_add(&bench.steps[batch], 1, __ATOMIC_RELAXED);
    CUDA_CHECK(cudaMemcpyAsync(bench.d_buf, bench.slot[slot], bench.f.n * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, bench.s));
    double k = bench.k_ms * (bench.slowed && bench.slow_step[batch] ? SLOW_STEP : 1);
    feed_step_launch(&bench.f, batch, bench.d_buf, ns_from_ms(k), bench.blocks, bench.s);
}

/* The program's own: one slot, and a wait before it is written again. */
static void serial(const loader *l)
{
    for (int b = 0; b < l->batches; b++) {
        l->prepare(b, 0);
        l->step(b, 0);
        CUDA_CHECK(cudaStreamSynchronize(l->stream));
    }
}

typedef struct {
    double ms, busy;
    int threads, steps_wrong;
} run_result;

/* One run of `fn` on fresh batches, checked from the GPU's record. */
static run_result one_run(void (*fn)(const loader *), const char *who, tally *t)
{
    run_result res = {0, 0, 0, 0};
    feed_fresh(&bench.f);
    memset(bench.steps, 0, bench.f.batches * sizeof *bench.steps);
    memset(bench.thread, 0, bench.f.batches * sizeof *bench.thread);
    loader l = {bench.f.batches, producers, bench.slots, bench.s, {0}, prepare, step};
    memcpy(l.slot_free, bench.free_, sizeof l.slot_free); /* a copy */
    double t0 = host_time_ms();
    fn(&l);
    CUDA_CHECK(cudaStreamSynchronize(bench.s));
    res.ms = host_time_ms() - t0;
    CUDA_CHECK(cudaDeviceSynchronize()); /* anything the student queued elsewhere */
    t->where = who;
    res.busy = feed_verify(&bench.f, t) / res.ms;
    for (int b = 0; b < bench.f.batches; b++) {
        int first = 1;
        for (int c = 0; c < b && first; c++)
            first = !pthread_equal(bench.thread[b], bench.thread[c]);
        res.threads += first;
        res.steps_wrong += bench.steps[b] != 1;
    }
    return res;
}

static void bench_open(lab_run *lab, double p_ms)
{
    int n = batches;
    bench.blocks = lab->dev.sm_count, bench.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    bench.slots = 2 * producers;
    bench.f = (feed_bench){BATCH_WORDS, 0, 0, n,
                           (unsigned long long *)lab_device(lab, n * sizeof(unsigned long long)),
                           (unsigned long long *)lab_pageable(lab, n * sizeof(unsigned long long)),
                           (stage_span *)lab_device(lab, n * sizeof(stage_span)),
                           (stage_span *)lab_pageable(lab, n * sizeof(stage_span))};
    bench.s = lab_stream(lab, "loader", cudaStreamNonBlocking, 0);
    for (int s = 0; s < bench.slots; s++) {
        bench.slot[s] = (uint32_t *)lab_pinned(lab, BATCH_WORDS * sizeof(uint32_t));
        bench.free_[s] = lab_event(lab, cudaEventDisableTiming | cudaEventBlockingSync);
    }
    bench.d_buf = (uint32_t *)lab_device(lab, BATCH_WORDS * sizeof(uint32_t));
    bench.steps = (int *)lab_pageable(lab, n * sizeof(int));
    bench.slow_prep = (unsigned char *)lab_pageable(lab, 2 * n);
    bench.slow_step = bench.slow_prep + n;
    bench.thread = (pthread_t *)lab_pageable(lab, n * sizeof(pthread_t));
    bench.p_ms = feed_calibrate(&bench.f, bench.slot[0], p_ms);
    bench.c_ms = feed_copy_ms(bench.d_buf, bench.slot[0], BATCH_WORDS, bench.s);
}

/* A slowed run: a quarter of the preparations and of the steps, drawn afresh. */
static run_result slowed_run(tally *t, size_t *wrong)
{
    size_t before = t->wrong;
    for (int b = 0; b < bench.f.batches; b++) {
        bench.slow_prep[b] = grading_uniform(0, 1) < 1.0 / SLOW_EVERY;
        bench.slow_step[b] = grading_uniform(0, 1) < 1.0 / SLOW_EVERY;
    }
    bench.slowed = 1;
    run_result res = one_run(run_loader, "your loader, slowed", t);
    bench.slowed = 0;
    *wrong += t->wrong - before;
    return res;
}

int main(int argc, char **argv)
{
    lab_run lab;
    grading_begin(&lab, argc, argv, &ex);
    report *r = lab.r;
    int check = grading_check(), rounds = check ? 1 : lab.opt.reps, n_runs = 0, steps_wrong = 0;
    if (check)
        batches = 12;
    bench.k_ms = check ? 0.5 : 2;
    bench_open(&lab, check ? 1 : 4);
    double *v = (double *)lab_pageable(&lab, 6 * (size_t)rounds * sizeof(double));
    double *serial_ms = v, *yours_ms = v + rounds, *speedup = v + 2 * rounds;
    double *busy = v + 3 * rounds, *eff = v + 4 * rounds, *threads = v + 5 * rounds;
    double model_ms = feed_model_ms(batches, bench.p_ms, bench.c_ms, bench.k_ms, producers,
                                    bench.cores);
    double model_busy = batches * bench.k_ms / model_ms;
    size_t slowed_wrong = 0;
    tally yours = {0}, own = {0};
    timeline_span_begin("rounds: serial and yours");
    for (int round = -WARMUP; round < rounds; round++) {
        run_result res[2];
        for (int k = 0; k < 2; k++) { /* rounds alternate which goes first */
            int mine = (round + k) % 2 != 0;
            res[mine] = mine ? one_run(run_loader, "your loader", &yours)
                             : one_run(serial, "serial", &own);
        }
        run_result slow = slowed_run(&yours, &slowed_wrong);
        n_runs += 2, steps_wrong += res[1].steps_wrong + slow.steps_wrong;
        if (round < 0)
            continue;
        serial_ms[round] = res[0].ms, yours_ms[round] = res[1].ms;
        speedup[round] = res[0].ms / res[1].ms, busy[round] = res[1].busy;
        eff[round] = res[1].busy / model_busy, threads[round] = res[1].threads;
    }
    timeline_span_end();
    stats s_serial = stats_of(serial_ms, rounds), s_yours = stats_of(yours_ms, rounds);
    stats s_speed = stats_of(speedup, rounds), s_busy = stats_of(busy, rounds);
    stats s_eff = stats_of(eff, rounds), s_threads = stats_of(threads, rounds);

    report_param(r, "batches", batches, "");
    report_param(r, "producers", producers, "");
    report_fact(r, "prep_ms", bench.p_ms, "ms", "P: one batch's preparation, calibrated");
    report_fact(r, "copy_ms", bench.c_ms, "ms", "C: one batch's copy from a pinned slot");
    report_fact(r, "step_ms", bench.k_ms, "ms", "K: the GPU's step");
    report_fact(r, "host_cores", bench.cores, "", "w producers prepare at most min(w, cores) "
                "batches at once");
    report_section(r, "B batches: the serial loader, and yours");
    report_compare(r, "serial", "time", "B(P+C+K)", feed_model_ms(batches, bench.p_ms,
                   bench.c_ms, bench.k_ms, 0, bench.cores), &s_serial, "ms");
    report_compare(r, "your loader", "time", "P + B max(P/w, C+K)", model_ms, &s_yours, "ms");
    report_compare(r, "your loader", "gpu_busy", "B K / the model's time", model_busy, &s_busy,
                   "");
    report_stats(r, "your loader", "speedup", &s_speed, "x");
    report_stats(r, "your loader", "threads_preparing", &s_threads, "");
    report_tally(r, "batches_verified", &yours, "batches of your loader the GPU found wrong "
                 "(a word differed from what prepare() wrote) or never stepped");
    report_tally(r, "serial_verified", &own, "batches of the program's own serial loader wrong");
    report_check(r, "steps_queued_once", steps_wrong == 0, "%d batches not stepped exactly once "
                 "by run_loader()", steps_wrong);
    report_verdict(r, &BUSY, s_eff.median, "the GPU busy %.0f%% of your run, %.0f%% of the "
                   "model's %.0f%% with %d producers (serial: %.2fx slower)", 100 * s_busy.median,
                   100 * s_eff.median, 100 * model_busy, producers, s_speed.median);

    grading_value("runs", n_runs);
    grading_value("mismatches", (double)yours.wrong);
    grading_value("checked", (double)yours.checked);
    grading_value("slowed_mismatches", (double)slowed_wrong);
    grading_value("step_calls_wrong", steps_wrong);
    grading_value("threads_used", s_threads.median);
    grading_value("cores", bench.cores);
    grading_value("serial_ms", s_serial.median);
    grading_value("yours_ms", s_yours.median);
    grading_value("speedup", s_speed.median);
    grading_value("busy", s_busy.median);
    grading_value("model_busy", model_busy);
    grading_value("efficiency", s_eff.median);
    return grading_finish(&lab);
}
