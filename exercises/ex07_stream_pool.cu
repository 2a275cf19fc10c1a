/* ex07: serve many small independent requests through a pool of streams.
 *
 * The task: the program around this file (exercises/given/ex07.cu) hands
 * serve() a queue of 32 requests, each one kernel of 1 ms that holds an
 * eighth of the GPU's SMs, and none needing another's result. As given they
 * all go through one stream and take turns: 32 ms. Make the GPU serve them
 * side by side: complete the TODO(student) in open_pool(), serve() and
 * close_pool(). exercises/given/ex07.h is the contract.
 *
 * Before you write code, predict: how many of these requests CAN run at
 * once on this GPU (lab07, part 1), and what else limits how many streams
 * the GPU takes work from at once (lab07, part 2)? The program prints its
 * model of the best possible speedup beside what your pool reaches.
 *
 * The target: at least 80% of that model (on an H100: 8x, 32 ms -> 4 ms),
 * every request run once, no waits in serve().
 *
 * Expected numbers on an H100:
 *   - the reference solution, lab07's handout (./sol07, 2026-11-22): 7.85x
 *     against the model's 8x, 98%; 8 requests at once;
 *   - lab07's part 1, eight 1/8-GPU kernels in eight streams: 7.78x of 8.
 *
 * Level two (graded apart, below close_pool): 32 requests of two steps
 * each, a thirty-second of the GPU a step, so that every request fits the
 * SMs at once, but there are more of them than hardware queues. The target
 * is 80% of the model's speedup again (32x on an H100: every request at
 * once), with as many streams and in the order the model says it takes.
 * The reference solution on an H100 (2026-11-23): level one 7.87x of the
 * model's 8x (efficiency 0.98); level two 30.4x of 32x (0.95).
 *
 * Build and run:   make ex07 && ./ex07          (./ex07 --quick: smaller)
 * ./ex07 prints both times beside their predictions, the verdict, and what
 * the grader would give, for each level. As given the speedup is 1x, the
 * verdicts are NO, and it exits 4. Stuck? lab07's handout has hints, from
 * gentle to explicit, under "Stuck?".
 */
#include "ex07.h"
#include "streamlab.h"

/* TODO(student): how many streams does your pool need? One is the serial
 * baseline; more than the GPU can use gains nothing. */
enum { POOL = 1 };

static cudaStream_t pool[POOL];

void open_pool(void)
{
    /* TODO(student): the streams must not wait for work in any other stream
     * (lab01): requests are independent. */
    for (int i = 0; i < POOL; i++)
        CUDA_CHECK(cudaStreamCreateWithFlags(&pool[i], cudaStreamNonBlocking));
}

void serve(const request_queue *q)
{
    /* TODO(student): spread the requests over the pool. Two requests in one
     * stream take turns; in different streams they may run at once. */
    for (int i = 0; i < q->n; i++)
        q->launch(i, pool[0]);
}

void close_pool(void)
{
    for (int i = 0; i < POOL; i++)
        CUDA_CHECK(cudaStreamDestroy(pool[i]));
}

/* ---- Level two: requests of two steps (graded apart) ----
 * LEVEL2_REQUESTS requests, each step 0 then step 1, each step one kernel of
 * a thirty-second of the SMs. ./ex07 prints your prediction (beside the
 * model's bound for level one's way, once you have written it), and your
 * pool's speedup beside the model's n / ceil(n / w), w the requests that fit
 * the SMs at once. */

/* TODO(student): before you write serve_level2(), work out from lab07's
 * model (its handout, part 2) the best efficiency level one's way can reach
 * here: each request's two steps queued one after the other, request after
 * request, a stream of its own for each request, through 8 hardware queues.
 * A fraction of the ideal (0.5 for 50%). */
const double LEVEL2_PREDICTED_EFFICIENCY = 0;

void serve_level2(const level2_queue *q)
{
    /* TODO(student): the goal: at least 80% of the model's speedup over one
     * stream, as many requests running at once as fit the SMs.
     * The contract: both steps of every request queued once, through
     * q->step, in the program's streams (q->stream[], as many as you
     * choose); step 1 of a request never starting on the GPU before its step
     * 0 has ended; no waits of any kind: return at once.
     * How it is measured: timed from the call until the GPU is idle, in
     * pairs with the program's one stream; each step's own record on the
     * GPU says when it ran, and whether step 1 came after step 0.
     * Ask: how many streams do all the requests at once take, how many
     * queues carry them to the GPU, and what does a queue do when the launch
     * at its head must wait? */
    for (int i = 0; i < q->n; i++) {
        q->step(i, 0, q->stream[0]);
        q->step(i, 1, q->stream[0]);
    }
}
