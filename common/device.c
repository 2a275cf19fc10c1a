/* Device selection and capability summary; see device.h. */
#define _GNU_SOURCE
#include "device.h"
#include "check.h"
#include "exitcodes.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime API does not report the PCIe link; NVML, which ships with the
 * driver, does. It is loaded at run time so that building needs no NVML and a
 * machine without it simply reports "not told". The handful of declarations
 * below are NVML's documented C signatures. */
typedef void *nvml_device;
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(const char *bus_id, nvml_device *dev);
typedef int (*nvml_uint_fn)(nvml_device dev, unsigned int *out);

static void query_pcie(device_info *d)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        return;
    nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    nvml_init_fn shutdown = (nvml_init_fn)dlsym(lib, "nvmlShutdown");
    nvml_handle_fn by_bus = (nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_uint_fn max_gen = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
    nvml_uint_fn max_width = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetMaxPcieLinkWidth");
    nvml_uint_fn cur_gen = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
    nvml_uint_fn cur_width = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetCurrPcieLinkWidth");
    nvml_device dev;
    unsigned int v;
    if (init && shutdown && by_bus && max_gen && max_width && cur_gen && cur_width &&
        init() == 0) {
        if (by_bus(d->pci_bus_id, &dev) == 0) {
            if (max_gen(dev, &v) == 0) d->pcie_gen = (int)v;
            if (max_width(dev, &v) == 0) d->pcie_width = (int)v;
            if (cur_gen(dev, &v) == 0) d->pcie_gen_now = (int)v;
            if (cur_width(dev, &v) == 0) d->pcie_width_now = (int)v;
        }
        shutdown();
    }
    dlclose(lib);
}

double pcie_raw_gbps(int gen, int width)
{
    /* Per lane, per direction: transfer rate (GT/s) times encoding efficiency
     * (8b/10b for gen 1-2, 128b/130b from gen 3) over 8 bits per byte. */
    static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
    if (gen < 1 || gen > 6 || width < 1)
        return 0;
    double encoding = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    if (gen == 6)
        encoding = 242.0 / 256.0; /* gen 6 uses FLIT mode: 242 payload bytes per 256 */
    return gts[gen] * encoding / 8.0 * width;
}

static int env_int(const char *name, int fallback, int *was_set)
{
    const char *s = getenv(name);
    *was_set = s && *s;
    return *was_set ? atoi(s) : fallback;
}

void device_select(const common_options *opt, device_info *d)
{
    int count = 0;
    memset(d, 0, sizeof *d);
    CUDA_CHECK(cudaGetDeviceCount(&count)); /* exits 3 with one line when no driver */
    if (count == 0)
        fail_cannot_run("no CUDA-capable GPU is visible");
    if (opt->device >= count) {
        fprintf(stderr, "%s: --device %d does not exist; this machine has %d GPU%s:\n",
                program_name, opt->device, count, count == 1 ? "" : "s");
        for (int i = 0; i < count; i++) {
            struct cudaDeviceProp p;
            CUDA_CHECK(cudaGetDeviceProperties(&p, i));
            fprintf(stderr, "  --device %d  %s\n", i, p.name);
        }
        exit(EXIT_USAGE);
    }

    struct cudaDeviceProp p;
    d->index = opt->device;
    CUDA_CHECK(cudaSetDevice(d->index));
    CUDA_CHECK(cudaGetDeviceProperties(&p, d->index));
    snprintf(d->name, sizeof d->name, "%s", p.name);
    CUDA_CHECK(cudaDeviceGetPCIBusId(d->pci_bus_id, sizeof d->pci_bus_id, d->index));
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sm_count = p.multiProcessorCount;
    d->async_engines = p.asyncEngineCount;
    d->concurrent_kernels = p.concurrentKernels;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&d->priority_least, &d->priority_greatest));
    CUDA_CHECK(cudaMemGetInfo(&d->free_memory, &d->total_memory));
    CUDA_CHECK(cudaDriverGetVersion(&d->driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&d->runtime_version));
    /* The runtime opens 8 hardware queues per device unless told otherwise;
     * streams beyond that share queues and can falsely depend on each other. */
    d->max_connections = env_int("CUDA_DEVICE_MAX_CONNECTIONS", 8, &d->max_connections_set);
    int set;
    d->launch_blocking = env_int("CUDA_LAUNCH_BLOCKING", 0, &set) == 1;
    if (d->launch_blocking)
        fprintf(stderr, "%s: warning: CUDA_LAUNCH_BLOCKING=1 makes every launch wait for the "
                        "last: nothing will overlap\n", program_name);
    query_pcie(d);
}

void device_require(int ok, const char *reason)
{
    if (!ok)
        fail_cannot_run("%s", reason);
}
