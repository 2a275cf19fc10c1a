/* ex12: replay a pipeline's step as a CUDA graph.
 *
 * The reference solution: exercises/ex12_graph_pipeline.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex12.h.
 *
 * Build and run:   make sol12 && ./sol12      (./sol12 --quick: a short run)
 */
#include "ex12.h"
#include "streamlab.h"

static cudaGraph_t graph;
static cudaGraphExec_t step;

void prepare_steps(const pipeline *p)
{
    /* SOLUTION: nothing issued between Begin and EndCapture runs; it is
     * recorded, with its dependencies. The step's fork (stream[1] and [2]
     * wait for an event recorded in stream[0]) pulls those streams into the
     * capture, and its join brings them back: EndCapture on stream[0]
     * returns the whole fork/join as one graph. Global mode: any call that
     * would be unsafe during the capture, from any thread, is refused. */
    CUDA_CHECK(cudaStreamBeginCapture(p->stream[0], cudaStreamCaptureModeGlobal));
    p->issue_step();
    CUDA_CHECK(cudaStreamEndCapture(p->stream[0], &graph));
    /* SOLUTION: instantiating checks and builds the executable graph once
     * (milliseconds); uploading puts it on the GPU ahead of the first
     * replay, which would otherwise pay for it. */
    CUDA_CHECK(cudaGraphInstantiate(&step, graph, 0));
    CUDA_CHECK(cudaGraphUpload(step, p->stream[0]));
}

void run_step(const pipeline *p)
{
    /* SOLUTION: one call for the whole step. Replays in one stream run one
     * after the other, as the streams' steps did through the join. */
    CUDA_CHECK(cudaGraphLaunch(step, p->stream[0]));
}

void finish_steps(const pipeline *p)
{
    (void)p;
    CUDA_CHECK(cudaGraphExecDestroy(step));
    CUDA_CHECK(cudaGraphDestroy(graph));
}

/* ---- Level two: a word k that changes every step ---- */

/* SOLUTION: the graph is built once; each step changes one word, k, in
 * device memory: a 4-byte copy queued before the replay. The host's step is
 * an event check, a copy, an event record and a replay: about a launch each
 * (lab12: 4.39 us) beside the replay's 2.3 us (level one): about 11 us,
 * against 24 x (capture 1.03 + instantiate 1.99) us for a new graph a step
 * (lab12, part 2b), and 24 x 0.85 us just to reset every node's argument. */
const double LEVEL2_PREDICTED_HOST_US = 11;

/* SOLUTION: the copy reads its pinned slot when the GPU reaches it, not
 * when it is queued, and the host runs ahead of the GPU (a step costs it
 * microseconds, the GPU some 50): a slot is rewritten only after the copy
 * that read it has run (its event). 64 slots: the 40 steps never wait. */
enum { SLOTS = 64 };
static cudaGraph_t graph2;
static cudaGraphExec_t step2;
static uint32_t *d_k, *slot;
static cudaEvent_t copied[SLOTS];
static int next_slot;

void level2_prepare(const level2_pipeline *p)
{
    CUDA_CHECK(cudaMalloc(&d_k, sizeof *d_k));
    CUDA_CHECK(cudaMallocHost(&slot, SLOTS * sizeof *slot));
    for (int i = 0; i < SLOTS; i++)
        CUDA_CHECK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
    next_slot = 0;
    /* SOLUTION: captured once; the kernels keep d_k, and read *d_k as they
     * begin, so the word the copy wrote last is the step's k. */
    CUDA_CHECK(cudaStreamBeginCapture(p->stream[0], cudaStreamCaptureModeGlobal));
    p->issue_step_reading(d_k);
    CUDA_CHECK(cudaStreamEndCapture(p->stream[0], &graph2));
    CUDA_CHECK(cudaGraphInstantiate(&step2, graph2, 0));
    CUDA_CHECK(cudaGraphUpload(step2, p->stream[0]));
}

void level2_step(const level2_pipeline *p, uint32_t k)
{
    int i = next_slot;
    next_slot = (next_slot + 1) % SLOTS;
    /* SOLUTION: returns at once unless the host is SLOTS steps ahead. */
    CUDA_CHECK(cudaEventSynchronize(copied[i]));
    slot[i] = k;
    /* SOLUTION: in stream 0, so after the step before it has ended (its
     * replay joins there) and before this replay begins: no stage of
     * either step reads a word it did not mean. */
    CUDA_CHECK(cudaMemcpyAsync(d_k, &slot[i], sizeof *d_k, cudaMemcpyHostToDevice, p->stream[0]));
    CUDA_CHECK(cudaEventRecord(copied[i], p->stream[0]));
    CUDA_CHECK(cudaGraphLaunch(step2, p->stream[0]));
}

void level2_finish(const level2_pipeline *p)
{
    (void)p;
    CUDA_CHECK(cudaGraphExecDestroy(step2));
    CUDA_CHECK(cudaGraphDestroy(graph2));
    for (int i = 0; i < SLOTS; i++)
        CUDA_CHECK(cudaEventDestroy(copied[i]));
    CUDA_CHECK(cudaFreeHost(slot));
    CUDA_CHECK(cudaFree(d_k));
}
