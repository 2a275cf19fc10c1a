/* Several GPUs in one process (lab13): which ones, and was each this
 * program's alone? A single-GPU lab never calls these: lab_begin() selects
 * one GPU and probes it; a lab that drives every GPU adds the others here. */
#ifndef STREAMLAB_GPUS_H
#define STREAMLAB_GPUS_H

#include "machine.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GPUs this process sees (CUDA_VISIBLE_DEVICES narrows them), at most
 * `max`, into dev[]: `first` (the one lab_begin() selected) first, then the
 * others in order. Returns how many. */
int gpus_visible(int first, int *dev, int max);

/* sharing_probe() on dev[1..n-1], into out[1..n-1] (dev[0] is lab_begin()'s,
 * probed at the run's start and end already); the current GPU is kept. The
 * driver's list of other processes is read for the selected GPU only, so
 * theirs is -1, "not told". */
void gpus_probe_sharing(const int *dev, int n, gpu_sharing *out);

/* report_sharing() for each of dev[1..n-1]: a verdict only for a GPU that
 * another process used, under a heading naming it. */
void gpus_report_sharing(report *r, const int *dev, int n, const gpu_sharing *start,
                         const gpu_sharing *end);

#ifdef __cplusplus
}
#endif
#endif
