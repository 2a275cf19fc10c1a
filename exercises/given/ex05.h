/* ex05's contract: what exercises/ex05_stream_priorities.cu gives the program
 * around it (exercises/given/ex05.cu), and nothing more. */
#ifndef STREAMLAB_EX05_H
#define STREAMLAB_EX05_H

#include <cuda_runtime_api.h>

/* Yours. Creates and returns the stream the program launches its short,
 * latency-critical kernel on, while a background of many short blocks,
 * launched on a stream of the least priority, keeps every SM busy. The
 * program measures the kernel's latency, from its launch to its completion,
 * on your stream and on a stream of the background's priority, at the same
 * moments of the same background, in turns; it asks cudaStreamGetPriority
 * for your stream's priority, checks every output of the kernel, and
 * destroys the stream at its end (unless it is one of CUDA's own: 0,
 * cudaStreamLegacy, cudaStreamPerThread). Called once, on an idle GPU. */
cudaStream_t create_critical_stream(void);

/* ---- Level two: a latency budget ----
 * The same critical kernel on your stream, now behind a background whose
 * shape you choose: its work is a number of tiles, and each of its blocks
 * does a setup (loading its tables, say) and then a run of consecutive
 * tiles. The program launches it as one grid on the least-priority stream,
 * ceil(tiles / your tiles per block) blocks, and the critical kernel at a
 * moment of it, as in level one. */

enum {
    LEVEL2_WAIT_BUDGET_US = 200, /* the critical kernel's wait, 9 launches in 10 */
    LEVEL2_SETUP_SHARE_PCT = 15  /* the most of a block's time its setup may take */
};

/* One round's background, drawn afresh every round. */
typedef struct {
    int slots;             /* blocks of the background the GPU holds at once */
    int tiles_per_slot;    /* the background's tiles over its slots: about 5 ms of
                              work each; tiles = slots x tiles_per_slot */
    long long tiles;
    double tile_us;        /* one tile's time on the GPU (drawn: 2 to 16 us) */
    double setup_us;       /* each block's setup, before its first tile (5 to 10 us) */
} level2_job;

/* Yours, before level2_tiles_per_block(): the model's answer to "behind the
 * background as handed out (one block per slot, each doing tiles_per_slot
 * tiles), what is the median wait of the critical kernel on your level-one
 * stream, in microseconds?" Once you have written it, the program prints it
 * beside the model's value from this run's rounds; no points ride on it. */
extern const double LEVEL2_PREDICTED_WAIT_US;

/* Yours. How many consecutive tiles each block of this round's background
 * does. The contract: from 1 to job->tiles_per_slot (the grid then fills
 * every slot of the GPU), and each block's setup at most
 * LEVEL2_SETUP_SHARE_PCT percent of its time, setup_us / (setup_us +
 * tiles x tile_us): the background is the GPU's main work. A round whose
 * answer breaks it counts as wrong (the program then launches the nearest
 * shape inside 1 .. tiles_per_slot). Called once a round, with a fresh job.
 * The program measures the critical kernel's latency on your level-one
 * stream, at moments spread over 10%-90% of the background and alone on an
 * idle GPU, in the same rounds: its wait is the first less the second's
 * median, and 9 waits in 10 must be within LEVEL2_WAIT_BUDGET_US. It counts
 * every tile the background ran, and records on the GPU's clock when each
 * block began and ended. */
int level2_tiles_per_block(const level2_job *job);

#endif
