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
 * Build and run:   make ex08 && ./ex08        (./ex08 --quick: a short run)
 * As given the results are right, the speedup is 1x, the host is blocked for
 * the whole run, and it exits 4.
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
