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
