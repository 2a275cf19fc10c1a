/* A data-parallel backward pass on every GPU of the machine: L layers, each
 * a kernel of known duration that writes its slice of the gradients, and
 * the buckets those gradients are all-reduced in (lab13, ex13). Written once
 * here; the NCCL calls are in ranks.h, so that this library needs no NCCL.
 *
 * Gradients are small integers held as floats: a sum over up to 8 GPUs is
 * exact in any order, so NCCL's reduction order cannot make a right answer
 * look wrong. Each run's words come from a fresh seed, and both the
 * gradients and the reduced buffers are poisoned (NaN) before it: a bucket
 * reduced before its layers wrote it sums poison, or old words. */
#ifndef STREAMLAB_GRADIENTS_H
#define STREAMLAB_GRADIENTS_H

#include "kernels.h"
#include "../common/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GRAD_MAX_GPUS = 8 };

/* Gradient word i of GPU `rank` in the run with `seed`: an integer in
 * [-32, 31], as a float. The CPU reference and the GPU share it. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline float grad_value(uint32_t seed, int rank, size_t i)
{
    uint32_t z = (uint32_t)i * 0x9E3779B1u ^ (seed + (uint32_t)rank * 0x85EBCA6Bu);
    z ^= z >> 15, z *= 0x2C1B3C6Du, z ^= z >> 12;
    return (float)((int)(z >> 26) - 32);
}

/* What every GPU's reduced word i must be: the sum over `ranks` GPUs. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline float grad_sum_reference(uint32_t seed, int ranks, size_t i)
{
    float s = 0;
    for (int r = 0; r < ranks; r++)
        s += grad_value(seed, r, i);
    return s;
}

/* How a layer's kernel holds the GPU: `blocks` blocks of GRAD_THREADS
 * threads, each holding an SM alone (footprint: the shared memory that
 * makes it so) or sharing it (footprint 0). */
typedef struct {
    const char *name;
    int blocks;
    size_t footprint;
} layer_shape;

#define GRAD_THREADS 256

/* The bench: per GPU (rank g on device dev[g]) a compute stream, a
 * communication stream, an event per layer, the gradients and the reduced
 * buffer (out of place, so that even one GPU's all-reduce, a copy, reads
 * what the layers wrote), and a count of wrong words. */
typedef struct {
    int gpus, dev[GRAD_MAX_GPUS];
    int max_layers;
    size_t capacity;                 /* gradient floats per GPU the buffers hold */
    /* the job (grad_job): */
    int layers;
    size_t words, layer_words;       /* gradient floats per GPU; per layer */
    uint64_t layer_ns;               /* each layer's spin */
    layer_shape shape;
    uint32_t seed;                   /* this run's: fresh in grad_poison() */
    cudaStream_t compute[GRAD_MAX_GPUS], comm[GRAD_MAX_GPUS];
    /* a second communication stream per GPU at the greatest priority: swap
     * it into comm[] (grad_comm_priority) to ask whether priority makes
     * room for NCCL's kernels among the layers' blocks */
    cudaStream_t comm_least[GRAD_MAX_GPUS], comm_greatest[GRAD_MAX_GPUS];
    cudaStream_t compute_own[GRAD_MAX_GPUS]; /* compute[]'s own, for grad_compute_streams */
    cudaEvent_t *done[GRAD_MAX_GPUS]; /* done[g][l]: layer l has ended on GPU g */
    float *grad[GRAD_MAX_GPUS], *sum[GRAD_MAX_GPUS];
    unsigned long long *d_wrong[GRAD_MAX_GPUS], *h_wrong;
    float *h_window;                 /* a window of a reduced buffer, checked on the CPU */
} grad_bench;

/* Opens the bench for `gpus` devices dev[0..gpus-1], with room for
 * `capacity` floats of gradients per GPU and `max_layers` layers; streams
 * named "GPUd compute" and "GPUd comm" (the trace's rows carry the GPU in
 * their name). Owned by the run; leaves dev[0] current. */
void grad_open(lab_run *run, grad_bench *b, const int *dev, int gpus, int max_layers,
               size_t capacity);

/* The backward pass the next runs do: `layers` layers of `layer_ms`, `words`
 * gradient floats per GPU (at most the capacity), layers shaped `shape`. */
void grad_job(grad_bench *b, int layers, double layer_ms, size_t words, layer_shape shape);

/* Points comm[] at every GPU's greatest-priority communication stream
 * (greatest != 0) or back at the least-priority one. Between runs only. */
void grad_comm_priority(grad_bench *b, int greatest);

/* Points compute[] at streams[0..gpus-1], one per GPU, made elsewhere (a
 * green context's, lab14: the layers then run on its SMs only), or with
 * NULL back at the bench's own. Between runs only. */
void grad_compute_streams(grad_bench *b, const cudaStream_t *streams);

/* A layer's shape: `blocks` blocks that each hold an SM alone (whole_sm),
 * or that leave room beside them. */
layer_shape grad_shape(const char *name, int blocks, int whole_sm);

/* Before a run: a fresh seed, every gradient and reduced word poisoned, in
 * the compute streams; returns once the GPUs are idle. */
void grad_poison(grad_bench *b);

/* Queues layer l on GPU g's compute stream (GPU g made current): every
 * block spins layer_ns from its own start, then writes its share of the
 * layer's gradients, so they are ready only when the layer ends. */
void grad_layer(grad_bench *b, int g, int l);

/* Runs every kernel once on every GPU: module loading stays out of the
 * timing, and no GPU loads a module while another waits in a collective. */
void grad_warm(grad_bench *b);

/* Waits for every GPU's two streams. */
void grad_sync(grad_bench *b);

/* After a run (the GPUs idle): every GPU's first `words` reduced words
 * checked against grad_sum_reference on the GPU, and a window of them at a
 * random place on the CPU; added to *t (where names the run). Returns the
 * words wrong. */
size_t grad_verify(grad_bench *b, size_t words, tally *t);

/* Bucket k covers words [k x bucket, (k+1) x bucket) of the gradients, the
 * last one the rest: how many there are, and the layer whose end completes
 * bucket k (layer l writes words [l x layer_words, (l+1) x layer_words)). */
int grad_buckets(size_t words, size_t bucket);
int grad_bucket_last_layer(const grad_bench *b, size_t bucket, int k);

/* The model, in ms. t(S) = alpha + S / B for an all-reduce of S bytes
 * (alpha in ms, B in bytes per ms). Serial: every layer (compute_ms), then
 * one all-reduce of everything. Overlapped: layer l ends at (l+1) x
 * compute_ms / L; bucket k starts when its last layer and bucket k-1 are
 * done. */
typedef struct { double alpha_ms, bytes_per_ms; } link_fit;
double allreduce_model_ms(const link_fit *f, double bytes);
double serial_model_ms(const link_fit *f, const grad_bench *b, double compute_ms);
double overlap_model_ms(const link_fit *f, const grad_bench *b, double compute_ms, size_t bucket);

/* Least squares of ms[i] = alpha + bytes[i] / B over n sizes. */
link_fit link_fit_of(const double *bytes, const double *ms, int n);

#ifdef __cplusplus
}
#endif
#endif
