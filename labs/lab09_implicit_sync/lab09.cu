/* lab09: implicit synchronisation, a measured catalogue.
 *
 * The question: a 20 ms kernel K1 runs in stream A; the host makes one
 * ordinary call (cudaMalloc, cudaFree, a copy, a query...) and then launches
 * a 1 ms kernel K2 in stream B. Did the call make the HOST wait for K1? Did
 * it make the GPU hold K2 back until K1 ended? Or neither? About 35 calls,
 * with non-blocking streams and with blocking ones (cudaStreamCreate).
 *
 * Build and run:   make lab09 && ./lab09        (./lab09 --help for options)
 *
 * What to look for: a handful of calls make the host wait for work they
 * have nothing to do with (cudaFree, cudaFreeHost, cudaDeviceSetLimit ...);
 * with blocking streams every call that goes to the legacy default stream
 * (cudaMemset, synchronous copies, a kernel on stream 0) joins them, on the
 * host or on the GPU. The "documented" column says which outcomes CUDA
 * promises: only those are judged; the rest are this driver's behaviour,
 * printed with its version, and may change with the next one.
 */
#include "calls.h"

#include <stdio.h>
#include <stdlib.h>

static double k1_ms = 20, k2_ms = 1; /* the two kernels' known durations */
static int size_kib = 1024;          /* every buffer a call allocates or copies */

/* --quick's K1 of 2.5 ms keeps the run under a second (every busy sample
 * waits out K1) and still admits every --k2-ms below half of it. The
 * outcomes keep their margins: "host waited" is 1.25 ms (K1/2) beyond the
 * call's idle cost; the slowest call that did not wait took 0.18 ms beside
 * K1 at the default 1 MiB (the handout's H100 catalogue), a waiting one
 * K1's whole 2.5 ms: over 1 ms of margin either side. An unheld K2 begins
 * under 0.2 ms after K1 did, over 2 ms before K1 ends. */
static const option lab_options[] = {
    {"k1-ms", OPT_DOUBLE, &k1_ms, 2, 1000, 2.5, "MS", "how long K1 (stream A) spins"},
    {"k2-ms", OPT_DOUBLE, &k2_ms, 0.1, 1, 0.5, "MS", "how long K2 (stream B) spins"},
    {"size-kib", OPT_INT, &size_kib, 4, 65536, 256, "KIB",
     "bytes each call allocates, copies or sets, in KiB"},
    {NULL},
};

/* K2 is the short one: a K2 as long as K1 would blur "began after K1 ended". */
static void check_durations(void)
{
    if (k2_ms >= k1_ms / 2)
        fail_usage("--k2-ms %g: K2 must be at most half of K1 (--k1-ms %g)", k2_ms, k1_ms);
}

static const program_info program = {
    .name = "lab09", .title = "implicit synchronisation: which calls wait for a kernel they never named",
    .handout = "labs/lab09_implicit_sync/README.md",
    .options = lab_options, .reps = 3, .quick_reps = 2, /* samples per row and column */
    .needs = NEEDS_CONCURRENT_KERNELS | NEEDS_OVERLAP | NEEDS_HOST_REGISTER,
    .memory_option = "size-kib", .memory_per_unit = 3 * 1024, /* two buffers, one made */
    .check_options = check_durations,
};

enum { COLUMNS = 2, MAX_CALLS = 64 };
static const char *const column_name[COLUMNS] = {"non-blocking", "blocking"};
static const char *const outcome_name[] = {"neither", "GPU serial", "HOST WAITED", "mixed", ""};

/* The model. A call that waits for K1 returns K1's remaining time later
 * than it would on an idle GPU (the launch before it costs microseconds);
 * a call that does not wait returns its own cost later, plus jitter. The
 * host waited when that excess is at least HALF the remaining time: the
 * midpoint between the two, so each side has K1/2 (10 ms by default) of
 * margin, far beyond any call's own cost at these sizes. */
static const double WAIT_FRACTION = 0.5;
/* K2 was held back when it began after K1 had ended, less two ticks of
 * %globaltimer (about a microsecond each on some GPUs). Unheld, K2 begins
 * microseconds after its launch, milliseconds before K1 ends. */
static const double SLACK_NS = 2000;

/* One row in one column: the medians of its samples, and their outcome. */
typedef struct {
    int measured, tries;
    enum outcome o;
    double call_ms, idle_ms, remaining_ms, gap_ms;
} cell;

typedef struct {
    calls_bench c;
    cudaStream_t s[COLUMNS][2];   /* [column][A, B] */
    uint64_t k1_ns, k2_ns;
    launch_record *d_log, h_log[2];
    double *t;                    /* a sample set: 4 rows of --reps */
    int reps, retries;
    tally records, data;          /* K1 and K2 every time; what each call delivered */
    cell cells[MAX_CALLS][COLUMNS];
} bench;

/* ---- one sample of a call ------------------------------------------------- */

/* The call alone on an idle GPU: its own cost. */
static double idle_sample(bench *b, const call_row *r)
{
    call_prepare(&b->c, r);
    double t0 = host_time_ms();
    r->call_fn(&b->c);
    double ms = host_time_ms() - t0;
    CUDA_CHECK(cudaDeviceSynchronize());
    call_finish(&b->c, r, &b->data);
    return ms;
}

/* K1 in A, the call, K2 in B; then both kernels' records: when each ran,
 * by the GPU's own clock, and that each ran once for its time. */
static enum outcome busy_sample(bench *b, const call_row *r, double idle_ms, double *v)
{
    uint64_t tag = fresh_seed() >> 1;
    call_prepare(&b->c, r); /* idle GPU: K1 is not yet launched */
    double launched = host_time_ms();
    spin_and_log<<<1, 1, 0, b->c.a>>>(b->k1_ns, tag, b->d_log);
    CHECK_LAUNCH();
    double t0 = host_time_ms();
    r->call_fn(&b->c);
    double t1 = host_time_ms();
    spin_and_log<<<1, 1, 0, b->c.b>>>(b->k2_ns, tag + 1, b->d_log + 1);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(b->h_log, b->d_log, sizeof b->h_log, cudaMemcpyDeviceToHost));
    call_finish(&b->c, r, &b->data);
    const launch_record *k1 = &b->h_log[0], *k2 = &b->h_log[1];
    tally_add(&b->records, 2, (k1->tag != tag || k1->end_ns - k1->start_ns < b->k1_ns) +
              (k2->tag != tag + 1 || k2->end_ns - k2->start_ns < b->k2_ns), 0);
    v[0] = t1 - t0;
    v[1] = k1_ms - (t0 - launched);
    v[2] = ((double)k2->start_ns - (double)k1->end_ns) * 1e-6;
    if (v[0] - idle_ms >= WAIT_FRACTION * v[1])
        return HOST_WAITED;
    return k2->start_ns + SLACK_NS >= k1->end_ns ? GPU_SERIALISED : NEITHER;
}

/* --reps samples idle, then --reps busy; measured again, both, while the
 * busy samples disagree (at most --retries more times): a sample that a
 * moment of other work spoilt should not decide a row. */
static cell measure_cell(bench *b, const call_row *r)
{
    cell x = {0};
    int n = b->reps;
    double *idle = b->t, *call = idle + n, *remaining = call + n, *gap = remaining + n;
    for (x.tries = 1; x.tries <= 1 + b->retries; x.tries++) {
        if (!call_can_measure(&b->c, r, 2 * n))
            return x; /* not measured */
        for (int i = 0; i < n; i++)
            idle[i] = idle_sample(b, r);
        x.idle_ms = stats_of(idle, n).median;
        int count[MIXED] = {0};
        for (int i = 0; i < n; i++) {
            double v[3];
            count[busy_sample(b, r, x.idle_ms, v)]++;
            call[i] = v[0], remaining[i] = v[1], gap[i] = v[2];
        }
        x.measured = 1;
        x.call_ms = stats_of(call, n).median;
        x.remaining_ms = stats_of(remaining, n).median;
        x.gap_ms = stats_of(gap, n).median;
        x.o = MIXED;
        for (int o = 0; o < MIXED; o++)
            if (count[o] == n)
                x.o = (enum outcome)o;
        if (x.o != MIXED)
            break;
    }
    x.tries -= x.tries > 1 + b->retries;
    return x;
}

/* Every row in one column. First each call once, untimed, on an idle GPU:
 * a kernel's first launch, a pool's first allocation stay out of the rows
 * (the lazy-loading row aside, which launches a new kernel every time). */
static void measure_column(bench *b, int col)
{
    b->c.a = b->s[col][0], b->c.b = b->s[col][1];
    for (int i = 0; i < call_count; i++)
        if (call_can_measure(&b->c, &calls[i], 1))
            idle_sample(b, &calls[i]);
    timeline_span_begin(column_name[col]);
    for (int i = 0; i < call_count; i++)
        b->cells[i][col] = measure_cell(b, &calls[i]);
    timeline_span_end();
}

/* ---- the report ------------------------------------------------------------ */

/* A cell as the table prints it: the outcome, then the call's host time
 * over K1's remaining time; "!" where CUDA documents another outcome. */
static const char *cell_text(char *buf, size_t size, const cell *x, enum outcome documented)
{
    if (!x->measured)
        snprintf(buf, size, "not measured");
    else
        snprintf(buf, size, "%s%-11s %6.2f/%5.2f", documented != UNDOCUMENTED &&
                 documented != x->o ? "!" : " ", outcome_name[x->o], x->call_ms, x->remaining_ms);
    return buf;
}

static void report_cell(report *r, const call_row *row, int col, const cell *x)
{
    char variant[96];
    snprintf(variant, sizeof variant, "%s | %s", row->call, column_name[col]);
    report_data(r, variant, "outcome", x->measured ? x->o : -1, "code");
    report_data(r, variant, "documented", row->documented[col] == UNDOCUMENTED ? -1
                 : row->documented[col], "code");
    report_data(r, variant, "call_ms", x->call_ms, "ms");
    report_data(r, variant, "idle_call_ms", x->idle_ms, "ms");
    report_data(r, variant, "k1_remaining_ms", x->remaining_ms, "ms");
    report_data(r, variant, "k2_start_after_k1_end_ms", x->gap_ms, "ms");
    report_data(r, variant, "tries", x->tries, "count");
}

static void report_catalogue(report *r, const bench *b)
{
    report_section(r, "The catalogue: K1 in A, the call, K2 in B");
    report_text(r, "  outcome, then the call's host time / K1's remaining time (ms); "
                "! marks an outcome CUDA documents otherwise\n");
    report_text(r, "  %-36s %-25s %-25s %-18s %s\n", "call", "non-blocking streams",
                "blocking streams", "documented", "PyTorch");
    for (int i = 0; i < call_count; i++) {
        char nb[48], bl[48];
        const call_row *row = &calls[i];
        report_text(r, "  %-36s %-25s %-25s %-18s %s\n", row->call,
                    cell_text(nb, sizeof nb, &b->cells[i][0], row->documented[0]),
                    cell_text(bl, sizeof bl, &b->cells[i][1], row->documented[1]),
                    row->source[0] ? row->source : "-", row->torch);
        for (int col = 0; col < COLUMNS; col++)
            report_cell(r, row, col, &b->cells[i][col]);
    }
}

/* CUDA's documented outcomes, each observed: none may differ. A row that
 * stayed mixed after its re-measurements counts as differing. */
static const verdict DOCUMENTED[COLUMNS] = {
    {"documented_nonblocking", 0, 0, "",
     "a call did not do what CUDA documents with non-blocking streams (rows marked !): another "
     "process using this GPU can delay K2 or a call; run again, and see nvidia-smi"},
    {"documented_blocking", 0, 0, "",
     "a call did not do what CUDA documents with blocking streams (rows marked !): if no legacy-"
     "stream call held K2 back, MPS or CUDA_LAUNCH_BLOCKING may change the streams' rules"}};

static void report_summary(lab_run *run, const bench *b)
{
    report *r = run->r;
    report_section(r, "What waited, on this driver");
    for (int col = 0; col < COLUMNS; col++) {
        int count[UNDOCUMENTED] = {0}, documented = 0, differ = 0, measured = 0;
        for (int i = 0; i < call_count; i++) {
            const cell *x = &b->cells[i][col];
            enum outcome want = calls[i].documented[col];
            measured += x->measured;
            count[x->o] += x->measured;
            documented += want != UNDOCUMENTED;
            differ += want != UNDOCUMENTED && (!x->measured || x->o != want);
        }
        report_value(r, column_name[col], "calls_host_waited", count[HOST_WAITED], "count");
        report_value(r, column_name[col], "calls_gpu_serialised", count[GPU_SERIALISED], "count");
        report_value(r, column_name[col], "calls_mixed", count[MIXED], "count");
        report_text(r, "  %s streams, CUDA driver %d.%d: of %d calls the host waited for K1 "
                    "in %d, the GPU held K2 back in %d more, %d mixed\n", column_name[col],
                    run->dev.driver_version / 1000, run->dev.driver_version % 1000 / 10,
                    measured, count[HOST_WAITED], count[GPU_SERIALISED], count[MIXED]);
        report_verdict(r, &DOCUMENTED[col], differ, "%d of the %d documented outcomes differed "
                       "with %s streams", differ, documented, column_name[col]);
    }
}

/* ---- setup: the run owns these, lab_end() releases them ------------------- */

static void bench_open(lab_run *run, bench *b)
{
    bench init = {.k1_ns = ns_from_ms(k1_ms), .k2_ns = ns_from_ms(k2_ms),
                  .reps = run->opt.reps, .retries = run->opt.retries};
    *b = init;
    if (call_count > MAX_CALLS)
        fail_wrong("%d calls, room for %d", call_count, MAX_CALLS);
    calls_open(run, &b->c, (size_t)size_kib * 1024 / sizeof(uint32_t));
    b->d_log = (launch_record *)lab_device(run, sizeof b->h_log);
    b->t = (double *)lab_pageable(run, 4 * b->reps * sizeof(double));
    const unsigned flags[COLUMNS] = {cudaStreamNonBlocking, cudaStreamDefault};
    for (int col = 0; col < COLUMNS; col++) {
        char name[32];
        snprintf(name, sizeof name, "%s A", column_name[col]);
        b->s[col][0] = lab_stream(run, name, flags[col], 0);
        snprintf(name, sizeof name, "%s B", column_name[col]);
        b->s[col][1] = lab_stream(run, name, flags[col], 0);
    }
    spin_and_log<<<1, 1>>>(0, 0, b->d_log); /* K1's and K2's kernel, loaded and warm */
    CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const char *loading = getenv("CUDA_MODULE_LOADING");
    report_section(run->r, "The setup");
    report_param(run->r, "k1_ms", k1_ms, "ms");
    report_param(run->r, "k2_ms", k2_ms, "ms");
    report_param(run->r, "size_kib", size_kib, "KiB");
    report_fact(run->r, "driver_version", run->dev.driver_version, "", "the outcomes CUDA does "
                "not document are this driver's");
    report_text(run->r, "  CUDA_MODULE_LOADING: %s (the first-launch row shows lazy loading)\n",
                loading ? loading : "not set: LAZY, the default");
    report_text(run->r, "  host waited: the call's time beyond its idle cost >= %.0f%% of K1's "
                "remaining time; GPU serial: K2 began after K1 ended\n", WAIT_FRACTION * 100);
}

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &program);
    static bench b; /* static: its table of cells is large for a stack */
    bench_open(&run, &b);
    for (int col = 0; col < COLUMNS; col++)
        measure_column(&b, col);
    report_catalogue(run.r, &b);
    report_summary(&run, &b);
    report_section(run.r, "Checks");
    report_tally(run.r, "kernels_logged", &b.records, "kernel records wrong (K1 and K2 each "
                 "ran once, for at least their time)");
    report_tally(run.r, "calls_delivered", &b.data, "words wrong (every copy's and memset's "
                 "data, every kernel and host function the calls launched)");
    return lab_end(&run);
}
