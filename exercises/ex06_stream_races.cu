/* ex06: hand a buffer from one stream to another without a race.
 *
 * The task: the program around this file (exercises/given/ex06.cu) runs a
 * two-stage pipeline through issue_pipeline(). h->stage1() queues stage 1 in
 * stream `produce`: it uploads fresh inputs, sits through a slow step (2 ms
 * as a rule, several times that in some runs) and writes d_mid = f(in).
 * h->stage2() queues stage 2 in stream `consume`: it computes d_out =
 * f(d_mid) and copies it back. As given, nothing tells `consume` to wait for
 * `produce`: stage 2 reads d_mid before stage 1 has written it, and every run
 * comes back wrong. Complete the TODO(student) so that stage 2 never reads
 * d_mid before stage 1 has written it, and so that the GPU waits, not the
 * host. No cudaStreamSynchronize, cudaDeviceSynchronize or
 * cudaEventSynchronize here: those would be correct too, but the host would
 * block. And no delay of your own: the program varies how late stage 1 is.
 * exercises/given/ex06.h is the contract.
 *
 * The target: zero wrong results over 21 runs (20 timed runs, --reps, and a
 * warm-up; each on fresh random inputs with every buffer poisoned, checked
 * on the host and on the GPU), AND a host that never blocks: issuing a run
 * takes under 10% of the slow step, and stage 1 is still running when
 * issue_pipeline() returns, in every one of the 20 timed runs.
 *
 * Expected numbers on an H100:
 *   - the reference solution, two runs on an H100 (2026-11-22): issue_fraction
 *     0.015 and 0.021;
 *   - lab06 issued an event handoff in 0.048 ms, and a host-side wait in
 *     10.06 ms, against a 10 ms stage (docs/results/h100/lab06.csv).
 *
 * Level two (graded apart, below issue_pipeline): the same stages over 6
 * items through a ring of 2 slots, each slot reused by one item after
 * another, and in a quarter of the runs each the producer or the consumer
 * 4 to 8 times slower than the other. The target: zero wrong results and
 * every slot, by the GPU's clock, read after it was written and overwritten
 * only after it was read, in every run; and a host that never blocks (the
 * first stage 1 still running when issue_ring() returns, in every timed
 * run). The reference solution on an H100 (2026-11-23, 20 timed runs):
 * 0 of 33 million results wrong, no slot touched early in any run, issue
 * time 0.18 ms, issue fraction 0.088 median (level one's: 0.023).
 *
 * Build and run:   make ex06 && ./ex06   (--quick: 5 timed runs; --reps 500: 500)
 * As given it gets every result of both levels wrong, says which TODO to
 * complete, and exits 1.
 * Stuck? lab06's handout has hints, from gentle to explicit, under "Stuck?".
 */
#include "ex06.h"
#include "streamlab.h"

void issue_pipeline(const handoff *h)
{
    h->stage1(); /* stream produce: upload, the slow step, d_mid = f(in) */

    /* TODO(student): the goal: stage 2, in stream consume, starts on the GPU
     * only once stage 1, in stream produce, has written d_mid, however late
     * stage 1 is; and this function returns at once, while stage 1 is still
     * running. Two streams know nothing of each other: what can mark a point
     * in one stream that another stream can be told to wait for?
     * The contract: each stage issued once, stage 1 first; you have h->produce,
     * h->consume and h->produced (an event made for this, without timing);
     * no host-side wait of any kind, and no delay of your own.
     * How it is measured: every result checked; the GPU's clock says whether
     * stage 2 started after stage 1 ended; the call is timed, and the program
     * asks whether stage 1 is still running when it returns. */

    h->stage2(); /* stream consume: d_out = f(d_mid), then back to the host */
}

/* ---- Level two: a ring of two buffers (graded apart) ----
 * The same two stages over LEVEL2_ITEMS items, now through a ring of
 * LEVEL2_RING device slots: item i's stage 1 writes slot i % LEVEL2_RING,
 * and its stage 2 reads it, so every slot carries one item after another.
 * Each stage sits through a slow step before it touches its slot; the
 * program makes either one several times slower than the other in some runs,
 * at random. The target: every item's result right in every run, however
 * the two stages' speeds compare, and the host never waiting. */

void issue_ring(const ring_job *job)
{
    for (int i = 0; i < job->items; i++) {
        /* TODO(student): the goal: every item's result right, whichever
         * stage is the slow one, with the two streams running side by side.
         * The contract: each item's stage 1 and stage 2 issued once; you
         * have job->produce, job->consume and job->event[] (LEVEL2_EVENTS
         * events, without timing, for whatever you need); no host-side wait
         * of any kind, and no delay of your own.
         * How it is measured: every item's result checked on the GPU; by
         * the GPU's clock, every slot read only after its item was written
         * and overwritten only after that read had finished; and whether
         * the first stage 1 is still running when this returns.
         * Ask: which operations of different items touch the same slot, and
         * in which order must each pair of them run? */
        job->stage1(i); /* stream produce: upload, slow step, writes slot i % LEVEL2_RING */
        job->stage2(i); /* stream consume: slow step, reads slot i % LEVEL2_RING */
    }
}
