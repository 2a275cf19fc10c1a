/* gpu_load: another process on the GPU, for the tests of what the programs do
 * when they share it (tests/gpu_busy.bats, tests/gpu_badinput.bats).
 *
 *   gpu_load --seconds S                  kernels on every SM and copies both
 *                                         ways, back to back, for S seconds
 *   gpu_load --seconds S --hold --leave-mib N
 *                                         holds all but N MiB of the GPU's
 *                                         memory for S seconds, doing nothing
 *
 * It prints one line starting "ready" once the load is on (a test waits for
 * it), keeps the load up until the time is over or it is stopped, and exits 0.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double seconds = 30;
static int hold = 0, leave_mib = 1024;

static const option own[] = {
    {"seconds", OPT_DOUBLE, &seconds, 0.1, 600, NO_QUICK, "S", "how long the load lasts"},
    {"hold", OPT_FLAG, &hold, 0, 0, NO_QUICK, NULL, "hold the GPU's memory instead of keeping it busy"},
    {"leave-mib", OPT_INT, &leave_mib, 0, 1 << 20, NO_QUICK, "MIB", "with --hold: memory left free"},
    {NULL},
};
static const program_info tool = {
    .name = "gpu_load",
    .title = "another process on the GPU: busy kernels and copies, or its memory held",
    .options = own, .reps = 1,
};

enum { IN_FLIGHT = 4, COPY_MIB = 64, CHUNK_MIB = 256, MAX_CHUNKS = 4096 };

static void nap(double ms)
{
    struct timespec ts = {(time_t)(ms / 1e3), (long)((ms - 1e3 * (time_t)(ms / 1e3)) * 1e6)};
    nanosleep(&ts, NULL);
}

/* Allocates chunks until only leave_mib remain free, then waits. */
static void hold_memory(void)
{
    void *chunk[MAX_CHUNKS];
    int n = 0;
    size_t free_bytes, total, leave = (size_t)leave_mib << 20, piece = (size_t)CHUNK_MIB << 20;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    while (free_bytes > leave + (1u << 20) && n < MAX_CHUNKS && piece >= (1u << 20)) {
        size_t bytes = free_bytes - leave < piece ? free_bytes - leave : piece;
        if (cudaMalloc(&chunk[n], bytes) != cudaSuccess) {
            (void)cudaGetLastError(); /* not that much in one piece: smaller pieces */
            piece /= 2;
            continue;
        }
        n++;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    }
    printf("ready: holding %zu MiB of %zu; %zu MiB free\n", (total - free_bytes) >> 20,
           total >> 20, free_bytes >> 20);
    fflush(stdout);
    nap(seconds * 1e3);
    while (n > 0)
        CUDA_CHECK(cudaFree(chunk[--n]));
}

/* Kernels on every SM and copies both ways, IN_FLIGHT of each queued at all
 * times, so the GPU always has this process's work waiting. */
static void keep_busy(const device_info *dev)
{
    cudaStream_t s[3];
    cudaEvent_t done[3][IN_FLIGHT];
    void *h_up, *h_down, *d_up, *d_down;
    size_t bytes = (size_t)COPY_MIB << 20;
    for (int k = 0; k < 3; k++) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
        for (int i = 0; i < IN_FLIGHT; i++)
            CUDA_CHECK(cudaEventCreateWithFlags(&done[k][i], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaMallocHost(&h_up, bytes));
    CUDA_CHECK(cudaMallocHost(&h_down, bytes));
    CUDA_CHECK(cudaMalloc(&d_up, bytes));
    CUDA_CHECK(cudaMalloc(&d_down, bytes));
    CUDA_CHECK(cudaMemset(d_down, 0, bytes));
    memset(h_up, 0, bytes);

    double start = host_time_ms();
    for (long i = 0; host_time_ms() - start < seconds * 1e3; i++) {
        int slot = (int)(i % IN_FLIGHT);
        if (i >= IN_FLIGHT)
            for (int k = 0; k < 3; k++)
                CUDA_CHECK(cudaEventSynchronize(done[k][slot]));
        spin_for_ns<<<dev->sm_count * 8, 256, 0, s[0]>>>(ns_from_ms(5));
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(d_up, h_up, bytes, cudaMemcpyHostToDevice, s[1]));
        CUDA_CHECK(cudaMemcpyAsync(h_down, d_down, bytes, cudaMemcpyDeviceToHost, s[2]));
        for (int k = 0; k < 3; k++)
            CUDA_CHECK(cudaEventRecord(done[k][slot], s[k]));
        if (i == IN_FLIGHT - 1) {
            printf("ready: kernels on all %d SMs and %d MiB copies both ways for %g s\n",
                   dev->sm_count, COPY_MIB, seconds);
            fflush(stdout);
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(d_down));
    CUDA_CHECK(cudaFree(d_up));
    CUDA_CHECK(cudaFreeHost(h_down));
    CUDA_CHECK(cudaFreeHost(h_up));
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < IN_FLIGHT; i++)
            CUDA_CHECK(cudaEventDestroy(done[k][i]));
        CUDA_CHECK(cudaStreamDestroy(s[k]));
    }
}

int main(int argc, char **argv)
{
    common_options opt;
    device_info dev;
    options_parse(argc, argv, &tool, &opt);
    device_select(&opt, &dev);
    if (hold)
        hold_memory();
    else
        keep_busy(&dev);
    return 0;
}
