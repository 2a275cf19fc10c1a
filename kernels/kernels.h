/* Device code shared by the labs, and its host-side partners.
 *
 * spin_for_ns      a kernel of known duration: it busy-waits on the GPU's
 *                  nanosecond clock (%globaltimer), so 20 ms means 20 ms on
 *                  any GPU at any clock speed.
 * spin_and_log     the same, leaving a record of when it ran, so the host can
 *                  check that every launch ran once, for its time.
 * background_block one short spin per block, counted: a background that fills
 *                  the GPU with many small blocks (lab05's priorities).
 * spin_blocks      a kernel of known duration AND footprint: each block holds
 *                  a whole SM while it spins, and logs when and where it ran
 *                  (lab07's concurrent kernels).
 * pipeline_stage   one stage of a pipeline: known duration (and, if asked,
 *                  footprint), reading the word the stage before wrote and
 *                  writing the next, logging its span (lab08's pipelines).
 * seeded_fill      a buffer of words that only its seed makes, and a count of
 *                  the words that are not (lab10's stream-ordered frees: a
 *                  buffer reused under a reader shows as wrong words).
 * affine_work      a kernel of tunable work per element whose every output the
 *                  CPU can check cheaply: `steps` rounds of x = a*x + b (mod
 *                  2^32). Composing k affine maps gives one affine map, so the
 *                  CPU reference costs O(1) per element however long the GPU
 *                  worked.
 * calibration      turns "a kernel of T ms" into a step count, measured here.
 * feed_step        one GPU step on a batch the host prepared: checks every
 *                  word against what its producer must have written, spins
 *                  its known duration, logs its span (lab11's loaders).
 * sharing_probe    is another process using this GPU?
 * machine_probe    ... or its link, the host's memory, the CPU? The SM clock?
 *
 * Stream 0 in a launch means what the file that DEFINES the kernel was built
 * with: `k<<<g, b, 0, stream>>>` only records the configuration, and the
 * kernel's stub, compiled with the kernel here in kernels/, makes the call.
 * kernels/ is built without --default-stream per-thread, so a program built
 * with it (lab01_ptds) launches these through cudaLaunchKernelEx, from its
 * own file, to give 0 its own meaning. */
#ifndef STREAMLAB_KERNELS_H
#define STREAMLAB_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "../common/device.h"
#include "../common/tally.h"

/* What spin_and_log leaves behind: one record per launch. */
typedef struct {
    unsigned long long tag;              /* the launch's own number, from a fresh random base */
    unsigned long long start_ns, end_ns; /* %globaltimer when it began and ended */
} launch_record;

/* What spin_blocks leaves behind: one record per block. */
typedef struct {
    unsigned long long tag;              /* its launch's own number */
    unsigned long long start_ns, end_ns; /* %globaltimer when the block began and ended */
    unsigned int sm;                     /* %smid: the SM it ran on */
    unsigned int block;                  /* blockIdx.x */
} block_record;

/* What pipeline_stage leaves behind: its blocks' earliest start and latest
 * end on %globaltimer. Reset to {all ones, 0} before the stage runs. */
typedef struct {
    unsigned long long start_ns, end_ns;
} stage_span;

#ifdef __CUDACC__
/* The GPU's nanosecond wall clock. Unlike clock64(), which counts SM cycles
 * and so changes meaning with the clock speed, %globaltimer is in ns. It
 * advances in steps of about a microsecond on some GPUs: fine for durations
 * of milliseconds, the scale the labs use. Kernels that log when they ran
 * read it too. */
__device__ static inline uint64_t globaltimer_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Every thread of the grid spins until `ns` nanoseconds of %globaltimer have
 * passed since it started. <<<1, 1>>> for one short task, a full grid to keep
 * every SM busy. */
__global__ void spin_for_ns(uint64_t ns);

/* <<<1, 1>>>: spins `ns` nanoseconds, then writes {tag, start, end} to *out.
 * With ns = 0 it is a tiny operation: one thread, one store. A lab that
 * times its first launch must not launch it before. */
__global__ void spin_and_log(uint64_t ns, uint64_t tag, launch_record *out);

/* Each block: its threads spin block_ns, then one of them adds 1 to
 * *blocks_done, so the host can check that every block launched ran. */
__global__ void background_block(uint64_t block_ns, unsigned long long *blocks_done);

/* <<<blocks, 1, spin_blocks_footprint()>>>: each block spins `ns`, then
 * writes {tag, start, end, SM, block} to log[blockIdx.x]. It never touches
 * its dynamic shared memory: the size asked for is the point, so large that
 * an SM holds one block at a time, and a kernel of b blocks holds b SMs. */
__global__ void spin_blocks(uint64_t ns, uint64_t tag, block_record *log);

/* <<<blocks, 1, footprint>>>: one pipeline stage of `ns` on one batch.
 * Block 0 reads *value as it begins and, after the spin, writes
 * pipeline_stage_reference(x, add): a stage that began before the stage
 * feeding it had ended read the old word. Every block spins `ns` and widens
 * *span to its own start and end. With pipeline_stage_footprint() each
 * block holds an SM, and `blocks` = the SM count fills the GPU. */
__global__ void pipeline_stage(uint64_t ns, uint32_t add, uint32_t *value, stage_span *span);

/* <<<1, 1>>>: a stage of a pipeline that forks and joins (ex08's level
 * two). As pipeline_stage, but it reads *x, and *y unless y is NULL, as it
 * begins, and writes pipeline_join_reference(x, y, add) to *out: a branch
 * (y NULL) reads the word before the fork into a word of its own, the join
 * reads both branches' words. A join that began before either branch had
 * ended read that branch's old word. */
__global__ void pipeline_join(uint64_t ns, uint32_t add, const uint32_t *x, const uint32_t *y,
                              uint32_t *out, stage_span *span);

/* out[i] = `steps` rounds of x = a*x + b applied to in[i]; grid-stride loop,
 * so any grid size covers any n. a and b are arguments, not constants, so
 * the compiler cannot fold the loop away. With span non-NULL, span[0] gets
 * the earliest block start and span[1] the latest block end (%globaltimer):
 * its run on the GPU, as opposed to its latency. */
__global__ void affine_work(const uint32_t *in, uint32_t *out, size_t n, uint32_t a,
                            uint32_t b, int steps, unsigned long long *span);

/* p[i] = seeded_word(seed, i); grid-stride. */
__global__ void seeded_fill(uint32_t *p, size_t n, uint64_t seed);

/* Adds to *wrong the number of i with p[i] != seeded_word(seed, i). */
__global__ void seeded_count_wrong(const uint32_t *p, size_t n, uint64_t seed,
                                   unsigned long long *wrong);
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The multiplier and increment of the affine map (Knuth's and Numerical
 * Recipes' LCG: a is odd, so the map is a bijection and a misplaced input
 * cannot produce a right-looking output). */
#define AFFINE_A 1664525u
#define AFFINE_B 1013904223u

/* One stage's work on one batch's word: an affine map (AFFINE_A)
 * with the stage's own increment, so stages applied out of order, or one
 * stage twice, give another word. The CPU reference and the GPU share it. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t pipeline_stage_reference(uint32_t x, uint32_t add)
{
    return x * AFFINE_A + add;
}

/* A join of two words (y = 0 for a stage of one input, so that it is
 * pipeline_stage_reference): AFFINE_B is odd, so a wrong y, as a wrong x,
 * always gives another word. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t pipeline_join_reference(uint32_t x, uint32_t y, uint32_t add)
{
    return pipeline_stage_reference(x, add) + y * AFFINE_B;
}

/* The word a seeded buffer holds at index i: splitmix64 of seed and i, so
 * that two seeds disagree at (almost) every index, and a buffer written
 * with another seed, or not at all, counts as wrong nearly everywhere. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t seeded_word(uint64_t seed, size_t i)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * ((uint64_t)i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Threads per block of affine_work, as affine_launch gives it. */
#define AFFINE_THREADS 256

static inline uint64_t ns_from_ms(double ms) { return (uint64_t)(ms * 1e6 + 0.5); }

/* Launches affine_work in `stream` over n elements with a grid that fills the
 * GPU (one thread per element when n is at most 8 blocks per SM), and checks
 * the launch. */
void affine_launch(const uint32_t *d_in, uint32_t *d_out, size_t n, int steps,
                   cudaStream_t stream);

/* The same, logging its run into span[2] (set span[0] to all ones and
 * span[1] to 0 before, in the same stream). */
void affine_launch_with_span(const uint32_t *d_in, uint32_t *d_out, size_t n, int steps,
                             unsigned long long *span, cudaStream_t stream);

/* The dynamic shared memory that makes one block of spin_blocks fill an SM:
 * as much as a block of this GPU may ask for, allowed with
 * cudaFuncSetAttribute. Exits 3 when the occupancy calculator still fits two
 * blocks on an SM. */
size_t spin_blocks_footprint(void);

/* The same for any kernel of `threads` threads a block without shared
 * memory of its own, on the current GPU (the attribute is per GPU). */
size_t whole_sm_footprint_threads(const void *kernel, int threads);

/* spin_blocks<<<blocks, 1, footprint, stream>>>, the launch checked. */
void spin_blocks_launch(int blocks, size_t footprint, uint64_t ns, uint64_t tag,
                        block_record *log, cudaStream_t stream);

/* As spin_blocks_footprint(), for pipeline_stage. */
size_t pipeline_stage_footprint(void);

/* pipeline_stage<<<blocks, 1, footprint, stream>>>, the launch checked. */
void pipeline_stage_launch(int blocks, size_t footprint, uint64_t ns, uint32_t add,
                           uint32_t *value, stage_span *span, cudaStream_t stream);

/* pipeline_join<<<1, 1, 0, stream>>>, the launch checked. */
void pipeline_join_launch(uint64_t ns, uint32_t add, const uint32_t *x, const uint32_t *y,
                          uint32_t *out, stage_span *span, cudaStream_t stream);

/* The host's clock (host_time_ms, in ns) minus %globaltimer: spin_and_log
 * <<<1, 1>>> in `stream` writes its clock into *pinned (page-locked host
 * memory), the host spins until it lands and reads its own; the least of
 * `reads` such readings. That is the offset plus the shortest landing time
 * (a microsecond or so): a GPU moment moved onto the host's clock with it is
 * early by that much, never late. Exits 1 when a write never lands. */
long long host_minus_gpu_clock_ns(cudaStream_t stream, launch_record *pinned, int reads);

/* seeded_fill and seeded_count_wrong in `stream`, grids that fill the GPU,
 * the launches checked. *wrong is the caller's to zero. */
void seeded_fill_launch(uint32_t *p, size_t n, uint64_t seed, cudaStream_t stream);
void seeded_count_launch(const uint32_t *p, size_t n, uint64_t seed, unsigned long long *wrong,
                         cudaStream_t stream);

/* The device's default memory pool, which cudaMallocAsync takes from; exits
 * 3 (cannot run here) when this GPU or driver has no memory pools. */
cudaMemPool_t default_mem_pool(int device);

/* A buffer X that stream `owner` makes and stream `user` reads late (lab10's
 * part 4, ex10): who may free it, and when? The caller creates the streams
 * and the two events and allocates d_wrong (device memory). */
typedef struct {
    cudaStream_t owner, user;
    cudaEvent_t filled, used;    /* X written, in owner; the user's last read queued, in user */
    unsigned long long *d_wrong; /* the user's count of X's wrong words */
    size_t words;                /* X's size */
    uint64_t delay_ns;           /* the user's work before it reads X */
} buffer_handoff;

/* Before the free: X = cudaMallocAsync in owner, filled with seeded words
 * there; the user waits for that, spins delay_ns, counts X's wrong words
 * (its last use) and records `used`. Returns X, for the caller to free. */
uint32_t *handoff_begin(const buffer_handoff *h, uint64_t seed);

/* After the free: the owner at once makes its next buffer, X's size, fills
 * it with other words and frees it; waits for the device. Returns the
 * words the user read wrong: every one when the next buffer got X's
 * address (*reused) and the owner refilled it before the user read. */
unsigned long long handoff_end(const buffer_handoff *h, const uint32_t *x, uint64_t seed,
                               int *reused);

/* ---- host side: inputs and verification ---- */

/* Fills p[0..n-1] with pseudo-random words from `seed` (splitmix64). */
void fill_random_u32(uint32_t *p, size_t n, uint64_t seed);

/* A seed that differs between runs, so every run verifies fresh inputs. */
uint64_t fresh_seed(void);

/* n moments spread over [lo, hi): at[i] at a random point of the i-th of n
 * equal strata, fresh every run, so that their median is the middle and
 * they fall at every phase of whatever repeats inside the interval. */
void random_strata(double *at, int n, double lo, double hi);

/* The CPU reference for one element: `steps` rounds of the affine map. */
uint32_t affine_reference(uint32_t x, int steps);

/* The number of i with got[i] != want[i], added to *t (which may be NULL). */
size_t verify_equal_u32(const uint32_t *got, const uint32_t *want, size_t n, tally *t);

/* The number of i with out[i] != affine_reference(in[i], steps), in O(n),
 * added to *t (which may be NULL). */
size_t verify_affine(const uint32_t *in, const uint32_t *out, size_t n, int steps, tally *t);

/* The records of one launch of spin_blocks (tag, `blocks` of them): the
 * number that are wrong (not this launch's tag, not their own block, shorter
 * than ns, on no SM below `sms`), added to *t. Returns in *earliest the
 * first block's start. */
size_t verify_block_records(const block_record *r, int blocks, uint64_t tag, uint64_t ns,
                            int sms, unsigned long long *earliest, tally *t);

/* Where records r[0..blocks-1] ran: each one's SM marked in used[] (may be
 * NULL; SMs at or past max_sms are not marked). Returns their span, the
 * first start to the last end, in ns. */
unsigned long long block_records_span(const block_record *r, int blocks, unsigned char *used,
                                      int max_sms);
/* How many of used[0..max_sms-1] are marked. */
int sms_marked(const unsigned char *used, int max_sms);

/* Where a run's spin_blocks launches went: launch k into stream number
 * `stream`, with `blocks` blocks, its first block's record at log[slot]. */
typedef struct { int stream, blocks, slot; } launch_slot;

/* The records of a run of n spin_blocks launches issued in the order
 * l[0..n-1], launch k tagged tag + k: each launch's blocks checked
 * (verify_block_records, into *blocks), and each launch begun after every
 * block of the launch before it in its stream had ended (within slack_ns):
 * one that did not is added to *order. Returns all that was wrong. */
size_t verify_launches(const block_record *r, const launch_slot *l, int n, uint64_t tag,
                       uint64_t ns, int sms, uint64_t slack_ns, tally *blocks, tally *order);

/* Records of n launches of spin_and_log, tags tag, tag+1, ...: the number
 * that are wrong (another tag, or shorter than ns), added to *t, the first
 * wrong one named as first + its index. */
size_t verify_launch_records(const launch_record *r, int n, uint64_t tag, uint64_t ns,
                             size_t first, tally *t);

/* How many of the launches r[0..n-1] ran, in part, between start_ns and end_ns. */
int launches_within(const launch_record *r, int n, unsigned long long start_ns,
                    unsigned long long end_ns);

/* The blocks among r[0..n-1] that began on an SM before the block there
 * before them had ended, allowing `slack_ns` for the clock's ticks: spin_blocks
 * meant to hold its SM alone. Sorts r by SM, then start. Added to *t. */
size_t verify_one_block_per_sm(block_record *r, int n, uint64_t slack_ns, tally *t);

/* A pipeline of `stages` stages over `batches` batches as pipeline_stage
 * left it. value[b] must be seed[b] through every stage in order, stage s
 * adding add[s * batches + b]: wrong words are added to *values. span[s *
 * batches + b] must last at least ns[s], and stage s of a batch must begin
 * after stage s-1 of it ended (within slack_ns, the clock's tick): spans
 * wrong or out of order are added to *order. Returns all that was wrong. */
size_t verify_pipeline(const uint32_t *value, const uint32_t *seed, const uint32_t *add,
                       const stage_span *span, const uint64_t *ns, int stages, int batches,
                       uint64_t slack_ns, tally *values, tally *order);

/* The fork-join pipeline of ex08's level two as pipeline_join left it, over
 * `batches` batches, four stages a batch at [s * batches + b] of add, span
 * and ns: 0 (pipeline_stage on value[b]), the branches 1 and 2 (each reading
 * value[b] into a word of its own), and the join 3 (reading both branches'
 * words into value[b]). value[b] must be the CPU reference of that graph
 * from seed[b]: wrong words are added to *values. Every span must last at
 * least its ns; each branch must begin after stage 0 ended, the join after
 * both branches ended (within slack_ns): stages wrong or early are added to
 * *order. Returns all that was wrong. */
size_t verify_fork_join(const uint32_t *value, const uint32_t *seed, const uint32_t *add,
                        const stage_span *span, const uint64_t *ns, int batches,
                        uint64_t slack_ns, tally *values, tally *order);

/* A pipeline's words and spans on both sides: what pipeline_stage reads and
 * writes, and what the host gives it and checks. The caller allocates them:
 * d_value, h_value and seed hold `batches` words; add, d_span and h_span
 * stages x batches, stage s of batch b at [s * batches + b]. */
typedef struct {
    int stages, batches;
    uint32_t *d_value, *h_value, *seed, *add;
    stage_span *d_span, *h_span;
} pipeline_buffers;

/* Before a run: fresh words and increments (a run cannot pass on an old
 * one's results), spans reset to {all ones, 0}, words and spans uploaded;
 * returns once they have landed. */
void pipeline_fresh(pipeline_buffers *p);

/* The same, keeping the increments: for a pipeline captured as a CUDA graph,
 * whose kernels hold their increments as arguments (lab12). */
void pipeline_fresh_words(pipeline_buffers *p);

/* After a run (the GPU idle): downloads the words and spans. */
void pipeline_download(pipeline_buffers *p);

/* After a run (the GPU idle): downloads the words and spans and checks them
 * with verify_pipeline(), stage s expected to last ns[s]. */
size_t pipeline_verify(pipeline_buffers *p, const uint64_t *ns, uint64_t slack_ns, tally *values,
                       tally *order);

/* ---- feeding the GPU from the host (lab11, ex11) ---- */

/* A stream of batches the CPU prepares and the GPU steps on. A batch is n
 * words; word i of batch b is feed_word(seed, b, i) put through r_i rounds
 * of the affine map (AFFINE_A, AFFINE_B), the `rounds` of a batch spread
 * evenly over its words. That is real CPU work of a length feed_calibrate()
 * sizes (a sleep would not do: four sleeping threads share one core, and
 * would hide that producers need cores), and the GPU checks every word in
 * O(1), composing the rounds into one map. The rest is the run's record,
 * one entry per batch, on both sides. */
typedef struct {
    size_t n;                        /* words per batch */
    uint64_t rounds;                 /* affine rounds per batch: its CPU cost */
    uint64_t seed;                   /* fresh every run (feed_fresh) */
    int batches;
    unsigned long long *d_wrong, *h_wrong; /* words of the batch that differed */
    stage_span *d_span, *h_span;           /* the batch's step on %globaltimer */
} feed_bench;

/* Word i of batch b before its rounds: the batch's number and the run's
 * seed in every word, so a word of another batch or another run differs. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t feed_word(uint64_t seed, int batch, size_t i)
{
    return ((uint32_t)seed ^ (uint32_t)batch * 0x9E3779B9u) + (uint32_t)i * 0x85EBCA6Bu +
           (uint32_t)(seed >> 32);
}

/* The CPU's work: fills buf[0..f->n-1] with batch `batch`. Reads only *f:
 * safe from several threads at once, each on its own buffer. */
void feed_prepare(const feed_bench *f, int batch, uint32_t *buf);

/* Sets f->rounds so that feed_prepare() on this CPU lasts about `ms`
 * (measured alone, on one core: the median of several; within 5% on a
 * steady host), and returns what it then measured. At least the cost of
 * writing the words: with a smaller `ms`, rounds is 0 and the return says how
 * long a batch takes. */
double feed_calibrate(feed_bench *f, uint32_t *buf, double ms);

/* P at f->rounds as it stands: feed_prepare() alone on this thread, the
 * median of several (what feed_calibrate() measures at each step). */
double feed_prepare_ms(feed_bench *f, uint32_t *buf);

/* Queues feed_step on `batch` in `stream`: `blocks` blocks (the SM count:
 * the step holds the whole GPU) check d_buf against what feed_prepare()
 * writes, add the words that differ to d_wrong[batch], spin until `ns` have
 * passed since each block began, and widen d_span[batch]. */
void feed_step_launch(const feed_bench *f, int batch, const uint32_t *d_buf, uint64_t ns,
                      int blocks, cudaStream_t stream);

/* C: one batch's copy from pinned h to d in `stream`, timed by events: the
 * median of 8, after one that pays for first touches. */
double feed_copy_ms(uint32_t *d, const uint32_t *h, size_t n, cudaStream_t stream);

/* Before a run: a fresh seed, the record zeroed (spans {all ones, 0}) and
 * uploaded; returns once it has landed. */
void feed_fresh(feed_bench *f);

/* After a run (the GPU idle): downloads the record and adds every batch to
 * *t, wrong when a word differed or its step never ran. Returns the sum of
 * the steps' durations in ms: the time the GPU was busy, by its own clock. */
double feed_verify(feed_bench *f, tally *t);

/* The loader's model, in ms: B batches of P ms of CPU work, a copy of C and
 * a step of K. Serial (w = 0): B(P + C + K). w producer threads filling a
 * ring of pinned buffers, at most `cores` of them at once: the first batch
 * costs P, then each batch max(P / min(w, cores), C + K): the slower of the
 * producers and the GPU sets the pace. One thread that prepares the next
 * batch while the GPU runs this one is w = 1. */
static inline double feed_model_ms(int b, double p, double c, double k, int w, int cores)
{
    int at_once = w < cores ? w : cores;
    double per = p / (at_once > 0 ? at_once : 1);
    return w == 0 ? b * (p + c + k) : p + b * (per > c + k ? per : c + k);
}

/* ---- calibration of affine_work on this GPU ---- */

typedef struct {
    size_t n;               /* elements the calibration ran on */
    double ns_per_step;     /* slope: cost of one more step over all n elements */
    double fixed_ns;        /* intercept: launch, reading in and writing out */
} affine_calibration;

/* Times affine_work on n elements at two step counts (device events, median
 * of several runs) and fits time = fixed + steps * ns_per_step. d_in and d_out
 * hold n elements each. */
affine_calibration affine_calibrate(const uint32_t *d_in, uint32_t *d_out, size_t n,
                                    cudaStream_t stream);

/* Steps that make affine_work on cal->n elements last about `ms`; at least 1. */
int affine_steps_for_ms(const affine_calibration *cal, double ms);

/* ---- is another process using this GPU? ---- */

/* Measures it now (about 12 ms of probe kernels; kernels/sharing.cu says
 * how): what the probe lost to other work and how many other processes the
 * driver lists. lab_begin() and lab_end() call it at each end of a run, so a
 * lab's verdict is never trusted on a shared GPU. */
void sharing_probe(gpu_sharing *s);

/* The machine now (about 40 ms; kernels/machine.cu says how): sharing_probe(),
 * pinned copies each way, the host's memcpy, an empty kernel's launch to
 * done, the SM clock. lab_begin() probes the start; a comparison that failed
 * probes again to ask whether another process spoilt it (machine.h). */
void machine_probe(machine_state *m);

#ifdef __cplusplus
}
#endif
#endif
