/* lab12's part 3: what a stream capture refuses, and that the context stays
 * usable afterwards. A refusal during a capture is an ordinary error, not a
 * sticky one: cudaGetLastError() clears it, cudaStreamEndCapture() ends the
 * broken capture (cudaErrorStreamCaptureInvalidated, no graph), and the
 * next kernel runs. Each row's documented answer is what CUDA's reference
 * and programming guide say; lab12.cu holds the measurement to it. */
#include "lab12.h"

#include <stdio.h>

enum { BYTES = 1 << 20 };

typedef struct {
    cudaStream_t nonblocking, blocking; /* the two kinds of capturing stream */
    uint32_t *d_word;                   /* the word the context check computes */
    void *made;                         /* what a row allocated, freed after its capture */
} refusal_bench;

typedef struct {
    const char *call;                   /* what is tried during (or instead of) a capture */
    const char *source;                 /* where CUDA documents the answer */
    cudaError_t documented;             /* what the call returns, as documented */
    enum cudaStreamCaptureStatus after; /* the capture after the call, as documented ... */
    int after_documented;               /* ... or 0: printed, not judged */
    /* Begins the capture when the row has one (naming its stream in
     * *capturing), makes the call, and returns the call's error, unchecked. */
    cudaError_t (*attempt)(refusal_bench *c, cudaStream_t *capturing);
} refusal_row;

/* What one row did: the call's error, the capture's state after it, what
 * ending the capture returned and whether that gave a graph. */
typedef struct {
    cudaError_t got, ended;
    enum cudaStreamCaptureStatus after;
    int graph_made;
} refusal_result;

/* Every capture that a row begins has a kernel in it already: the refusal
 * breaks a capture that had work, as it would in a real program. */
static void begin(refusal_bench *c, cudaStream_t s, enum cudaStreamCaptureMode mode,
                  cudaStream_t *capturing)
{
    CUDA_CHECK(cudaStreamBeginCapture(s, mode));
    *capturing = s;
    chain_step<<<1, 1, 0, s>>>(c->d_word, 1);
    CHECK_LAUNCH();
}

/* Global mode prohibits "potentially unsafe" calls from every thread while
 * the capture lasts: cudaMalloc may synchronise the device. */
static cudaError_t malloc_global(refusal_bench *c, cudaStream_t *capturing)
{
    begin(c, c->nonblocking, cudaStreamCaptureModeGlobal, capturing);
    return cudaMalloc(&c->made, BYTES);
}

/* Relaxed mode lets the thread make them: the allocation is not in the
 * graph, it happens now, once. */
static cudaError_t malloc_relaxed(refusal_bench *c, cudaStream_t *capturing)
{
    begin(c, c->nonblocking, cudaStreamCaptureModeRelaxed, capturing);
    return cudaMalloc(&c->made, BYTES);
}

/* Nothing has run yet: a capturing stream has no work to wait for. */
static cudaError_t sync_capturing(refusal_bench *c, cudaStream_t *capturing)
{
    begin(c, c->nonblocking, cudaStreamCaptureModeGlobal, capturing);
    return cudaStreamSynchronize(*capturing);
}

/* A blocking stream waits for the legacy stream and the legacy stream for
 * it (lab01): a legacy-stream launch would make the capture depend on work
 * outside it. Whether the capture survives is not documented (for
 * cudaStreamIsCapturing on the legacy stream it does): printed, not judged. */
static cudaError_t legacy_launch(refusal_bench *c, cudaStream_t *capturing)
{
    begin(c, c->blocking, cudaStreamCaptureModeGlobal, capturing);
    chain_step<<<1, 1>>>(c->d_word, 2);
    return cudaGetLastError();
}

static cudaError_t capture_legacy(refusal_bench *c, cudaStream_t *capturing)
{
    (void)c;
    cudaError_t err = cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal);
    if (err == cudaSuccess) /* not refused after all: end it like any other */
        *capturing = cudaStreamLegacy;
    return err;
}

static const refusal_row refusals[] = {
    {"cudaMalloc in a global-mode capture",
     "cudaStreamBeginCapture: global mode prohibits potentially unsafe API calls",
     cudaErrorStreamCaptureUnsupported, cudaStreamCaptureStatusInvalidated, 1, malloc_global},
    {"cudaMalloc in a relaxed-mode capture",
     "cudaStreamCaptureModeRelaxed: the thread is not prohibited from them",
     cudaSuccess, cudaStreamCaptureStatusActive, 1, malloc_relaxed},
    {"cudaStreamSynchronize of the capturing stream",
     "programming guide, stream capture: synchronising a capturing stream is invalid",
     cudaErrorStreamCaptureUnsupported, cudaStreamCaptureStatusInvalidated, 1, sync_capturing},
    {"legacy-stream kernel while a blocking stream captures",
     "cudaErrorStreamCaptureImplicit: an implicit dependency from cudaStreamLegacy",
     cudaErrorStreamCaptureImplicit, cudaStreamCaptureStatusInvalidated, 0, legacy_launch},
    {"cudaStreamBeginCapture of the legacy stream",
     "cudaStreamBeginCapture: capture may not be initiated on cudaStreamLegacy",
     cudaErrorStreamCaptureUnsupported, cudaStreamCaptureStatusNone, 1, capture_legacy},
};
enum { REFUSALS = sizeof refusals / sizeof refusals[0] };

static const char *capture_status_name(enum cudaStreamCaptureStatus s)
{
    return s == cudaStreamCaptureStatusActive ? "active"
           : s == cudaStreamCaptureStatusInvalidated ? "invalidated" : "none";
}

/* The row tried; the error cleared and the capture ended; then a kernel on
 * a fresh word must still compute it: counted into *usable. */
static refusal_result refusal_try(refusal_bench *c, const refusal_row *r, tally *usable)
{
    refusal_result res = {cudaSuccess, cudaSuccess, cudaStreamCaptureStatusNone, 0};
    cudaStream_t capturing = NULL;
    res.got = r->attempt(c, &capturing);
    (void)cudaGetLastError(); /* the refusal, still the last error: cleared, not sticky */
    if (capturing) {
        cudaGraph_t graph = NULL;
        CUDA_CHECK(cudaStreamIsCapturing(capturing, &res.after));
        res.ended = cudaStreamEndCapture(capturing, &graph); /* an invalidated one: an error */
        (void)cudaGetLastError();
        res.graph_made = graph != NULL;
        if (graph)
            CUDA_CHECK(cudaGraphDestroy(graph));
    }
    if (c->made)
        CUDA_CHECK(cudaFree(c->made));
    c->made = NULL;
    /* The context is usable: a kernel on a fresh word computes it. */
    uint32_t seed = (uint32_t)fresh_seed(), add = (uint32_t)fresh_seed(), got, want;
    CUDA_CHECK(cudaMemcpy(c->d_word, &seed, sizeof seed, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* a pageable copy may return before it lands */
    chain_step<<<1, 1, 0, c->nonblocking>>>(c->d_word, add);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(c->nonblocking));
    CUDA_CHECK(cudaMemcpy(&got, c->d_word, sizeof got, cudaMemcpyDeviceToHost));
    want = pipeline_stage_reference(seed, add);
    usable->where = r->call;
    verify_equal_u32(&got, &want, 1, usable);
    return res;
}

/* Every row as documented: all of them, there is no tolerance in an error
 * code. */
static const verdict AS_DOCUMENTED = {
    "capture_refusals_as_documented", 1, 1, "%",
    "a call during a capture did not return what CUDA documents, or left the capture in "
    "another state: see the row marked NO, and the driver's release notes"};

void capture_refusals(lab_run *run, bench *b)
{
    refusal_bench c = {b->s[1], lab_stream(run, "blocking", cudaStreamDefault, 0), b->d_word, NULL};
    int as_documented = 0;
    report_section(run->r, "Part 3: what a capture refuses, and the context afterwards");
    for (int i = 0; i < REFUSALS; i++) {
        const refusal_row *r = &refusals[i];
        refusal_result res = refusal_try(&c, r, &b->usable);
        int ok = res.got == r->documented && (!r->after_documented || res.after == r->after);
        as_documented += ok;
        report_text(run->r, "  %-56s %s\n    returned %s (documented %s), capture %s, ended with "
                    "%s%s\n    source: %s\n", r->call, ok ? "as documented" : "NOT as documented",
                    cudaGetErrorName(res.got), cudaGetErrorName(r->documented),
                    capture_status_name(res.after), cudaGetErrorName(res.ended),
                    res.graph_made ? " and a graph" : ", no graph", r->source);
        report_data(run->r, r->call, "error_code", res.got, "");
        report_data(run->r, r->call, "as_documented", ok, "");
    }
    report_verdict(run->r, &AS_DOCUMENTED, (double)as_documented / REFUSALS, "%d of %d rows "
                   "returned the documented error and left the capture as documented; every "
                   "error cleared with cudaGetLastError, no reset", as_documented, REFUSALS);
}
