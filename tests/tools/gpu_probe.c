/* Exit 0 and print the GPU's name and PCI address when a usable GPU is
 * visible; otherwise exit 3 with the one-line reason. The GPU tests skip on
 * its answer; the grader reads the address to bind only that GPU's device
 * node into a worker's sandbox (grader/runner.py, worker_sandbox). */
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
    printf("%s\n%04x:%02x:%02x.0\n", p.name, (unsigned)p.pciDomainID, (unsigned)p.pciBusID,
           (unsigned)p.pciDeviceID);
    return 0;
}
