/* lab13, part 4: what decides the overlap. The things the issue names,
 * each measured against the half-SM run of parts 2 and 3:
 *   the SMs: layers whose blocks hold every SM leave NCCL's kernels none,
 *   and the greatest priority for NCCL's stream does not make room (a
 *   priority picks which waiting block gets the next free SM; it evicts
 *   nothing); layers of one block per SM that hold none alone leave room;
 *   the link: the same buckets on a communicator limited to a few blocks
 *   (maxCTAs), a link several times slower, where the overlap saves more.
 * The rounds and the models are kernels/overlap.h's. */
#include "lab13.h"

#include <stdio.h>

/* Layers that hold every SM leave NCCL's kernels none until a layer ends
 * (the issue: 0.99x with every SM full, 1.43x with compute on half): the
 * gain over serial at most half of the half-SM run's. */
static const verdict FULL_SMS_HIDE_LESS = {
    "full_sms_hide_less", -INFINITY, 0.5, "x",
    "layers holding every SM still overlapped: NCCL's kernels found room beside them (is the "
    "footprint holding each SM?), or the half-SM run gained little itself"};
/* The same bound with NCCL's streams at the greatest priority (the issue:
 * 0.98x): when a layer ends, NCCL's blocks take the freed SMs first, and
 * the next layer's blocks wait for them, so the time is compute + comm
 * again, only in another order. */
static const verdict PRIORITY_MAKES_NO_ROOM = {
    "priority_makes_no_room", -INFINITY, 0.5, "x",
    "NCCL's stream at the greatest priority overlapped layers that hold every SM: NCCL's "
    "kernels found room (is the footprint holding each SM?), or the half-SM run gained little"};
/* Layers of one block per SM, holding none of them alone, leave room for
 * NCCL's blocks beside theirs (the issue: 1.15x, against 0.99x with every
 * SM held): round by round, at least 5% faster than the held-SM run. */
static const verdict ROOM_LETS_NCCL_IN = {
    "room_lets_nccl_in", 1.05, INFINITY, "x",
    "layers of one block per SM overlapped no better than layers holding every SM: NCCL's "
    "blocks did not fit beside theirs (another process on the GPU?)"};
/* The slow link against its own model, with OVERLAP_FOLLOWS_MODEL's
 * tolerance: on fewer blocks NCCL takes fewer SMs, so the bound is closer. */
static const verdict SLOW_LINK_FOLLOWS_MODEL = {
    "slow_link_overlap_follows_model", 0.7, 1.1, "x",
    "on the slow link the buckets did not overlap the layers as its model says: see "
    "overlap_follows_model's hint, and the slow link's fit above"};

/* The ways on every SM, measured in the same rounds: compute only (every
 * SM held), serial, overlapped, overlapped with NCCL at the greatest
 * priority; then one block per SM, serial and overlapped. */
enum { F_COMPUTE, F_SERIAL, F_OVERLAPPED, F_URGENT, F_ONE_SERIAL, F_ONE_OVERLAPPED, FULL_WAYS,
       SLOW_WAYS = 5 };

typedef struct {
    lab *b;
    double half_speedup;
    way full[FULL_WAYS], slow[SLOW_WAYS];
    stats full_time[FULL_WAYS], slow_time[SLOW_WAYS];
    double full_model[FULL_WAYS], slow_model[SLOW_WAYS];
    stats full_speedup, urgent_speedup, one_speedup;  /* serial / overlapped, round by round */
    stats room;                                       /* held-SM over one-block overlapped */
    stats slow_speedup, fast_speedup;
} decides;

/* How much of the half-SM run's gain over serial a speedup keeps. */
static double gain_share(const decides *d, const stats *speedup)
{
    return (speedup->median - 1) / (d->half_speedup - 1);
}

static double slow_share(const decides *d)
{
    return d->slow_speedup.median / (d->slow_model[1] / d->slow_model[2]);
}

static int attempt_decides(void *ctx, double *spread)
{
    decides *d = (decides *)ctx;
    overlap_measure(&d->b->o, d->full, FULL_WAYS, d->full_time, d->full_model);
    d->full_speedup = speedup_of(&d->b->o, F_SERIAL, F_OVERLAPPED);
    d->urgent_speedup = speedup_of(&d->b->o, F_SERIAL, F_URGENT);
    d->one_speedup = speedup_of(&d->b->o, F_ONE_SERIAL, F_ONE_OVERLAPPED);
    d->room = speedup_of(&d->b->o, F_OVERLAPPED, F_ONE_OVERLAPPED);
    overlap_measure(&d->b->o, d->slow, SLOW_WAYS, d->slow_time, d->slow_model);
    d->slow_speedup = speedup_of(&d->b->o, 1, 2);
    d->fast_speedup = speedup_of(&d->b->o, 3, 4);
    *spread = fmax(stats_spread(&d->full_speedup), stats_spread(&d->slow_speedup));
    return verdict_holds(&FULL_SMS_HIDE_LESS, gain_share(d, &d->full_speedup)) &&
           verdict_holds(&PRIORITY_MAKES_NO_ROOM, gain_share(d, &d->urgent_speedup)) &&
           verdict_holds(&ROOM_LETS_NCCL_IN, d->room.median) &&
           verdict_holds(&SLOW_LINK_FOLLOWS_MODEL, slow_share(d));
}

static void report_ways(lab_run *run, const way *w, const stats *time, const double *model, int n)
{
    for (int i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s, %s", w[i].j->shape.name, w[i].name);
        report_compare(run->r, name, "time", i == 0 ? "L x layer" : w[i].how == SERIAL ?
                       "compute + alpha + G/B" : "bucket k starts after its layer and bucket k-1",
                       model[i], &time[i], "ms");
    }
}

void what_decides(lab_run *run, lab *b, const job *main_job, const job *slow_job,
                  double bucket_mib, int slow_ctas, double half_speedup)
{
    job full = *main_job, one = *main_job;
    full.shape = b->full, one.shape = b->one;
    decides d = {b, half_speedup};
    d.full[F_COMPUTE] = make_way(&b->o, &full, COMPUTE_ONLY, &b->fast, &b->fast_fit, full.mib);
    d.full[F_SERIAL] = make_way(&b->o, &full, SERIAL, &b->fast, &b->fast_fit, full.mib);
    d.full[F_OVERLAPPED] = make_way(&b->o, &full, OVERLAPPED, &b->fast, &b->fast_fit, bucket_mib);
    d.full[F_URGENT] = d.full[F_OVERLAPPED];
    d.full[F_URGENT].urgent_comm = 1;
    snprintf(d.full[F_URGENT].name, sizeof d.full[F_URGENT].name,
             "bucket %g MiB, NCCL at the greatest priority", bucket_mib);
    d.full[F_ONE_SERIAL] = make_way(&b->o, &one, SERIAL, &b->fast, &b->fast_fit, one.mib);
    d.full[F_ONE_OVERLAPPED] = make_way(&b->o, &one, OVERLAPPED, &b->fast, &b->fast_fit, bucket_mib);

    char who[24];
    snprintf(who, sizeof who, "maxCTAs %d", slow_ctas);
    report_section(run->r, "Part 4: what decides the overlap");
    report_text(run->r, "  a slow link: NCCL limited to %d block(s) per collective\n", slow_ctas);
    ranks_open(&b->slow, b->o.g.dev, b->o.g.gpus, slow_ctas);
    const double sizes[] = {slow_job->mib / 16, slow_job->mib / 4, slow_job->mib};
    b->slow_fit = allreduce_sweep(run, &b->o, &b->slow, who, sizes, 3, slow_job);
    d.slow[0] = make_way(&b->o, slow_job, COMPUTE_ONLY, &b->slow, &b->slow_fit, slow_job->mib);
    d.slow[1] = make_way(&b->o, slow_job, SERIAL, &b->slow, &b->slow_fit, slow_job->mib);
    d.slow[2] = make_way(&b->o, slow_job, OVERLAPPED, &b->slow, &b->slow_fit, bucket_mib);
    d.slow[3] = make_way(&b->o, slow_job, SERIAL, &b->fast, &b->fast_fit, slow_job->mib);
    d.slow[4] = make_way(&b->o, slow_job, OVERLAPPED, &b->fast, &b->fast_fit, bucket_mib);
    for (int i = 1; i < SLOW_WAYS; i++)
        snprintf(d.slow[i].name, sizeof d.slow[i].name, "%s, %s", i < 3 ? who : "full link",
                 i % 2 ? "serial" : "overlapped");
    report_param(run->r, "slow_layer_ms", slow_job->layer_ms, "ms");
    report_param(run->r, "slow_grad_mib", slow_job->mib, "MiB");
    if (b->o.g.gpus < 2) {
        double spread;
        attempt_decides(&d, &spread);
    } else {
        lab_attempt(run, "every SM held; the slow link", attempt_decides, &d);
    }
    report_ways(run, d.full, d.full_time, d.full_model, FULL_WAYS);
    report_compare(run->r, "every SM held", "speedup", "serial / overlapped models",
                   d.full_model[F_SERIAL] / d.full_model[F_OVERLAPPED], &d.full_speedup, "x");
    report_compare(run->r, "every SM held, NCCL greatest", "speedup", "serial / overlapped models",
                   d.full_model[F_SERIAL] / d.full_model[F_URGENT], &d.urgent_speedup, "x");
    report_compare(run->r, "one block on every SM", "speedup", "serial / overlapped models",
                   d.full_model[F_ONE_SERIAL] / d.full_model[F_ONE_OVERLAPPED], &d.one_speedup,
                   "x");
    report_ways(run, d.slow, d.slow_time, d.slow_model, SLOW_WAYS);
    report_compare(run->r, who, "speedup", "serial / overlapped models",
                   d.slow_model[1] / d.slow_model[2], &d.slow_speedup, "x");
    report_compare(run->r, "full link", "speedup", "serial / overlapped models",
                   d.slow_model[3] / d.slow_model[4], &d.fast_speedup, "x");
    ranks_close(&b->slow);
    if (b->o.g.gpus < 2)
        return;
    report_verdict(run->r, &FULL_SMS_HIDE_LESS, gain_share(&d, &d.full_speedup), "layers on "
                   "every SM: %.2fx, on half of them %.2fx: %.0f%% of the gain kept",
                   d.full_speedup.median, half_speedup, 100 * gain_share(&d, &d.full_speedup));
    report_verdict(run->r, &PRIORITY_MAKES_NO_ROOM, gain_share(&d, &d.urgent_speedup), "NCCL's "
                   "streams at the greatest priority beside layers on every SM: %.2fx, %.0f%% of "
                   "the half-SM gain kept", d.urgent_speedup.median,
                   100 * gain_share(&d, &d.urgent_speedup));
    report_verdict(run->r, &ROOM_LETS_NCCL_IN, d.room.median, "one block on every SM: %.2fx over "
                   "serial; overlapped, %.2fx faster than with every SM held, round by round",
                   d.one_speedup.median, d.room.median);
    report_verdict(run->r, &SLOW_LINK_FOLLOWS_MODEL, slow_share(&d), "%d x %g ms, %g MiB: on %s "
                   "%.2fx (model %.2fx), on the full link %.2fx", slow_job->layers,
                   slow_job->layer_ms, slow_job->mib, who, d.slow_speedup.median,
                   d.slow_model[1] / d.slow_model[2], d.fast_speedup.median);
}
