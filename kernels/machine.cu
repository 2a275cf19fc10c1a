/* What the machine gives this program now: machine_probe(), see kernels.h.
 *
 * Each number is one another process could take away: the link (its
 * copies), host memory bandwidth (its memcpys, or a host copier), launch
 * latency (a busy CPU, or the GPU's queues full of its work), the SM clock
 * (the GPU holding its power down), and the GPU's time (sharing_probe).
 * Small and quick on purpose: a probe runs at each end of a run and again
 * whenever a comparison fails, to say whether the failure is the lesson's or
 * the machine's. */
#include "kernels.h"
#include "../common/check.h"
#include "../common/stats.h"
#include "../common/timing.h"

#include <stdlib.h>
#include <string.h>

static const size_t LINK_BYTES = 8u << 20;  /* 0.15 ms at 55 GB/s: long beside a launch */
static const size_t HOST_BYTES = 32u << 20; /* past most CPUs' last-level cache */
enum { LINK_SAMPLES = 5, HOST_SAMPLES = 5, LAUNCH_SAMPLES = 21 };

__device__ unsigned long long clock_probe[2]; /* [0] SM cycles, [1] ns, over the measured part */

__global__ void nothing(void) {}

/* Spins for warm_ns (the clock rises under load), then counts the SM's
 * cycles over the next run_ns of the GPU's nanosecond clock. */
__global__ void count_cycles(uint64_t warm_ns, uint64_t run_ns)
{
    uint64_t t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < warm_ns) {
    }
    long long c1 = clock64();
    uint64_t t1 = globaltimer_ns(), t2 = t1;
    while (t2 - t1 < run_ns)
        t2 = globaltimer_ns();
    clock_probe[0] = (unsigned long long)(clock64() - c1);
    clock_probe[1] = t2 - t1;
}

/* GB/s of pinned copies each way, the median of LINK_SAMPLES, events in one stream. */
static void probe_link(cudaStream_t s, double gbps[2])
{
    void *host, *dev;
    double ms[LINK_SAMPLES];
    event_timer t;
    CUDA_CHECK(cudaMallocHost(&host, LINK_BYTES));
    CUDA_CHECK(cudaMalloc(&dev, LINK_BYTES));
    memset(host, 0, LINK_BYTES);
    event_timer_create(&t);
    for (int d = 0; d < 2; d++) {
        void *dst = d ? host : dev, *src = d ? dev : host;
        CUDA_CHECK(cudaMemcpyAsync(dst, src, LINK_BYTES, cudaMemcpyDefault, s)); /* warm-up */
        for (int i = 0; i < LINK_SAMPLES; i++) {
            event_timer_start(&t, s);
            CUDA_CHECK(cudaMemcpyAsync(dst, src, LINK_BYTES, cudaMemcpyDefault, s));
            event_timer_stop(&t, s);
            ms[i] = event_timer_ms(&t);
        }
        gbps[d] = LINK_BYTES / 1e6 / stats_of(ms, LINK_SAMPLES).median;
    }
    event_timer_destroy(&t);
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaFreeHost(host));
}

/* GB/s of memcpy between two host buffers, touched first: the median of HOST_SAMPLES. */
static double probe_host(void)
{
    char *a = (char *)xmalloc(HOST_BYTES), *b = (char *)xmalloc(HOST_BYTES);
    double ms[HOST_SAMPLES];
    memset(a, 1, HOST_BYTES);
    memset(b, 2, HOST_BYTES);
    for (int i = 0; i < HOST_SAMPLES; i++) {
        double t0 = host_time_ms();
        memcpy(i % 2 ? a : b, i % 2 ? b : a, HOST_BYTES);
        ms[i] = host_time_ms() - t0;
    }
    free(a);
    free(b);
    return HOST_BYTES / 1e6 / stats_of(ms, HOST_SAMPLES).median;
}

/* An empty kernel from its launch to the host seeing it done: what every
 * short step of a lab pays, the median of LAUNCH_SAMPLES, after one untimed. */
static double probe_launch(cudaStream_t s)
{
    double us[LAUNCH_SAMPLES];
    for (int i = -1; i < LAUNCH_SAMPLES; i++) {
        double t0 = host_time_ms();
        nothing<<<1, 1, 0, s>>>();
        CHECK_LAUNCH();
        CUDA_CHECK(cudaStreamSynchronize(s));
        if (i >= 0)
            us[i] = (host_time_ms() - t0) * 1e3;
    }
    return stats_of(us, LAUNCH_SAMPLES).median;
}

/* MHz: the SM's cycles over 1 ms of nanoseconds, after 1 ms of spinning. */
static double probe_clock(cudaStream_t s)
{
    unsigned long long c[2];
    count_cycles<<<1, 1, 0, s>>>(ns_from_ms(1.0), ns_from_ms(1.0));
    CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpyFromSymbol(c, clock_probe, sizeof c));
    return c[1] ? c[0] * 1e3 / c[1] : 0;
}

extern "C" void machine_probe(machine_state *m)
{
    cudaStream_t s;
    memset(m, 0, sizeof *m);
    sharing_probe(&m->sharing);
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    probe_link(s, m->link_gbps);
    m->host_gbps = probe_host();
    m->launch_us = probe_launch(s);
    m->sm_mhz = probe_clock(s);
    CUDA_CHECK(cudaStreamDestroy(s));
}
