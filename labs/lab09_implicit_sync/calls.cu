/* lab09's catalogue of calls (calls.h says what a row is). Each call is
 * timed alone, so its function makes only the call: whatever it needs (an
 * allocation to free, data to copy) is prepared before K1 starts, and what
 * it delivered is checked once the GPU is idle again.
 *
 * "Async" calls go into stream A, behind K1, as PyTorch puts everything on
 * its current stream; synchronous calls go where CUDA puts them, the legacy
 * default stream. Where CUDA documents the outcome, the row says where:
 *   sync API   "API synchronization behavior" in the runtime API reference
 *   legacy     the legacy default stream waits for, and is waited for by,
 *              blocking streams; non-blocking streams do neither
 *   explicit   a synchronisation call: it waits for what it names, only that
 *   query      asks without waiting, by definition
 *   async      a launch into a stream returns before the work runs
 *   may        the documentation says it MAY synchronise (the programming
 *              guide's implicit-synchronisation list, lazy loading): printed,
 *              never judged, since "may" holds whatever the driver does
 *   (empty)    nothing documented: this driver's behaviour, printed */
#include "calls.h"

#include <string.h>
#include <array>
#include <utility>

enum setup {
    PLAIN,          /* nothing to prepare or check */
    TO_DEVICE,      /* fresh data in both host buffers; d_dst checked */
    TO_PAGEABLE,    /* fresh data in d_src; h_pageable checked */
    TO_PINNED,      /* fresh data in d_src; h_pinned checked */
    DEVICE_COPY,    /* fresh data in d_src; d_dst checked */
    MEMSET,         /* d_dst checked for the byte of the tag */
    TO_SYMBOL,      /* fresh data in h_pageable; the symbol checked */
    FREE_DEVICE,    /* prepare cudaMalloc's `made`, the call frees it */
    FREE_HOST,      /* prepare cudaMallocHost's it */
    UNREGISTER,     /* prepare pins h_register */
    MADE_DEVICE,    /* the call made `made` with cudaMalloc: finish frees it */
    MADE_HOST,      /* ... with cudaMallocHost or cudaHostAlloc */
    REGISTERED,     /* the call pinned h_register: finish unpins it */
    STACK_LIMIT,    /* the call raised the stack limit: finish restores it */
    LOGGED_KERNEL,  /* the small kernel's record checked */
    COLD_KERNEL,    /* the unlaunched kernel's mark checked */
    HOST_FN,        /* the host function ran once */
};

/* ---- kernels that no one launched before: lazy loading's first launch ---- */

/* Under CUDA_MODULE_LOADING=LAZY (the default) a kernel's code is loaded at
 * its first launch. Each copy of this template is a distinct kernel, so
 * every measurement can launch one for the first time. */
enum { COLD_KERNELS = 64, SYMBOL_WORDS = 4096 };
template <int I> __global__ void never_launched(unsigned *mark) { *mark = I + 1; }
typedef void (*cold_kernel)(unsigned *);
template <int... I>
static constexpr std::array<cold_kernel, sizeof...(I)> cold_table(std::integer_sequence<int, I...>)
{
    return {never_launched<I>...};
}
static const auto cold = cold_table(std::make_integer_sequence<int, COLD_KERNELS>());

__device__ uint32_t symbol_words[SYMBOL_WORDS]; /* cudaMemcpyToSymbol's target */

/* ---- the calls ------------------------------------------------------------ */

static size_t bytes(const calls_bench *c) { return c->words * sizeof(uint32_t); }
static size_t symbol_bytes(const calls_bench *c)
{
    return (c->words < (size_t)SYMBOL_WORDS ? c->words : (size_t)SYMBOL_WORDS) * sizeof(uint32_t);
}
/* "Not ready" is the answer a query exists for: not an error to keep. */
static void query(cudaError_t err)
{
    if (err == cudaErrorNotReady)
        err = cudaSuccess, (void)cudaGetLastError();
    CUDA_CHECK(err);
}
static void host_fn(void *c) { ((calls_bench *)c)->host_fn_ran++; }

static void malloc_device(calls_bench *c) { CUDA_CHECK(cudaMalloc(&c->made, bytes(c))); }
static void free_device(calls_bench *c) { CUDA_CHECK(cudaFree(c->made)); }
static void malloc_host(calls_bench *c) { CUDA_CHECK(cudaMallocHost(&c->made, bytes(c))); }
static void free_host(calls_bench *c) { CUDA_CHECK(cudaFreeHost(c->made)); }
static void host_alloc(calls_bench *c) { CUDA_CHECK(cudaHostAlloc(&c->made, bytes(c), cudaHostAllocDefault)); }
static void host_register(calls_bench *c) { CUDA_CHECK(cudaHostRegister(c->h_register, bytes(c), cudaHostRegisterDefault)); }
static void host_unregister(calls_bench *c) { CUDA_CHECK(cudaHostUnregister(c->h_register)); }
static void malloc_free_async(calls_bench *c)
{
    CUDA_CHECK(cudaMallocAsync(&c->made, bytes(c), c->a));
    CUDA_CHECK(cudaFreeAsync(c->made, c->a));
}
static void memset_sync(calls_bench *c) { CUDA_CHECK(cudaMemset(c->d_dst, (int)(c->tag & 0xff), bytes(c))); }
static void memset_async(calls_bench *c) { CUDA_CHECK(cudaMemsetAsync(c->d_dst, (int)(c->tag & 0xff), bytes(c), c->a)); }
static void h2d_pageable(calls_bench *c) { CUDA_CHECK(cudaMemcpy(c->d_dst, c->h_pageable, bytes(c), cudaMemcpyHostToDevice)); }
static void h2d_pinned(calls_bench *c) { CUDA_CHECK(cudaMemcpy(c->d_dst, c->h_pinned, bytes(c), cudaMemcpyHostToDevice)); }
static void d2h_pageable(calls_bench *c) { CUDA_CHECK(cudaMemcpy(c->h_pageable, c->d_src, bytes(c), cudaMemcpyDeviceToHost)); }
static void d2h_pinned(calls_bench *c) { CUDA_CHECK(cudaMemcpy(c->h_pinned, c->d_src, bytes(c), cudaMemcpyDeviceToHost)); }
static void d2d(calls_bench *c) { CUDA_CHECK(cudaMemcpy(c->d_dst, c->d_src, bytes(c), cudaMemcpyDeviceToDevice)); }
static void to_symbol(calls_bench *c) { CUDA_CHECK(cudaMemcpyToSymbol(symbol_words, c->h_pageable, symbol_bytes(c))); }
static void h2d_pinned_async(calls_bench *c) { CUDA_CHECK(cudaMemcpyAsync(c->d_dst, c->h_pinned, bytes(c), cudaMemcpyHostToDevice, c->a)); }
static void d2h_pinned_async(calls_bench *c) { CUDA_CHECK(cudaMemcpyAsync(c->h_pinned, c->d_src, bytes(c), cudaMemcpyDeviceToHost, c->a)); }
static void h2d_pageable_async(calls_bench *c) { CUDA_CHECK(cudaMemcpyAsync(c->d_dst, c->h_pageable, bytes(c), cudaMemcpyHostToDevice, c->a)); }
static void d2h_pageable_async(calls_bench *c) { CUDA_CHECK(cudaMemcpyAsync(c->h_pageable, c->d_src, bytes(c), cudaMemcpyDeviceToHost, c->a)); }
static void d2h_then_sync(calls_bench *c)
{
    d2h_pinned_async(c);
    CUDA_CHECK(cudaStreamSynchronize(c->a));
}
static void event_sync(calls_bench *c)
{
    CUDA_CHECK(cudaEventRecord(c->event, c->a));
    CUDA_CHECK(cudaEventSynchronize(c->event));
}
static void device_sync(calls_bench *) { CUDA_CHECK(cudaDeviceSynchronize()); }
static void stream_sync_b(calls_bench *c) { CUDA_CHECK(cudaStreamSynchronize(c->b)); }
static void event_query(calls_bench *c)
{
    CUDA_CHECK(cudaEventRecord(c->event, c->a));
    query(cudaEventQuery(c->event));
}
static void stream_query(calls_bench *c) { query(cudaStreamQuery(c->a)); }
static void set_limit(calls_bench *c) { CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, c->stack_bytes + 1024)); }
static void get_properties(calls_bench *)
{
    cudaDeviceProp p;
    int device;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
}
static void func_attributes(calls_bench *)
{
    cudaFuncAttributes a;
    CUDA_CHECK(cudaFuncGetAttributes(&a, spin_and_log));
}
static void pointer_attributes(calls_bench *c)
{
    cudaPointerAttributes a;
    CUDA_CHECK(cudaPointerGetAttributes(&a, c->h_pinned));
}
static void mem_get_info(calls_bench *)
{
    size_t free_bytes, total;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
}
static void stream_create_destroy(calls_bench *)
{
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    CUDA_CHECK(cudaStreamDestroy(s));
}
static void event_create_destroy(calls_bench *)
{
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreate(&e));
    CUDA_CHECK(cudaEventDestroy(e));
}
static void kernel_in_a(calls_bench *c)
{
    spin_and_log<<<1, 1, 0, c->a>>>(0, c->tag, c->d_legacy);
    CHECK_LAUNCH();
}
static void kernel_legacy(calls_bench *c)
{
    spin_and_log<<<1, 1, 0, cudaStreamLegacy>>>(0, c->tag, c->d_legacy);
    CHECK_LAUNCH();
}
static void launch_host_fn(calls_bench *c) { CUDA_CHECK(cudaLaunchHostFunc(c->a, host_fn, c)); }
static void first_launch(calls_bench *c)
{
    cold[c->cold_used]<<<1, 1, 0, c->a>>>(c->d_word);
    CHECK_LAUNCH();
    c->cold_expected = ++c->cold_used;
}

/* ---- the catalogue, in the handout's order ------------------------------- */

#define ND UNDOCUMENTED
#define LEGACY(blocking) {NEITHER, blocking} /* non-blocking streams ignore the legacy stream */
const call_row calls[] = {
    {"cudaMalloc", "torch.empty (allocator grows)", "may: guide", {ND, ND}, malloc_device, MADE_DEVICE},
    {"cudaFree", "torch.cuda.empty_cache()", "", {ND, ND}, free_device, FREE_DEVICE},
    {"cudaMallocHost", "torch.empty(pin_memory=True)", "may: guide", {ND, ND}, malloc_host, MADE_HOST},
    {"cudaFreeHost", "", "", {ND, ND}, free_host, FREE_HOST},
    {"cudaHostAlloc", "tensor.pin_memory()", "may: guide", {ND, ND}, host_alloc, MADE_HOST},
    {"cudaHostRegister", "cudart().cudaHostRegister", "", {ND, ND}, host_register, REGISTERED},
    {"cudaHostUnregister", "cudart().cudaHostUnregister", "", {ND, ND}, host_unregister, UNREGISTER},
    {"cudaMallocAsync+cudaFreeAsync (A)", "backend:cudaMallocAsync", "", {ND, ND}, malloc_free_async, PLAIN},
    {"cudaMemset", "", "legacy", LEGACY(GPU_SERIALISED), memset_sync, MEMSET},
    {"cudaMemsetAsync (A)", "tensor.zero_()", "sync API", {NEITHER, NEITHER}, memset_async, MEMSET},
    {"cudaMemcpy H2D pageable", "torch.tensor(list, device='cuda')", "sync API+legacy", LEGACY(HOST_WAITED), h2d_pageable, TO_DEVICE},
    {"cudaMemcpy H2D pinned", "", "sync API+legacy", LEGACY(HOST_WAITED), h2d_pinned, TO_DEVICE},
    {"cudaMemcpy D2H pageable", "", "sync API+legacy", LEGACY(HOST_WAITED), d2h_pageable, TO_PAGEABLE},
    {"cudaMemcpy D2H pinned", "", "sync API+legacy", LEGACY(HOST_WAITED), d2h_pinned, TO_PINNED},
    {"cudaMemcpy D2D", "", "sync API+legacy", LEGACY(GPU_SERIALISED), d2d, DEVICE_COPY},
    {"cudaMemcpyToSymbol", "", "sync API+legacy", LEGACY(HOST_WAITED), to_symbol, TO_SYMBOL},
    {"cudaMemcpyAsync H2D pinned (A)", "x.cuda(non_blocking=True), x pinned", "sync API", {NEITHER, NEITHER}, h2d_pinned_async, TO_DEVICE},
    {"cudaMemcpyAsync D2H pinned (A)", "x.to('cpu', non_blocking=True)", "sync API", {NEITHER, NEITHER}, d2h_pinned_async, TO_PINNED},
    {"cudaMemcpyAsync H2D pageable (A)", "x.cuda(), x pageable", "may: sync API", {ND, ND}, h2d_pageable_async, TO_DEVICE},
    {"cudaMemcpyAsync D2H pageable (A)", "x.cpu()", "sync API", {HOST_WAITED, HOST_WAITED}, d2h_pageable_async, TO_PAGEABLE},
    {"D2H (A) + cudaStreamSynchronize(A)", ".item(), print(tensor)", "explicit", {HOST_WAITED, HOST_WAITED}, d2h_then_sync, TO_PINNED},
    {"cudaEventRecord(A)+EventSynchronize", "torch.cuda.Event.synchronize()", "explicit", {HOST_WAITED, HOST_WAITED}, event_sync, PLAIN},
    {"cudaDeviceSynchronize", "torch.cuda.synchronize()", "explicit", {HOST_WAITED, HOST_WAITED}, device_sync, PLAIN},
    {"cudaStreamSynchronize(B)", "stream_b.synchronize()", "explicit", {NEITHER, NEITHER}, stream_sync_b, PLAIN},
    {"cudaEventRecord(A)+cudaEventQuery", "torch.cuda.Event.query()", "query", {NEITHER, NEITHER}, event_query, PLAIN},
    {"cudaStreamQuery(A)", "stream.query()", "query", {NEITHER, NEITHER}, stream_query, PLAIN},
    {"cudaDeviceSetLimit(stack)", "", "", {ND, ND}, set_limit, STACK_LIMIT},
    {"cudaGetDeviceProperties", "torch.cuda.get_device_properties()", "", {ND, ND}, get_properties, PLAIN},
    {"cudaFuncGetAttributes", "", "", {ND, ND}, func_attributes, PLAIN},
    {"cudaPointerGetAttributes", "tensor.is_pinned()", "", {ND, ND}, pointer_attributes, PLAIN},
    {"cudaMemGetInfo", "torch.cuda.mem_get_info()", "", {ND, ND}, mem_get_info, PLAIN},
    {"cudaStreamCreate+cudaStreamDestroy", "torch.cuda.Stream()", "", {ND, ND}, stream_create_destroy, PLAIN},
    {"cudaEventCreate+cudaEventDestroy", "torch.cuda.Event()", "", {ND, ND}, event_create_destroy, PLAIN},
    {"kernel (A), launched before", "any op on the current stream", "async", {NEITHER, NEITHER}, kernel_in_a, LOGGED_KERNEL},
    {"kernel in the legacy stream", "an op on torch.cuda.default_stream()", "legacy", LEGACY(GPU_SERIALISED), kernel_legacy, LOGGED_KERNEL},
    {"cudaLaunchHostFunc(A)", "", "async", {NEITHER, NEITHER}, launch_host_fn, HOST_FN},
    {"first launch of a kernel (A)", "an op's first call", "may: lazy loading", {ND, ND}, first_launch, COLD_KERNEL},
};
const int call_count = sizeof calls / sizeof calls[0];

/* ---- before and after ------------------------------------------------------ */

void calls_open(lab_run *run, calls_bench *c, size_t words)
{
    memset(c, 0, sizeof *c);
    c->words = words;
    c->d_dst = (uint32_t *)lab_device(run, bytes(c));
    c->d_src = (uint32_t *)lab_device(run, bytes(c));
    c->h_pageable = (uint32_t *)lab_pageable(run, bytes(c));
    c->h_pinned = (uint32_t *)lab_pinned(run, bytes(c));
    c->want = (uint32_t *)lab_pageable(run, bytes(c));
    c->got = (uint32_t *)lab_pageable(run, bytes(c));
    /* cudaHostRegister pins whole pages: start on one */
    uintptr_t raw = (uintptr_t)lab_pageable(run, bytes(c) + 4096);
    c->h_register = (uint32_t *)((raw + 4095) & ~(uintptr_t)4095);
    c->event = lab_event(run, cudaEventDisableTiming);
    c->d_legacy = (launch_record *)lab_device(run, sizeof(launch_record));
    c->d_word = (unsigned *)lab_device(run, sizeof(unsigned));
    CUDA_CHECK(cudaDeviceGetLimit(&c->stack_bytes, cudaLimitStackSize));
}

void call_prepare(calls_bench *c, const call_row *r)
{
    size_t n = bytes(c);
    c->tag = fresh_seed() >> 1; /* never the all-ones poison */
    fill_random_u32(c->want, c->words, c->tag);
    switch (r->setup) {
    case TO_DEVICE:
    case TO_SYMBOL:
        memcpy(c->h_pageable, c->want, n);
        memcpy(c->h_pinned, c->want, n);
        CUDA_CHECK(cudaMemset(c->d_dst, 0xff, n));
        break;
    case TO_PAGEABLE: case TO_PINNED: case DEVICE_COPY:
        CUDA_CHECK(cudaMemcpy(c->d_src, c->want, n, cudaMemcpyHostToDevice));
        memset(c->h_pageable, 0xff, n), memset(c->h_pinned, 0xff, n);
        CUDA_CHECK(cudaMemset(c->d_dst, 0xff, n));
        break;
    case MEMSET:
        memset(c->want, (int)(c->tag & 0xff), n);
        CUDA_CHECK(cudaMemset(c->d_dst, ~(int)(c->tag & 0xff) & 0xff, n));
        break;
    case FREE_DEVICE: CUDA_CHECK(cudaMalloc(&c->made, n)); break;
    case FREE_HOST: CUDA_CHECK(cudaMallocHost(&c->made, n)); break;
    case UNREGISTER: host_register(c); break;
    case LOGGED_KERNEL: CUDA_CHECK(cudaMemset(c->d_legacy, 0xff, sizeof(launch_record))); break;
    case COLD_KERNEL: CUDA_CHECK(cudaMemset(c->d_word, 0, sizeof(unsigned))); break;
    case HOST_FN: c->host_fn_ran = 0; break;
    default: break;
    }
    CUDA_CHECK(cudaDeviceSynchronize()); /* the GPU idle before K1 */
}

void call_finish(calls_bench *c, const call_row *r, tally *t)
{
    size_t n = bytes(c);
    switch (r->setup) {
    case TO_DEVICE: case DEVICE_COPY: case MEMSET:
        CUDA_CHECK(cudaMemcpy(c->got, c->d_dst, n, cudaMemcpyDeviceToHost));
        verify_equal_u32(c->got, c->want, c->words, t);
        break;
    case TO_SYMBOL:
        CUDA_CHECK(cudaMemcpyFromSymbol(c->got, symbol_words, symbol_bytes(c)));
        verify_equal_u32(c->got, c->want, symbol_bytes(c) / sizeof(uint32_t), t);
        break;
    case TO_PAGEABLE: verify_equal_u32(c->h_pageable, c->want, c->words, t); break;
    case TO_PINNED: verify_equal_u32(c->h_pinned, c->want, c->words, t); break;
    case MADE_DEVICE: CUDA_CHECK(cudaFree(c->made)); break;
    case MADE_HOST: CUDA_CHECK(cudaFreeHost(c->made)); break;
    case REGISTERED: host_unregister(c); break;
    case STACK_LIMIT: CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, c->stack_bytes)); break;
    case LOGGED_KERNEL: {
        launch_record rec;
        CUDA_CHECK(cudaMemcpy(&rec, c->d_legacy, sizeof rec, cudaMemcpyDeviceToHost));
        tally_add(t, 1, rec.tag != c->tag, 0);
        break;
    }
    case COLD_KERNEL: {
        unsigned mark;
        CUDA_CHECK(cudaMemcpy(&mark, c->d_word, sizeof mark, cudaMemcpyDeviceToHost));
        tally_add(t, 1, mark != (unsigned)c->cold_expected, 0);
        break;
    }
    case HOST_FN: tally_add(t, 1, c->host_fn_ran != 1, 0); break;
    default: break;
    }
}

int call_can_measure(const calls_bench *c, const call_row *r, int times)
{
    return r->setup != COLD_KERNEL || COLD_KERNELS - c->cold_used >= times;
}
