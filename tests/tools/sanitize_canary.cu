/* sanitize_canary: the bugs `make sanitize` exists to catch, one per
 * argument, so a GPU test can show that tests/tools/sanitize.sh fails when it
 * should and passes when it should (tests/gpu_sanitize.bats).
 *
 *   sanitize_canary          clean: every tool must find nothing
 *   sanitize_canary oob      a kernel writes one element past its buffer (memcheck)
 *   sanitize_canary leak     a device buffer is never freed (memcheck's leak check)
 *   sanitize_canary uninit   a kernel reads memory nothing wrote (initcheck)
 *
 * Without a sanitizer each runs to the end and exits 0: the out-of-bounds
 * write lands in the allocation's padding, which is why a tool is needed. */
#include "check.h"

#include <stdio.h>
#include <string.h>

enum { N = 1000 };

/* out[i] = in[i] + 1 for i < n; `extra` more elements past n when asked. */
__global__ void add_one(const int *in, int *out, int n, int extra)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra)
        out[i] = in[i < n ? i : 0] + 1;
}

int main(int argc, char **argv)
{
    const char *bug = argc > 1 ? argv[1] : "";
    int *d_in, *d_out, h[N];
    program_name = "sanitize_canary";
    if (argc > 2 || (*bug && strcmp(bug, "oob") && strcmp(bug, "leak") && strcmp(bug, "uninit")))
        fail_usage("usage: sanitize_canary [oob|leak|uninit]");
    for (int i = 0; i < N; i++)
        h[i] = i;
    CUDA_CHECK(cudaMalloc((void **)&d_in, N * sizeof(int)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, N * sizeof(int)));
    if (strcmp(bug, "uninit") != 0)
        CUDA_CHECK(cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice));
    add_one<<<(N + 256) / 256, 256>>>(d_in, d_out, N, strcmp(bug, "oob") == 0);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_out));
    if (strcmp(bug, "leak") != 0)
        CUDA_CHECK(cudaFree(d_in));
    printf("sanitize_canary %s: done\n", *bug ? bug : "clean");
    return 0;
}
