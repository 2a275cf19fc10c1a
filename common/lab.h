/* A lab's run, from lab_begin() to lab_end(): the plumbing every program
 * shares, done once here, so that a lab's main() is its lesson's table of
 * contents. */
#ifndef STREAMLAB_LAB_H
#define STREAMLAB_LAB_H

#include <cuda_runtime_api.h>
#include "device.h"
#include "options.h"
#include "report.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct owned owned; /* what the run made and lab_end() releases */

typedef struct {
    common_options opt;           /* the common options, parsed */
    device_info dev;              /* the GPU chosen, and what it can do */
    report *r;                    /* where the lesson's numbers go */
    machine_state at_start;       /* machine_probe() as the run began */
    owned *owned;
    int n_owned;
} lab_run;

/* In this order: parses the options (--help and --dry-run exit 0, a mistake
 * exits 2); checks that --trace can be written; calls prog->before_context
 * (before any CUDA call); selects the GPU; exits 3 with
 * the reason when it lacks what prog->needs; when prog->memory_option asks
 * for more than half of its free memory, exits 2 naming the accepted range
 * (3 when even the option's least value does not fit); loads
 * NVML for the PCIe link; probes the machine (machine_probe: is another
 * process using the GPU, its link, the host? about 40 ms); starts the report; with --trace
 * or --timeline, starts recording. */
void lab_begin(lab_run *run, int argc, char **argv, const program_info *prog);

/* Waits for the GPU, releases what the run owns (below), stops recording
 * (writing --trace, drawing --timeline), probes the machine again and
 * reports it beside the start's, then finishes the report: returns the exit
 * code for main() to return. */
int lab_end(lab_run *run);

/* One attempt at a demonstration: measures every side of its comparisons
 * afresh (never reusing a number from an earlier attempt), keeps what it
 * measured in ctx for the lab to report afterwards, and returns 1 when all
 * its verdicts hold (verdict_holds). In *spread, the relative spread of the
 * numbers its verdicts read (stats_spread of the per-pair ratios), or 0. */
typedef int (*attempt_fn)(void *ctx, double *spread);

/* Runs fn. When it fails, asks whether something outside the lesson spoilt
 * it: fn said what it saw (lab_attempt_saw), the machine probed again
 * against the run's start (another process on the GPU, its link or the
 * host; a slowed clock), or fn's own samples spread wide. If so, runs fn
 * again, at most --retries more times (the default 2); if not, the effect is
 * simply not there, and one attempt is the answer. Reports the attempts ("what,attempts,N,count"), and what
 * interference it saw, which leads the likely reasons when the lab exits 4.
 * A retry re-measures both sides: no verdict passes on old numbers. Returns
 * fn's last answer. */
int lab_attempt(lab_run *run, const char *what, attempt_fn fn, void *ctx);

/* For an attempt fn whose verdict failed on a number that the same run
 * measured a moment before on the right side of the limit (lab02: pinned
 * copies in the pairs slower than the link, the same copies, timed in its
 * first section). Nothing of the lesson changes between the two, so that
 * is interference however narrow the samples' spread: lab_attempt measures
 * again, naming what (printf's format; several calls in one attempt are
 * joined by "; "). The last attempt's finding is named too. */
void lab_attempt_saw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Memory, streams and events the run owns: each checked, and released by
 * lab_end() (a lab whose lesson is allocating or freeing does that itself). */
void *lab_pinned(lab_run *run, size_t bytes);  /* cudaMallocHost: page-locked host memory */
void *lab_pageable(lab_run *run, size_t bytes); /* malloc: ordinary host memory */
void *lab_device(lab_run *run, size_t bytes);  /* cudaMalloc */
/* cudaStreamCreateWithPriority, named `name` in traces and for Nsight Systems. */
cudaStream_t lab_stream(lab_run *run, const char *name, unsigned int flags, int priority);
/* n streams into s[0..n-1], named "<prefix> 0", "<prefix> 1", ... */
void lab_streams(lab_run *run, cudaStream_t *s, int n, const char *prefix, unsigned int flags);
cudaEvent_t lab_event(lab_run *run, unsigned int flags); /* cudaEventCreateWithFlags */
void lab_events(lab_run *run, cudaEvent_t *e, int n, unsigned int flags); /* n into e[0..n-1] */
event_timer lab_timer(lab_run *run);                       /* event_timer_create */

#ifdef __cplusplus
}
#endif
#endif
