/* Device selection and capability summary; see device.h. */
#define _GNU_SOURCE
#include "device.h"
#include "check.h"
#include "exitcodes.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NVML, the driver's management library, says what the runtime API does
 * not: the PCIe link, and which processes hold a context on the GPU. It is
 * loaded at run time so that building needs no NVML and a machine without it
 * simply reports "not told". The declarations below are NVML's documented C
 * signatures, and the record nvmlDeviceGetComputeRunningProcesses_v3 fills. */
typedef void *nvml_device;
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(const char *bus_id, nvml_device *dev);
typedef int (*nvml_uint_fn)(nvml_device dev, unsigned int *out);
typedef struct {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_process;
typedef int (*nvml_processes_fn)(nvml_device dev, unsigned int *count, nvml_process *infos);
enum { NVML_SUCCESS = 0, NVML_ERROR_INSUFFICIENT_SIZE = 7 };

/* NVML stays open from device_load_nvml() to the end of the program: asking
 * again at the end costs one call, not a second start of the library. */
static struct {
    nvml_device dev;                     /* NULL: NVML could not be asked */
    nvml_processes_fn compute_processes; /* NULL: this driver cannot list them */
} nvml;

void device_load_nvml(device_info *d)
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
    unsigned int v;
    if (!init || !shutdown || !by_bus || init() != NVML_SUCCESS) {
        dlclose(lib);
        return;
    }
    if (by_bus(d->pci_bus_id, &nvml.dev) != NVML_SUCCESS) {
        nvml.dev = NULL;
        shutdown();
        dlclose(lib);
        return;
    }
    if (max_gen && max_gen(nvml.dev, &v) == 0) d->pcie_gen = (int)v;
    if (max_width && max_width(nvml.dev, &v) == 0) d->pcie_width = (int)v;
    if (cur_gen && cur_gen(nvml.dev, &v) == 0) d->pcie_gen_now = (int)v;
    if (cur_width && cur_width(nvml.dev, &v) == 0) d->pcie_width_now = (int)v;
    nvml.compute_processes =
        (nvml_processes_fn)dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
}

/* Distinct processes in the list other than this program. Inside a container
 * the driver gives the host's process ids, so this program's own entry does
 * not match getpid(): it has a context (device_select made it), so one
 * unmatched entry is its own. */
static int count_others(const nvml_process *p, unsigned int n)
{
    int others = 0, self_seen = 0;
    pid_t self = getpid();
    for (unsigned int i = 0; i < n; i++) {
        int repeated = 0;
        for (unsigned int j = 0; j < i; j++)
            repeated |= p[j].pid == p[i].pid;
        if (repeated)
            continue;
        if ((pid_t)p[i].pid == self)
            self_seen = 1;
        else
            others++;
    }
    if (!self_seen && others > 0)
        others--;
    return others;
}

int device_other_processes(void)
{
    unsigned int capacity = 32;
    if (!nvml.dev || !nvml.compute_processes)
        return -1;
    for (int tries = 0; tries < 4; tries++) {
        unsigned int n = capacity;
        /* Room for twice as many records as asked for: should a future driver
         * write larger ones, it still writes inside the buffer. */
        nvml_process *p = xmalloc(2 * (size_t)capacity * sizeof *p);
        int rc = nvml.compute_processes(nvml.dev, &n, p);
        int others = rc == NVML_SUCCESS && n <= capacity ? count_others(p, n) : -1;
        free(p);
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
            return others;
        capacity = n > capacity ? n + 8 : 2 * capacity; /* more started meanwhile */
    }
    return -1;
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

/* An integer from the environment; a value that is not one counts as unset
 * (what the CUDA runtime reads from it is its own business). */
static int env_int(const char *name, int fallback, int *was_set)
{
    const char *s = getenv(name);
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    *was_set = s && *s && *end == '\0' && errno == 0 && v >= INT_MIN && v <= INT_MAX;
    return *was_set ? (int)v : fallback;
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
    CUDA_CHECK(cudaDeviceGetPCIBusId(d->pci_bus_id, sizeof d->pci_bus_id, d->index));
    CUDA_CHECK(cudaSetDevice(d->index)); /* makes this program's context on it */
    CUDA_CHECK(cudaGetDeviceProperties(&p, d->index));
    snprintf(d->name, sizeof d->name, "%s", p.name);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sm_count = p.multiProcessorCount;
    int khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d->index));
    d->clock_mhz = khz / 1e3;
    d->async_engines = p.asyncEngineCount;
    d->concurrent_kernels = p.concurrentKernels;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&d->priority_least, &d->priority_greatest));
    CUDA_CHECK(cudaDeviceGetAttribute(&d->host_register, cudaDevAttrHostRegisterSupported,
                                      d->index));
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
}
