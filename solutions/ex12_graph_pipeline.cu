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
