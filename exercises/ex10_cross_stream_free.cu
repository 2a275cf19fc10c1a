/* ex10: free a buffer that another stream still reads.
 *
 * The task: the program around this file (exercises/given/ex10.cu) makes a
 * buffer in stream `owner` (cudaMallocAsync) and fills it; stream `user`
 * waits for that, works a while (a few ms, drawn afresh every run), then
 * reads the buffer. Then it calls one of your two functions to free it, and
 * at once allocates its next buffer in `owner` and writes it. As given,
 * both free the buffer in `owner` with nothing to wait for: the pool hands
 * the same memory to the next allocation, `owner` overwrites it, and the
 * user's read, still to come, sees the new words (lab10, part 4). Fix it
 * two ways, the host never waiting:
 *   - free_after_use_wait(): still free in `owner`, but only after the
 *     user's read: an event recorded in `user`, waited for by `owner`;
 *   - free_in_last_user(): free it in `user`, its last user, where stream
 *     order alone puts the free after the read.
 * exercises/given/ex10.h is the contract.
 *
 * The target: not one word wrong in the user's reads (it counts them
 * itself, on the GPU, on fresh words every run), every buffer released, the
 * host inside your functions under a fifth of the user's pending work, and
 * that work still running when your function returns. The grader also runs
 * it under compute-sanitizer memcheck --track-stream-ordered-races all,
 * which names a free that races with a use.
 *
 * Level two, level2_make_pool(): a loop that allocates from a pool of
 * yours, frees in stream order and synchronises every iteration (ex10.h
 * says what it allocates; the sizes are drawn afresh every run). Work out
 * from lab10's model what the pool holds when the loop synchronises, and
 * what it must keep, before you write it. Targets: an iteration from your
 * pool within 1.5x of one from a pool that never hands memory back (in
 * pairs), and your release threshold within 25% of the memory an
 * iteration needs at once (the pool's own count).
 *
 * Expected numbers on an H100:
 *   - the reference solution on an H100 (2026-11-23): wrong_words 0,
 *     host_wait_fraction 0.00137 (./sol10) and 0.0013 (make grade),
 *     user_done_at_return 0: 10 of 10;
 *   - as given: 46,137,344 of 46,137,344 words wrong after each function,
 *     host_wait_fraction 0.0008; ./ex10 gives 1 of 10, make grade 0 (its
 *     memcheck pass names the use-after-free, which fails every correctness
 *     criterion) (labs/lab10_stream_ordered_memory/README.md, "The exercise");
 *   - level two, the reference: an iteration from its pool 0.97x to 1.01x
 *     one from an unlimited pool, level2_threshold_error_pct 0, in 10 runs
 *     with working sets of 96 to 448 MiB (2026-11-24; how the pool counts:
 *     lab10's handout, Part 3).
 *
 * Build and run:   make ex10 && ./ex10          (./ex10 --quick: fewer runs)
 * As given the user reads every word wrong, and it exits 1. Stuck? lab10's
 * handout has hints, from gentle to explicit, under "Stuck?".
 */
#include "ex10.h"
#include "streamlab.h"

void free_after_use_wait(void *buffer, cudaStream_t owner, cudaStream_t user)
{
    /* TODO(student): make `owner` wait, on the GPU, for what `user` has
     * queued so far (its read), before the free. */
    (void)user;
    CUDA_CHECK(cudaFreeAsync(buffer, owner));
}

void free_in_last_user(void *buffer, cudaStream_t owner, cudaStream_t user)
{
    /* TODO(student): free it where it was used last. */
    (void)user;
    CUDA_CHECK(cudaFreeAsync(buffer, owner));
}

cudaMemPool_t level2_make_pool(const level2_loop *loop)
{
    /* TODO(student), level two: the goal: a pool from which the loop's
     * iterations cost what they cost from a pool that keeps all it was
     * given (within 1.5x, timed in pairs), that holds on to no more than
     * the memory an iteration needs at once (its release threshold within
     * 25% of the pool's own count of it). Not allowed: the device's
     * default pool; allocating for the loop yourself. Predict first: what
     * is alive at once in an iteration, what does the pool reserve for it,
     * and what does it do with it at each synchronise?
     * As given: a pool of the device's memory, release threshold 0. */
    cudaMemPoolProps props = {};
    cudaMemPool_t pool;
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = loop->device;
    CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    return pool;
}

/* TODO(student), level two: your prediction (ex10.h), before you measure. */
const double LEVEL2_PREDICTED_REMAP_US_PER_MIB = 0;
