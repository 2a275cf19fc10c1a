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

#endif
