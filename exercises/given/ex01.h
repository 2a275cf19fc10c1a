/* ex01's contract: what exercises/ex01_default_stream.cu gives the program
 * around it (exercises/given/ex01.cu), and nothing more. */
#ifndef STREAMLAB_EX01_H
#define STREAMLAB_EX01_H

#include <cuda_runtime_api.h>

/* Yours. Creates the two streams the program runs its work on, in this order
 * each time: kernel 1 in streams[0], a tiny kernel in the legacy default
 * stream (as a library call might put there), kernel 2 in streams[1]. Each
 * kernel spins for a known time. The program times that work on your streams
 * and on two blocking streams of its own, in turns, and checks from each
 * kernel's record on the GPU that every launch ran once, for its full time.
 * The streams live until the program ends. */
void create_work_streams(cudaStream_t streams[2]);

#endif
