/* ex13: reduce each bucket of gradients while the backward pass goes on.
 *
 * The reference solution: exercises/ex13_gradient_overlap.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex13.h.
 *
 * Build and run:   make sol13 && ./sol13      (./sol13 --quick: a short run)
 */
#include "ex13.h"
#include "streamlab.h"

void run_backward(const backward *b)
{
    int k = 0; /* the next bucket to reduce */
    for (int l = 0; l < b->layers; l++) {
        for (int g = 0; g < b->gpus; g++) {
            b->layer(g, l);
            /* SOLUTION: "layer l has ended on GPU g", in the stream that runs it */
            CUDA_CHECK(cudaEventRecord(b->done[g][l], b->compute[g]));
        }
        /* SOLUTION: every bucket this layer completes, now, while layer l+1
         * computes: each comm stream waits on its GPU for layer l's end
         * (cudaStreamWaitEvent takes the record just made), then one group
         * for every GPU. Buckets complete in order, so k only moves on. */
        for (; k < b->buckets && b->last_layer(k) == l; k++) {
            for (int g = 0; g < b->gpus; g++)
                CUDA_CHECK(cudaStreamWaitEvent(b->comm[g], b->done[g][l], 0));
            b->all_reduce(k);
        }
    }
}
