/* Device selection and the capability summary the labs reason with. */
#ifndef STREAMLAB_DEVICE_H
#define STREAMLAB_DEVICE_H

#include <stddef.h>
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether another process is using the GPU: the driver's list of processes,
 * and what a probe kernel measured (see device_sharing_now). */
typedef struct {
    int other_processes; /* other processes holding a compute context on this GPU, as
                            the driver (NVML) lists them; -1 when it does not say */
    double lost_ms;      /* time the GPU spent on other work while the probe waited or ran */
    double probe_ms;     /* the probe, from its launch to its result */
} gpu_sharing;

/* The GPU counts as shared when the probe lost at least this fraction of its
 * time, and at least SHARED_MS_MIN. On an idle GPU it loses microseconds;
 * beside one other busy process the GPU alternates between the two, about
 * half each, and a short probe can lose more (it waits for the other's slice). */
#define SHARED_FRACTION_MIN 0.25
#define SHARED_MS_MIN 1.0
#define SHARING_PROBE_MS 5.0 /* the probe's own running time: past the GPU's
                                shortest time slice (2 ms), short beside a lab */

typedef struct {
    int index;                 /* the --device number */
    char name[256];
    char pci_bus_id[32];
    int cc_major, cc_minor;    /* compute capability */
    int sm_count;
    size_t total_memory, free_memory;  /* bytes */
    int async_engines;         /* copy engines: copies that can run beside kernels */
    int concurrent_kernels;    /* 1 when kernels of different streams can run together */
    int priority_least, priority_greatest; /* cudaDeviceGetStreamPriorityRange */
    int max_connections;       /* hardware work queues the runtime opens */
    int max_connections_set;   /* 1 when CUDA_DEVICE_MAX_CONNECTIONS chose it */
    int launch_blocking;       /* 1 when CUDA_LAUNCH_BLOCKING=1: nothing overlaps */
    int pcie_gen, pcie_width;          /* link maximum for this device in this
                                          system; 0 when the driver does not say */
    int pcie_gen_now, pcie_width_now;  /* as negotiated at the moment of asking:
                                          idle GPUs train down to save power */
    int driver_version, runtime_version; /* e.g. 13000 for 13.0 */
    gpu_sharing sharing;       /* measured as the program started */
} device_info;

/* Finds the GPU --device names, makes it current and fills *d. Exits with
 * EXIT_CANNOT_RUN and one line when there is no driver or no GPU, and with
 * EXIT_USAGE, listing the GPUs, when --device is past the last one. */
void device_select(const common_options *opt, device_info *d);

/* Per-direction PCIe bandwidth in GB/s (1e9 bytes/s) after line encoding,
 * before packet overhead: what the wires carry. 0 when gen is unknown. */
double pcie_raw_gbps(int gen, int width);

/* Exits with EXIT_CANNOT_RUN and the reason when `ok` is false: for a lab
 * whose effect this GPU cannot show. */
void device_require(int ok, const char *reason);

/* Measures now whether another process is using the GPU that device_select()
 * chose: how many other processes hold a context on it (the driver's list),
 * and what a probe kernel of SHARING_PROBE_MS lost, run twice (about 12 ms in
 * all). Before device_select() (a test of the report on made-up numbers) it
 * fills "not known": -1 and zeros. device_select() measures the same as the
 * program starts (device_info.sharing) and report_finish() calls this at the
 * end, so a lab's verdict is never trusted on a shared GPU. */
void device_sharing_now(gpu_sharing *s);

/* 1 when the probe lost at least SHARED_FRACTION_MIN of its time and
 * SHARED_MS_MIN: another process's work ran on the GPU meanwhile. */
int gpu_was_shared(const gpu_sharing *s);

/* The probe kernel's host side, in kernels/sharing.cu: runs it for run_ms of
 * its own time; *lost_ms is the time the GPU spent elsewhere meanwhile, and
 * *wall_ms the probe from launch to result. */
void probe_time_lost(double run_ms, double *lost_ms, double *wall_ms);

#ifdef __cplusplus
}
#endif
#endif
