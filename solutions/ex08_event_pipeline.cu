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

/* ---- Level two: a fork and a join (graded apart) ---- */

/* SOLUTION: lab08's model with the longest path in place of sum(t): a
 * chain's path is 0.2 + 1 + 1 + 0.2 = 2.4 ms, the fork and join's
 * 0.2 + 1 + 0.2 = 1.4; each branch's stream is as busy either way, 1 ms a
 * batch. Over 4 batches: 1.4 + 3 x 1 = 4.4 ms against 2.4 + 3 = 5.4 ms,
 * 0.81. (With each batch's branch times drawn afresh the program's model
 * says about 0.82.) */
const double LEVEL2_PREDICTED_EFFICIENCY = 4.4 / 5.4;

void run_level2(const level2_pipeline *p)
{
    cudaEvent_t first = p->event[0], a = p->event[1], b = p->event[2];
    for (int k = 0; k < p->batches; k++) {
        p->stage(LEVEL2_FIRST, k);
        /* SOLUTION: the fork: one record, waited for by both branches'
         * streams. Neither branch waits for the other: they read only what
         * the first wrote, so they run side by side and the batch's path
         * holds the longer branch, not both. */
        CUDA_CHECK(cudaEventRecord(first, p->stream[LEVEL2_FIRST]));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[LEVEL2_BRANCH_A], first, 0));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[LEVEL2_BRANCH_B], first, 0));
        p->stage(LEVEL2_BRANCH_A, k);
        p->stage(LEVEL2_BRANCH_B, k);
        /* SOLUTION: the join: two events, both waited for. Either branch
         * can end last (their times are drawn afresh every batch), so a
         * join that waits only for the one that is usually later reads the
         * other's old word in some batches. */
        CUDA_CHECK(cudaEventRecord(a, p->stream[LEVEL2_BRANCH_A]));
        CUDA_CHECK(cudaEventRecord(b, p->stream[LEVEL2_BRANCH_B]));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[LEVEL2_JOIN], a, 0));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[LEVEL2_JOIN], b, 0));
        p->stage(LEVEL2_JOIN, k);
    }
}
