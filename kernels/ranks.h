/* NCCL for the programs that use it (lab13, ex13), and only them: a header
 * of static functions, so that libstreamlab.a needs no NCCL. Built without
 * NCCL (the Makefile found none: no -DSTREAMLAB_NCCL), the same names exist
 * and ranks_available() says what to install; nothing else is reached.
 *
 * One process drives every GPU: rank g is GPU dev[g]. Every collective is
 * issued for all ranks inside ncclGroupStart/ncclGroupEnd, without which a
 * single thread would block in rank 0's call waiting for rank 1's. */
#ifndef STREAMLAB_RANKS_H
#define STREAMLAB_RANKS_H

#include "gradients.h"
#include "../common/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ranks ranks;

#ifdef STREAMLAB_NCCL
#include <nccl.h>

struct ranks {
    int n, max_ctas; /* max_ctas 0: NCCL's own choice */
    ncclComm_t comm[GRAD_MAX_GPUS];
};

/* A macro for the caller's file and line, as CUDA_CHECK. */
#define NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)
static inline void nccl_check(ncclResult_t r, const char *call, const char *file, int line)
{
    if (r != ncclSuccess && r != ncclInProgress)
        fail_wrong("%s:%d: %s failed: %s (%s)", file, line, call, ncclGetErrorString(r),
                   ncclGetLastError(NULL));
}

static inline const char *ranks_available(void) { return NULL; }

/* Before the first NCCL call: NVLink SHARP (multicast) off. On a shared
 * multi-GPU host, its multicast objects can take the host's GPUs out of
 * service; this suite never uses it. Set to 0 whatever it was. */
static inline void ranks_environment(void) { setenv("NCCL_NVLS_ENABLE", "0", 1); }

/* Before the first communicator: one protocol for every message, Simple,
 * unless NCCL_PROTO is already set (try LL and watch the model break).
 * NCCL picks a protocol by message size, each with its own alpha and B: on
 * two H200s, one block per collective, LL (about 5 GB/s) up to about
 * 1.7 MB and Simple (about 21 GB/s, alpha about 19 us) above. A fit of
 * t(S) = alpha + S/B over sizes on both sides fits neither, and ex13's
 * level two then ran buckets of 1.3 MiB slower than serial where the model
 * said 1.3x faster; with Simple throughout, every bucket size came within
 * 15% of the model (docs/results/h200x2/ex13-level2/). */
static inline void ranks_one_protocol(void) { setenv("NCCL_PROTO", "Simple", 0); }

/* A communicator over dev[0..n-1]: ncclCommInitAll, or with max_ctas > 0 one
 * whose collectives use at most that many blocks (a slower link: fewer
 * blocks move fewer bytes at once), each rank's init in one group. */
static inline void ranks_open(ranks *r, const int *dev, int n, int max_ctas)
{
    memset(r, 0, sizeof *r);
    r->n = n, r->max_ctas = max_ctas;
    if (max_ctas <= 0) {
        NCCL_CHECK(ncclCommInitAll(r->comm, n, dev));
    } else {
        ncclUniqueId id;
        NCCL_CHECK(ncclGetUniqueId(&id));
        NCCL_CHECK(ncclGroupStart());
        for (int g = 0; g < n; g++) {
            ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
            config.minCTAs = 1, config.maxCTAs = max_ctas;
            CUDA_CHECK(cudaSetDevice(dev[g]));
            NCCL_CHECK(ncclCommInitRankConfig(&r->comm[g], n, id, g, &config));
        }
        NCCL_CHECK(ncclGroupEnd());
    }
    CUDA_CHECK(cudaSetDevice(dev[0]));
}

static inline void ranks_close(ranks *r)
{
    for (int g = 0; g < r->n; g++)
        if (r->comm[g])
            NCCL_CHECK(ncclCommDestroy(r->comm[g]));
    r->n = 0;
}

/* Sums words [first, first + n) of every GPU's gradients into the same
 * words of its reduced buffer, in its communication stream: one group. */
static inline void ranks_all_reduce(const ranks *r, const grad_bench *b, size_t first, size_t n)
{
    NCCL_CHECK(ncclGroupStart());
    for (int g = 0; g < r->n; g++)
        NCCL_CHECK(ncclAllReduce(b->grad[g] + first, b->sum[g] + first, n, ncclFloat, ncclSum,
                                 r->comm[g], b->comm[g]));
    NCCL_CHECK(ncclGroupEnd());
}

/* NCCL's version, for the report: 22703 for 2.27.3. */
static inline int ranks_version(void)
{
    int v = 0;
    NCCL_CHECK(ncclGetVersion(&v));
    return v;
}

#else /* built without NCCL: lab13 says what to install and exits 3 first */

struct ranks { int n, max_ctas; };
static inline const char *ranks_available(void)
{
    return "this program was built without NCCL, which lab13 uses to sum gradients across "
           "GPUs: install it (the CUDA toolkit's, NCCL_HOME=dir, or pip install "
           "nvidia-nccl-cu13) and run make again";
}
static inline void ranks_environment(void) {}
static inline void ranks_one_protocol(void) {}
static inline void ranks_open(ranks *r, const int *dev, int n, int max_ctas)
{
    (void)r, (void)dev, (void)n, (void)max_ctas;
    fail_cannot_run("%s", ranks_available());
}
static inline void ranks_close(ranks *r) { (void)r; }
static inline void ranks_all_reduce(const ranks *r, const grad_bench *b, size_t first, size_t n)
{
    (void)r, (void)b, (void)first, (void)n;
}
static inline int ranks_version(void) { return 0; }
#endif

/* What a program driving every GPU from one thread must settle before its
 * first CUDA call (a program_info's before_context): NCCL without
 * multicast; every module loaded when the context is made
 * (CUDA_MODULE_LOADING=EAGER), since a kernel loaded lazily on one GPU while
 * the other waits inside a collective can hang both (the programs also warm
 * every kernel on every GPU, for their timing); and no CUDA_LAUNCH_BLOCKING,
 * under which the first rank's all-reduce would wait for a second rank that
 * the same thread has not launched yet: a hang, not a slow run. */
static inline void ranks_before_context(void)
{
    const char *why = ranks_available(), *blocking = getenv("CUDA_LAUNCH_BLOCKING");
    if (why)
        fail_cannot_run("%s", why);
    if (blocking && strcmp(blocking, "1") == 0)
        fail_cannot_run("CUDA_LAUNCH_BLOCKING=1 makes each GPU's all-reduce wait for the "
                        "others, which one thread launches after it: it would hang; unset it");
    ranks_environment();
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
}

#endif
