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

/* ---- Level two: two host threads, each with its own stream ----
 * The same three launches, now from three host threads: worker 0 launches
 * kernel 1, then the program's main thread launches the tiny kernel in the
 * legacy default stream, then worker 1 launches kernel 2 (the program makes
 * each wait for the one before, on the host, so the order is always this).
 * Each worker launches into the stream level2_worker_stream() returned in
 * that thread. The program times the three on those streams and on each
 * worker's own per-thread default stream (cudaStreamPerThread), in pairs,
 * and checks every kernel's record on the GPU, as in level one. The build
 * is given: the program and kernels/ are compiled without
 * --default-stream per-thread, as a library you link is compiled as it is. */

/* Yours, before level2_worker_stream(): the model's answer to "with each
 * worker launching into its own cudaStreamPerThread, how long do the three
 * launches take, in kernel lengths?" (1: the kernels overlap; 2: they take
 * turns). The program prints it beside its measurement, and the model's
 * value beside both once you have written it; no points ride on it. */
extern const double LEVEL2_PREDICTED_PER_THREAD_KERNELS;

/* Yours. Called once in each worker thread (worker 0, then worker 1, before
 * anything is timed); returns the stream that worker launches its kernel
 * into in every run. The stream lives until the program ends. */
cudaStream_t level2_worker_stream(int worker);

#endif
