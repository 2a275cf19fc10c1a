/* ex13's contract: what exercises/ex13_gradient_overlap.cu gives the program
 * around it (exercises/given/ex13.cu), and nothing more. */
#ifndef STREAMLAB_EX13_H
#define STREAMLAB_EX13_H

#include <cuda_runtime_api.h>

enum { EX13_MAX_GPUS = 8 };

/* What one backward pass hands you, all of it made by the program before
 * your code runs. The gradients, the reduced buffers, the layers' length
 * and NCCL's communicator are not in it: the program owns them, and
 * layer() and all_reduce() reach them. */
typedef struct {
    int gpus;                             /* G: one NCCL rank per GPU, one thread drives all */
    int layers;                           /* L: every GPU runs layers 0 .. L-1, in order */
    int buckets;                          /* K: the gradients' buckets, completed in order */
    cudaStream_t compute[EX13_MAX_GPUS];  /* GPU g's layers run in compute[g] */
    cudaStream_t comm[EX13_MAX_GPUS];     /* GPU g's share of each all-reduce runs in comm[g];
                                             non-blocking: nothing orders it after compute[g]
                                             but you */
    cudaEvent_t *done[EX13_MAX_GPUS];     /* done[g][l], l < L: made for you on GPU g
                                             (cudaEventDisableTiming) */
    void (*layer)(int g, int l);          /* queues layer l in compute[g] (making GPU g
                                             current) and returns at once; its gradients
                                             are written only as it ends */
    int (*last_layer)(int k);             /* the layer whose end completes bucket k: bucket
                                             k holds gradients of that layer and earlier ones */
    void (*all_reduce)(int k);            /* queues bucket k's all-reduce on every GPU, each in
                                             its comm[g], in one NCCL group, and returns at once:
                                             it reads bucket k's gradients from the moment
                                             comm[g] reaches it */
} backward;

/* Yours. Runs one backward pass on every GPU: layer(g, l) for every GPU g
 * and layer l, each exactly once, in layer order, and all_reduce(k) for
 * every bucket k, exactly once, so that no GPU's share of bucket k starts
 * before last_layer(k) has ended on that GPU. The program calls it once a
 * run, times it on the host from idle GPUs until every stream is idle
 * again (it waits itself), then checks every reduced word on every GPU. */
void run_backward(const backward *b);

/* ---- Level two: how many layers a bucket ----
 * The same backward pass on a job drawn afresh every run, its all-reduces
 * on a slower link (one block per collective, as lab13's part 4: PCIe- or
 * network-like). Buckets of m layers: bucket k holds layers k m .. k m + m
 * - 1 (the last one the rest), so there are ceil(L / m) of them. Every
 * number is this run's own, measured before your function is called. */
typedef struct {
    int layers;          /* L, as in level one */
    double layer_ms;     /* t: one layer on every GPU, measured (the layers alone) */
    double layer_bytes;  /* g: one layer's gradients, per GPU */
    double alpha_ms;     /* the all-reduce's fixed cost, fitted: t(S) = alpha + S / B */
    double bytes_per_ms; /* B, fitted with alpha, over sizes from one layer to all of them */
} bucket_job;

/* Yours, level two. Returns m, the layers per bucket (1 to L), for which the
 * pass is fastest on job j, and sets *predicted_ms to the time lab13's
 * model gives a pass with buckets of that m on job j (the last bucket
 * holding what is left). The program then runs your run_backward() with
 * buckets of m layers, in rounds beside its own serial pass and its own
 * overlapped pass at other sizes, and says whether your predicted time is
 * within 2% of its own (its own number is the grader's, not printed).
 * Called once a run, before anything of level two runs. */
int level2_bucket_layers(const bucket_job *j, double *predicted_ms);

/* Yours, before level2_bucket_layers(): the model's best speedup over the
 * serial pass (every layer, then one all-reduce of everything) for L = 24
 * layers of t, an alpha as long as a layer (alpha = t) and a layer's
 * gradients taking as long on the link (g / B = t), at the best m. The
 * program prints it, and once it is written (not 0) the model's value
 * beside it; no points ride on it. */
extern const double LEVEL2_PREDICTED_SPEEDUP;

#endif
