/* The driver API through the runtime's entry points; see driver.h. */
#include "driver.h"
#include "check.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

driver_api cu;

/* Each function with the version its cudaTypedefs.h prototype is named for:
 * asked for that version, the driver hands back that ABI, whatever it is
 * newer than. Green contexts came with CUDA 12.4, their streams with 12.5. */
static const struct {
    const char *name;
    unsigned version;
    void **slot;
} wanted[] = {
    {"cuGetErrorName", 6000, (void **)&cu.cuGetErrorName},
    {"cuDeviceGet", 2000, (void **)&cu.cuDeviceGet},
    {"cuDeviceGetDevResource", 12040, (void **)&cu.cuDeviceGetDevResource},
    {"cuDevSmResourceSplitByCount", 12040, (void **)&cu.cuDevSmResourceSplitByCount},
    {"cuDevResourceGenerateDesc", 12040, (void **)&cu.cuDevResourceGenerateDesc},
    {"cuGreenCtxCreate", 12040, (void **)&cu.cuGreenCtxCreate},
    {"cuGreenCtxDestroy", 12040, (void **)&cu.cuGreenCtxDestroy},
    {"cuGreenCtxStreamCreate", 12050, (void **)&cu.cuGreenCtxStreamCreate},
    {"cuStreamDestroy", 4000, (void **)&cu.cuStreamDestroy},
};

void driver_open(void)
{
    int driver = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        void *fn = NULL;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion(wanted[i].name, &fn, wanted[i].version,
                                                    cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn)
            fail_cannot_run("the CUDA driver (%d.%d) has no %s (CUDA %u.%u or newer): green "
                            "contexts need a newer driver", driver / 1000, driver % 1000 / 10,
                            wanted[i].name, wanted[i].version / 1000, wanted[i].version % 1000 / 10);
        *wanted[i].slot = fn;
    }
}

const char *cu_error_name(CUresult err)
{
    static char number[32];
    const char *name = NULL;
    if (cu.cuGetErrorName && cu.cuGetErrorName(err, &name) == CUDA_SUCCESS && name)
        return name;
    snprintf(number, sizeof number, "CUresult %d", (int)err);
    return number;
}

void cu_check(CUresult err, const char *call, const char *file, int line)
{
    if (err == CUDA_SUCCESS)
        return;
    const char *name = cu_error_name(err);
    switch (err) {
    case CUDA_ERROR_NOT_SUPPORTED:
        fail_cannot_run("this GPU, MIG slice or driver does not support %s (%s)", call, name);
    case CUDA_ERROR_OUT_OF_MEMORY:
        fail_cannot_run("out of memory in %s at %s:%d (%s): another process may be holding "
                        "the GPU's memory (see nvidia-smi)", call, file, line, name);
    default:
        fail_wrong("CUDA driver error at %s:%d in %s: %s", file, line, call, name);
    }
}
