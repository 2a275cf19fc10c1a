/* ex02's contract: what exercises/ex02_pinned_memory.cu gives the program
 * around it (exercises/given/ex02.cu), and nothing more. */
#ifndef STREAMLAB_EX02_H
#define STREAMLAB_EX02_H

#include <stddef.h>
#include <stdint.h>

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

/* ---- Level two: a pinned staging ring under a budget ----
 * The program hands a large pageable source (fresh words every run) and a
 * small pinned ring, far smaller than the source; the upload of the whole
 * source through the ring is yours. How to cut the ring into slots, and
 * what may run while what, is yours to work out from lab02's model. */

#include <cuda_runtime.h>

enum { LEVEL2_RING_MIB = 16, LEVEL2_EVENTS = 16 };

/* What upload_level2() is handed, made by the program. */
typedef struct {
    const uint32_t *source;  /* pageable (malloc), `words` words: read it, do not pin it */
    size_t words;
    uint32_t *ring;          /* pinned, `ring_words` words (LEVEL2_RING_MIB MiB): yours to cut */
    size_t ring_words;
    cudaStream_t stream;     /* the stream send() queues the copies into; non-blocking */
    cudaEvent_t event[LEVEL2_EVENTS]; /* a pool (cudaEventDisableTiming): use any */
    /* Queues, in `stream`, the copy of ring[from .. from + n - 1] to words
     * at .. at + n - 1 of the source's place on the GPU, and returns at
     * once: the copy reads the ring when the copy engine gets to it, not
     * now. The only way to the GPU. */
    void (*send)(size_t from, size_t at, size_t n);
} level2_upload;

/* Yours, before upload_level2(): the model's answer to "what fraction of
 * the model's bound, min(host memcpy, link), does level one's way reach?"
 * (one slot: copy a chunk into the ring, send it, wait for it, the next),
 * with lab02's H100 numbers (host memcpy 13.4 GB/s, link 55.3 GB/s), as a
 * fraction (0.5 for 50%). The program prints it beside the model's value at
 * the run's own bandwidths; no points ride on it. */
extern const double LEVEL2_PREDICTED_EFFICIENCY;

/* Yours. Uploads the whole source to the GPU through the ring, from this
 * thread alone: every word of the source sent once, to its own place, from
 * the ring. Returns when every copy has landed. The program times it, checks
 * every word on the GPU, and holds the copy stream back at random moments in
 * runs of its own, so that a slot refilled before its copy ran shows. */
void upload_level2(const level2_upload *u);

#endif
