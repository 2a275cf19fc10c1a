/* ex02's contract: what exercises/ex02_pinned_memory.cu gives the program
 * around it (exercises/given/ex02.cu), and nothing more. */
#ifndef STREAMLAB_EX02_H
#define STREAMLAB_EX02_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

/* The staging buffers the program's pipeline takes in turn. */
enum { STAGES = 2 };

/* Yours. Allocates the STAGES staging buffers, `bytes` each, into
 * stage[0..STAGES-1]: two separate buffers, each big enough for one chunk.
 * The program then produces each chunk on the host into one of them and
 * copies it to the GPU with cudaMemcpyAsync, producing the next chunk into
 * the other meanwhile; before it refills a buffer it waits for the copy that
 * last read it. It asks cudaPointerGetAttributes whether they are pinned, and
 * checks every word that reaches the GPU. They live until the program calls
 * free_staging(), once, at its end. */
void make_staging(uint32_t *stage[STAGES], size_t bytes);

/* Yours. Frees what make_staging() allocated, the matching way. */
void free_staging(uint32_t *stage[STAGES]);

/* ---- Level two: results come back ----
 * Chunks go to the GPU and their results come back to the host, which
 * checks them: the host is a stage at both ends of the pipeline. The
 * program calls make_staging() twice more for it, once for the upload slots
 * and once for the result slots: chunk i goes up from upload slot
 * i % STAGES and comes back into result slot i % STAGES. */

enum { LEVEL2_CHUNKS = 8, LEVEL2_STREAMS = 2, LEVEL2_EVENTS = 4 };

/* What one level-two run hands you, all of it made by the program before
 * your code runs. The slots, the words and the GPU's work are not in it:
 * the three functions reach them. */
typedef struct {
    int chunks;                          /* n: LEVEL2_CHUNKS (4 in the check pass) */
    cudaStream_t stream[LEVEL2_STREAMS]; /* non-blocking: use either, or both */
    cudaEvent_t event[LEVEL2_EVENTS];    /* a pool (cudaEventDisableTiming): use any */
    /* The host's work, on this thread: fills upload slot i % STAGES with
     * chunk i's fresh words; returns when they are written. Chunks 0, 1, 2 ... in order. */
    void (*produce)(int i);
    /* Queues in `s` (one of stream[]) the upload of slot i % STAGES, the
     * GPU's work on it and the download of its results into result slot
     * i % STAGES, and returns at once: from pinned slots, before any of
     * it has run. */
    void (*queue_chunk)(int i, cudaStream_t s);
    /* The host's work, on this thread: reads result slot i % STAGES as
     * chunk i's results, checks every word, and poisons the slot. */
    void (*consume)(int i);
} level2_job;

/* Yours, before run_round_trip(): the model's answer to "what fraction of
 * the model's best wall does the way handed out reach?" (produce, queue,
 * wait for the stream, consume, chunk after chunk), for LEVEL2_CHUNKS
 * chunks, a consume as long as a produce (C = P) and a GPU path (upload,
 * work, download) of G = 1.6 P, as a fraction (0.5 for 50%). The model's
 * best wall is the wall of the schedule lab02's handout describes (level
 * two): the first chunk through every stage, then one period of the
 * slowest stage per chunk, the host's produce and consume counting as one.
 * It is that schedule's wall, not a lower bound: a schedule can beat it a
 * little, and the rubric's model_limit allows for that. The program prints
 * your answer, and beside it, once you have written it, the model's value
 * at your run's own times; no points ride on it. */
extern const double LEVEL2_PREDICTED_EFFICIENCY;

/* Yours. Produces, queues and consumes every chunk, each exactly once,
 * from this thread: chunk i's consume only after its download has ended
 * (an event recorded after queue_chunk(), or its stream, says when); an
 * upload slot refilled only after the upload that last read it has ended,
 * a chunk queued only after the chunk that last used its result slot was
 * consumed. The program times it from an idle GPU to cudaDeviceSynchronize
 * after it returns, with each stage's own time (produce, consume, and each
 * chunk's GPU path on events), checks every result word and every call,
 * and asks, as each consume begins, whether that chunk's download had ended
 * and, as each produce begins, whether the upload that last read its slot
 * had. In a quarter of the runs the GPU's work is three times as long. */
void run_round_trip(const level2_job *job);

#endif
