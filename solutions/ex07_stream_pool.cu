/* ex07: serve many small independent requests through a pool of streams.
 *
 * The reference solution: exercises/ex07_stream_pool.cu with the TODOs done,
 * each marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex07.h.
 *
 * Build and run:   make sol07 && ./sol07
 */
#include "ex07.h"
#include "streamlab.h"

/* SOLUTION: 8 streams. A request holds an eighth of the SMs, so at most 8
 * run at once whatever the pool; and the GPU takes work from 8 hardware
 * queues unless CUDA_DEVICE_MAX_CONNECTIONS says otherwise, so a ninth
 * stream would share a queue with the first. 8 streams reach both limits;
 * more would change nothing, fewer would leave SMs idle. */
enum { POOL = 8 };

static cudaStream_t pool[POOL];

void open_pool(void)
{
    for (int i = 0; i < POOL; i++)
        CUDA_CHECK(cudaStreamCreateWithFlags(&pool[i], cudaStreamNonBlocking));
}

void serve(const request_queue *q)
{
    /* SOLUTION: request i on stream i % POOL, round robin. Each stream gets
     * every eighth request and runs its own in order; the eight streams run
     * side by side, so 32 requests take 4 turns instead of 32. No waits: the
     * program times serve() until the GPU is idle. */
    for (int i = 0; i < q->n; i++)
        q->launch(i, pool[i % POOL]);
}

void close_pool(void)
{
    for (int i = 0; i < POOL; i++)
        CUDA_CHECK(cudaStreamDestroy(pool[i]));
}

/* SOLUTION: 0.4. A stream per request puts 4 of the 32 on each of the 8
 * queues; queued request by request, a queue holds 0 1 0 1 ..., and each
 * step 1 waits at its head for its step 0, holding the next request's step
 * 0 behind it: one step 0 and one step 1 of a queue run at a time, (32/8 +
 * 1) T = 5T, against 2T with every request at once (lab07's depth-first
 * (ceil(n/c) + 1) T). */
const double LEVEL2_PREDICTED_EFFICIENCY = 0.4;

void serve_level2(const level2_queue *q)
{
    /* SOLUTION: a stream per request: all of them fit the SMs at once (33
     * of a thirty-second on an H100), and two requests in one stream take
     * turns. And breadth-first: every step 0, then every step 1. Each queue
     * then holds its step 0s first, none of which waits for anything, so all
     * start at once; behind them, each step 1 waits for its own step 0 (its
     * stream's order keeps it after it), and holds back only other step 1s,
     * whose step 0s end at the same time. No waits: the program times the
     * call until the GPU is idle. */
    int streams = q->n < LEVEL2_STREAMS ? q->n : LEVEL2_STREAMS;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < q->n; i++)
            q->step(i, k, q->stream[i % streams]);
}
