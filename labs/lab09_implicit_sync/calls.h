/* lab09's catalogue: the calls placed between kernel K1 (stream A) and
 * kernel K2 (stream B), each with what it needs before K1 starts and what it
 * checks after the GPU is idle again. calls.cu holds the table; lab09.cu
 * times every row and judges it. */
#ifndef LAB09_CALLS_H
#define LAB09_CALLS_H

#include "streamlab.h"
#include "kernels.h"

/* What one measurement of a call showed, most telling first: the host
 * waited for K1 (the call returned only after K1 ended), or the GPU held K2
 * back until K1 ended, or neither. MIXED: its samples disagreed, even when
 * measured again. */
enum outcome { NEITHER, GPU_SERIALISED, HOST_WAITED, MIXED, UNDOCUMENTED };

/* The buffers and handles every call works on; one per run. The streams
 * are the column's: non-blocking or blocking. */
typedef struct calls_bench {
    cudaStream_t a, b;               /* K1's stream and K2's */
    size_t words;                    /* every buffer's size, in 32-bit words */
    uint32_t *d_dst, *d_src;         /* device buffers */
    uint32_t *h_pageable, *h_pinned; /* the host side of a copy */
    uint32_t *want, *got;            /* what a copy must deliver; what it did */
    uint32_t *h_register;            /* page-aligned pageable memory to pin */
    void *made;                      /* what a row allocates or frees */
    cudaEvent_t event;
    launch_record *d_legacy;         /* the legacy-stream kernel's record */
    uint64_t tag;                    /* fresh for each measurement */
    unsigned *d_word;                /* the unlaunched kernels' output */
    int cold_used, cold_expected;    /* unlaunched kernels spent; the last one's mark */
    size_t stack_bytes;              /* cudaLimitStackSize as the run began */
    volatile int host_fn_ran;        /* set by cudaLaunchHostFunc's function */
} calls_bench;

typedef struct call_row {
    const char *call;     /* what sits between K1 and K2 */
    const char *torch;    /* the PyTorch code that makes the same call, or "" */
    const char *source;   /* where CUDA documents what it does, or why it does not */
    /* What CUDA documents, with non-blocking streams [0] and blocking ones
     * [1]: an outcome the verdicts hold the measurement to, or UNDOCUMENTED
     * (measured and printed, never judged). */
    enum outcome documented[2];
    void (*call_fn)(calls_bench *c);
    int setup;            /* what prepare and finish do (calls.cu) */
} call_row;

extern const call_row calls[];
extern const int call_count;

/* The run's buffers, streams aside (lab09.cu sets a and b per column). */
void calls_open(lab_run *run, calls_bench *c, size_t words);
/* Before K1 is launched, on an idle GPU, untimed: fresh data in the
 * call's source, poison in its destination, what it frees allocated. */
void call_prepare(calls_bench *c, const call_row *r);
/* After the GPU is idle again: releases what the call made, and checks
 * what it delivered against the CPU's copy, into *t. */
void call_finish(calls_bench *c, const call_row *r, tally *t);
/* 1 when the row can be measured `times` more times: the lazy-loading row
 * needs a kernel never launched before for each, and has a few dozen. */
int call_can_measure(const calls_bench *c, const call_row *r, int times);

#endif
