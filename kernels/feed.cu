/* Batches the CPU prepares and the GPU steps on (lab11, ex11); see kernels.h. */
#include "kernels.h"
#include "../common/check.h"
#include "../common/stats.h"
#include "../common/timing.h"

#include <math.h>
#include <string.h>

enum { STEP_THREADS = 256, CALIBRATION_RUNS = 5, CALIBRATION_STEPS = 4 };

/* `r` rounds of the affine map as one map x -> a x + b (mod 2^32). */
static void compose(uint64_t r, uint32_t *a, uint32_t *b)
{
    uint32_t ca = 1, cb = 0;
    for (uint64_t i = 0; i < r; i++)
        ca *= AFFINE_A, cb = cb * AFFINE_A + AFFINE_B;
    *a = ca, *b = cb;
}

/* Word i gets rounds*(i+1)/n - rounds*i/n rounds: q or q+1, q = rounds/n.
 * The GPU computes that per word; the CPU keeps the remainder running
 * (Bresenham), which gives the same counts without a division per word. */
extern "C" void feed_prepare(const feed_bench *f, int batch, uint32_t *buf)
{
    uint64_t q = f->rounds / f->n, rem = f->rounds % f->n, acc = 0;
    for (size_t i = 0; i < f->n; i++) {
        uint64_t r = q;
        acc += rem;
        if (acc >= f->n)
            acc -= f->n, r++;
        uint32_t x = feed_word(f->seed, batch, i);
        for (uint64_t k = 0; k < r; k++)
            x = x * AFFINE_A + AFFINE_B;
        buf[i] = x;
    }
}

extern "C" double feed_prepare_ms(feed_bench *f, uint32_t *buf)
{
    double ms[CALIBRATION_RUNS];
    for (int i = 0; i < CALIBRATION_RUNS; i++) {
        double t0 = host_time_ms();
        feed_prepare(f, i, buf);
        ms[i] = host_time_ms() - t0;
    }
    return stats_of(ms, CALIBRATION_RUNS).median;
}

/* Rounds for `ms`. The cost is not a straight line in the rounds: the
 * first round or so of each word runs in the shadow of its hash and store
 * (an out-of-order core overlaps them; each word's rounds are a chain of
 * their own), so the line through none and 8 rounds a word prices a round
 * too high at a few a word (the first H100 run: 2 ms asked, 1.38 ms got).
 * Between those two points, false-position steps land within 5% of `ms`
 * (at most CALIBRATION_STEPS more; each keeps one point below `ms` and one
 * above, so a noisy sample cannot fling the rounds out of that range).
 * Beyond 8 a word the line holds. */
extern "C" double feed_calibrate(feed_bench *f, uint32_t *buf, double ms)
{
    double lo[2] = {0, 0}, hi[2] = {8.0 * (double)f->n, 0}; /* {rounds, ms} */
    f->rounds = 0, lo[1] = feed_prepare_ms(f, buf);
    f->rounds = (uint64_t)hi[0], hi[1] = feed_prepare_ms(f, buf);
    if (ms <= lo[1] || hi[1] <= lo[1]) {
        f->rounds = 0;
        return lo[1];
    }
    double r = (ms - lo[1]) * hi[0] / (hi[1] - lo[1]), t = 0;
    for (int i = 0; i <= CALIBRATION_STEPS; i++) {
        f->rounds = (uint64_t)r, t = feed_prepare_ms(f, buf);
        if (fabs(t - ms) <= 0.05 * ms || r > hi[0])
            break;
        double *end = t < ms ? lo : hi;
        end[0] = r, end[1] = t;
        r = lo[0] + (ms - lo[1]) * (hi[0] - lo[0]) / (hi[1] - lo[1]);
    }
    return t;
}

__global__ void feed_step(const uint32_t *d, size_t n, uint64_t seed, int batch, uint64_t rounds,
                          uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1, uint64_t ns,
                          unsigned long long *wrong, stage_span *span)
{
    uint64_t start = globaltimer_ns(), now, q = rounds / n;
    unsigned long long bad = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t r = rounds * (i + 1) / n - rounds * i / n;
        uint32_t x = feed_word(seed, batch, i);
        bad += d[i] != (r == q ? a0 * x + b0 : a1 * x + b1);
    }
    if (bad)
        atomicAdd(&wrong[batch], bad);
    do
        now = globaltimer_ns();
    while (now - start < ns);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMin(&span[batch].start_ns, (unsigned long long)start);
        atomicMax(&span[batch].end_ns, (unsigned long long)now);
    }
}

extern "C" void feed_step_launch(const feed_bench *f, int batch, const uint32_t *d_buf,
                                 uint64_t ns, int blocks, cudaStream_t stream)
{
    uint32_t a0, b0, a1, b1;
    compose(f->rounds / f->n, &a0, &b0);
    compose(f->rounds / f->n + 1, &a1, &b1);
    feed_step<<<blocks, STEP_THREADS, 0, stream>>>(d_buf, f->n, f->seed, batch, f->rounds, a0,
                                                    b0, a1, b1, ns, f->d_wrong, f->d_span);
    CHECK_LAUNCH();
}

extern "C" double feed_copy_ms(uint32_t *d, const uint32_t *h, size_t n, cudaStream_t stream)
{
    double ms[9];
    event_timer t;
    event_timer_create(&t);
    for (int i = 0; i < 9; i++) {
        event_timer_start(&t, stream);
        CUDA_CHECK(cudaMemcpyAsync(d, h, n * sizeof *h, cudaMemcpyHostToDevice, stream));
        event_timer_stop(&t, stream);
        ms[i] = event_timer_ms(&t);
    }
    event_timer_destroy(&t);
    return stats_of(ms + 1, 8).median;
}

extern "C" void feed_fresh(feed_bench *f)
{
    f->seed = fresh_seed();
    memset(f->h_wrong, 0, f->batches * sizeof *f->h_wrong);
    for (int b = 0; b < f->batches; b++)
        f->h_span[b].start_ns = ~0ull, f->h_span[b].end_ns = 0;
    CUDA_CHECK(cudaMemcpy(f->d_wrong, f->h_wrong, f->batches * sizeof *f->h_wrong,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(f->d_span, f->h_span, f->batches * sizeof *f->h_span,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize()); /* pageable copies may return before they land */
}

extern "C" double feed_verify(feed_bench *f, tally *t)
{
    double busy_ns = 0;
    size_t wrong = 0, first = 0;
    CUDA_CHECK(cudaMemcpy(f->h_wrong, f->d_wrong, f->batches * sizeof *f->h_wrong,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(f->h_span, f->d_span, f->batches * sizeof *f->h_span,
                          cudaMemcpyDeviceToHost));
    for (int b = 0; b < f->batches; b++) {
        int ran = f->h_span[b].end_ns > f->h_span[b].start_ns;
        if (ran)
            busy_ns += (double)(f->h_span[b].end_ns - f->h_span[b].start_ns);
        if (!ran || f->h_wrong[b])
            first = wrong++ ? first : (size_t)b;
    }
    tally_add(t, (size_t)f->batches, wrong, first);
    return busy_ns / 1e6;
}
