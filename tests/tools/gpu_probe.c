/* Exit 0 and print the GPU's name when a usable GPU is visible; otherwise
 * exit 3 with the one-line reason. The GPU tests skip on its answer. */
#include "check.h"

#include <stdio.h>

int main(void)
{
    int count = 0;
    struct cudaDeviceProp p;
    program_name = "gpu_probe";
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (count == 0)
        fail_cannot_run("no CUDA-capable GPU is visible");
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    printf("%s\n", p.name);
    return 0;
}
