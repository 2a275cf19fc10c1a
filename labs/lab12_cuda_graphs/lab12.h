/* lab12's parts share this: the bench every part works on, the tiny
 * kernel, and capture(). lab12.cu is part 1 and main(); forkjoin.cu part 2
 * (a fork/join pipeline and its updates); refusals.cu part 3 (what a
 * capture refuses). */
#ifndef LAB12_H
#define LAB12_H

#include "streamlab.h"
#include "kernels.h"

enum { BRANCHES = 4, WARMUP = 1 };

/* One tiny dependent step: *word = pipeline_stage_reference(*word, add).
 * Defined in lab12.cu, which is built without --default-stream per-thread:
 * launched into stream 0, it goes to the legacy stream. */
__global__ void chain_step(uint32_t *word, uint32_t add);

typedef struct bench {
    int reps;
    cudaStream_t s[BRANCHES]; /* non-blocking; s[0] begins and ends every fork/join and capture */
    cudaEvent_t fork, join[BRANCHES];
    event_timer timer;
    double *v;                /* measure_ways' samples: 2 x 5 ways x reps */
    /* part 1: the chain of tiny kernels on one word */
    uint32_t *d_word, *add;
    cudaGraphExec_t chain;
    int gate_late;            /* "GPU only" samples whose gate ended before the launches did */
    /* part 1's measurements, which part 2's models use */
    double host_launch_us, stream_gpu_us, node_us, graph_launch_ms;
    double four_issue_ms;     /* part 2: the host's time to issue four streams, this round */
    /* part 2: four branches of K kernels, batch b of the pipeline = branch b */
    int branch_kernels;
    uint64_t *ns;             /* each kernel's spin, K of them */
    pipeline_buffers p;
    tally words, order, usable;
} bench;

/* What issue() queues from s[0], captured (global mode) into a graph;
 * *ms gets the host's time for it. */
cudaGraph_t capture(bench *b, void (*issue)(bench *), double *ms);

extern int skip_setters; /* --skip-setters */

void fork_join(lab_run *run, bench *b);         /* part 2, forkjoin.cu */
void capture_refusals(lab_run *run, bench *b);  /* part 3, refusals.cu */

#endif
