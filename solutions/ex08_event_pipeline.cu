/* ex08: turn a host-chained pipeline into an event-chained one.
 *
 * The reference solution: exercises/ex08_event_pipeline.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex08.h.
 *
 * Build and run:   make sol08 && ./sol08      (./sol08 --quick: a short run)
 */
#include "ex08.h"
#include "streamlab.h"

void run_pipeline(const pipeline *p)
{
    for (int b = 0; b < p->batches; b++)
        for (int s = 0; s < EX08_STAGES; s++) {
            /* SOLUTION: stream[s] waits, on the GPU, for the point stream[s-1]
             * had reached when stage s-1 of this batch was queued: its end.
             * cudaStreamWaitEvent takes the event's latest record at the
             * moment of the call, so one event per stage boundary serves
             * every batch, re-recorded each time. */
            if (s > 0)
                CUDA_CHECK(cudaStreamWaitEvent(p->stream[s], p->done[s - 1], 0));
            p->stage(s, b);
            /* SOLUTION: "stage s of batch b has ended", for stage s+1 of b.
             * Nothing here waits on the host: while batch b's later stages
             * run, the next batch's first stage already runs in stream[0]. */
            if (s < EX08_STAGES - 1)
                CUDA_CHECK(cudaEventRecord(p->done[s], p->stream[s]));
        }
}
