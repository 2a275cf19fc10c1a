/* Calibration of affine_work: "a kernel of T ms" as a step count. */
#include "kernels.h"
#include "../common/check.h"
#include "../common/timing.h"

struct affine_run {
    const uint32_t *in;
    uint32_t *out;
    size_t n;
    int steps;
    cudaStream_t stream;
    event_timer timer;
};

static double time_affine(void *ctx)
{
    struct affine_run *r = (struct affine_run *)ctx;
    event_timer_start(&r->timer, r->stream);
    affine_launch(r->in, r->out, r->n, r->steps, r->stream);
    event_timer_stop(&r->timer, r->stream);
    return event_timer_ms(&r->timer);
}

extern "C" affine_calibration affine_calibrate(const uint32_t *d_in, uint32_t *d_out, size_t n,
                                               cudaStream_t stream)
{
    /* Two points far apart on the line time = fixed + steps * slope: the
     * second is long enough (milliseconds) that timer resolution is noise.
     * Where the launch's fixed cost hides the slope (few elements, a busy
     * GPU, a sanitizer's slow launches), the second point moves out until
     * the steps show: a slope measured as noise would ask for absurd step
     * counts later, a hang in all but name. */
    struct affine_run r = {d_in, d_out, n, 16, stream, {0, 0}};
    event_timer_create(&r.timer);
    stats low = measure(time_affine, &r, 2, 5);
    r.steps = 16 * 64;
    stats high = measure(time_affine, &r, 1, 5);
    for (int i = 0; i < 4 && high.median < 4 * low.median; i++) {
        r.steps *= 4;
        high = measure(time_affine, &r, 1, 5);
    }
    event_timer_destroy(&r.timer);

    affine_calibration cal;
    cal.n = n;
    cal.ns_per_step = (high.median - low.median) * 1e6 / (r.steps - 16);
    if (!(cal.ns_per_step > 0)) /* a broken clock or a folded loop: nothing to divide by */
        fail_cannot_run("affine_work took no longer for %d steps (%.3f ms) than for 16 "
                        "(%.3f ms): its duration cannot be calibrated on this GPU now",
                        r.steps, high.median, low.median);
    cal.fixed_ns = low.median * 1e6 - 16 * cal.ns_per_step;
    if (cal.fixed_ns < 0)
        cal.fixed_ns = 0;
    return cal;
}

extern "C" int affine_steps_for_ms(const affine_calibration *cal, double ms)
{
    double steps = (ms * 1e6 - cal->fixed_ns) / cal->ns_per_step;
    if (steps < 1)
        return 1;
    if (steps > 1e9)
        return 1000000000;
    return (int)(steps + 0.5);
}
