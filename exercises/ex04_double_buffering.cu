/* ex04: double-buffer a batch pipeline.
 *
 * The task: run_batches() copies each batch to the GPU, computes on it and
 * copies the result back, all in one stream through one set of device
 * buffers, so the copy engines and the SMs take turns. Make it a double
 * buffer: two sets (a stream and device buffers each), batch i on set i % 2,
 * so that while one batch computes, the other set's stream downloads the
 * previous result and uploads the next batch. Keep every call asynchronous:
 * no waits inside the loop.
 *
 * Target: at least 90% of the ideal speedup over the serial run (printed as
 * the efficiency). Here the kernel takes twice as long as an upload, about as
 * long as both copies of a batch together: the case double buffering is made
 * for, where two streams can hide every copy behind compute. With the default
 * 16 batches the ideal is about 1.9x.
 *
 * Build and run:   make ex04 && ./ex04        (--quick for a short run)
 * Look for TODO(student), in two places. lab04 and its handout explain the model.
 */
#include "streamlab.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static int batches = 16;
static int batch_mib = 16;
static double kernel_ratio = 2; /* kernel = 2 x H2D: about h + d, what two streams can hide */

static const option ex_options[] = {
    {"batches", OPT_INT, &batches, 2, 1024, 8, "N", "batches in the pipeline"},
    {"batch-mib", OPT_INT, &batch_mib, 1, 1024, 8, "MIB",
     "input of one batch; its output is as large"},
    {"kernel-ratio", OPT_DOUBLE, &kernel_ratio, 0.05, 20, NO_QUICK, "R",
     "kernel time per batch / H2D time per batch"},
    {NULL},
};

enum { SETS = 2, WARMUP = 1, STAGE_REPEAT = 4, HOST_LIMIT_MIB = 8192 };

/* The input and the output live in pinned host memory: at most 8 GiB of each. */
static void check_host_memory(void)
{
    if ((long)batches * batch_mib > HOST_LIMIT_MIB)
        fail_usage("--batches %d x --batch-mib %d is more than %d MiB of input", batches,
                   batch_mib, HOST_LIMIT_MIB);
}

static const program_info ex = {
    .name = "ex04",
    .title = "exercise: double-buffer a batch pipeline (two streams, two buffer sets)",
    .handout = "labs/lab04_double_buffering/README.md",
    .options = ex_options, .reps = 5, .quick_reps = 2,
    .needs = NEEDS_COPY_ENGINE | NEEDS_OVERLAP,
    .memory_option = "batch-mib", .memory_per_unit = 4 << 20, /* two sets of two batches */
    .check_options = check_host_memory,
};

static const verdict EFFICIENT = {
    "pipeline_efficient", 0.90, INFINITY, "%",
    "with 1 buffer set the batches still take turns on one stream and one buffer set: see "
    "TODO(student) in make_sets() and run_batches(); with 2, is batch b on set b % 2's stream "
    "AND buffers, with no wait inside the loop? With --kernel-ratio below 2, two streams cannot "
    "reach the ideal (lab04, variant b)"};

typedef struct {
    int n;                        /* batches */
    size_t batch;                 /* elements per batch */
    int steps;                    /* affine_work rounds per element */
    uint32_t *h_in, *h_out;       /* pinned host memory, n batches each */
    int sets;                     /* buffer sets made so far */
    cudaStream_t stream[SETS];    /* a set: a stream ... */
    uint32_t *d_in[SETS], *d_out[SETS]; /* ... and room for one batch in and out */
} pipeline;

/* Set i: a non-blocking stream (the legacy default stream never orders it
 * behind its work) and device room for one batch in and one batch out. */
static void make_set(pipeline *p, int i)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&p->stream[i], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&p->d_in[i], p->batch * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc((void **)&p->d_out[i], p->batch * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemset(p->d_out[i], 0xff, p->batch * sizeof(uint32_t)));
    p->sets = i + 1;
}

/* ---- your part -------------------------------------------------------------------- */

static void make_sets(pipeline *p)
{
    make_set(p, 0);
    /* TODO(student): make a second set (make_set(p, 1)), so that two batches
     * can be in flight: one computing while the other uploads or downloads. */
}

/* Queues every batch: upload, compute, download. The caller times it with
 * events and waits for all the sets' streams at the end. */
static void run_batches(pipeline *p)
{
    size_t bytes = p->batch * sizeof(uint32_t);
    for (int b = 0; b < p->n; b++) {
        /* TODO(student): put batch b on set b % 2, its stream and its buffers.
         * On one set every batch waits for the one before it. Reusing a set
         * is safe because its stream runs in order: batch b+2's upload starts
         * only after batch b's download has finished. */
        int set = 0;
        const uint32_t *in = p->h_in + (size_t)b * p->batch;
        uint32_t *out = p->h_out + (size_t)b * p->batch;
        CUDA_CHECK(cudaMemcpyAsync(p->d_in[set], in, bytes, cudaMemcpyHostToDevice,
                                   p->stream[set]));
        affine_launch(p->d_in[set], p->d_out[set], p->batch, p->steps, p->stream[set]);
        CUDA_CHECK(cudaMemcpyAsync(out, p->d_out[set], bytes, cudaMemcpyDeviceToHost,
                                   p->stream[set]));
    }
}

/* ---- the harness: stage times, the serial reference, timing and checks ------------ */

typedef struct {
    pipeline *p;
    int serial;          /* 1: the reference, everything on set 0; 0: run_batches() */
    int stage;           /* for time_stage: 0 H2D, 1 kernel, 2 D2H */
    event_timer timer;
    cudaEvent_t joined[SETS];
} harness;

static void serial_reference(pipeline *p)
{
    size_t bytes = p->batch * sizeof(uint32_t);
    for (int b = 0; b < p->n; b++) {
        CUDA_CHECK(cudaMemcpyAsync(p->d_in[0], p->h_in + (size_t)b * p->batch, bytes,
                                   cudaMemcpyHostToDevice, p->stream[0]));
        affine_launch(p->d_in[0], p->d_out[0], p->batch, p->steps, p->stream[0]);
        CUDA_CHECK(cudaMemcpyAsync(p->h_out + (size_t)b * p->batch, p->d_out[0], bytes,
                                   cudaMemcpyDeviceToHost, p->stream[0]));
    }
}

/* All batches between two events in set 0's stream; the other sets' streams
 * start after the start event, and set 0's waits for them before the stop. */
static double time_run(void *ctx)
{
    harness *x = (harness *)ctx;
    pipeline *p = x->p;
    event_timer_start(&x->timer, p->stream[0]);
    for (int s = 1; s < p->sets; s++)
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[s], x->timer.start, 0));
    if (x->serial)
        serial_reference(p);
    else
        run_batches(p);
    for (int s = 1; s < p->sets; s++) {
        CUDA_CHECK(cudaEventRecord(x->joined[s], p->stream[s]));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream[0], x->joined[s], 0));
    }
    event_timer_stop(&x->timer, p->stream[0]);
    return event_timer_ms(&x->timer);
}

/* One stage alone: STAGE_REPEAT batches of it back to back in set 0's stream,
 * per batch (as lab04 times them). */
static double time_stage(void *ctx)
{
    harness *x = (harness *)ctx;
    pipeline *p = x->p;
    size_t bytes = p->batch * sizeof(uint32_t);
    event_timer_start(&x->timer, p->stream[0]);
    for (int i = 0; i < STAGE_REPEAT; i++) {
        if (x->stage == 0)
            CUDA_CHECK(cudaMemcpyAsync(p->d_in[0], p->h_in, bytes, cudaMemcpyHostToDevice,
                                       p->stream[0]));
        else if (x->stage == 1)
            affine_launch(p->d_in[0], p->d_out[0], p->batch, p->steps, p->stream[0]);
        else
            CUDA_CHECK(cudaMemcpyAsync(p->h_out, p->d_out[0], bytes, cudaMemcpyDeviceToHost,
                                       p->stream[0]));
    }
    event_timer_stop(&x->timer, p->stream[0]);
    return event_timer_ms(&x->timer) / STAGE_REPEAT;
}

static stats stage_alone(harness *x, int stage, int reps)
{
    x->stage = stage;
    return measure(time_stage, x, WARMUP, reps < 5 ? 5 : reps);
}

/* Times a run on poisoned outputs, then checks every output element. */
static stats run_checked(harness *x, int serial, int reps, tally *outputs)
{
    pipeline *p = x->p;
    size_t total = (size_t)p->n * p->batch;
    memset(p->h_out, 0xff, total * sizeof(uint32_t));
    x->serial = serial;
    stats t = measure(time_run, x, WARMUP, reps);
    CUDA_CHECK(cudaDeviceSynchronize()); /* whatever stream the work went to */
    outputs->where = serial ? "serial" : "your pipeline";
    verify_affine(p->h_in, p->h_out, total, p->steps, outputs);
    return t;
}

static double max2(double a, double b) { return a > b ? a : b; }

int main(int argc, char **argv)
{
    lab_run run;
    lab_begin(&run, argc, argv, &ex);
    report *r = run.r;

    pipeline p;
    memset(&p, 0, sizeof p);
    p.n = batches;
    p.batch = (size_t)batch_mib << 18; /* words of 4 bytes */
    size_t total = (size_t)p.n * p.batch;
    p.h_in = (uint32_t *)lab_pinned(&run, total * sizeof(uint32_t));
    p.h_out = (uint32_t *)lab_pinned(&run, total * sizeof(uint32_t));
    fill_random_u32(p.h_in, total, fresh_seed());
    make_sets(&p); /* the serial reference and the stage times use set 0 only */
    CUDA_CHECK(cudaMemcpy(p.d_in[0], p.h_in, p.batch * sizeof(uint32_t),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memsets ran on the legacy stream */

    harness x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.timer = lab_timer(&run);
    for (int s = 0; s < SETS; s++)
        x.joined[s] = lab_event(&run, cudaEventDisableTiming);

    report_section(r, "Each stage alone (per batch, pinned memory)");
    affine_calibration cal = affine_calibrate(p.d_in[0], p.d_out[0], p.batch, p.stream[0]);
    stats h = stage_alone(&x, 0, run.opt.reps), d = stage_alone(&x, 2, run.opt.reps);
    p.steps = affine_steps_for_ms(&cal, kernel_ratio * h.median);
    stats k = stage_alone(&x, 1, run.opt.reps);
    report_stats(r, "H2D", "time", &h, "ms");
    report_compare(r, "kernel", "time", "--kernel-ratio x h", kernel_ratio * h.median, &k, "ms");
    report_stats(r, "D2H", "time", &d, "ms");

    /* The model (lab04): serial n(h+k+d); ideal pipeline (h+k+d) + (n-1) max(h,k,d)
     * with two or more copy engines; with one, uploads and downloads take turns. */
    double sum = h.median + k.median + d.median, serial_model = p.n * sum;
    double ideal = run.dev.async_engines >= 2
                       ? sum + (p.n - 1) * max2(max2(h.median, k.median), d.median)
                       : max2(p.n * (h.median + d.median), h.median + d.median + p.n * k.median);

    report_section(r, "The serial reference and your pipeline");
    tally outputs = {0};
    stats s = run_checked(&x, 1, run.opt.reps, &outputs);
    report_compare(r, "serial", "time", "n(h+k+d)", serial_model, &s, "ms");
    stats t = run_checked(&x, 0, run.opt.reps, &outputs);
    report_compare(r, "your pipeline", "time",
                   run.dev.async_engines >= 2 ? "ideal: (h+k+d) + (n-1) max(h,k,d)"
                                              : "ideal: max(n(h+d), h+d+nk), one copy engine",
                   ideal, &t, "ms");
    double speedup = s.median / t.median, ideal_speedup = serial_model / ideal;
    double efficiency = speedup / ideal_speedup;
    report_value(r, "your pipeline", "speedup", speedup, "x");
    report_value(r, "your pipeline", "ideal_speedup", ideal_speedup, "x");
    report_value(r, "your pipeline", "efficiency", efficiency * 100, "%");
    report_value(r, "your pipeline", "buffer_sets", p.sets, "count");

    report_section(r, "Checks");
    report_tally(r, "outputs_verified", &outputs,
                 "outputs differ from the CPU reference (the serial run's and yours)");
    report_verdict(r, &EFFICIENT, efficiency, "your pipeline (%d buffer set%s) %.2fx faster "
                   "than serial, the ideal %.2fx: %.0f%%", p.sets, p.sets == 1 ? "" : "s",
                   speedup, ideal_speedup, efficiency * 100);

    /* The sets are make_set()'s, not the run's: released here. */
    for (int i = 0; i < p.sets; i++) {
        CUDA_CHECK(cudaStreamDestroy(p.stream[i]));
        CUDA_CHECK(cudaFree(p.d_in[i]));
        CUDA_CHECK(cudaFree(p.d_out[i]));
    }
    return lab_end(&run);
}
