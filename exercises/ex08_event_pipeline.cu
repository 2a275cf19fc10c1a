/* ex08: turn a host-chained pipeline into an event-chained one.
 *
 * The task: the program around this file (exercises/given/ex08.cu) runs a
 * three-stage pipeline over 12 batches through run_pipeline(). p->stage(s, b)
 * queues stage s of batch b in p->stream[s] and returns at once; stage s of
 * a batch reads what stage s-1 of that batch wrote. As given, the host waits
 * for each stage before it launches the next (cudaStreamSynchronize): correct,
 * but the three streams never run at once, and the host is blocked for the
 * whole run. Make the GPU do the waiting:
 *   - stage s of batch b must still start only after stage s-1 of batch b
 *     has ended: an event recorded after one stage, waited for by the next
 *     stage's stream (p->done[] are made for you);
 *   - no cudaStreamSynchronize, cudaEventSynchronize or cudaDeviceSynchronize
 *     in run_pipeline(): the program waits for the GPU after it returns.
 * exercises/given/ex08.h is the contract.
 *
 * The target (lab08's model): with stage times t drawn afresh every run,
 * host-chained takes B x sum(t), event-chained sum(t) + (B-1) x max(t). Your
 * pipeline at 90% or more of that speedup over the program's own
 * host-chained run (the efficiency), every word right, every stage after the
 * one feeding it, and run_pipeline() returning in under 10% of the run.
 *
 * Expected numbers on an H100 (the reference solution, default run): level
 * one's efficiency 1.01 with the host inside run_pipeline() for 1% of the
 * run; level two's 1.02 (2.12x over host-chained).
 *
 * Level two (graded apart, below run_pipeline): a pipeline that forks and
 * joins, 4 batches of four stages (which stage reads which: ex08.h). Each
 * branch's time is drawn afresh for every batch. The target is 90% of the
 * model's speedup again, where the model is lab08's with the longest path
 * through the graph in place of sum(t).
 *
 * Build and run:   make ex08 && ./ex08        (./ex08 --quick: a short run)
 * As given the results are right, the speedup is 1x, the host is blocked for
 * the whole run, and it exits 4. Stuck? lab08's handout has hints, from
 * gentle to explicit, under "Stuck?".
 */
#include "ex08.h"
#include "streamlab.h"

void run_pipeline(const pipeline *p)
{
    for (int b = 0; b < p->batches; b++)
        for (int s = 0; s < EX08_STAGES; s++) {
            /* TODO(student): the GPU, not the host, must hold stage s of
             * batch b back until stage s-1 of batch b has ended. */
            p->stage(s, b);
            /* TODO(student): this host wait keeps the order, and keeps every
             * stream idle but one. Replace it with something the GPU waits for. */
            CUDA_CHECK(cudaStreamSynchronize(p->stream[s]));
        }
}

/* ---- Level two: a fork and a join (graded apart) ----
 * LEVEL2_BATCHES batches of LEVEL2_STAGES stages, stage s in p->stream[s].
 * ./ex08 prints your prediction (beside the model's value for level one's
 * way, once you have written it), and your pipeline's speedup beside the
 * model's. */

/* TODO(student): before you write run_level2(), work out from lab08's model
 * what level one's way reaches here: each stage waiting for the stage
 * numbered before it (first, A, B, join), 4 batches, every stage at its
 * mean time (first and join 0.2 ms, each branch 1 ms), against the best the
 * graph allows. A fraction (0.5 for 50%). */
const double LEVEL2_PREDICTED_EFFICIENCY = 0;

void run_level2(const level2_pipeline *p)
{
    /* TODO(student): the goal: at least 90% of the model's speedup over the
     * program's host-chained run.
     * The contract: every stage of every batch queued once, through
     * p->stage; each stage starting on the GPU only after every stage it
     * reads (ex08.h) has ended, in every batch, whatever the stage times;
     * no waits of any kind: return at once.
     * How it is measured: timed from an idle GPU until it is idle again, in
     * rounds with the program's host-chained run; every batch's word checked
     * against the CPU reference, and each stage's start against the ends of
     * the stages it reads on the GPU's own clock.
     * Ask: what is the longest path a batch must take through these stages,
     * and does your chain of waits make it longer? */
    for (int b = 0; b < p->batches; b++)
        for (int s = 0; s < LEVEL2_STAGES; s++) {
            p->stage(s, b);
            CUDA_CHECK(cudaStreamSynchronize(p->stream[s]));
        }
}
