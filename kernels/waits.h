/* Waiting for the GPU, measured: what a wait for a kernel costs the host (a
 * CPU core's share, and how late it wakes on the GPU's own clock), and what
 * one dependency between two tiny kernels costs, kept on the GPU or taken
 * through the host. lab08's part 2; any lab that asks what a wait costs. */
#ifndef STREAMLAB_WAITS_H
#define STREAMLAB_WAITS_H

#include "kernels.h"
#include "../common/lab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    launch_record *d_rec, *h_clock; /* the kernel's record; a clock reading, pinned */
    uint64_t tag;                   /* the latest kernel's own number */
    int clock_reads;                /* host_minus_gpu_clock_ns's readings, before each kernel */
    tally *logged;                  /* a kernel whose record is not its own, or short: wrong */
} kernel_wait;

/* Its buffers, owned by the run; its kernels' records checked into *logged. */
kernel_wait kernel_wait_open(lab_run *run, int clock_reads, tally *logged);

/* spin_and_log of `ns` in `stream`, `done` recorded after it, then
 * event_wait(done, nap_us): returns the share of a CPU core the process used
 * meanwhile; *late_us gets how long after the kernel's own end the wait
 * returned: its %globaltimer moved onto the host's clock
 * (host_minus_gpu_clock_ns, read just before), so early by a microsecond or
 * so at most, never late. */
double kernel_wait_measure(kernel_wait *k, cudaStream_t stream, uint64_t ns, cudaEvent_t done,
                           double nap_us, double *late_us);

/* One dependency hop, three ways: `hops` empty kernels one after another,
 * each waiting for the one before. */
enum hop_way {
    HOP_GPU,            /* alternating s[0] and s[1], each behind cudaStreamWaitEvent on
                           `order`: the GPU waits. Timed by events, behind a 2 ms gate kernel
                           that holds the chain until the host has issued it all */
    HOP_STREAM_SYNC,    /* in s[0], a launch then cudaStreamSynchronize: the host waits */
    HOP_BLOCKING_EVENT, /* in s[0], a launch, `blocking` (cudaEventBlockingSync) recorded,
                           cudaEventSynchronize: the host sleeps until woken */
    HOP_WAYS
};

/* The time of one hop in us: for HOP_GPU by `timer`'s events, adding 1 to
 * *gate_late when the gate ended before the chain was issued (the host's
 * issuing then counts in it); the others on the host's clock. */
double dependency_hop_us(enum hop_way how, const cudaStream_t *s, cudaEvent_t order,
                         cudaEvent_t blocking, event_timer *timer, int hops, int *gate_late);

#ifdef __cplusplus
}
#endif
#endif
