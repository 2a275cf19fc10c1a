/* Grading harness for ex04: does the student's double buffer overlap the
 * copies with compute, and get every output right?
 *
 * The student wrote make_sets() and run_batches(). The harness builds the
 * exercise's pipeline (16 batches of 16 MiB in pinned memory, fresh random
 * inputs, the kernel calibrated to twice an upload), then times the student's
 * run_batches() and its own serial run (one stream, its own buffers), one
 * after the other, with the host clock from an idle GPU to
 * cudaDeviceSynchronize: that waits for whatever streams the student used.
 * Every output of every one of the student's runs is checked against the
 * CPU reference, the outputs poisoned before each run. It prints:
 *   h2d_ms, kernel_ms, d2h_ms     each stage alone, per batch;
 *   serial_ms, yours_ms, speedup  and serial / yours;
 *   ideal_speedup                 the model (lab04): n(h+k+d) over
 *                                 (h+k+d) + (n-1) x the slowest stage;
 *   efficiency                    speedup / ideal_speedup;
 *   mismatches, checked           outputs of the student's runs that differ;
 *   buffer_sets                   the sets make_sets() made. */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

static const double GRADER_KERNEL_RATIO = 2; /* kernel = 2 x upload, as in the exercise */

typedef struct {
    cudaStream_t stream;    /* the grader's own: the serial run and the stage times */
    uint32_t *d_in, *d_out; /* room for one batch in and out */
    event_timer timer;
} grader_serial;

static void grader_serial_run(const pipeline *p, grader_serial *g)
{
    size_t bytes = p->batch * sizeof(uint32_t);
    for (int b = 0; b < p->n; b++) {
        CUDA_CHECK(cudaMemcpyAsync(g->d_in, p->h_in + (size_t)b * p->batch, bytes,
                                   cudaMemcpyHostToDevice, g->stream));
        affine_launch(g->d_in, g->d_out, p->batch, p->steps, g->stream);
        CUDA_CHECK(cudaMemcpyAsync(p->h_out + (size_t)b * p->batch, g->d_out, bytes,
                                   cudaMemcpyDeviceToHost, g->stream));
    }
}

/* One stage alone (0 upload, 1 kernel, 2 download), per batch: the median of
 * five timings of four batches back to back, after one untimed. */
static double grader_stage(const pipeline *p, grader_serial *g, int stage)
{
    size_t bytes = p->batch * sizeof(uint32_t);
    double ms[5];
    for (int r = -1; r < 5; r++) {
        event_timer_start(&g->timer, g->stream);
        for (int i = 0; i < 4; i++) {
            if (stage == 0)
                CUDA_CHECK(cudaMemcpyAsync(g->d_in, p->h_in, bytes, cudaMemcpyHostToDevice,
                                           g->stream));
            else if (stage == 1)
                affine_launch(g->d_in, g->d_out, p->batch, p->steps, g->stream);
            else
                CUDA_CHECK(cudaMemcpyAsync(p->h_out, g->d_out, bytes, cudaMemcpyDeviceToHost,
                                           g->stream));
        }
        event_timer_stop(&g->timer, g->stream);
        if (r >= 0)
            ms[r] = event_timer_ms(&g->timer) / 4;
    }
    return stats_of(ms, 5).median;
}

/* The student's run_batches() or the grader's serial run, on poisoned outputs,
 * from an idle GPU until every stream is done. */
static double grader_time(pipeline *p, grader_serial *g, int yours)
{
    memset(p->h_out, 0xff, (size_t)p->n * p->batch * sizeof(uint32_t));
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = host_time_ms();
    if (yours)
        run_batches(p); /* the student's */
    else
        grader_serial_run(p, g);
    CUDA_CHECK(cudaDeviceSynchronize());
    return host_time_ms() - t0;
}

static double grader_max(double a, double b) { return a > b ? a : b; }

int main(int argc, char **argv)
{
    int check = grading_begin("ex04", argc, argv);
    int reps = check ? 1 : 5;
    pipeline p; /* the exercise's own struct */
    memset(&p, 0, sizeof p);
    p.n = check ? 4 : 16;
    p.batch = (size_t)(check ? 1 : 16) << 18; /* MiB in words of 4 bytes */
    size_t total = (size_t)p.n * p.batch;
    CUDA_CHECK(cudaMallocHost((void **)&p.h_in, total * sizeof(uint32_t)));
    CUDA_CHECK(cudaMallocHost((void **)&p.h_out, total * sizeof(uint32_t)));
    fill_random_u32(p.h_in, total, fresh_seed());
    make_sets(&p); /* the student's */

    grader_serial g;
    CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc((void **)&g.d_in, p.batch * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc((void **)&g.d_out, p.batch * sizeof(uint32_t)));
    event_timer_create(&g.timer);
    CUDA_CHECK(cudaMemcpy(g.d_in, p.h_in, p.batch * sizeof(uint32_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* make_set's memsets ran on the legacy stream */

    affine_calibration cal = affine_calibrate(g.d_in, g.d_out, p.batch, g.stream);
    double h = grader_stage(&p, &g, 0), d = grader_stage(&p, &g, 2);
    p.steps = affine_steps_for_ms(&cal, GRADER_KERNEL_RATIO * h);
    double k = grader_stage(&p, &g, 1);
    double sum = h + k + d;
    double ideal = grading.dev.async_engines >= 2 /* uploads beside downloads */
                       ? sum + (p.n - 1) * grader_max(grader_max(h, k), d)
                       : grader_max(p.n * (h + d), h + d + p.n * k);

    double serial[5], yours[5];
    tally outputs = {0};
    for (int r = -1; r < reps; r++) { /* round -1 warms up; its outputs are checked too */
        double s = grader_time(&p, &g, 0);
        double y = grader_time(&p, &g, 1);
        verify_affine(p.h_in, p.h_out, total, p.steps, &outputs);
        if (r >= 0) {
            serial[r] = s;
            yours[r] = y;
        }
    }
    double s = stats_of(serial, reps).median, y = stats_of(yours, reps).median;

    grading_value("h2d_ms", h);
    grading_value("kernel_ms", k);
    grading_value("d2h_ms", d);
    grading_value("serial_ms", s);
    grading_value("yours_ms", y);
    grading_value("speedup", s / y);
    grading_value("ideal_speedup", p.n * sum / ideal);
    grading_value("efficiency", (s / y) / (p.n * sum / ideal));
    grading_value("mismatches", (double)outputs.wrong);
    grading_value("checked", (double)outputs.checked);
    grading_value("buffer_sets", p.sets);

    event_timer_destroy(&g.timer);
    CUDA_CHECK(cudaFree(g.d_out));
    CUDA_CHECK(cudaFree(g.d_in));
    CUDA_CHECK(cudaStreamDestroy(g.stream));
    for (int i = 0; i < p.sets; i++) {
        CUDA_CHECK(cudaStreamDestroy(p.stream[i]));
        CUDA_CHECK(cudaFree(p.d_in[i]));
        CUDA_CHECK(cudaFree(p.d_out[i]));
    }
    CUDA_CHECK(cudaFreeHost(p.h_out));
    CUDA_CHECK(cudaFreeHost(p.h_in));
    return grading_finish();
}
