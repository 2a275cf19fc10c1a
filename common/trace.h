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
    uint32_t correlation;   /* CUPTI's id of the call that issued it (0: unknown; not
                               written to .tsv): orders a stream's work against an event */
} trace_record;

typedef struct {
    uint64_t start, end;
    char name[64];          /* the lab's variant: "serial", "pipelined" */
} trace_span;

typedef struct {
    uint32_t id;
    char name[48];          /* the lab's own name for the stream */
} trace_stream;

/* A GPU-side dependency: cudaStreamWaitEvent made stream `to` wait for an
 * event recorded in stream `from`. The arrow goes from a moment inside the
 * last operation `from` issued before the event (its last nanosecond) to one
 * inside the first operation `to` issued after the wait (its second). */
typedef struct {
    uint32_t from, to;      /* CUPTI's stream ids */
    uint64_t from_ns, to_ns;
} trace_flow;

typedef struct {
    trace_record *records;
    int n_records;
    trace_span *spans;
    int n_spans;
    trace_stream *streams;
    int n_streams;
    trace_flow *flows;
    int n_flows;
    uint64_t dropped;       /* records CUPTI could not keep: reported, never hidden */
} trace;

void trace_add_record(trace *t, const trace_record *r);
void trace_add_span(trace *t, uint64_t start, uint64_t end, const char *name);
void trace_add_stream(trace *t, uint32_t id, const char *name);
void trace_add_flow(trace *t, const trace_flow *f);
void trace_free(trace *t);

/* A size as people write it: "288 B", "1.69 KiB", "4 KiB", "256 MiB", "2 GiB". */
const char *trace_size_text(uint64_t bytes, char *buf, size_t size);

/* What a record is called in the Chrome trace: a copy or memset by its
 * direction and size ("H2D 4 KiB", "memset 1.69 KiB"), anything else by
 * its name. */
const char *trace_record_label(const trace_record *r, char *buf, size_t size);

/* The lab's name for a stream, or "unnamed id N". */
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
