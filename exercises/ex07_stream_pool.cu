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
 * Build and run:   make ex07 && ./ex07          (./ex07 --quick: smaller)
 * ./ex07 prints both times beside their predictions, the verdict, and what
 * the grader would give. As given the speedup is 1x, the verdict is NO, and
 * it exits 4.
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
