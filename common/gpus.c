/* Several GPUs in one process; see gpus.h. */
#include "gpus.h"
#include "check.h"
#include "../kernels/kernels.h"

#include <cuda_runtime_api.h>

int gpus_visible(int first, int *dev, int max)
{
    int count = 0, n = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (max > 0)
        dev[n++] = first;
    for (int d = 0; d < count && n < max; d++)
        if (d != first)
            dev[n++] = d;
    return n;
}

void gpus_probe_sharing(const int *dev, int n, gpu_sharing *out)
{
    int current;
    CUDA_CHECK(cudaGetDevice(&current));
    for (int i = 1; i < n; i++) {
        CUDA_CHECK(cudaSetDevice(dev[i]));
        sharing_probe(&out[i]);
        out[i].other_processes = -1;
    }
    CUDA_CHECK(cudaSetDevice(current));
}

void gpus_report_sharing(report *r, const int *dev, int n, const gpu_sharing *start,
                         const gpu_sharing *end)
{
    for (int i = 1; i < n; i++) {
        if (!gpu_was_shared(&start[i]) && !gpu_was_shared(&end[i]))
            continue;
        report_text(r, "GPU %d:\n", dev[i]);
        report_sharing(r, &start[i], &end[i]);
    }
}
