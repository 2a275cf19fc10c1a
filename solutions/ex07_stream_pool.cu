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
