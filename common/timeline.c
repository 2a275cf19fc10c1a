/* The timeline: CUPTI activity records into a trace; see timeline.h.
 *
 * Built with CUPTI when the Makefile finds it (STREAMLAB_CUPTI); without it
 * the same calls exist and --trace says plainly that this build cannot. */
#define _GNU_SOURCE
#include "timeline.h"
#include "check.h"
#include "trace.h"

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>

static int active;
static trace recorded;

/* The trace is written as FILE.partial and renamed when complete: an
 * interrupted run never leaves a half-written trace under the name asked
 * for. Should the run be stopped (Ctrl-C, kill) while that file exists, it
 * is removed on the way out. */
static char *trace_partial;

static void remove_partial_then_stop(int sig)
{
    unlink(trace_partial); /* async-signal-safe; fails harmlessly if not there */
    raise(sig);            /* SA_RESETHAND: now with the default action, ending the program */
}

/* A signal the caller chose to ignore (nohup, a background job) stays ignored. */
static void clean_up_when_interrupted(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction now, sa;
        if (sigaction(signals[i], NULL, &now) != 0 || now.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_partial_then_stop;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
}

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n > m && strcmp(s + n - m, end) == 0;
}

/* The file is written under its temporary name, so the check uses that name too. */
void timeline_prepare(const common_options *opt)
{
    const char *path = opt->trace;
    struct stat st;
    if (!path)
        return;
    if (!ends_with(path, ".json") && !ends_with(path, ".tsv"))
        fail_usage("--trace FILE must end in .json (Chrome trace) or .tsv (raw records), "
                   "got '%s'", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        fail_usage("--trace %s is a folder: name a file in it, e.g. %s/trace.json", path, path);
    trace_partial = xmalloc(strlen(path) + sizeof ".partial");
    sprintf(trace_partial, "%s.partial", path);
    FILE *f = fopen(trace_partial, "w");
    if (!f)
        fail_usage("--trace %s cannot be written: %s", path, strerror(errno));
    fclose(f);
    remove(trace_partial);
    clean_up_when_interrupted();
}

static void name_stream_for_profilers(cudaStream_t stream, const char *name)
{
    nvtxNameCudaStreamA(stream, name); /* what Nsight Systems shows */
}

#ifdef STREAMLAB_CUPTI
#include <cupti.h>
#include <pthread.h>

static uint64_t time_zero;       /* cuptiGetTimestamp() when recording began */
static uint64_t span_start;
static char span_name[64];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* CUPTI calls back from its own thread */

static void cupti_check(CUptiResult res, const char *call)
{
    if (res == CUPTI_SUCCESS)
        return;
    const char *text = "unknown";
    cuptiGetResultString(res, &text);
    fail_cannot_run("tracing failed: %s: %s", call, text);
}

static uint64_t since_zero(uint64_t t) { return t > time_zero ? t - time_zero : 0; }

/* The legacy default stream has no handle to name (cudaStreamLegacy is a
 * constant, not a stream of the context), so its id comes from the
 * context's own record (nullStreamId), which CUPTI dumps on request. */
static const char LEGACY_STREAM[] = "legacy default stream";

/* cudaEventRecord and cudaStreamWaitEvent as CUPTI saw them: which stream,
 * which event, and the call's correlation id, which grows with every call
 * the program makes, so it orders a stream's work around the event. Tied
 * into the trace's flows once every record is in (add_flows). */
typedef struct {
    uint32_t stream, event, correlation;
    uint64_t sync_id; /* CUPTI's id tying a wait to the event's latest record */
} event_call;
static event_call *event_records, *event_waits;
static int n_event_records, n_event_waits;

static void add_event_call(event_call **calls, int *n, const event_call *c)
{
    event_call *grown = realloc(*calls, (size_t)(*n + 1) * sizeof **calls);
    if (!grown)
        fail_cannot_run("out of host memory recording the trace");
    *calls = grown;
    grown[(*n)++] = *c;
}

static int known_sync_id(uint64_t id)
{
    return id != 0 && id != CUPTI_SYNCHRONIZATION_INVALID_VALUE && id != UINT64_MAX;
}

/* CUPTI reports kernel names mangled: "_Z11spin_for_nsm" is spin_for_ns. */
static void plain_kernel_name(const char *mangled, char *out, size_t size)
{
    const char *p = mangled;
    if (p && p[0] == '_' && p[1] == 'Z') {
        char *end;
        long len = strtol(p + 2, &end, 10);
        if (len > 0 && (size_t)len < size && (long)strlen(end) >= len) {
            snprintf(out, size, "%.*s", (int)len, end);
            return;
        }
    }
    snprintf(out, size, "%s", p ? p : "kernel");
}

static const char *memory_kind(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "managed";
    default: return "other";
    }
}

static const char *sync_kind(CUpti_ActivitySynchronizationType type)
{
    switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "cudaEventSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "cudaStreamSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "cudaDeviceSynchronize";
    default: return "synchronize";
    }
}

/* One CUPTI record into the trace's plain form. */
static void convert(const CUpti_Activity *a)
{
    char label[64];
    trace_record r;
    memset(&r, 0, sizeof r);
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        r.kind = TRACE_KERNEL;
        r.stream = k->streamId;
        r.correlation = k->correlationId;
        r.start = since_zero(k->start);
        r.end = since_zero(k->end);
        plain_kernel_name(k->name, r.name, sizeof r.name);
        snprintf(r.detail, sizeof r.detail, "grid %dx%dx%d block %dx%dx%d", k->gridX, k->gridY,
                 k->gridZ, k->blockX, k->blockY, k->blockZ);
    } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        r.kind = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? TRACE_H2D
                 : m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? TRACE_D2H
                                                                   : TRACE_COPY;
        r.stream = m->streamId;
        r.correlation = m->correlationId;
        r.start = since_zero(m->start);
        r.end = since_zero(m->end);
        r.bytes = m->bytes;
        snprintf(r.name, sizeof r.name, "%s", trace_record_label(&r, label, sizeof label));
        snprintf(r.detail, sizeof r.detail, "%s -> %s", memory_kind(m->srcKind),
                 memory_kind(m->dstKind));
    } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        r.kind = TRACE_MEMSET;
        r.stream = m->streamId;
        r.correlation = m->correlationId;
        r.start = since_zero(m->start);
        r.end = since_zero(m->end);
        r.bytes = m->bytes;
        snprintf(r.name, sizeof r.name, "%s", trace_record_label(&r, label, sizeof label));
        snprintf(r.detail, sizeof r.detail, "value %u", m->value);
    } else if (a->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) {
        const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)a;
        /* cudaStreamWaitEvent makes a stream wait, on the GPU; the host only
         * issues it and goes on: not a host wait, so not on that track, but
         * an arrow between the two streams (add_flows). */
        if (s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
            event_call c = {s->streamId, s->cudaEventId, s->correlationId, s->cudaEventSyncId};
            add_event_call(&event_waits, &n_event_waits, &c);
            return;
        }
        r.kind = TRACE_SYNC;
        r.stream = s->streamId == (uint32_t)CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
        r.start = since_zero(s->start);
        r.end = since_zero(s->end);
        snprintf(r.name, sizeof r.name, "%s", sync_kind(s->type));
        snprintf(r.detail, sizeof r.detail, "the host waits");
    } else if (a->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
        const CUpti_ActivityCudaEvent2 *e = (const CUpti_ActivityCudaEvent2 *)a;
        event_call c = {e->streamId, e->eventId, e->correlationId, e->cudaEventSyncId};
        add_event_call(&event_records, &n_event_records, &c);
        return;
    } else if (a->kind == CUPTI_ACTIVITY_KIND_CONTEXT) {
        uint32_t id = ((const CUpti_ActivityContext3 *)a)->nullStreamId;
        if (trace_stream_name(&recorded, id, label, sizeof label) == label) /* a lab's name wins */
            trace_add_stream(&recorded, id, LEGACY_STREAM);
        return;
    } else {
        return;
    }
    trace_add_record(&recorded, &r);
}

enum { BUFFER_BYTES = 8 << 20, BUFFER_ALIGN = 8 };

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    CUpti_Activity *record = NULL;
    size_t dropped = 0;
    pthread_mutex_lock(&lock);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        convert(record);
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        recorded.dropped += dropped;
    pthread_mutex_unlock(&lock);
    free(buffer);
    (void)size;
}

/* Kernels of the CONCURRENT_KERNEL kind: the plain KERNEL kind would make
 * CUPTI serialise every kernel, destroying the very overlap we want to see. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };
/* What names the legacy stream and ties waits to events: a CUPTI that
 * refuses them leaves those out of the trace, nothing else. CONTEXT is
 * enabled "and dumped": the context exists before recording begins. */
static const CUpti_ActivityKind extra_kinds[] = {CUPTI_ACTIVITY_KIND_CONTEXT,
                                                 CUPTI_ACTIVITY_KIND_CUDA_EVENT};
enum { N_EXTRA_KINDS = sizeof extra_kinds / sizeof extra_kinds[0] };

void timeline_start(const common_options *opt)
{
    if (!opt->trace && !opt->timeline)
        return;
    cupti_check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                "cuptiActivityRegisterCallbacks");
    for (int i = 0; i < N_KINDS; i++)
        cupti_check(cuptiActivityEnable(kinds[i]), "cuptiActivityEnable");
    for (int i = 0; i < N_EXTRA_KINDS; i++)
        cuptiActivityEnableAndDump(extra_kinds[i]);
    cupti_check(cuptiGetTimestamp(&time_zero), "cuptiGetTimestamp");
    active = 1;
}

void timeline_name_stream(cudaStream_t stream, const char *name)
{
    uint32_t id;
    name_stream_for_profilers(stream, name);
    if (active && cuptiGetStreamIdEx(NULL, (CUstream)stream, 0, &id) == CUPTI_SUCCESS)
        trace_add_stream(&recorded, id, name);
}

void timeline_span_begin(const char *name)
{
    nvtxRangePushA(name);
    if (!active)
        return;
    CUDA_CHECK(cudaDeviceSynchronize()); /* the span holds only its own work */
    cuptiGetTimestamp(&span_start);
    snprintf(span_name, sizeof span_name, "%s", name);
}

void timeline_span_end(void)
{
    nvtxRangePop();
    if (!active)
        return;
    uint64_t now;
    CUDA_CHECK(cudaDeviceSynchronize());
    cuptiGetTimestamp(&now);
    pthread_mutex_lock(&lock);
    trace_add_span(&recorded, since_zero(span_start), since_zero(now), span_name);
    pthread_mutex_unlock(&lock);
}

/* The operation `stream` was given last before the call `correlation`, or
 * with `after`, first after it; NULL when there is none. */
static const trace_record *issued_beside(uint32_t stream, uint32_t correlation, int after)
{
    const trace_record *best = NULL;
    for (int i = 0; i < recorded.n_records; i++) {
        const trace_record *r = &recorded.records[i];
        if (r->kind == TRACE_SYNC || r->stream != stream || !r->correlation)
            continue;
        if (after ? r->correlation > correlation && (!best || r->correlation < best->correlation)
                  : r->correlation < correlation && (!best || r->correlation > best->correlation))
            best = r;
    }
    return best;
}

/* The cudaEventRecord a wait waited for: the one CUPTI ties to it, else the
 * event's latest record issued before the wait (what CUDA waits for). */
static const event_call *recorded_for(const event_call *wait)
{
    const event_call *best = NULL;
    for (int i = 0; i < n_event_records; i++) {
        const event_call *e = &event_records[i];
        if (known_sync_id(wait->sync_id) ? e->sync_id == wait->sync_id
                                         : e->event == wait->event &&
                                               e->correlation < wait->correlation &&
                                               (!best || e->correlation > best->correlation))
            best = e;
    }
    return best;
}

/* Each wait between two streams, as an arrow from the work the event marks
 * to the work that waited for it. A wait with nothing on either side (an
 * event recorded in an empty stream, a wait nothing followed) has no arrow. */
static void add_flows(void)
{
    for (int i = 0; i < n_event_waits; i++) {
        const event_call *w = &event_waits[i], *e = recorded_for(w);
        const trace_record *from = e && e->stream != w->stream
                                       ? issued_beside(e->stream, e->correlation, 0) : NULL;
        const trace_record *to = from ? issued_beside(w->stream, w->correlation, 1) : NULL;
        if (!to)
            continue;
        trace_flow f = {e->stream, w->stream, from->end > from->start ? from->end - 1 : from->start,
                        to->start + 1 < to->end ? to->start + 1 : to->start};
        trace_add_flow(&recorded, &f);
    }
    free(event_records);
    free(event_waits);
    event_records = event_waits = NULL;
    n_event_records = n_event_waits = 0;
}

static void stop_recording(void)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    cupti_check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
    for (int i = 0; i < N_KINDS; i++)
        cuptiActivityDisable(kinds[i]);
    for (int i = 0; i < N_EXTRA_KINDS; i++)
        cuptiActivityDisable(extra_kinds[i]);
    add_flows();
    active = 0;
}
#else /* no CUPTI in this build */

void timeline_start(const common_options *opt)
{
    if (opt->trace || opt->timeline)
        fail_cannot_run("this build has no CUPTI, so --trace and --timeline are unavailable: "
                        "install the CUDA toolkit's CUPTI and rebuild (make clean && make)");
}

void timeline_name_stream(cudaStream_t stream, const char *name)
{
    name_stream_for_profilers(stream, name);
}

void timeline_span_begin(const char *name) { nvtxRangePushA(name); }
void timeline_span_end(void) { nvtxRangePop(); }
static void stop_recording(void) {}
#endif

int timeline_active(void) { return active; }

void timeline_traced_run(const char *span, timed_k_fn fn, void *ctx)
{
    double dropped[8];
    if (!active)
        return;
    timeline_span_begin(span);
    fn(ctx, dropped);
    timeline_span_end();
}

static int terminal_width(void)
{
    struct winsize ws;
    const char *columns = getenv("COLUMNS");
    int w = 120;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    else if (columns && atoi(columns) > 0)
        w = atoi(columns);
    return w < 60 ? 60 : w > 400 ? 400 : w;
}

/* Under the temporary name timeline_prepare() checked, then renamed. */
static void write_trace(const char *path)
{
    FILE *f = fopen(trace_partial, "w");
    if (!f)
        fail_usage("--trace %s cannot be written", path);
    int failed = ends_with(path, ".json") ? trace_write_chrome(&recorded, program_name, f)
                                          : trace_write_records(&recorded, f);
    if (fclose(f) != 0 || failed || rename(trace_partial, path) != 0) {
        remove(trace_partial);
        fail_cannot_run("writing the trace %s failed", path);
    }
}

void timeline_finish(report *r, const common_options *opt)
{
    if (!active)
        return;
    stop_recording();
    for (int i = 0; i < recorded.n_spans; i++) {
        const trace_span *s = &recorded.spans[i];
        report_value(r, s->name, "trace_overlap", 100 * trace_overlap(&recorded, s->start, s->end),
                     "%");
    }
    report_value(r, "trace", "dropped_records", (double)recorded.dropped, "count");
    if (opt->trace)
        write_trace(opt->trace);
    if (opt->timeline)
        trace_draw_text(&recorded, terminal_width(), opt->csv || opt->json ? stderr : stdout);
    trace_free(&recorded);
}
