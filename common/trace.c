/* A traced run and its writers; see trace.h. */
#define _GNU_SOURCE
#include "trace.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *items, int n, size_t size)
{
    void *p = realloc(items, (size_t)(n + 1) * size);
    if (!p) {
        fprintf(stderr, "out of host memory recording the trace\n");
        exit(3);
    }
    return p;
}

void trace_add_record(trace *t, const trace_record *r)
{
    t->records = grow(t->records, t->n_records, sizeof *r);
    t->records[t->n_records++] = *r;
}

void trace_add_span(trace *t, uint64_t start, uint64_t end, const char *name)
{
    t->spans = grow(t->spans, t->n_spans, sizeof *t->spans);
    trace_span *s = &t->spans[t->n_spans++];
    s->start = start;
    s->end = end;
    snprintf(s->name, sizeof s->name, "%s", name);
}

void trace_add_stream(trace *t, uint32_t id, const char *name)
{
    for (int i = 0; i < t->n_streams; i++)
        if (t->streams[i].id == id) { /* a stream renamed keeps its last name */
            snprintf(t->streams[i].name, sizeof t->streams[i].name, "%s", name);
            return;
        }
    t->streams = grow(t->streams, t->n_streams, sizeof *t->streams);
    trace_stream *s = &t->streams[t->n_streams++];
    s->id = id;
    snprintf(s->name, sizeof s->name, "%s", name);
}

void trace_add_flow(trace *t, const trace_flow *f)
{
    t->flows = grow(t->flows, t->n_flows, sizeof *f);
    t->flows[t->n_flows++] = *f;
}

void trace_free(trace *t)
{
    free(t->records);
    free(t->spans);
    free(t->streams);
    free(t->flows);
    memset(t, 0, sizeof *t);
}

const char *trace_size_text(uint64_t bytes, char *buf, size_t size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    for (; v >= 1024 && u < 4; u++)
        v /= 1024;
    /* three significant digits and never an exponent: 1.69 KiB, 16.5 MiB, 256 MiB */
    snprintf(buf, size, u == 0 || v >= 100 ? "%.0f %s" : "%.3g %s", v, units[u]);
    return buf;
}

const char *trace_record_label(const trace_record *r, char *buf, size_t size)
{
    /* by kind: kernel, h2d, d2h, copy, memset, sync */
    static const char *what[] = {NULL, "H2D", "D2H", "copy", "memset", NULL};
    char bytes[32];
    if (!what[r->kind])
        return r->name;
    snprintf(buf, size, "%s %s", what[r->kind], trace_size_text(r->bytes, bytes, sizeof bytes));
    return buf;
}

const char *trace_stream_name(const trace *t, uint32_t id, char *buf, size_t size)
{
    for (int i = 0; i < t->n_streams; i++)
        if (t->streams[i].id == id)
            return t->streams[i].name;
    /* CUPTI's own id: an unnamed stream, such as the legacy stream 0 */
    snprintf(buf, size, "unnamed id %" PRIu32, id);
    return buf;
}

/* ---- overlap: a sweep over start and end points ------------------------------ */

typedef struct {
    uint64_t at;
    int delta; /* +1 an operation starts, -1 one ends */
} edge;

static int compare_edges(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->delta - y->delta; /* ends before starts: touching is not overlapping */
}

double trace_overlap(const trace *t, uint64_t start, uint64_t end)
{
    edge *edges = malloc((size_t)(2 * t->n_records + 1) * sizeof *edges);
    int n = 0;
    if (!edges)
        return 0;
    for (int i = 0; i < t->n_records; i++) {
        const trace_record *r = &t->records[i];
        uint64_t s = r->start > start ? r->start : start;
        uint64_t e = r->end < end ? r->end : end;
        if (r->kind == TRACE_SYNC || s >= e) /* host waits are not GPU work */
            continue;
        edges[n++] = (edge){s, +1};
        edges[n++] = (edge){e, -1};
    }
    qsort(edges, (size_t)n, sizeof *edges, compare_edges);
    uint64_t busy = 0, overlapped = 0;
    int in_flight = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && in_flight >= 1)
            busy += edges[i].at - edges[i - 1].at;
        if (i > 0 && in_flight >= 2)
            overlapped += edges[i].at - edges[i - 1].at;
        in_flight += edges[i].delta;
    }
    free(edges);
    return busy ? (double)overlapped / busy : 0;
}

/* ---- Chrome Trace Event JSON -------------------------------------------------- */

/* Track ids: 0 holds the lab's variants, a stream's track is its id + 1,
 * and host waits get their own track at the bottom. */
enum { TRACK_VARIANTS = 0, TRACK_HOST = 0x7fffffff };

static const char *kind_category(enum trace_kind k)
{
    static const char *names[] = {"kernel", "h2d", "d2h", "copy", "memset", "sync"};
    return names[k];
}

static void chrome_track_name(FILE *out, long track, const char *name, int order)
{
    fprintf(out, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%ld,\"name\":\"thread_name\",\"args\":{\"name\":",
            track);
    json_write_string(out, name);
    fprintf(out, "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%ld,\"name\":\"thread_sort_index\","
                 "\"args\":{\"sort_index\":%d}}", track, order);
}

static void chrome_event(FILE *out, long track, const char *name, const char *category,
                         uint64_t start, uint64_t end)
{
    fprintf(out, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%ld,\"name\":", track);
    json_write_string(out, name);
    fprintf(out, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f", category, start / 1e3,
            (end - start) / 1e3);
}

int trace_write_chrome(const trace *t, const char *program, FILE *out)
{
    char buf[48], label[64], size[32];
    fprintf(out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"program\":");
    json_write_string(out, program);
    fprintf(out, ",\"dropped_records\":%" PRIu64 "},\n\"traceEvents\":[\n", t->dropped);
    fprintf(out, "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":");
    json_write_string(out, program);
    fprintf(out, "}}");
    chrome_track_name(out, TRACK_VARIANTS, "variants", 0);
    chrome_track_name(out, TRACK_HOST, "host waits", 1 << 30);
    for (int i = 0; i < t->n_streams; i++)
        chrome_track_name(out, (long)t->streams[i].id + 1, t->streams[i].name, i + 1);
    for (int i = 0; i < t->n_records; i++) { /* streams the lab did not name */
        const trace_record *r = &t->records[i];
        int named = r->kind == TRACE_SYNC;
        for (int j = 0; j < t->n_streams && !named; j++)
            named = t->streams[j].id == r->stream;
        for (int j = 0; j < i && !named; j++)
            named = t->records[j].kind != TRACE_SYNC && t->records[j].stream == r->stream;
        if (!named)
            chrome_track_name(out, (long)r->stream + 1, trace_stream_name(t, r->stream, buf, sizeof buf),
                              1000 + (int)r->stream);
    }
    for (int i = 0; i < t->n_spans; i++) {
        chrome_event(out, TRACK_VARIANTS, t->spans[i].name, "variant", t->spans[i].start,
                     t->spans[i].end);
        fprintf(out, "}");
    }
    for (int i = 0; i < t->n_records; i++) {
        const trace_record *r = &t->records[i];
        long track = r->kind == TRACE_SYNC ? TRACK_HOST : (long)r->stream + 1;
        chrome_event(out, track, trace_record_label(r, label, sizeof label),
                     kind_category(r->kind), r->start, r->end);
        fprintf(out, ",\"args\":{\"stream\":");
        json_write_string(out, trace_stream_name(t, r->stream, buf, sizeof buf));
        if (r->bytes)
            fprintf(out, ",\"bytes\":%" PRIu64 ",\"size\":\"%s\"", r->bytes,
                    trace_size_text(r->bytes, size, sizeof size));
        if (r->kind == TRACE_H2D || r->kind == TRACE_D2H || r->kind == TRACE_COPY)
            fprintf(out, ",\"direction\":\"%s\"",
                    r->kind == TRACE_H2D ? "H2D" : r->kind == TRACE_D2H ? "D2H" : "other");
        fprintf(out, ",\"detail\":");
        json_write_string(out, r->detail);
        fprintf(out, "}}");
    }
    /* Each GPU wait as a flow arrow between the two streams' tracks: "s" binds
     * to the slice enclosing it, "f" with "bp":"e" too (without it, to the
     * next slice to begin), so both lie strictly inside their operations. */
    for (int i = 0; i < t->n_flows; i++) {
        const trace_flow *f = &t->flows[i];
        const char *phase[] = {"\"s\"", "\"f\",\"bp\":\"e\""};
        const long tracks[] = {(long)f->from + 1, (long)f->to + 1};
        const uint64_t at[] = {f->from_ns, f->to_ns};
        for (int k = 0; k < 2; k++)
            fprintf(out, ",\n{\"ph\":%s,\"id\":%d,\"pid\":1,\"tid\":%ld,\"ts\":%.3f,"
                         "\"cat\":\"wait\",\"name\":\"the GPU waits for an event "
                         "(cudaStreamWaitEvent)\"}", phase[k], i + 1, tracks[k], at[k] / 1e3);
    }
    fprintf(out, "\n]}\n");
    return ferror(out) ? -1 : 0;
}

/* ---- raw records: tab-separated, one line each ---------------------------------- */

int trace_write_records(const trace *t, FILE *out)
{
    fprintf(out, "# streamlab trace records v1\n");
    fprintf(out, "dropped\t%" PRIu64 "\n", t->dropped);
    for (int i = 0; i < t->n_streams; i++)
        fprintf(out, "stream\t%" PRIu32 "\t%s\n", t->streams[i].id, t->streams[i].name);
    for (int i = 0; i < t->n_spans; i++)
        fprintf(out, "span\t%" PRIu64 "\t%" PRIu64 "\t%s\n", t->spans[i].start, t->spans[i].end,
                t->spans[i].name);
    for (int i = 0; i < t->n_flows; i++)
        fprintf(out, "flow\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64 "\n", t->flows[i].from,
                t->flows[i].from_ns, t->flows[i].to, t->flows[i].to_ns);
    for (int i = 0; i < t->n_records; i++) {
        const trace_record *r = &t->records[i];
        fprintf(out, "record\t%s\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n",
                kind_category(r->kind), r->stream, r->start, r->end, r->bytes, r->name, r->detail);
    }
    return ferror(out) ? -1 : 0;
}

/* Splits line at tabs into fields; returns the count, or max + 1 when
 * there are more than max (a malformed line). */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    char *f;
    line[strcspn(line, "\n")] = '\0';
    while (n < max && (f = strsep(&line, "\t")) != NULL)
        fields[n++] = f;
    return line ? max + 1 : n;
}

static int parse_kind(const char *s, enum trace_kind *k)
{
    for (int i = TRACE_KERNEL; i <= TRACE_SYNC; i++)
        if (strcmp(s, kind_category((enum trace_kind)i)) == 0) {
            *k = (enum trace_kind)i;
            return 0;
        }
    return -1;
}

int trace_read_records(trace *t, FILE *in, int *bad_line)
{
    char line[512], *f[8];
    int number = 0;
    memset(t, 0, sizeof *t);
    while (fgets(line, sizeof line, in)) {
        number++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        int n = split_tabs(line, f, 8);
        trace_record r;
        memset(&r, 0, sizeof r);
        if (n == 2 && strcmp(f[0], "dropped") == 0) {
            t->dropped = strtoull(f[1], NULL, 10);
        } else if (n == 3 && strcmp(f[0], "stream") == 0) {
            trace_add_stream(t, (uint32_t)strtoul(f[1], NULL, 10), f[2]);
        } else if (n == 5 && strcmp(f[0], "flow") == 0) {
            trace_flow fl = {(uint32_t)strtoul(f[1], NULL, 10), (uint32_t)strtoul(f[3], NULL, 10),
                             strtoull(f[2], NULL, 10), strtoull(f[4], NULL, 10)};
            trace_add_flow(t, &fl);
        } else if (n == 4 && strcmp(f[0], "span") == 0) {
            trace_add_span(t, strtoull(f[1], NULL, 10), strtoull(f[2], NULL, 10), f[3]);
        } else if (n == 8 && strcmp(f[0], "record") == 0 && parse_kind(f[1], &r.kind) == 0) {
            r.stream = (uint32_t)strtoul(f[2], NULL, 10);
            r.start = strtoull(f[3], NULL, 10);
            r.end = strtoull(f[4], NULL, 10);
            r.bytes = strtoull(f[5], NULL, 10);
            snprintf(r.name, sizeof r.name, "%s", f[6]);
            snprintf(r.detail, sizeof r.detail, "%s", f[7]);
            if (r.end < r.start)
                goto bad;
            trace_add_record(t, &r);
        } else {
            goto bad;
        }
    }
    return 0;
bad:
    *bad_line = number;
    trace_free(t);
    errno = EINVAL;
    return -1;
}

/* ---- the text timeline --------------------------------------------------------- */

/* The rows: for each stream, one per engine class it used; then host waits. */
enum row_class { ROW_H2D, ROW_KERNEL, ROW_D2H, ROW_COPY, N_CLASSES };
static const char row_char[] = {'H', 'K', 'D', 'C'};
static const char *row_label[] = {"H2D", "kernel", "D2H", "copy"};

static enum row_class class_of(enum trace_kind k)
{
    switch (k) {
    case TRACE_H2D: return ROW_H2D;
    case TRACE_D2H: return ROW_D2H;
    case TRACE_COPY: return ROW_COPY;
    default: return ROW_KERNEL; /* kernels and memsets: both run on the SMs' side */
    }
}

/* Marks the columns [start, end) covers, counted from origin; an operation
 * shorter than a column still marks one. */
static void mark(char *cells, int width, uint64_t start, uint64_t end, uint64_t origin,
                 double ns_per_col, char c)
{
    start = start > origin ? start - origin : 0;
    end = end > origin ? end - origin : 0;
    int a = (int)(start / ns_per_col);
    int b = end > start ? (int)((end - 1) / ns_per_col) : a;
    for (int i = a; i <= b && i < width; i++)
        cells[i] = c;
}

/* Streams in the order the lab named them, then any others by first use. */
static int stream_order(const trace *t, uint32_t *ids)
{
    int n = 0;
    for (int i = 0; i < t->n_streams; i++)
        ids[n++] = t->streams[i].id;
    for (int i = 0; i < t->n_records; i++) {
        int seen = t->records[i].kind == TRACE_SYNC;
        for (int j = 0; j < n && !seen; j++)
            seen = ids[j] == t->records[i].stream;
        if (!seen)
            ids[n++] = t->records[i].stream;
    }
    return n;
}

void trace_draw_text(const trace *t, int width, FILE *out)
{
    const int label = 30; /* "legacy default stream kernel" fits */
    int cols = width - label - 2;
    uint64_t origin = UINT64_MAX, end = 0;
    char buf[48];
    /* The drawing starts at the first span or GPU operation: the host's
     * set-up before it (allocating, filling inputs) would only be blank. */
    for (int i = 0; i < t->n_records; i++)
        if (t->records[i].kind != TRACE_SYNC) {
            origin = t->records[i].start < origin ? t->records[i].start : origin;
            end = t->records[i].end > end ? t->records[i].end : end;
        }
    for (int i = 0; i < t->n_spans; i++) {
        origin = t->spans[i].start < origin ? t->spans[i].start : origin;
        end = t->spans[i].end > end ? t->spans[i].end : end;
    }
    if (cols < 20 || end <= origin) {
        fprintf(out, "timeline: nothing was recorded\n");
        return;
    }
    double ns_per_col = (double)(end - origin) / cols;
    char *cells = malloc((size_t)cols + 1);
    uint32_t *ids = malloc((size_t)(t->n_streams + t->n_records + 1) * sizeof *ids);
    if (!cells || !ids)
        exit(3);

    fprintf(out, "\ntimeline: %.2f ms from the first GPU operation, one column = %.3f ms\n",
            (end - origin) / 1e6, ns_per_col / 1e6);
    fprintf(out, "legend: H host-to-device copy, K kernel or memset, D device-to-host copy, "
                 "C other copy, S host waiting on the GPU, | a variant begins\n");
    memset(cells, ' ', (size_t)cols);
    for (int i = 0; i < t->n_spans; i++) { /* every start first, then names between them */
        int at = (int)((t->spans[i].start - origin) / ns_per_col);
        if (at < cols)
            cells[at] = '|';
    }
    for (int i = 0; i < t->n_spans; i++) {
        int at = (int)((t->spans[i].start - origin) / ns_per_col);
        for (int k = 0; t->spans[i].name[k] && at + 1 + k < cols && cells[at + 1 + k] == ' '; k++)
            cells[at + 1 + k] = t->spans[i].name[k];
    }
    cells[cols] = '\0';
    fprintf(out, "%-*s  %s\n", label, "variants", cells);

    int n_ids = stream_order(t, ids);
    for (int s = 0; s < n_ids; s++)
        for (int c = 0; c < N_CLASSES; c++) {
            int used = 0;
            memset(cells, ' ', (size_t)cols);
            for (int i = 0; i < t->n_records; i++) {
                const trace_record *r = &t->records[i];
                if (r->kind == TRACE_SYNC || r->stream != ids[s] || class_of(r->kind) != (enum row_class)c)
                    continue;
                mark(cells, cols, r->start, r->end, origin, ns_per_col, row_char[c]);
                used = 1;
            }
            if (!used)
                continue;
            char name[64];
            snprintf(name, sizeof name, "%.23s %s", trace_stream_name(t, ids[s], buf, sizeof buf),
                     row_label[c]);
            fprintf(out, "%-*s  %s\n", label, name, cells);
        }
    int waits = 0;
    memset(cells, ' ', (size_t)cols);
    for (int i = 0; i < t->n_records; i++)
        if (t->records[i].kind == TRACE_SYNC && t->records[i].end > origin) {
            mark(cells, cols, t->records[i].start, t->records[i].end, origin, ns_per_col, 'S');
            waits = 1;
        }
    if (waits)
        fprintf(out, "%-*s  %s\n", label, "host waits", cells);
    if (t->n_flows) /* too short to draw: a count, and where to see them */
        fprintf(out, "GPU waits: %d time%s a stream waited on the GPU for another's event "
                "(cudaStreamWaitEvent); a --trace .json draws each as an arrow\n", t->n_flows,
                t->n_flows == 1 ? "" : "s");

    if (t->n_spans)
        fprintf(out, "overlap (share of GPU-busy time with 2+ operations in flight):");
    for (int i = 0; i < t->n_spans; i++)
        fprintf(out, "%s %s %.0f%%", i ? "," : "", t->spans[i].name,
                100 * trace_overlap(t, t->spans[i].start, t->spans[i].end));
    if (t->n_spans)
        fputc('\n', out);
    if (t->dropped)
        fprintf(out, "warning: CUPTI dropped %" PRIu64 " records: the timeline is incomplete\n",
                t->dropped);
    free(ids);
    free(cells);
}
