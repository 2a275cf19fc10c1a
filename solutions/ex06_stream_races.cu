/* ex06: hand a buffer from one stream to another without a race.
 *
 * The reference solution: exercises/ex06_stream_races.cu with its TODO done,
 * marked SOLUTION with the reason. The task, the target and the contract are
 * there and in exercises/given/ex06.h.
 *
 * Build and run:   make sol06 && ./sol06   (--quick: 5 timed runs; --reps 500: 500)
 */
#include "ex06.h"
#include "streamlab.h"

void issue_pipeline(const handoff *h)
{
    h->stage1(); /* stream produce: upload, the slow step, d_mid = f(in) */

    /* SOLUTION: the event marks the point stream produce has reached once
     * stage 1 has written d_mid; cudaStreamWaitEvent puts a wait for it into
     * stream consume. The GPU holds stage 2 back until stage 1 is done,
     * however long that takes, and both calls return to the host at once: it
     * never blocks. (Waiting with cudaStreamSynchronize(produce) here would be
     * correct too, but the host would sit out the whole slow step before
     * issuing stage 2.) */
    CUDA_CHECK(cudaEventRecord(h->produced, h->produce));
    CUDA_CHECK(cudaStreamWaitEvent(h->consume, h->produced, 0));

    h->stage2(); /* stream consume: d_out = f(d_mid), then back to the host */
}

void issue_ring(const ring_job *job)
{
    /* SOLUTION: two events per slot, one for each direction of the handoff.
     * written[s] marks, in stream produce, that slot s holds its newest item:
     * stream consume waits for it before reading (read after write, as in
     * level one). read[s] marks, in stream consume, that slot s has been
     * read: stream produce waits for it before overwriting the slot with the
     * item after next (write after read). Without the second wait a slow
     * consumer finds its slot already overwritten. Each wait takes the
     * event's latest record when it is issued, so each record comes before
     * the wait that needs it; the first LEVEL2_RING items find their slots
     * free and wait for nothing. Every call returns at once: the GPU waits,
     * the host never does. */
    const cudaEvent_t *written = job->event, *read = job->event + LEVEL2_RING;
    for (int i = 0; i < job->items; i++) {
        int s = i % LEVEL2_RING;
        if (i >= LEVEL2_RING)
            CUDA_CHECK(cudaStreamWaitEvent(job->produce, read[s], 0));
        job->stage1(i);
        CUDA_CHECK(cudaEventRecord(written[s], job->produce));
        CUDA_CHECK(cudaStreamWaitEvent(job->consume, written[s], 0));
        job->stage2(i);
        CUDA_CHECK(cudaEventRecord(read[s], job->consume));
    }
}
