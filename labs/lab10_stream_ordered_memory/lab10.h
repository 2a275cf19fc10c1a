/* lab10's bench, which its three files share: lab10.cu (parts 1 and 2:
 * what allocation costs, beside other work), threshold.cu (part 3: what the
 * pool keeps) and frees.cu (part 4: who may free a buffer that another
 * stream reads, and the bench's setup). */
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
    int big_mib;                  /* --big-mib: parts 1 and 3's large allocation */
    double pair_us[2];            /* part 1's cudaMalloc+cudaFree at 1 MiB and --big-mib */
    double *samples;              /* an attempt's numbers */
    tally logged;                 /* part 2's kernel records */
} bench;

/* The run's streams A and B, part 4's handoff (X of `words`, B's work
 * delay_ns before it reads), the pool, `records` launch records and
 * `samples` numbers; the run owns them, lab_end() releases them. Exits 3
 * when this GPU has no memory pools. In frees.cu. */
void bench_open(lab_run *run, bench *b, size_t words, uint64_t delay_ns, int records,
                int samples);

/* --free, part 4's ways: "all" (the unsafe free as the lesson's verdict,
 * the two fixes as checks), "safe" (the fixes alone) or "unsafe" (the
 * unsafe free alone, its wrong words a failed check); check_free_ways()
 * refuses anything else (a usage error). In frees.cu. */
extern const char *free_ways;
void check_free_ways(void);

/* Part 3, in threshold.cu: release threshold 0 against unlimited. */
void release_threshold(lab_run *run, bench *b);

/* Part 4, in frees.cu: the ways --free names. */
void who_frees(lab_run *run, bench *b);

#endif
