/* The timeline: what the GPU did, per stream, recorded by CUPTI.
 *
 * --trace FILE.json writes Chrome Trace Event JSON (open it in
 * ui.perfetto.dev or chrome://tracing); --trace FILE.tsv writes the raw
 * records; --timeline draws the run in the terminal. Without either option
 * every call here is a no-op apart from the NVTX names, which cost nothing
 * unless a profiler such as Nsight Systems is attached: timings are
 * unchanged.
 *
 * lab_begin() and lab_end() (lab.h) prepare, start and finish it; a lab
 * names its streams and brackets each variant:
 *     timeline_name_stream(s, "copy A");
 *     timeline_span_begin("serial");  ...work...  timeline_span_end();
 */
#ifndef STREAMLAB_TIMELINE_H
#define STREAMLAB_TIMELINE_H

#include <cuda_runtime_api.h>
#include "options.h"
#include "report.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* With --trace FILE: checks now, before any GPU work, that FILE can be
 * written (exits EXIT_USAGE naming it when not), and makes sure that a run
 * stopped by Ctrl-C or kill leaves no half-written file behind. */
void timeline_prepare(const common_options *opt);

/* Begins recording when --trace or --timeline was given; time zero is now.
 * Exits with EXIT_CANNOT_RUN when this build has no CUPTI. */
void timeline_start(const common_options *opt);

/* 1 while recording. */
int timeline_active(void);

/* The lab's name for a stream, in the trace and for Nsight Systems (NVTX). */
void timeline_name_stream(cudaStream_t stream, const char *name);

/* A labelled span around one variant of the lab (also an NVTX range).
 * The span ends when the GPU finished its work: timeline_span_end
 * synchronises the device while recording, so spans never overlap. */
void timeline_span_begin(const char *name);
void timeline_span_end(void);

/* While recording: one more run of fn (at most 8 numbers) in a span of its
 * own, for make plots' figures; its numbers are dropped, since statistics
 * are the timed rounds'. Not recording: nothing. */
void timeline_traced_run(const char *span, timed_k_fn fn, void *ctx);

/* Stops recording, writes --trace, draws --timeline, and adds to the report
 * the overlap of each span and the number of records CUPTI dropped. */
void timeline_finish(report *r, const common_options *opt);

#ifdef __cplusplus
}
#endif
#endif
