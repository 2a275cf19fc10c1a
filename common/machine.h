/* What the machine gave this program at a moment, and whether another
 * process took part of it: the GPU's time, its link, the host's memory or
 * CPU, the SM clock. machine_probe() (kernels.h) measures a moment;
 * machine_interference() compares two. Host-only C, no CUDA, so the tests
 * check the comparison without a GPU. */
#ifndef STREAMLAB_MACHINE_H
#define STREAMLAB_MACHINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether another process is using the GPU, as sharing_probe() (kernels.h)
 * measures it: the driver's list of processes, and what a probe kernel lost. */
typedef struct {
    int other_processes; /* other processes holding a compute context on this GPU, as
                            the driver (NVML) lists them; -1 when it does not say */
    double lost_ms;      /* time the GPU spent on other work while the probe waited or ran */
    double probe_ms;     /* the probe, from its launch to its result; 0: not measured */
} gpu_sharing;

/* The GPU counts as shared when the probe lost at least this fraction of its
 * time, and at least SHARED_MS_MIN. On an idle GPU it loses microseconds;
 * beside one other busy process the GPU alternates between the two, about
 * half each, and a short probe can lose more (it waits for the other's slice). */
#define SHARED_FRACTION_MIN 0.25
#define SHARED_MS_MIN 1.0

/* 1 when the probe lost at least SHARED_FRACTION_MIN of its time and
 * SHARED_MS_MIN: another process's work ran on the GPU meanwhile. */
int gpu_was_shared(const gpu_sharing *s);

/* One moment of the machine (about 40 ms to measure). 0: not measured. */
typedef struct {
    gpu_sharing sharing;  /* time slicing with another process's kernels */
    double link_gbps[2];  /* pinned 8 MiB copies, [0] H2D and [1] D2H: median of 5 */
    double host_gbps;     /* memcpy between two 32 MiB host buffers: median of 5 */
    double launch_us;     /* an empty kernel, launch to the host seeing it done: median of 21 */
    double sm_mhz;        /* the SM clock while a kernel spins: clock64() over %globaltimer */
} machine_state;

/* Adds a clause to an account of interference, why[] of size bytes: after
 * "; " when it holds one already, cut short at size. printf-style; returns
 * 1, so that a caller can count its clauses. The signs below, and
 * lab_attempt's account of its attempts, are built with it. */
int why_append(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What differs between two moments a and b (the run's start and now) that
 * another process or the machine's state would explain: a copy rate or the
 * host's memcpy well below the other moment's (or the link well below its
 * raw rate, raw_link_gbps, 0 when unknown), launches much slower, the SM
 * clock well under its top (max_mhz, 0 when unknown), the GPU time-sliced.
 * Writes each sign it saw into why[] as a reader would say it ("the link ran
 * at 31-55 GB/s H2D: another process may be copying"), separated by "; ",
 * and returns how many it saw: 0 means the two moments look alike. */
int machine_interference(const machine_state *a, const machine_state *b, double raw_link_gbps,
                         double max_mhz, char *why, size_t size);

#ifdef __cplusplus
}
#endif
#endif
