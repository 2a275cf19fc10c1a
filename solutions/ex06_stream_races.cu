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
