/* ex14: give the urgent kernel SMs of its own (green contexts).
 *
 * The reference solution: exercises/ex14_green_contexts.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the targets and the
 * contract are there and in exercises/given/ex14.h.
 *
 * Build and run:   make sol14 && ./sol14      (./sol14 --quick: a short run)
 */
#include "ex14.h"
#include "streamlab.h"
#include "driver.h"

#include <math.h>

/* SOLUTION: a green context holding `res`, and a non-blocking stream in it.
 * The descriptor names the SMs; the context is the primary context with
 * those SMs only (CUDA 13 requires CU_GREEN_CTX_DEFAULT_STREAM); runtime
 * launches and events work in its stream as in any other. */
static CUgreenCtx green_context(CUdevice dev, CUdevResource *res, int priority, cudaStream_t *s)
{
    CUdevResourceDesc desc;
    CUgreenCtx g;
    CUstream cs;
    CU_CHECK(cu.cuDevResourceGenerateDesc(&desc, res, 1));
    CU_CHECK(cu.cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CU_CHECK(cu.cuGreenCtxStreamCreate(&cs, g, CU_STREAM_NON_BLOCKING, priority));
    *s = cs;
    return g;
}

void open_partition(const partition_request *req, partition *p)
{
    CUdevResource all, part, rest;
    unsigned int groups = 1;
    /* SOLUTION: one split of every SM: a group of at least req->sms (the
     * device rounds up to its step) and the remainder. The background goes
     * in the remainder: a partition keeps out only what runs elsewhere, and
     * a background on the whole GPU would fill the urgent SMs too. */
    CU_CHECK(cu.cuDeviceGetDevResource(req->device, &all, CU_DEV_RESOURCE_TYPE_SM));
    CU_CHECK(cu.cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, (unsigned)req->sms));
    p->urgent_ctx = green_context(req->device, &part, req->priority, &p->urgent);
    p->background_ctx = green_context(req->device, &rest, req->priority, &p->background);
}

void close_partition(partition *p)
{
    /* SOLUTION: the streams, then their contexts. */
    CU_CHECK(cu.cuStreamDestroy(p->urgent));
    CU_CHECK(cu.cuStreamDestroy(p->background));
    CU_CHECK(cu.cuGreenCtxDestroy(p->urgent_ctx));
    CU_CHECK(cu.cuGreenCtxDestroy(p->background_ctx));
}

int choose_partition_sms(const level2_job *job, double *predicted_us)
{
    /* SOLUTION: whole-SM blocks on k SMs run in ceil(B / k) waves of t, so
     * the latency is launch + ceil(B / k) t. The budget allows W waves, the
     * most with launch + W t within it; W waves need k >= B / W. Every SM
     * more is the background's loss (its waves on SMs - k), so the least
     * such k the device makes: at least min_sms, in its steps. */
    int w = (int)floor((job->budget_us - job->launch_us) / job->block_us);
    if (w < 1) /* no k meets it: the most SMs the background can spare */
        w = 1;
    int k = (job->blocks + w - 1) / w;
    k = (k + job->step - 1) / job->step * job->step;
    if (k < job->min_sms)
        k = job->min_sms;
    *predicted_us = job->launch_us + ceil((double)job->blocks / k) * job->block_us;
    return k;
}
