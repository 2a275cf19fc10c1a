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
    {"batches", OPT_INT, &batches, 2, 1024, "N", "batches in the pipeline (--quick: at most 8)"},
    {"batch-mib", OPT_INT, &batch_mib, 1, 1024, "MIB",
     "input of one batch; its output is as large (--quick: at most 8)"},
    {"kernel-ratio", OPT_DOUBLE, &kernel_ratio, 0.05, 20, "R",
     "kernel time per batch / H2D time per batch"},
};
static const program_info ex = {
    "ex04", "exercise: double-buffer a batch pipeline (two streams, two buffer sets)",
    ex_options, sizeof ex_options / sizeof ex_options[0], 5,
};

enum { SETS = 2, WARMUP = 1, STAGE_REPEAT = 4, HOST_LIMIT_MIB = 8192 };

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
static stats run_checked(harness *x, int serial, int reps, size_t *bad)
{
    pipeline *p = x->p;
    size_t total = (size_t)p->n * p->batch, first_bad;
    memset(p->h_out, 0xff, total * sizeof(uint32_t));
    x->serial = serial;
    stats t = measure(time_run, x, WARMUP, reps);
    CUDA_CHECK(cudaDeviceSynchronize()); /* whatever stream the work went to */
    *bad += verify_affine(p->h_in, p->h_out, total, p->steps, &first_bad);
    return t;
}

static double max2(double a, double b) { return a > b ? a : b; }

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &ex, &opt);
    if (opt.quick) {
        batches = batches < 8 ? batches : 8;
        batch_mib = batch_mib < 8 ? batch_mib : 8;
        opt.reps = opt.reps < 2 ? opt.reps : 2;
    }
    if ((long)batches * batch_mib > HOST_LIMIT_MIB)
        fail_usage("--batches %d x --batch-mib %d is more than %d MiB of input", batches,
                   batch_mib, HOST_LIMIT_MIB);
    device_info dev;
    device_select(&opt, &dev);
    device_require(dev.async_engines >= 1, "this GPU has no copy engine that runs beside "
                   "kernels (asyncEngineCount 0): copies and kernels take turns, nothing overlaps");
    device_require(!dev.launch_blocking, "CUDA_LAUNCH_BLOCKING=1 makes every launch wait for "
                   "the last: nothing can overlap");
    if (((size_t)batch_mib << 22) > dev.free_memory / 2) /* two sets of two batches */
        fail_usage("--batch-mib %d: four batches need more than half of this GPU's free memory "
                   "(%zu MiB)", batch_mib, dev.free_memory >> 20);
    report *r = report_begin(&ex, &opt, &dev);
    report_param(r, "batches", batches, "count");
    report_param(r, "batch_size", batch_mib, "MiB");
    report_param(r, "kernel_ratio", kernel_ratio, "ratio");

    pipeline p;
    memset(&p, 0, sizeof p);
    p.n = batches;
    p.batch = (size_t)batch_mib << 18; /* words of 4 bytes */
    size_t total = (size_t)p.n * p.batch;
    CUDA_CHECK(cudaMallocHost((void **)&p.h_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_out, total * sizeof(uint32_t)));
    fill_random_u32(p.h_in, total, fresh_seed());
    make_sets(&p); /* the serial reference and the stage times use set 0 only */
    CUDA_CHECK(cudaMemcpy(p.d_in[0], p.h_in, p.batch * sizeof(uint32_t),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the memsets ran on the legacy stream */

    harness x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    event_timer_create(&x.timer);
    for (int s = 0; s < SETS; s++)
        CUDA_CHECK(cudaEventCreateWithFlags(&x.joined[s], cudaEventDisableTiming));

    report_section(r, "Each stage alone (per batch, pinned memory)");
    affine_calibration cal = affine_calibrate(p.d_in[0], p.d_out[0], p.batch, p.stream[0]);
    stats h = stage_alone(&x, 0, opt.reps), d = stage_alone(&x, 2, opt.reps);
    p.steps = affine_steps_for_ms(&cal, kernel_ratio * h.median);
    stats k = stage_alone(&x, 1, opt.reps);
    report_stats(r, "H2D", "time", &h, "ms");
    report_compare(r, "kernel", "time", kernel_ratio * h.median, &k, "ms");
    report_stats(r, "D2H", "time", &d, "ms");

    /* The model (lab04): serial n(h+k+d); ideal pipeline (h+k+d) + (n-1) max(h,k,d)
     * with two or more copy engines; with one, uploads and downloads take turns. */
    double sum = h.median + k.median + d.median, serial_model = p.n * sum;
    double ideal = dev.async_engines >= 2
                       ? sum + (p.n - 1) * max2(max2(h.median, k.median), d.median)
                       : max2(p.n * (h.median + d.median), h.median + d.median + p.n * k.median);

    report_section(r, "The serial reference and your pipeline");
    size_t bad = 0;
    stats s = run_checked(&x, 1, opt.reps, &bad);
    report_compare(r, "serial", "time", serial_model, &s, "ms");
    stats t = run_checked(&x, 0, opt.reps, &bad);
    report_compare(r, "your pipeline", "time", ideal, &t, "ms");
    report_text(r, "  (predicted = the ideal pipeline: (h+k+d) + (n-1) x the slowest stage)\n");
    double speedup = s.median / t.median, ideal_speedup = serial_model / ideal;
    double efficiency = speedup / ideal_speedup;
    report_value(r, "your pipeline", "speedup", speedup, "x");
    report_value(r, "your pipeline", "ideal_speedup", ideal_speedup, "x");
    report_value(r, "your pipeline", "efficiency", efficiency * 100, "%");
    report_value(r, "your pipeline", "buffer_sets", p.sets, "count");

    report_section(r, "Checks");
    report_check(r, "outputs_verified", bad == 0, "%zu of %zu outputs differ from the CPU "
                 "reference (the serial run's and yours)", bad, 2 * total);
    report_verdict(r, "pipeline_efficient", efficiency >= 0.90, "your pipeline %.2fx faster "
                   "than serial, the ideal %.2fx: %.0f%% (limit 90%%)", speedup, ideal_speedup,
                   efficiency * 100);
    report_hint(r, "%s", p.sets < 2
                ? "the batches still take turns on one stream and one buffer set: see "
                  "TODO(student) in make_sets() and run_batches()"
                : "is batch b on set b % 2's stream AND buffers, with no wait inside the loop? "
                  "With --kernel-ratio below 2, two streams cannot reach the ideal (lab04, "
                  "variant b)");

    for (int i = 0; i < SETS; i++)
        CUDA_CHECK(cudaEventDestroy(x.joined[i]));
    event_timer_destroy(&x.timer);
    for (int i = 0; i < p.sets; i++) {
        CUDA_CHECK(cudaStreamDestroy(p.stream[i]));
        CUDA_CHECK(cudaFree(p.d_in[i]));
        CUDA_CHECK(cudaFree(p.d_out[i]));
    }
    CUDA_CHECK(cudaFreeHost(p.h_out));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    return report_finish(r);
}
