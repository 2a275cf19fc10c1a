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
 * then `reps` timed launches, one sample each, between bench->timer's two
 * events recorded in bench->stream, and returns their statistics (stats_of
 * or measure(), common/stats.h and timing.h). The program checks that each
 * call's last launch lies right between those two events. It calls this
 * twice, on kernels of two durations it draws at random, and counts the
 * launches from the kernel's own records on the GPU: the launches beyond
 * your samples are your warm-up. */
stats time_kernel(kernel_bench *bench, int reps);

/* ---- Level two: the kernel timed while another stream holds the GPU ----
 * The same kind of kernel, timed on a GPU that is not yours alone: before
 * each launch, a background in another stream takes every SM for a while,
 * and the kernel's one block needs a whole SM, so it starts only once the
 * background ends. What each of your events then reads is lab03's model. */

/* What level two hands you, all of it made by the program before your code
 * runs. Neither the kernel's duration nor the background's is in it. */
typedef struct {
    /* Queues, in `background`, work that holds every SM of the GPU for a
     * length the program draws afresh at each call, and returns once that
     * work has the SMs (some tens of microseconds). */
    void (*start_background)(void);
    /* Queues the kernel in `stream` and returns at once. One
     * start_background() before each launch(), and launch() while that
     * background still runs: a launch with no background queued since the
     * last one breaks the contract (a wrong launch), and one whose
     * background had already ended (the host waited) ran on an idle GPU. */
    void (*launch)(void);
    cudaStream_t stream;     /* the kernel's stream */
    cudaStream_t background; /* the background's stream (no host-side waits on it) */
    event_timer timer;       /* a start and a stop event, yours to record */
} loaded_bench;

/* Yours, before time_under_load(): the model's answer to "what do events
 * recorded in `stream` just before and just after launch() read, as a
 * multiple of the kernel's duration, when the background started just
 * before it lasts as long as the kernel?" (1.5 for one and a half times).
 * The program measures exactly that itself and prints it beside your
 * answer; no points ride on it. */
extern const double LEVEL2_PREDICTED_RATIO;

/* Yours. Level two's time_kernel(): `reps` samples, after at least one
 * untimed one, each a start_background() then a launch(), and the
 * statistics of the kernel's own duration on the GPU: from when it starts
 * on an SM to when it ends, not the time it waited for one. No host-side
 * wait (nor a delay) between start_background() and launch(): the host
 * would then launch on an idle GPU. After launch(), waiting for your stop
 * event to read the sample is fine, as in level one. The
 * program calls it twice, on kernels of two durations it draws at random,
 * and checks every launch and every background in their own records on the
 * GPU. */
stats time_under_load(loaded_bench *bench, int reps);

#endif
