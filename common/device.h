/* Device selection and the capability summary the labs reason with. */
#ifndef STREAMLAB_DEVICE_H
#define STREAMLAB_DEVICE_H

#include <stddef.h>
#include "machine.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int index;                 /* the --device number */
    char name[256];
    char pci_bus_id[32];
    int cc_major, cc_minor;    /* compute capability */
    int sm_count;
    double clock_mhz;          /* the SMs' top clock (cudaDevAttrClockRate) */
    size_t total_memory, free_memory;  /* bytes */
    int async_engines;         /* copy engines: copies that can run beside kernels */
    int concurrent_kernels;    /* 1 when kernels of different streams can run together */
    int priority_least, priority_greatest; /* cudaDeviceGetStreamPriorityRange */
    int max_connections;       /* hardware work queues the runtime opens */
    int max_connections_set;   /* 1 when CUDA_DEVICE_MAX_CONNECTIONS chose it */
    int launch_blocking;       /* 1 when CUDA_LAUNCH_BLOCKING=1: nothing overlaps */
    int host_register;         /* 1 when malloc'd memory can be pinned (cudaHostRegister) */
    int pcie_gen, pcie_width;          /* link maximum for this device in this system;
                                          0 until device_load_nvml(), or when the driver
                                          does not say */
    int pcie_gen_now, pcie_width_now;  /* as negotiated at the moment of asking:
                                          idle GPUs train down to save power */
    int driver_version, runtime_version; /* e.g. 13000 for 13.0 */
} device_info;

/* Finds the GPU --device names, makes it current and fills *d from the CUDA
 * runtime. Exits with EXIT_CANNOT_RUN and one line when there is no driver or
 * no GPU, and with EXIT_USAGE, listing the GPUs, when --device is past the
 * last one. */
void device_select(const common_options *opt, device_info *d);

/* Loads the driver's management library (NVML), where there is one, and
 * reads the PCIe link into *d; it stays loaded for device_other_processes().
 * Without NVML the link stays 0 ("not told"). */
void device_load_nvml(device_info *d);

/* Other processes holding a compute context on the selected GPU, as NVML
 * lists them, or -1 when it cannot say (no NVML, an old driver). */
int device_other_processes(void);

/* Per-direction PCIe bandwidth in GB/s (1e9 bytes/s) after line encoding,
 * before packet overhead: what the wires carry. 0 when gen is unknown. */
double pcie_raw_gbps(int gen, int width);

#ifdef __cplusplus
}
#endif
#endif
