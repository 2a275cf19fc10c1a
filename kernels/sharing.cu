/* Is another process using this GPU? sharing_probe(), see kernels.h.
 *
 * Without MPS, a GPU runs one process's work at a time and switches between
 * processes that both have work every time slice (a few milliseconds). So a
 * program that shares the GPU loses time twice: its work waits for the other
 * process's slice to end before it starts, and it is stopped in the middle
 * when its own slice ends. The probe sees both: one thread reads the GPU's
 * clock in a loop (a jump of the clock is time the GPU spent elsewhere), and
 * the host times the launch to the result (what the kernel did not spend
 * running was spent waiting). On an idle GPU both are a few microseconds. */
#include "kernels.h"
#include "../common/check.h"
#include "../common/device.h"
#include "../common/timing.h"

/* Each probe's own running time: past the GPU's shortest time slice (2 ms),
 * short beside a lab. Two of them, about 12 ms in all, at each end of a run. */
static const double SHARING_PROBE_MS = 5.0;

/* The probe's result, in a variable of the module rather than a buffer: no
 * allocation, so nothing to leak if a program stops early. */
__device__ unsigned long long probe_result[2]; /* [0] its life, [1] the clock's jumps, ns */

/* Reads %globaltimer until `run_ns` of running time (time not lost to jumps)
 * have passed, or `give_up_ns` in all. A jump is a step of the clock of more
 * than `jump_ns` and more than 8 of the smallest steps seen: some GPUs' clock
 * advances in steps of a microsecond or so, and those steps are not time lost. */
__global__ void watch_clock(uint64_t run_ns, uint64_t give_up_ns, uint64_t jump_ns)
{
    uint64_t start = globaltimer_ns(), last = start, now = start, lost = 0, step = 0;
    while (now - start - lost < run_ns && now - start < give_up_ns) {
        now = globaltimer_ns();
        uint64_t d = now - last;
        if (d > jump_ns && step && d > 8 * step)
            lost += d;
        else if (d && (!step || d < step))
            step = d;
        last = now;
    }
    probe_result[0] = now - start;
    probe_result[1] = lost;
}

/* One probe: runs watch_clock for run_ms of its own time; *lost_ms is the
 * time the GPU spent elsewhere meanwhile, *wall_ms the probe from launch to
 * result on the host's clock. */
static void probe_time_lost(double run_ms, double *lost_ms, double *wall_ms)
{
    const uint64_t jump_ns = 20000; /* 20 us: far above a read of the clock, far below a slice */
    static int warm[64]; /* per GPU: a program may probe several (lab13) */
    unsigned long long h[2];
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device < 64 && !warm[device]) { /* the first launch loads the module: not time lost to anyone */
        watch_clock<<<1, 1>>>(0, 0, jump_ns);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        warm[device] = 1;
    }
    CUDA_CHECK(cudaDeviceSynchronize()); /* none of this program's own work runs beside it */
    double t0 = host_time_ms();
    watch_clock<<<1, 1>>>(ns_from_ms(run_ms), ns_from_ms(20 * run_ms), jump_ns);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyFromSymbol(h, probe_result, sizeof h)); /* waits for the kernel */
    double host_ms = host_time_ms() - t0, life_ms = h[0] * 1e-6;
    double waited = host_ms > life_ms ? host_ms - life_ms : 0; /* before it started, mostly */
    *lost_ms = h[1] * 1e-6 + waited;
    *wall_ms = host_ms;
}

/* Two probes, and the one that lost the smaller share of its time: a GPU
 * shared with a busy process makes both lose; a moment when this program's
 * own thread was not running (a busy CPU) seldom hits both. The driver's list
 * of processes is read after them, when this program's context has surely
 * been seen by the driver. */
extern "C" void sharing_probe(gpu_sharing *s)
{
    double lost[2], wall[2];
    for (int i = 0; i < 2; i++)
        probe_time_lost(SHARING_PROBE_MS, &lost[i], &wall[i]);
    int k = lost[0] * wall[1] <= lost[1] * wall[0] ? 0 : 1;
    s->lost_ms = lost[k];
    s->probe_ms = wall[k];
    s->other_processes = device_other_processes();
}
