/* A pipeline_stage pipeline's buffers, owned by a lab's run, and one run of
 * it timed and checked: what lab08 and ex08 measure alike, written once.
 * (pipeline_buffers, pipeline_fresh and pipeline_verify are in kernels.h.) */
#ifndef STREAMLAB_PIPELINE_H
#define STREAMLAB_PIPELINE_H

#include "kernels.h"
#include "../common/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The buffers of `stages` stages over `batches` batches: device words and
 * spans, and their host copies (pageable: they are copied before and after
 * a run, never during one). lab_end() releases them. */
pipeline_buffers pipeline_open(lab_run *run, int stages, int batches);

/* One run: fresh words and increments (pipeline_fresh), then issue(ctx),
 * timed on the host's clock from an idle GPU to cudaDeviceSynchronize,
 * since no one stream's events can time work spread over several: returns
 * its ms, and in *issue_ms the host's time until issue() returned (what the
 * host spent blocked). Then every word and span is checked
 * (pipeline_verify, stage s expected to last ns[s]); with ns NULL, not
 * checked here: the caller downloads and checks a pipeline of another shape
 * (ex08's fork and join). */
double pipeline_run(pipeline_buffers *p, void (*issue)(void *ctx), void *ctx, const uint64_t *ns,
                    uint64_t slack_ns, tally *values, tally *order, double *issue_ms);

#ifdef __cplusplus
}
#endif
#endif
