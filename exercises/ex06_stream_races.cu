/* ex06: hand a buffer from one stream to another without a race.
 *
 * The task: the program around this file (exercises/given/ex06.cu) runs a
 * two-stage pipeline through issue_pipeline(). h->stage1() queues stage 1 in
 * stream `produce`: it uploads fresh inputs, sits through a slow step (2 ms
 * as a rule, several times that in some runs) and writes d_mid = f(in).
 * h->stage2() queues stage 2 in stream `consume`: it computes d_out =
 * f(d_mid) and copies it back. As given, nothing tells `consume` to wait for
 * `produce`: stage 2 reads d_mid before stage 1 has written it, and every run
 * comes back wrong. Complete the TODO(student) so that the GPU waits, not the
 * host:
 *   - record the event h->produced in stream `produce` after stage 1;
 *   - make stream `consume` wait for that event before stage 2.
 * No cudaStreamSynchronize, cudaDeviceSynchronize or cudaEventSynchronize
 * here: those would be correct too, but the host would block. And no delay
 * of your own: the program varies how late stage 1 is.
 * exercises/given/ex06.h is the contract.
 *
 * The target: zero wrong results over every run (each on fresh random
 * inputs with every buffer poisoned, checked on the host and on the GPU),
 * AND a host that never blocks: issuing a run takes under 10% of the slow
 * step, and stage 1 is still running when issue_pipeline() returns, in every
 * run.
 *
 * Build and run:   make ex06 && ./ex06        (./ex06 --quick: 5 runs; --reps 500: many)
 * As given it gets every result wrong, says which TODO to complete, and exits 1.
 */
#include "ex06.h"
#include "streamlab.h"

void issue_pipeline(const handoff *h)
{
    h->stage1(); /* stream produce: upload, the slow step, d_mid = f(in) */

    /* TODO(student): stage 2 must not start before stage 1 has written d_mid.
     * Record h->produced in stream produce here, and make stream consume wait
     * for it: the GPU holds stage 2 back, the host carries on at once. */

    h->stage2(); /* stream consume: d_out = f(d_mid), then back to the host */
}
