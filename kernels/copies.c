/* Copies between the host and the GPU, measured; see copies.h. */
#include "copies.h"
#include "../common/check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { POISON = 0xff, MIN_SAMPLES = 7 };

void copy_issue(void *ctx, int i)
{
    const copy_op *c = (const copy_op *)ctx;
    (void)i;
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->dir, c->stream));
}

stats copy_gbps(copy_op c, int per_sample, int warmup, int samples)
{
    stats t = measure_issued(copy_issue, &c, c.stream, per_sample, warmup, samples);
    return stats_over((double)c.bytes / 1e6, &t);
}

static double host_memcpy_ms(void *ctx)
{
    const copy_op *c = (const copy_op *)ctx;
    double t0 = host_time_ms();
    memcpy(c->dst, c->src, c->bytes);
    return host_time_ms() - t0;
}

stats copy_host_gbps(copy_op c, int warmup, int reps)
{
    stats t = measure(host_memcpy_ms, &c, warmup, reps);
    return stats_over((double)c.bytes / 1e6, &t);
}

paired copy_paired(copy_op a, copy_op b, event_timer t, int warmup, int pairs)
{
    issued w[2] = {{copy_issue, &a, a.stream, 1, t}, {copy_issue, &b, b.stream, 1, t}};
    return measure_paired(time_issued, &w[0], time_issued, &w[1], warmup, pairs);
}

void copy_returns_ms(void *ctx, double *v)
{
    copy_returns *x = (copy_returns *)ctx;
    for (int i = 0; i < x->n; i++, v += 3) {
        const copy_op *c = &x->c[i];
        CUDA_CHECK(cudaStreamSynchronize(c->stream));
        event_timer_start(&x->timer, c->stream);
        double t0 = host_time_ms();
        CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->dir, c->stream));
        v[0] = host_time_ms() - t0;
        event_timer_stop(&x->timer, c->stream);
        v[1] = event_timer_ms(&x->timer);
        v[2] = v[0] / v[1];
    }
}

void copy_sweep_plan(copy_sweep *s, size_t smallest, size_t largest, int factor, size_t budget,
                     int reps)
{
    const size_t sample_min = 256u << 10;
    s->n = 0;
    for (size_t bytes = smallest; bytes < largest && s->n < COPY_SWEEP_MAX - 1; bytes *= factor)
        s->bytes[s->n++] = bytes;
    s->bytes[s->n++] = largest;
    for (int i = 0; i < s->n; i++) {
        size_t bytes = s->bytes[i], per_sample = bytes > sample_min ? bytes : sample_min;
        size_t fit = budget / per_sample; /* whole samples in the budget */
        int mib = bytes >= (1u << 20);
        s->samples[i] = (int)fmin(fmax((double)fit, MIN_SAMPLES), reps);
        s->batch[i] = (int)(per_sample / bytes);
        snprintf(s->label[i], sizeof s->label[i], "%zu %s", bytes >> (mib ? 20 : 10),
                 mib ? "MiB" : "KiB");
    }
}

void copy_sweep_round_trips(const copy_sweep *s, copy_op up, copy_op down, int warmup,
                            stats *up_gbps, stats *down_gbps, tally *t)
{
    for (int i = 0; i < s->n; i++) {
        t->where = s->label[i];
        up.bytes = down.bytes = s->bytes[i];
        CUDA_CHECK(cudaMemsetAsync(up.dst, POISON, s->bytes[i], up.stream));
        up_gbps[i] = copy_gbps(up, s->batch[i], warmup, s->samples[i]);
        memset(down.dst, POISON, s->bytes[i]); /* the stream is idle */
        down_gbps[i] = copy_gbps(down, s->batch[i], warmup, s->samples[i]);
        verify_equal_u32((const uint32_t *)down.dst, (const uint32_t *)up.src, s->bytes[i] / 4, t);
    }
}

void copy_sweep_report(report *r, const copy_sweep *s, const char *variant, const stats *gbps)
{
    char metric[48];
    for (int i = 0; i < s->n; i++) {
        snprintf(metric, sizeof metric, "bandwidth@%zu", s->bytes[i]);
        report_stats(r, variant, metric, &gbps[i], "GB/s");
    }
}
