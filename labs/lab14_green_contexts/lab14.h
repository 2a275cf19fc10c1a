/* lab14's parts share this: a partition (two green contexts from one split
 * of the SMs), the bench both parts work on, and where each kernel ran.
 * lab14.cu is part 1 (partitions, seen) and main(); urgent.cu part 2 (urgent
 * work three ways, and the sweep over the partition's size); comm.cu part 3
 * (communication keeps its SMs: lab13's backward pass in a green context on
 * each of two GPUs, NCCL beside it). */
#ifndef LAB14_H
#define LAB14_H

#include "streamlab.h"
#include "kernels.h"
#include "driver.h"

enum { MAX_SMS = 1024 };

/* One split of the GPU's SMs: `sms` for the urgent work, the `rest_sms` left
 * for everything else, each a green context with one stream of its own
 * (cuGreenCtxStreamCreate). A kernel launched into `stream` runs on the
 * partition's SMs only, whatever else the GPU is doing. */
typedef struct {
    int asked, sms, rest_sms;
    CUgreenCtx ctx, rest_ctx;
    cudaStream_t stream, rest_stream; /* the same handles as CUstream */
} partition;

/* The options both parts read (lab14.cu's table). */
extern int partition_sms;  /* --partition-sms: k, the urgent work's SMs */
extern double block_us;    /* part 2: one background block */
extern int waves;          /* part 2: background blocks = waves x SMs */
extern int urgent_blocks;  /* part 2: the urgent kernel's blocks */
extern double urgent_us;   /* part 2: each of its blocks' spin */
extern int no_sweep;       /* parts 2 and 3: --no-sweep leaves the sweeps over k out */
extern int comm_sms;       /* part 3: k, the SMs kept free of the layers for NCCL */
extern double layer_ms;    /* part 3: each layer's compute on every SM */
extern double grad_mib;    /* part 3: gradients per GPU */
extern int comm_rounds;    /* part 3: rounds of its ways */
extern int no_comm;        /* --no-comm leaves part 3 out */

typedef struct bench {
    CUdevice cudev;                /* the GPU, as the driver API names it */
    int sm_count, min_sms, align;  /* the device's SMs; the least partition and its step */
    CUdevResource all;             /* every SM: what each split starts from */
    size_t footprint;              /* spin_blocks' whole-SM shared memory */
    int greatest, least;           /* stream priorities */
    double launch_us;              /* an empty kernel's launch, as the run's first probe measured it */
    cudaStream_t whole, whole_high; /* the primary context's: the whole GPU, least and greatest */
    block_record *d_log, *h_log;   /* spin_blocks' records, log_len of them */
    int log_len;
    uint64_t tag;                  /* fresh every run, one more per launch */
    tally records;                 /* every block record checked */
    tally sums;                    /* part 3: every reduced gradient word checked */
    partition p;                   /* the partition of --partition-sms, both parts use it */
    unsigned char in_part[MAX_SMS], in_rest[MAX_SMS]; /* SMs each side used in part 1 */
} bench;

/* Splits `k` SMs off device dev's SMs `all` (cuDeviceGetDevResource's;
 * the driver rounds up to its granularity) into *p, and the rest into a
 * second green context; both streams at `priority`. Exits 3 naming the
 * size when the device refuses it or leaves nothing for the rest. */
void partition_split(CUdevice dev, CUdevResource *all, int priority, int k, partition *p);
/* partition_split on the bench's GPU, streams at the least priority. */
void partition_open(bench *b, int k, partition *p);
/* Waits for both streams, destroys them and the two contexts. */
void partition_close(partition *p);

/* spin_blocks<<<blocks>>> in `s`, each block `ns`, logging into the bench's
 * log from `slot`; returns the tag its records must carry. */
uint64_t blocks_launch(bench *b, int blocks, uint64_t ns, int slot, cudaStream_t s);
/* After the GPU is done with it: downloads `blocks` records from `slot`,
 * checks them (into b->records), marks the SMs they ran on in used[] (may be
 * NULL) and returns their span, first start to last end, in us. */
double blocks_collect(bench *b, int blocks, uint64_t tag, uint64_t ns, int slot,
                      unsigned char *used);

void urgent_work(lab_run *run, bench *b);  /* part 2, urgent.cu */
/* Part 3, comm.cu. Without NCCL, or on one GPU after checking its sums on
 * one rank, it says why it cannot show the effect (report_cannot_show:
 * exit 3, parts 1 and 2's verdicts kept in the report). */
void comm_keeps_sms(lab_run *run, bench *b);
/* program_info's before_context: NCCL without multicast, modules loaded eagerly. */
void comm_before_context(void);

#endif
