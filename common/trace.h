/* A traced run as plain data, and the three ways to show it.
 *
 * The timeline module (timeline.h) fills a trace from CUPTI's activity
 * records; this file knows nothing of CUPTI or CUDA, so the writers are
 * tested on recorded traces (tests/fixtures/) on machines without a GPU.
 *
 *   trace_write_chrome  Chrome Trace Event JSON: open it in ui.perfetto.dev
 *                       or chrome://tracing; one track per stream
 *   trace_write_records the raw records as tab-separated lines (for tests
 *                       and your own scripts); trace_read_records reads them
 *   trace_draw_text     the timeline in the terminal, one row per stream and
 *                       engine, with the overlap of each labelled span */
#ifndef STREAMLAB_TRACE_H
#define STREAMLAB_TRACE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum trace_kind { TRACE_KERNEL, TRACE_H2D, TRACE_D2H, TRACE_COPY, TRACE_MEMSET, TRACE_SYNC };

typedef struct {
    enum trace_kind kind;
    uint32_t stream;        /* CUPTI's stream id; 0 for host-wide synchronisations */
    uint64_t start, end;    /* ns since the traced region began */
    uint64_t bytes;         /* copies and memsets */
    char name[64];          /* kernel name, or what the operation was */
    char detail[64];        /* "pinned -> device", "grid 132x1x1 block 256x1x1" */
} trace_record;

typedef struct {
    uint64_t start, end;
    char name[64];          /* the lab's variant: "serial", "pipelined" */
} trace_span;

typedef struct {
    uint32_t id;
    char name[48];          /* the lab's own name for the stream */
} trace_stream;

typedef struct {
    trace_record *records;
    int n_records;
    trace_span *spans;
    int n_spans;
    trace_stream *streams;
    int n_streams;
    uint64_t dropped;       /* records CUPTI could not keep: reported, never hidden */
} trace;

void trace_add_record(trace *t, const trace_record *r);
void trace_add_span(trace *t, uint64_t start, uint64_t end, const char *name);
void trace_add_stream(trace *t, uint32_t id, const char *name);
void trace_free(trace *t);

/* The lab's name for a stream, or "stream N". */
const char *trace_stream_name(const trace *t, uint32_t id, char *buf, size_t size);

/* Fraction of [start, end) during which two or more kernels, copies or
 * memsets were in flight at once, over the time at least one was: 0 means
 * everything ran one after another, 1 that nothing ever ran alone. */
double trace_overlap(const trace *t, uint64_t start, uint64_t end);

/* Each returns 0, or -1 with errno set when writing failed. */
int trace_write_chrome(const trace *t, const char *program, FILE *out);
int trace_write_records(const trace *t, FILE *out);
/* Reads what trace_write_records wrote; returns 0, or -1 on a malformed line
 * (*bad_line gets its number). */
int trace_read_records(trace *t, FILE *in, int *bad_line);

/* Draws the trace `width` columns wide. */
void trace_draw_text(const trace *t, int width, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
