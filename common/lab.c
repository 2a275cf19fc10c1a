/* A lab's run; see lab.h. */
#include "lab.h"
#include "check.h"
#include "machine.h"
#include "timeline.h"
#include "../kernels/kernels.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum owned_kind { PINNED, PAGEABLE, DEVICE, STREAM, EVENT };

struct owned {
    enum owned_kind kind;
    void *handle;
};

static void own(lab_run *run, enum owned_kind kind, void *handle)
{
    owned *grown = realloc(run->owned, (size_t)(run->n_owned + 1) * sizeof *grown);
    if (!grown)
        fail_cannot_run("out of host memory");
    run->owned = grown;
    run->owned[run->n_owned].kind = kind;
    run->owned[run->n_owned++].handle = handle;
}

/* Last made, first released: an event before the stream it was recorded in. */
static void release_owned(lab_run *run)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = run->n_owned - 1; i >= 0; i--) {
        void *h = run->owned[i].handle;
        switch (run->owned[i].kind) {
        case PINNED: CUDA_CHECK(cudaFreeHost(h)); break;
        case PAGEABLE: free(h); break;
        case DEVICE: CUDA_CHECK(cudaFree(h)); break;
        case STREAM: CUDA_CHECK(cudaStreamDestroy((cudaStream_t)h)); break;
        case EVENT: CUDA_CHECK(cudaEventDestroy((cudaEvent_t)h)); break;
        }
    }
    free(run->owned);
    run->owned = NULL;
    run->n_owned = 0;
}

void *lab_pinned(lab_run *run, size_t bytes)
{
    void *p;
    CUDA_CHECK(cudaMallocHost(&p, bytes));
    own(run, PINNED, p);
    return p;
}

void *lab_pageable(lab_run *run, size_t bytes)
{
    void *p = xmalloc(bytes);
    own(run, PAGEABLE, p);
    return p;
}

void *lab_device(lab_run *run, size_t bytes)
{
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    own(run, DEVICE, p);
    return p;
}

cudaStream_t lab_stream(lab_run *run, const char *name, unsigned int flags, int priority)
{
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithPriority(&s, flags, priority));
    own(run, STREAM, s);
    timeline_name_stream(s, name);
    return s;
}

void lab_streams(lab_run *run, cudaStream_t *s, int n, const char *prefix, unsigned int flags)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s %d", prefix, i);
        s[i] = lab_stream(run, name, flags, 0);
    }
}

cudaEvent_t lab_event(lab_run *run, unsigned int flags)
{
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    own(run, EVENT, e);
    return e;
}

void lab_events(lab_run *run, cudaEvent_t *e, int n, unsigned int flags)
{
    for (int i = 0; i < n; i++)
        e[i] = lab_event(run, flags);
}

event_timer lab_timer(lab_run *run)
{
    event_timer t = {lab_event(run, cudaEventDefault), lab_event(run, cudaEventDefault)};
    return t;
}

/* Exits 3, with the reason, when this GPU or this environment cannot show
 * what the program needs to show. */
static void check_needs(unsigned needs, const device_info *d)
{
    if ((needs & NEEDS_CONCURRENT_KERNELS) && !d->concurrent_kernels)
        fail_cannot_run("this GPU runs one kernel at a time (concurrentKernels 0): kernels "
                        "of different streams cannot run together");
    if ((needs & NEEDS_COPY_ENGINE) && d->async_engines < 1)
        fail_cannot_run("this GPU has no copy engine that runs beside kernels "
                        "(asyncEngineCount 0): copies and kernels take turns");
    if ((needs & NEEDS_OVERLAP) && d->launch_blocking)
        fail_cannot_run("CUDA_LAUNCH_BLOCKING=1 makes every launch wait for the last: nothing "
                        "can overlap; unset it to run this program");
    if ((needs & NEEDS_PRIORITIES) && d->priority_greatest >= d->priority_least)
        fail_cannot_run("this GPU has no stream priorities (cudaDeviceGetStreamPriorityRange "
                        "gives %d to %d)", d->priority_least, d->priority_greatest);
    if ((needs & NEEDS_HOST_REGISTER) && !d->host_register)
        fail_cannot_run("this system cannot pin malloc'd memory (cudaHostRegister)");
}

/* Half of the free memory: the rest is for the CUDA context, the driver and
 * whatever another process allocates while the lab runs. */
static void check_memory(const program_info *prog, const device_info *d)
{
    if (!prog->memory_option)
        return;
    const option *o, *t;
    char times[64] = "";
    double value = option_number(prog, prog->memory_option, &o), per_unit = prog->memory_per_unit;
    if (prog->memory_times) {
        double k = option_number(prog, prog->memory_times, &t);
        per_unit *= k;
        snprintf(times, sizeof times, " with --%s %g", t->name, k);
    }
    double room = d->free_memory / 2.0, most = floor(room / per_unit);
    if (value * per_unit <= room)
        return;
    if (most < o->min)
        fail_cannot_run("this GPU has %zu MiB free: too little even for --%s %g%s",
                        d->free_memory >> 20, o->name, o->min, times);
    fail_usage("--%s %g%s needs %.0f MiB of GPU memory, more than half of the %zu MiB free now: "
               "here --%s accepts %g to %g%s", o->name, value, times, value * per_unit / 1048576,
               d->free_memory >> 20, o->name, o->min, most > o->max ? o->max : most, times);
}

void lab_begin(lab_run *run, int argc, char **argv, const program_info *prog)
{
    memset(run, 0, sizeof *run);
    options_parse(argc, argv, prog, &run->opt);
    timeline_prepare(&run->opt);
    if (prog->before_context)
        prog->before_context();
    device_select(&run->opt, &run->dev);
    check_needs(prog->needs, &run->dev);
    check_memory(prog, &run->dev);
    device_load_nvml(&run->dev);
    machine_probe(&run->at_start);
    run->r = report_begin(prog, &run->opt, &run->dev);
    timeline_start(&run->opt);
}

int lab_end(lab_run *run)
{
    machine_state at_end;
    release_owned(run);
    timeline_finish(run->r, &run->opt);
    machine_probe(&at_end);
    report_machine(run->r, &run->at_start, &at_end, run->dev.clock_mhz);
    report_sharing(run->r, &run->at_start.sharing, &at_end.sharing);
    return report_finish(run->r);
}

/* Samples whose p5-p95 range spans more than this share of their median were
 * taken while something else came and went: on a quiet H100 the labs' paired
 * ratios spread by 1-10%. */
static const double NOISY_SPREAD = 0.25;

/* What the attempt now running said it saw (lab_attempt_saw), or "". */
static char attempt_seen[256];

void lab_attempt_saw(const char *fmt, ...)
{
    char clause[sizeof attempt_seen];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(clause, sizeof clause, fmt, ap);
    va_end(ap);
    why_append(attempt_seen, sizeof attempt_seen, "%s", clause);
}

/* Whether what fn saw, the machine now, or fn's samples show interference:
 * writes what into why[], fn's own finding first (the most direct). */
static int interference_now(lab_run *run, double spread, char *why, size_t size)
{
    machine_state now;
    char probe[512] = "";
    machine_probe(&now); /* no span of its own: a lab's attempt may sit inside one */
    double raw = pcie_raw_gbps(run->dev.pcie_gen, run->dev.pcie_width);
    int n = machine_interference(&run->at_start, &now, raw, run->dev.clock_mhz, probe,
                                 sizeof probe);
    int noisy = spread > NOISY_SPREAD;
    snprintf(why, size, "%s", attempt_seen);
    if (n)
        why_append(why, size, "%s", probe);
    if (noisy)
        why_append(why, size, "its samples spread by %.0f%% (p5 to p95 of the median): "
                   "something came and went while they were taken", spread * 100);
    return attempt_seen[0] || n > 0 || noisy;
}

int lab_attempt(lab_run *run, const char *what, attempt_fn fn, void *ctx)
{
    char why[1024] = "", now[512];
    int attempts = 0, seen;
    for (;;) {
        double spread = 0;
        attempts++;
        attempt_seen[0] = '\0';
        seen = fn(ctx, &spread);
        if (seen)
            break;
        if (attempts > run->opt.retries) { /* no more: still say what the last one saw */
            if (attempt_seen[0])
                why_append(why, sizeof why, "attempt %d: %s", attempts, attempt_seen);
            break;
        }
        if (!interference_now(run, spread, now, sizeof now))
            break;
        why_append(why, sizeof why, "attempt %d: %s", attempts, now);
    }
    report_attempts(run->r, what, attempts, seen, why);
    return seen;
}
