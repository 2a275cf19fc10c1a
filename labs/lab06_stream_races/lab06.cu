/* lab06: cross-stream races.
 *
 * The question: two streams run independently unless you say otherwise. What
 * does a consumer in stream B read when the producer in stream A has not
 * written its buffer yet, and which way of saying "wait" costs the host
 * nothing? Every variant runs --reps times on fresh random inputs and is
 * verified element by element against a CPU reference:
 *   (a) no_dependency    A produces, B consumes, nothing in between: a race. The
 *                        producer is late on purpose (spin_for_ns first), so the
 *                        consumer reads the poison every time, not now and then.
 *   (b) event_wait       cudaEventRecord in A + cudaStreamWaitEvent in B: the GPU
 *                        waits, the host returns at once.
 *   (c) host_sync        cudaStreamSynchronize(A) before the consumer: correct,
 *                        but the host sits out the producer's whole delay.
 *   (d) reuse_race       a double-buffered loop whose uploads run ahead and
 *       reuse_fixed      overwrite a buffer a slow batch still needs; fixed by an
 *                        event per buffer meaning "this batch has been copied out".
 *   (e) early_read       the host reads a pinned result as soon as
 *       read_after_wait  cudaMemcpyAsync returns; fixed by cudaEventSynchronize.
 *
 * Build and run:   make lab06 && ./lab06        (./lab06 --quick, ./lab06 --help)
 *
 * What to look for: each race's mismatch count beside the model's (every
 * result wrong), each fix's zero, and the host's time: microseconds to issue
 * (b), the producer's whole delay spent blocked in (c).
 *
 * Exit code: by default a race's wrong results are the effect being shown, so
 * they are verdicts ("caught": yes or NO), while each fix's results are checks.
 * 0 = every race was caught and every fix was clean; 1 = a fix gave a wrong
 * result; 4 = a race did not show. --strict checks every variant's results, so
 * the races make it exit 1 (for tests that want "wrong results" to fail).
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size_mib = 16;   /* the buffer the streams share */
static double spin_ms = 10; /* how late the producer is: long beside any launch or copy */
static int batches = 8;
static int strict_mode = 0;

static const option lab_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 1024, "MIB", "buffer the streams share (--quick: 4 unless given)"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.5, 1000, "MS", "how late the producer is (--quick: 2 unless given)"},
    {"batches", OPT_INT, &batches, 4, 64, "N", "batches of the double-buffered loop (d)"},
    {"strict", OPT_FLAG, &strict_mode, 0, 0, NULL, "count the races' wrong results as failures (exit 1)"},
};
static const program_info lab = {
    "lab06", "cross-stream races: a missing dependency, its fixes, and what each costs the host",
    lab_options, sizeof lab_options / sizeof lab_options[0], 5, /* runs per variant */
};

enum { POISON = 0xff }; /* every byte: words of 0xffffffff that no run wrote */

typedef struct {
    size_t n, bytes;
    uint64_t spin_ns;
    cudaStream_t a, b, c;          /* producer's, consumer's, (d)'s uploads */
    cudaEvent_t produced;          /* (b) and (e) */
    cudaEvent_t uploaded[2], released[2]; /* (d): per device buffer */
    uint32_t *h_in, *h_out;        /* pinned, so the async copies really are async */
    uint32_t *h_seen;              /* (e): what the host read */
    uint32_t *d_in, *d_mid, *d_out;
} lab_state;

/* ---- counting wrong results ------------------------------------------------------ */

typedef struct {
    const char *name;
    int racy; /* 1: the dependency is missing on purpose */
    int runs, runs_wrong;
    size_t wrong, checked;
    double *wrong_per_run;
} tally;

static tally tally_new(const char *name, int racy, int reps)
{
    tally t = {name, racy, 0, 0, 0, 0, (double *)xmalloc((size_t)reps * sizeof(double))};
    return t;
}

static void tally_run(tally *t, size_t wrong, size_t checked)
{
    t->wrong_per_run[t->runs++] = (double)wrong;
    t->runs_wrong += wrong > 0;
    t->wrong += wrong;
    t->checked += checked;
}

/* A race's wrong results are its verdict; a fix's results are a check (and,
 * with --strict, so are a race's). Returns 1 when a race went uncaught. */
static int report_tally(report *r, tally *t, double predicted_per_run)
{
    char name[64];
    int missed = t->racy && t->runs_wrong < t->runs;
    if (t->racy) {
        stats per_run = stats_of(t->wrong_per_run, t->runs);
        report_compare(r, t->name, "mismatches_per_run", predicted_per_run, &per_run, "count");
        snprintf(name, sizeof name, "%s_caught", t->name);
        report_verdict(r, name, !missed, "%zu of %zu results wrong (model: %.0f per run), "
                       "caught in %d of %d runs (limit: every run)", t->wrong, t->checked,
                       predicted_per_run, t->runs_wrong, t->runs);
    } else {
        report_value(r, t->name, "mismatches", (double)t->wrong, "count");
    }
    report_value(r, t->name, "checked", (double)t->checked, "count");
    if (!t->racy || strict_mode) {
        snprintf(name, sizeof name, "%s_correct", t->name);
        report_check(r, name, t->wrong == 0, "%zu of %zu results wrong over %d runs%s", t->wrong,
                     t->checked, t->runs, t->racy ? " (--strict: a race is a failure)" : "");
    }
    free(t->wrong_per_run);
    return missed;
}

/* ---- one run's known starting state ------------------------------------------------ */

static void fresh_run(lab_state *s)
{
    /* A race leaves work behind (the late producer): let it finish before the
     * host rewrites buffers that a copy may still be reading. */
    CUDA_CHECK(cudaDeviceSynchronize());
    fill_random_u32(s->h_in, s->n, fresh_seed());
    memset(s->h_out, POISON, s->bytes);
    memset(s->h_seen, POISON, s->bytes);
    CUDA_CHECK(cudaMemcpy(s->d_in, s->h_in, s->bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(s->d_mid, POISON, s->bytes));
    CUDA_CHECK(cudaMemset(s->d_out, POISON, s->bytes));
    /* Those went to the legacy default stream, which non-blocking streams do
     * not wait for, and cudaMemset may return before it is done: wait, so the
     * variant starts after them rather than racing them too. */
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* ---- (a), (b), (c): a producer in A, a consumer in B --------------------------------- */

enum handoff { NO_WAIT, EVENT_WAIT, HOST_SYNC };

/* Issues one run; returns the host's milliseconds to issue it, and in
 * *blocked_ms the part spent inside cudaStreamSynchronize. */
static double producer_consumer(lab_state *s, enum handoff how, double *blocked_ms)
{
    double start = host_time_ms();
    spin_for_ns<<<1, 1, 0, s->a>>>(s->spin_ns); /* the producer is late... */
    CHECK_LAUNCH();
    affine_launch(s->d_in, s->d_mid, s->n, 1, s->a); /* ...then writes d_mid = f(in) */
    *blocked_ms = 0;
    if (how == EVENT_WAIT) {
        /* The GPU waits: B's next work starts when A reaches this point. */
        CUDA_CHECK(cudaEventRecord(s->produced, s->a));
        CUDA_CHECK(cudaStreamWaitEvent(s->b, s->produced, 0));
    } else if (how == HOST_SYNC) {
        /* The host waits: nothing more is issued until A has finished. */
        double wait = host_time_ms();
        CUDA_CHECK(cudaStreamSynchronize(s->a));
        *blocked_ms = host_time_ms() - wait;
    }
    affine_launch(s->d_mid, s->d_out, s->n, 1, s->b); /* the consumer: out = f(d_mid) */
    CUDA_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, s->bytes, cudaMemcpyDeviceToHost, s->b));
    return host_time_ms() - start;
}

static int run_handoff(report *r, lab_state *s, const char *name, enum handoff how, int reps,
                       stats *issue, stats *blocked)
{
    tally t = tally_new(name, how == NO_WAIT, reps);
    double *issue_ms = (double *)xmalloc((size_t)reps * sizeof(double));
    double *blocked_ms = (double *)xmalloc((size_t)reps * sizeof(double));
    size_t first_bad;
    timeline_span_begin(name);
    for (int i = 0; i < reps; i++) {
        fresh_run(s);
        issue_ms[i] = producer_consumer(s, how, &blocked_ms[i]);
        CUDA_CHECK(cudaDeviceSynchronize()); /* both streams done: the host may look */
        tally_run(&t, verify_affine(s->h_in, s->h_out, s->n, 2, &first_bad), s->n);
    }
    timeline_span_end();
    *issue = stats_of(issue_ms, reps);
    *blocked = stats_of(blocked_ms, reps);
    free(blocked_ms);
    free(issue_ms);
    return report_tally(r, &t, (double)s->n); /* the race's model: the consumer read only poison */
}

/* ---- (d): a double-buffered loop ------------------------------------------------------- */

/* Batch i goes up in stream c into device buffer i % 2, then work stream i % 2
 * runs a slow kernel on it in place and copies it down. Without `fixed`
 * nothing stops the upload of batch i+2 from overwriting the buffer while
 * batch i still needs it. */
static int run_reuse(report *r, lab_state *s, int fixed, int reps)
{
    const char *name = fixed ? "reuse_fixed" : "reuse_race";
    size_t per_batch = s->n / (size_t)batches, batch_bytes = per_batch * sizeof(uint32_t);
    uint32_t *buffer[2] = {s->d_mid, s->d_out}; /* each holds one batch */
    cudaStream_t work[2] = {s->a, s->b};
    tally t = tally_new(name, !fixed, reps);
    size_t first_bad;
    timeline_span_begin(name);
    for (int run = 0; run < reps; run++) {
        fresh_run(s);
        for (int i = 0; i < batches; i++) {
            int k = i % 2;
            if (fixed && i >= 2) /* the buffer is free once batch i-2 was copied out */
                CUDA_CHECK(cudaStreamWaitEvent(s->c, s->released[k], 0));
            CUDA_CHECK(cudaMemcpyAsync(buffer[k], s->h_in + i * per_batch, batch_bytes,
                                       cudaMemcpyHostToDevice, s->c));
            CUDA_CHECK(cudaEventRecord(s->uploaded[k], s->c));
            CUDA_CHECK(cudaStreamWaitEvent(work[k], s->uploaded[k], 0));
            spin_for_ns<<<1, 1, 0, work[k]>>>(s->spin_ns); /* a slow kernel reads late */
            CHECK_LAUNCH();
            affine_launch(buffer[k], buffer[k], per_batch, 1, work[k]);
            CUDA_CHECK(cudaMemcpyAsync(s->h_out + i * per_batch, buffer[k], batch_bytes,
                                       cudaMemcpyDeviceToHost, work[k]));
            CUDA_CHECK(cudaEventRecord(s->released[k], work[k]));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        size_t total = per_batch * (size_t)batches;
        tally_run(&t, verify_affine(s->h_in, s->h_out, total, 1, &first_bad), total);
    }
    timeline_span_end();
    /* The race's model: all uploads land before the first slow kernel reads,
     * so each buffer holds the last batch of its parity, and every kernel of
     * that parity transforms it again in place: no batch comes back right. */
    return report_tally(r, &t, (double)(per_batch * (size_t)batches));
}

/* ---- (e): the host reads too early ------------------------------------------------------ */

static int run_host_read(report *r, lab_state *s, int wait, int reps)
{
    const char *name = wait ? "read_after_wait" : "early_read";
    tally t = tally_new(name, !wait, reps);
    size_t first_bad, late_wrong = 0;
    timeline_span_begin(name);
    for (int run = 0; run < reps; run++) {
        fresh_run(s);
        spin_for_ns<<<1, 1, 0, s->a>>>(s->spin_ns);
        CHECK_LAUNCH();
        affine_launch(s->d_in, s->d_out, s->n, 1, s->a);
        CUDA_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, s->bytes, cudaMemcpyDeviceToHost, s->a));
        CUDA_CHECK(cudaEventRecord(s->produced, s->a));
        if (wait) /* waits for exactly the copy, not for anything issued after it */
            CUDA_CHECK(cudaEventSynchronize(s->produced));
        /* The host uses the result. Without the wait a DMA engine may be
         * writing this memory right now: that is the bug being shown. */
        memcpy(s->h_seen, s->h_out, s->bytes);
        CUDA_CHECK(cudaDeviceSynchronize());
        tally_run(&t, verify_affine(s->h_in, s->h_seen, s->n, 1, &first_bad), s->n);
        late_wrong += verify_affine(s->h_in, s->h_out, s->n, 1, &first_bad);
    }
    timeline_span_end();
    int missed = report_tally(r, &t, (double)s->n); /* model: the host saw only poison */
    if (!wait)
        report_check(r, "early_read_buffer_later", late_wrong == 0,
                     "the same pinned buffer, read after the stream finished: %zu of %zu "
                     "wrong (the GPU was right, the host was early)", late_wrong, t.checked);
    return missed;
}

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &lab, &opt);
    if (opt.quick && !option_given(argc, argv, "--size-mib"))
        size_mib = 4;
    if (opt.quick && !option_given(argc, argv, "--spin-ms"))
        spin_ms = 2;
    if (opt.quick && !option_given(argc, argv, "--reps"))
        opt.reps = 3;
    device_info dev;
    device_select(&opt, &dev);
    if (((size_t)size_mib << 20) * 3 > dev.free_memory / 2)
        fail_usage("--size-mib %d: three buffers need more than half of this GPU's free "
                   "memory (%zu MiB)", size_mib, dev.free_memory >> 20);
    report *r = report_begin(&lab, &opt, &dev);
    timeline_start(&opt);

    lab_state s;
    memset(&s, 0, sizeof s);
    s.bytes = (size_t)size_mib << 20;
    s.n = s.bytes / sizeof(uint32_t);
    s.spin_ns = ns_from_ms(spin_ms);
    report_param(r, "elements", (double)s.n, "count");
    report_param(r, "producer_delay", spin_ms, "ms");
    report_param(r, "batches", batches, "count");
    report_param(r, "strict", strict_mode, "bool");
    report_param(r, "runs_per_variant", opt.reps, "count");

    /* Non-blocking streams: a stream created plainly also waits for, and is
     * waited for by, the legacy default stream, so one stray legacy-stream
     * call (a cudaMemset, say) would order A and B for us and hide the race. */
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.a, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.b, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.c, cudaStreamNonBlocking));
    timeline_name_stream(s.a, "A producer");
    timeline_name_stream(s.b, "B consumer");
    timeline_name_stream(s.c, "C uploads");
    /* Events only for ordering: no timestamps, so record and wait cost less. */
    CUDA_CHECK(cudaEventCreateWithFlags(&s.produced, cudaEventDisableTiming));
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&s.uploaded[k], cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&s.released[k], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaMallocHost((void **)&s.h_in, s.bytes));
    CUDA_CHECK(cudaMallocHost((void **)&s.h_out, s.bytes));
    s.h_seen = (uint32_t *)xmalloc(s.bytes);
    CUDA_CHECK(cudaMalloc((void **)&s.d_in, s.bytes));
    CUDA_CHECK(cudaMalloc((void **)&s.d_mid, s.bytes));
    CUDA_CHECK(cudaMalloc((void **)&s.d_out, s.bytes));

    /* Warm-up: module loading and first-launch costs stay out of the timings. */
    double ignored;
    fresh_run(&s);
    producer_consumer(&s, EVENT_WAIT, &ignored);
    CUDA_CHECK(cudaDeviceSynchronize());

    int missed = 0, reps = opt.reps;
    stats issue_event, issue_sync, blocked_sync, unused;
    report_section(r, "(a) no dependency: B reads what A has not written yet");
    report_text(r, "  streams share no order: B's consumer starts at once, A's producer %g ms "
                   "later\n", spin_ms);
    missed += run_handoff(r, &s, "no_dependency", NO_WAIT, reps, &unused, &unused);

    report_section(r, "(b) cudaEventRecord + cudaStreamWaitEvent: the GPU waits");
    run_handoff(r, &s, "event_wait", EVENT_WAIT, reps, &issue_event, &unused);
    report_stats(r, "event_wait", "host_issue", &issue_event, "ms");

    report_section(r, "(c) cudaStreamSynchronize: the host waits");
    run_handoff(r, &s, "host_sync", HOST_SYNC, reps, &issue_sync, &blocked_sync);
    report_stats(r, "host_sync", "host_issue", &issue_sync, "ms");
    report_compare(r, "host_sync", "host_blocked", spin_ms, &blocked_sync, "ms");
    report_text(r, "  the host was free after %.1f us with the event, blocked %.2f ms with the "
                   "sync: %.0fx longer\n", issue_event.median * 1e3, blocked_sync.median,
                blocked_sync.median / issue_event.median);
    int host_free = issue_event.median < 0.1 * spin_ms;
    int host_blocked = blocked_sync.median >= 0.9 * spin_ms;
    report_verdict(r, "event_wait_host_free", host_free, "issuing took %.1f us, the producer "
                   "%g ms (limit: under 10%% of it, %.0f us)", issue_event.median * 1e3, spin_ms,
                   spin_ms * 100);
    report_verdict(r, "host_sync_blocks_host", host_blocked, "blocked %.2f ms for a producer "
                   "%g ms late (limit: at least 90%% of it)", blocked_sync.median, spin_ms);

    report_section(r, "(d) a double-buffered loop: uploads overwrite a buffer still in use");
    report_text(r, "  %d batches of %zu elements through 2 device buffers; each batch's "
                   "kernel starts %g ms late\n", batches, s.n / (size_t)batches, spin_ms);
    missed += run_reuse(r, &s, 0, reps);
    report_text(r, "  the fix: the upload of batch i+2 waits for an event recorded after "
                   "batch i's copy back\n");
    run_reuse(r, &s, 1, reps);

    report_section(r, "(e) the host reads a result before the stream finished");
    missed += run_host_read(r, &s, 0, reps);
    report_text(r, "  the fix: cudaEventSynchronize on an event recorded after the copy\n");
    run_host_read(r, &s, 1, reps);

    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(s.d_out));
    CUDA_CHECK(cudaFree(s.d_mid));
    CUDA_CHECK(cudaFree(s.d_in));
    free(s.h_seen);
    CUDA_CHECK(cudaFreeHost(s.h_out));
    CUDA_CHECK(cudaFreeHost(s.h_in));
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaEventDestroy(s.released[k]));
        CUDA_CHECK(cudaEventDestroy(s.uploaded[k]));
    }
    CUDA_CHECK(cudaEventDestroy(s.produced));
    CUDA_CHECK(cudaStreamDestroy(s.c));
    CUDA_CHECK(cudaStreamDestroy(s.b));
    CUDA_CHECK(cudaStreamDestroy(s.a));
    timeline_finish(r, &opt);

    if (missed)
        report_hint(r, "%s", dev.launch_blocking
                    ? "CUDA_LAUNCH_BLOCKING=1: each launch returns only when its kernel has "
                      "finished, so the producer is done before the consumer is issued"
                    : "a race did not show: something ran the streams one after another (a "
                      "profiler or sanitizer serialising launches), or --spin-ms is too short "
                      "for this machine's launch latency");
    else if (!host_free || !host_blocked)
        report_hint(r, "the host's timings are off: a busy CPU, or a tool (profiler, "
                       "sanitizer) slowing every CUDA call; try a larger --spin-ms");
    return report_finish(r);
}
