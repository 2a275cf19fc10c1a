/* The CUDA driver API, for what the runtime does not offer (green contexts,
 * lab14), and CU_CHECK, its CUDA_CHECK.
 *
 * Why not -lcuda: a program linked with the driver library does not start
 * where there is none (the loader stops it, exit 127, before main), and every
 * streamlab program must exit 3 with one line there. So the functions are
 * asked of the driver the runtime has already loaded
 * (cudaGetDriverEntryPointByVersion), each at the ABI version whose
 * prototype cudaTypedefs.h gives, once, by driver_open(). The calls then read
 * as the driver API: CU_CHECK(cu.cuGreenCtxCreate(&g, desc, dev, flags)). */
#ifndef STREAMLAB_DRIVER_H
#define STREAMLAB_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    PFN_cuGetErrorName_v6000 cuGetErrorName;
    PFN_cuDeviceGet_v2000 cuDeviceGet;
    PFN_cuDeviceGetDevResource_v12040 cuDeviceGetDevResource;
    PFN_cuDevSmResourceSplitByCount_v12040 cuDevSmResourceSplitByCount;
    PFN_cuDevResourceGenerateDesc_v12040 cuDevResourceGenerateDesc;
    PFN_cuGreenCtxCreate_v12040 cuGreenCtxCreate;
    PFN_cuGreenCtxDestroy_v12040 cuGreenCtxDestroy;
    PFN_cuGreenCtxStreamCreate_v12050 cuGreenCtxStreamCreate;
    PFN_cuStreamDestroy_v4000 cuStreamDestroy;
} driver_api;

/* Filled by driver_open(); every field NULL before. */
extern driver_api cu;

/* Finds every function of `cu` in the driver the runtime loaded (call it
 * after lab_begin(), which has made sure there is one). Exits 3 with one line
 * naming the first function this driver lacks and its version. */
void driver_open(void);

/* A macro only because a function cannot see the caller's file, line and text. */
#define CU_CHECK(call) cu_check((call), #call, __FILE__, __LINE__)

/* As cuda_check() for the runtime: returns on CUDA_SUCCESS; exits 3 with one
 * line when the GPU or driver does not support the call
 * (CUDA_ERROR_NOT_SUPPORTED: a GPU or a MIG slice without the feature), or
 * when memory ran out; otherwise exits 1 naming the file, line, call and
 * error (cuGetErrorName). */
void cu_check(CUresult err, const char *call, const char *file, int line);

/* The error's name ("CUDA_ERROR_NOT_SUPPORTED"), or "CUresult N" before
 * driver_open(). */
const char *cu_error_name(CUresult err);

#ifdef __cplusplus
}
#endif
#endif
