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
 * Exit code: a race's wrong results are the effect shown, a verdict (exit 4
 * when one did not show); a fix's are a check (exit 1 when wrong). --strict
 * makes the races' results checks too: they exit 1 (for tests).
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>

static int size_mib = 16;   /* the buffer the streams share */
static double spin_ms = 10; /* how late the producer is: long beside any launch or copy */
static int batches = 8;
static int strict_mode = 0;

static const option lab_options[] = {
    {"size-mib", OPT_INT, &size_mib, 1, 1024, 4, "MIB", "buffer the streams share"},
    {"spin-ms", OPT_DOUBLE, &spin_ms, 0.5, 1000, 2, "MS", "how late the producer is"},
    {"batches", OPT_INT, &batches, 4, 64, NO_QUICK, "N", "batches of the double-buffered loop (d)"},
    {"strict", OPT_FLAG, &strict_mode, 0, 0, NO_QUICK, NULL,
     "count the races' wrong results as failures (exit 1)"},
    {NULL},
};

static const program_info program = {
    .name = "lab06",
    .title = "cross-stream races: a missing dependency, its fixes, and what each costs the host",
    .handout = "labs/lab06_stream_races/README.md",
    .options = lab_options, .reps = 5, .quick_reps = 3, /* runs per variant */
    .memory_option = "size-mib", .memory_per_unit = 3 << 20, /* d_in, d_mid, d_out */
};

enum { POISON = 0xff }; /* every byte: words of 0xffffffff that no run wrote */
enum handoff { NO_WAIT, EVENT_WAIT, HOST_SYNC }; /* (a), (b), (c) */

typedef struct {
    size_t n, bytes;
    uint64_t spin_ns;
    int reps;
    cudaStream_t a, b, c;          /* producer's, consumer's, (d)'s uploads */
    cudaEvent_t produced;          /* (b) and (e) */
    cudaEvent_t uploaded[2], released[2]; /* (d): per device buffer */
    uint32_t *h_in, *h_out;        /* pinned, so the async copies really are async */
    uint32_t *h_seen;              /* (e): what the host read */
    uint32_t *d_in, *d_mid, *d_out;
    double *wrong_per_run, *issue_ms, *blocked_ms; /* an attempt's: [row * reps + run] */
    stats issue[3], blocked;       /* (b), (c): the last attempt's host times, per handoff */
    tally later;                   /* (e): the pinned buffer once the stream finished */
} lab_state;

/* A race leaves work behind (the late producer): it finishes before the host
 * rewrites buffers a copy may still be reading. The setup goes to the legacy
 * stream, which non-blocking streams do not wait for, and cudaMemset may
 * return before it is done: the variant starts after it, not racing it too. */
static void fresh_run(lab_state *s)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    fill_random_u32(s->h_in, s->n, fresh_seed());
    memset(s->h_out, POISON, s->bytes);
    memset(s->h_seen, POISON, s->bytes);
    CUDA_CHECK(cudaMemcpy(s->d_in, s->h_in, s->bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(s->d_mid, POISON, s->bytes));
    CUDA_CHECK(cudaMemset(s->d_out, POISON, s->bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* A variant, and its runs: each on fresh inputs, every result verified into
 * `all`. A race's verdict, `caught`, reads one attempt: wrong in every run? */
typedef struct variant {
    lab_state *s;
    const char *name;
    size_t (*one_run)(lab_state *s, int how, int run, tally *t); /* its wrong results, in *t */
    int how;
    const verdict *caught; /* a race's; NULL: a fix */
    struct variant *next;  /* runs in turns with this one (a race's fix; (c) with (b)) */
    tally all, before;     /* every attempt's results; `all` before the last attempt */
    int runs, runs_wrong;  /* every attempt's runs; the last attempt's with wrong results */
} variant;

/* One attempt: --reps rounds of v and the variant after it, in turns, so that
 * both sides meet the same moments of the machine (a busy host or a
 * time-sliced GPU can let a late producer win). */
static int attempt_runs(void *ctx, double *spread)
{
    variant *v = (variant *)ctx, *w;
    for (w = v; w; w = w->next)
        w->before = w->all, w->runs_wrong = 0, w->all.where = w->name;
    timeline_span_begin(v->name);
    for (int i = 0; i < v->s->reps; i++)
        for (w = v; w; w = w->next) {
            fresh_run(w->s);
            size_t wrong = w->one_run(w->s, w->how, i, &w->all);
            w->s->wrong_per_run[(w != v) * v->s->reps + i] = (double)wrong; /* v's: row 0 */
            w->runs_wrong += wrong > 0, w->runs++;
        }
    timeline_span_end();
    *spread = 0; /* counts, not timings */
    return !v->caught || verdict_holds(v->caught, (double)v->runs_wrong / v->s->reps);
}

/* A race's last attempt, and its verdict; all of a fix's results as a check. */
static void report_variant(report *r, const variant *v, const char *model, double model_wrong)
{
    char check[64], what[96];
    if (v->caught) {
        stats per_run = stats_of(v->s->wrong_per_run, v->s->reps);
        report_compare(r, v->name, "mismatches_per_run", model, model_wrong, &per_run, "count");
        report_verdict(r, v->caught, (double)v->runs_wrong / v->s->reps, "%zu of %zu results "
                       "wrong, caught in %d of %d runs", v->all.wrong - v->before.wrong,
                       v->all.checked - v->before.checked, v->runs_wrong, v->s->reps);
    } else {
        report_value(r, v->name, "mismatches", (double)v->all.wrong, "count");
    }
    report_value(r, v->name, "checked", (double)v->all.checked, "count");
    if (!v->caught || strict_mode) {
        snprintf(check, sizeof check, "%s_correct", v->name);
        snprintf(what, sizeof what, "results wrong over %d runs%s", v->runs,
                 v->caught ? " (--strict: a race is a failure)" : "");
        report_tally(r, check, &v->all, what);
    }
}

/* ---- (a), (b), (c): a producer in A, a consumer in B --------------------------------- */

/* A race is caught when every run had wrong results; a fix's host cost is
 * read against the producer's delay. */
static const verdict NO_DEPENDENCY_CAUGHT = {
    "no_dependency_caught", 1, INFINITY, "%",
    "B's consumer read A's output: something ran the streams in turn (a profiler, a sanitizer, "
    "CUDA_DEVICE_MAX_CONNECTIONS=1), or --spin-ms is too short for this machine's launch latency"};
static const verdict HOST_FREE = {
    "event_wait_host_free", -INFINITY, 0.10, "%",
    "issuing (b) took long: a busy CPU, or a tool (profiler, sanitizer) slowing every CUDA "
    "call; try a larger --spin-ms"};
static const verdict HOST_BLOCKED = {
    "host_sync_blocks_host", 0.90, INFINITY, "%",
    "the host reached cudaStreamSynchronize late: a busy CPU, or a tool (profiler, sanitizer) "
    "slowing every CUDA call; try a larger --spin-ms"};

/* Issues one run, keeping the host's milliseconds to issue it and the part of
 * them spent inside cudaStreamSynchronize; then verifies what B wrote. */
static size_t handoff_run(lab_state *s, int how, int run, tally *t)
{
    double start = host_time_ms();
    spin_for_ns<<<1, 1, 0, s->a>>>(s->spin_ns); /* the producer is late... */
    CHECK_LAUNCH();
    affine_launch(s->d_in, s->d_mid, s->n, 1, s->a); /* ...then writes d_mid = f(in) */
    if (how == EVENT_WAIT) {
        /* The GPU waits: B's next work starts when A reaches this point. */
        CUDA_CHECK(cudaEventRecord(s->produced, s->a));
        CUDA_CHECK(cudaStreamWaitEvent(s->b, s->produced, 0));
    } else if (how == HOST_SYNC) {
        /* The host waits: nothing more is issued until A has finished. */
        double wait = host_time_ms();
        CUDA_CHECK(cudaStreamSynchronize(s->a));
        s->blocked_ms[how * s->reps + run] = host_time_ms() - wait;
    }
    affine_launch(s->d_mid, s->d_out, s->n, 1, s->b); /* the consumer: out = f(d_mid) */
    CUDA_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, s->bytes, cudaMemcpyDeviceToHost, s->b));
    s->issue_ms[how * s->reps + run] = host_time_ms() - start;
    CUDA_CHECK(cudaDeviceSynchronize()); /* both streams done: the host may look */
    return verify_affine(s->h_in, s->h_out, s->n, 2, t);
}

/* One attempt at what (b) and (c) cost the host, run in turns: b c b c ... */
static int attempt_host_cost(void *ctx, double *spread)
{
    lab_state *s = ((variant *)ctx)->s;
    attempt_runs(ctx, spread); /* (b), then (c) as its `next` */
    stats_of_rows(s->issue_ms + EVENT_WAIT * s->reps, 2, s->reps, s->issue + EVENT_WAIT);
    s->blocked = stats_of(s->blocked_ms + HOST_SYNC * s->reps, s->reps);
    *spread = fmax(stats_spread(&s->issue[EVENT_WAIT]), stats_spread(&s->blocked));
    return verdict_holds(&HOST_FREE, s->issue[EVENT_WAIT].median / spin_ms) &&
           verdict_holds(&HOST_BLOCKED, s->blocked.median / spin_ms);
}

static void handoffs(lab_run *run, lab_state *s)
{
    variant race = {s, "no_dependency", handoff_run, NO_WAIT, &NO_DEPENDENCY_CAUGHT};
    variant sync = {s, "host_sync", handoff_run, HOST_SYNC};
    variant event = {s, "event_wait", handoff_run, EVENT_WAIT, NULL, &sync};
    report_section(run->r, "(a) no dependency: B reads what A has not written yet");
    lab_attempt(run, race.name, attempt_runs, &race);
    report_variant(run->r, &race, "every result: B read only poison", (double)s->n);
    report_section(run->r, "(b) cudaEventRecord + cudaStreamWaitEvent: the GPU waits");
    lab_attempt(run, "event_wait+host_sync", attempt_host_cost, &event);
    report_variant(run->r, &event, NULL, 0);
    report_stats(run->r, "event_wait", "host_issue", &s->issue[EVENT_WAIT], "ms");
    report_section(run->r, "(c) cudaStreamSynchronize: the host waits");
    report_variant(run->r, &sync, NULL, 0);
    report_stats(run->r, "host_sync", "host_issue", &s->issue[HOST_SYNC], "ms");
    report_compare(run->r, "host_sync", "host_blocked", "the producer's delay", spin_ms, &s->blocked, "ms");
    double issue = s->issue[EVENT_WAIT].median, blocked = s->blocked.median;
    report_verdict(run->r, &HOST_FREE, issue / spin_ms, "(b) issuing took %.1f us, %.2f%% of "
                   "the producer's %g ms delay", issue * 1e3, issue / spin_ms * 100, spin_ms);
    report_verdict(run->r, &HOST_BLOCKED, blocked / spin_ms, "(c) blocked %.2f ms for a "
                   "producer %g ms late", blocked, spin_ms);
}

/* ---- (d): a double-buffered loop ------------------------------------------------------- */

static const verdict REUSE_RACE_CAUGHT = {
    "reuse_race_caught", 1, INFINITY, "%",
    "the uploads did not run ahead of the slow batches: something ran the streams in turn (a "
    "profiler, a sanitizer), or --spin-ms is too short"};

/* Batch i goes up in stream c into device buffer i % 2, then work stream i % 2
 * runs a slow kernel on it in place and copies it down. Without `fixed`
 * nothing stops the upload of batch i+2 from overwriting the buffer while
 * batch i still needs it. */
static size_t reuse_run(lab_state *s, int fixed, int /* run */, tally *t)
{
    size_t per_batch = s->n / (size_t)batches, batch_bytes = per_batch * sizeof(uint32_t);
    uint32_t *buffer[2] = {s->d_mid, s->d_out}; /* each holds one batch */
    cudaStream_t work[2] = {s->a, s->b};
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
    return verify_affine(s->h_in, s->h_out, per_batch * batches, 1, t);
}

/* The race's model: all uploads land before the first slow kernel reads, so
 * each buffer holds the last batch of its parity, and every kernel of that
 * parity transforms it again in place: no batch comes back right. */
static void buffer_reuse(lab_run *run, lab_state *s)
{
    variant fix = {s, "reuse_fixed", reuse_run, 1};
    variant race = {s, "reuse_race", reuse_run, 0, &REUSE_RACE_CAUGHT, &fix};
    report_section(run->r, "(d) a double-buffered loop: uploads overwrite a buffer still in use");
    lab_attempt(run, race.name, attempt_runs, &race);
    report_variant(run->r, &race, "every result: a buffer holds its parity's last batch",
                   (double)(s->n / batches * batches));
    report_text(run->r, "  the fix: batch i+2's upload waits for an event after batch i's copy back\n");
    report_variant(run->r, &fix, NULL, 0);
}

/* ---- (e): the host reads too early ------------------------------------------------------ */

static const verdict EARLY_READ_CAUGHT = {
    "early_read_caught", 1, INFINITY, "%",
    "the copy had landed before the host read it: the host was slow to get there (a busy CPU, "
    "a tool), or --spin-ms is too short"};

static size_t host_read_run(lab_state *s, int wait, int /* run */, tally *t)
{
    spin_for_ns<<<1, 1, 0, s->a>>>(s->spin_ns);
    CHECK_LAUNCH();
    affine_launch(s->d_in, s->d_out, s->n, 1, s->a);
    CUDA_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, s->bytes, cudaMemcpyDeviceToHost, s->a));
    CUDA_CHECK(cudaEventRecord(s->produced, s->a));
    if (wait) /* waits for exactly the copy, not for anything issued after it */
        CUDA_CHECK(cudaEventSynchronize(s->produced));
    /* The host uses the result. Without the wait a DMA engine may be writing
     * this memory right now: that is the bug being shown. */
    memcpy(s->h_seen, s->h_out, s->bytes);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!wait)
        verify_affine(s->h_in, s->h_out, s->n, 1, &s->later);
    return verify_affine(s->h_in, s->h_seen, s->n, 1, t);
}

static void host_reads(lab_run *run, lab_state *s)
{
    variant fix = {s, "read_after_wait", host_read_run, 1};
    variant race = {s, "early_read", host_read_run, 0, &EARLY_READ_CAUGHT, &fix};
    report_section(run->r, "(e) the host reads a result before the stream finished");
    lab_attempt(run, race.name, attempt_runs, &race);
    report_variant(run->r, &race, "every result: the host saw only poison", (double)s->n);
    report_tally(run->r, "early_read_buffer_later", &s->later, "wrong in the same pinned buffer, "
                 "read after the stream finished (the GPU was right, the host was early)");
    report_text(run->r, "  the fix: cudaEventSynchronize on an event recorded after the copy\n");
    report_variant(run->r, &fix, NULL, 0);
}

/* ---- setup: the run owns these, lab_end() releases them ---------------------------- */

/* Non-blocking streams: a stream created plainly also waits for, and is
 * waited for by, the legacy default stream, so one stray legacy-stream call
 * (a cudaMemset, say) would order A and B for us and hide the race. Events
 * only for ordering: no timestamps, so record and wait cost less. */
static lab_state state_open(lab_run *run)
{
    lab_state s = {.n = ((size_t)size_mib << 20) / sizeof(uint32_t), .bytes = (size_t)size_mib << 20,
                   .spin_ns = ns_from_ms(spin_ms), .reps = run->opt.reps};
    s.a = lab_stream(run, "A producer", cudaStreamNonBlocking, 0);
    s.b = lab_stream(run, "B consumer", cudaStreamNonBlocking, 0);
    s.c = lab_stream(run, "C uploads", cudaStreamNonBlocking, 0);
    s.produced = lab_event(run, cudaEventDisableTiming);
    lab_events(run, s.uploaded, 2, cudaEventDisableTiming);
    lab_events(run, s.released, 2, cudaEventDisableTiming);
    s.h_in = (uint32_t *)lab_pinned(run, s.bytes), s.h_out = (uint32_t *)lab_pinned(run, s.bytes);
    s.d_in = (uint32_t *)lab_device(run, s.bytes), s.d_mid = (uint32_t *)lab_device(run, s.bytes);
    s.d_out = (uint32_t *)lab_device(run, s.bytes), s.h_seen = (uint32_t *)lab_pageable(run, s.bytes);
    s.wrong_per_run = (double *)lab_pageable(run, 8 * s.reps * sizeof(double)); /* 2, 3, 3 rows */
    s.issue_ms = s.wrong_per_run + 2 * s.reps, s.blocked_ms = s.issue_ms + 3 * s.reps;
    fresh_run(&s); /* warm-up: module loading and first-launch costs stay out of the timings */
    handoff_run(&s, EVENT_WAIT, 0, NULL);
    return s;
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    lab_state s = state_open(&run);
    report_param(run.r, "elements", (double)s.n, "count");
    handoffs(&run, &s);
    buffer_reuse(&run, &s);
    host_reads(&run, &s);
    return lab_end(&run);
}
