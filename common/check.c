/* Checked CUDA calls and early exits; see check.h. */
#define _GNU_SOURCE
#include "check.h"
#include "exitcodes.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *program_name = "streamlab";

const char *exit_code_meaning(int code)
{
    switch (code) {
    case EXIT_OK: return "results correct, effect observed";
    case EXIT_WRONG_RESULTS: return "results wrong";
    case EXIT_USAGE: return "usage error";
    case EXIT_CANNOT_RUN: return "cannot run here";
    case EXIT_NOT_OBSERVED: return "results correct, effect not observed";
    default: return "unknown exit code";
    }
}

void fail_exit(int code, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout); /* keep stdout's report ahead of the error when both go to a terminal */
    fprintf(stderr, "%s: %s", program_name, code == EXIT_CANNOT_RUN ? "cannot run here: " : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

/* The runtime reports a missing driver and a too-old driver with the same
 * error; asking the loader tells the two apart, so the one line is precise. */
static int driver_library_present(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

void cuda_check(cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    const char *name = cudaGetErrorName(err);
    switch (err) {
    case cudaErrorInsufficientDriver:
        if (!driver_library_present())
            fail_cannot_run("no CUDA driver found (%s)", name);
        fail_cannot_run("the CUDA driver is older than this program's runtime (%s)", name);
    case cudaErrorNoDevice:
        fail_cannot_run("no CUDA-capable GPU is visible (%s)", name);
    case cudaErrorDevicesUnavailable:
        fail_cannot_run("the GPU is busy or set to exclusive use by another process (%s)", name);
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
        fail_cannot_run("this build has no code for this GPU; rebuild with 'make clean && make' "
                        "on this machine, or 'make ARCH=sm_XY' (%s)", name);
    case cudaErrorMemoryAllocation:
        /* The labs whose sizes are options check them against the free
         * memory before allocating, so this is most often memory that went
         * elsewhere meanwhile: another process, or a host that cannot pin
         * that much. */
        fail_cannot_run("out of memory in %s at %s:%d (%s): another process may be holding "
                        "the GPU's memory (see nvidia-smi), or ask for smaller sizes (see --help)",
                        call, file, line, name);
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorCompatNotSupportedOnDevice:
        fail_cannot_run("the CUDA driver is not usable (%s: %s)", name, cudaGetErrorString(err));
    default:
        fail_wrong("CUDA error at %s:%d in %s: %s: %s", file, line, call, name,
                   cudaGetErrorString(err));
    }
}

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail_cannot_run("out of host memory allocating %zu bytes", bytes);
    return p;
}
