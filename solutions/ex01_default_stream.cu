/* ex01: make two streams overlap without removing the legacy-stream call.
 *
 * The reference solution: exercises/ex01_default_stream.cu with its TODO
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex01.h.
 *
 * Build and run:   make sol01 && ./sol01
 */
#include "ex01.h"
#include "streamlab.h"

void create_work_streams(cudaStream_t streams[2])
{
    /* SOLUTION: non-blocking streams. A stream made by cudaStreamCreate is a
     * blocking stream: the legacy default stream waits for all earlier work
     * in blocking streams, and their later work waits for it. So the tiny
     * call between the launches waits for kernel 1 and kernel 2 waits for
     * the call: the kernels take turns. cudaStreamNonBlocking opts a stream
     * out of that implicit synchronisation with the legacy stream: the call
     * still runs, but it is no longer a barrier, and nothing else orders
     * kernel 2 after kernel 1. (Had the call needed the kernels' results, the
     * fix would be an explicit dependency, cudaStreamWaitEvent, not a flag.) */
    for (int i = 0; i < 2; i++)
        CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
}

/* SOLUTION: a per-thread default stream takes turns with the legacy stream:
 * it "does not synchronize with other streams (just like explicitly created
 * streams)", and that is the trouble: explicitly created streams without a
 * flag are blocking streams, and so is the per-thread stream. The legacy
 * call waits for worker 0's stream and worker 1's stream waits for it:
 * 2 kernel lengths, the sum. */
const double LEVEL2_PREDICTED_PER_THREAD_KERNELS = 2;

cudaStream_t level2_worker_stream(int worker)
{
    /* SOLUTION: a non-blocking stream for each worker, created in its own
     * thread (any thread may use any stream; one per worker keeps the two
     * kernels out of each other's order). Only cudaStreamNonBlocking takes a
     * stream out of the legacy stream's implicit synchronisation: a thread's
     * default stream does not, and the build flag that makes 0 mean it would
     * not either (the flag changes what 0 means, not what the legacy stream
     * waits for). The worker number is not needed: each thread makes its own. */
    (void)worker;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}
