/* lab10's bench, which its two files share: lab10.cu (parts 1-3: what
 * allocation costs, and the pool) and frees.cu (part 4: who may free a
 * buffer that another stream reads). */
#ifndef LAB10_H
#define LAB10_H

#include "streamlab.h"
#include "kernels.h"

static const size_t MIB = 1 << 20;

typedef struct {
    cudaStream_t a, b;            /* non-blocking: only what we order is ordered */
    cudaMemPool_t pool;           /* the device's default pool, which cudaMallocAsync uses */
    int reps;
    uint64_t tag;                 /* part 2's records: each run its own tags */
    launch_record *d_rec, *h_rec; /* part 2: A's kernels, then B's */
    buffer_handoff h;             /* part 4: A makes a buffer, B reads it late */
    double pair_us[2];            /* part 1's cudaMalloc+cudaFree at 1 MiB and --big-mib */
    double *samples;              /* an attempt's numbers */
    tally logged;                 /* part 2's kernel records */
} bench;

/* Part 4, in frees.cu. ways: "all" (the unsafe free as the lesson's
 * verdict, the two fixes as checks), "safe" (the fixes alone) or "unsafe"
 * (the unsafe free alone, its wrong words a failed check). */
void who_frees(lab_run *run, bench *b, const char *ways);

#endif
