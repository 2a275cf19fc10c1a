/* ex03's contract: what exercises/ex03_event_timing.cu gives the program
 * around it (exercises/given/ex03.cu), and nothing more. */
#ifndef STREAMLAB_EX03_H
#define STREAMLAB_EX03_H

#include <cuda_runtime_api.h>
#include "timing.h" /* event_timer, stats, measure() */

/* What your timing harness is handed, all of it made by the program before
 * your code runs. The kernel's duration is not in it: measuring it is the
 * exercise. */
typedef struct {
    void (*launch)(void); /* launches the kernel once in `stream` and returns at
                             once: the kernel runs later */
    cudaStream_t stream;  /* the kernel's stream: record your events here */
    event_timer timer;    /* a start and a stop event, yours to record */
} kernel_bench;

/* Yours. Times the kernel of known duration as lab03 teaches: at least one
 * untimed launch first (warm-up: the first launch of a kernel loads it),
 * then `reps` timed launches, one sample each, between events recorded in
 * bench->stream, and returns their statistics (stats_of or measure(),
 * common/stats.h and timing.h). The program calls it twice, on kernels of
 * two durations it draws at random, and counts the launches from the
 * kernel's own records on the GPU: the launches beyond your samples are your
 * warm-up. */
stats time_kernel(kernel_bench *bench, int reps);

#endif
