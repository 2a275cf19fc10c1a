/* Host-side partners of the kernels: fresh inputs and CPU references. */
#define _POSIX_C_SOURCE 200809L
#include "kernels.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* splitmix64: tiny, fast, and good enough to make inputs no kernel bug can
 * accidentally match (unlike zeros or i, which hide indexing mistakes). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fill_random_u32(uint32_t *p, size_t n, uint64_t seed)
{
    uint64_t state = seed;
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = splitmix64(&state);
        p[i] = (uint32_t)r;
        p[i + 1] = (uint32_t)(r >> 32);
    }
    if (i < n)
        p[i] = (uint32_t)splitmix64(&state);
}

uint64_t fresh_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t state = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    return splitmix64(&state);
}

void random_strata(double *at, int n, double lo, double hi)
{
    uint64_t state = fresh_seed();
    for (int i = 0; i < n; i++) {
        double u = (splitmix64(&state) >> 11) * 0x1.0p-53; /* uniform in [0, 1) */
        at[i] = lo + (hi - lo) * (i + u) / n;
    }
}

/* The map x -> a*x + b applied k times is x -> A*x + B. Squaring the map
 * (A, B) -> (A*A, A*B + B) doubles k, so (A, B) for any k takes O(log k). */
static void affine_power(int steps, uint32_t *A, uint32_t *B)
{
    uint32_t ra = 1, rb = 0;              /* the result so far: identity */
    uint32_t pa = AFFINE_A, pb = AFFINE_B; /* the map applied 2^bit times */
    for (unsigned k = (unsigned)steps; k; k >>= 1) {
        if (k & 1) {                      /* result = p after result */
            rb = pa * rb + pb;
            ra = pa * ra;
        }
        pb = pa * pb + pb;
        pa = pa * pa;
    }
    *A = ra;
    *B = rb;
}

uint32_t affine_reference(uint32_t x, int steps)
{
    uint32_t A, B;
    affine_power(steps, &A, &B);
    return A * x + B;
}

size_t verify_equal_u32(const uint32_t *got, const uint32_t *want, size_t n, tally *t)
{
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ == 0)
            first = i;
    tally_add(t, n, bad, first);
    return bad;
}

size_t verify_affine(const uint32_t *in, const uint32_t *out, size_t n, int steps, tally *t)
{
    uint32_t A, B;
    size_t bad = 0, first = n;
    affine_power(steps, &A, &B);
    for (size_t i = 0; i < n; i++)
        if (out[i] != A * in[i] + B && bad++ == 0)
            first = i;
    tally_add(t, n, bad, first);
    return bad;
}

size_t verify_launch_records(const launch_record *r, int n, uint64_t tag, uint64_t ns,
                             size_t first, tally *t)
{
    size_t bad = 0;
    for (int i = 0; i < n; i++) {
        int wrong = r[i].tag != tag + i || r[i].end_ns - r[i].start_ns < ns;
        tally_add(t, 1, wrong, first + i);
        bad += wrong;
    }
    return bad;
}

int launches_within(const launch_record *r, int n, unsigned long long start_ns,
                    unsigned long long end_ns)
{
    int within = 0;
    for (int i = 0; i < n; i++)
        within += r[i].start_ns < end_ns && r[i].end_ns > start_ns;
    return within;
}

size_t verify_block_records(const block_record *r, int blocks, uint64_t tag, uint64_t ns,
                            int sms, unsigned long long *earliest, tally *t)
{
    size_t wrong = 0, first = 0;
    *earliest = ~0ull;
    for (int j = 0; j < blocks; j++) {
        int bad = r[j].tag != tag || r[j].block != (unsigned)j ||
                  r[j].end_ns - r[j].start_ns < ns || r[j].sm >= (unsigned)sms;
        if (bad && !wrong++)
            first = (size_t)j;
        *earliest = r[j].start_ns < *earliest ? r[j].start_ns : *earliest;
    }
    tally_add(t, (size_t)blocks, wrong, first);
    return wrong;
}

unsigned long long block_records_span(const block_record *r, int blocks, unsigned char *used,
                                      int max_sms)
{
    unsigned long long first = ~0ull, last = 0;
    for (int i = 0; i < blocks; i++) {
        first = r[i].start_ns < first ? r[i].start_ns : first;
        last = r[i].end_ns > last ? r[i].end_ns : last;
        if (used && r[i].sm < (unsigned)max_sms)
            used[r[i].sm] = 1;
    }
    return blocks > 0 ? last - first : 0;
}

int sms_marked(const unsigned char *used, int max_sms)
{
    int n = 0;
    for (int i = 0; i < max_sms; i++)
        n += used[i];
    return n;
}

size_t verify_launches(const block_record *r, const launch_slot *l, int n, uint64_t tag,
                       uint64_t ns, int sms, uint64_t slack_ns, tally *blocks, tally *order)
{
    size_t wrong = 0;
    for (int k = 0; k < n; k++) {
        unsigned long long earliest, prev_end = 0;
        wrong += verify_block_records(r + l[k].slot, l[k].blocks, tag + k, ns, sms, &earliest,
                                      blocks);
        for (int p = k - 1; p >= 0 && !prev_end; p--) /* the launch before, in its stream */
            for (int j = 0; l[p].stream == l[k].stream && j < l[p].blocks; j++)
                prev_end = r[l[p].slot + j].end_ns > prev_end ? r[l[p].slot + j].end_ns : prev_end;
        int late = prev_end > earliest + slack_ns;
        tally_add(order, 1, (size_t)late, (size_t)k);
        wrong += (size_t)late;
    }
    return wrong;
}

static int by_sm_then_start(const void *x, const void *y)
{
    const block_record *a = (const block_record *)x, *b = (const block_record *)y;
    if (a->sm != b->sm)
        return a->sm < b->sm ? -1 : 1;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

size_t verify_one_block_per_sm(block_record *r, int n, uint64_t slack_ns, tally *t)
{
    size_t shared = 0, first = 0;
    qsort(r, (size_t)n, sizeof *r, by_sm_then_start);
    for (int i = 1; i < n; i++) /* sorted: an overlap, if any, is with the block just before */
        if (r[i].sm == r[i - 1].sm && r[i].start_ns + slack_ns < r[i - 1].end_ns && !shared++)
            first = (size_t)i;
    tally_add(t, (size_t)n, shared, first);
    return shared;
}

size_t verify_pipeline(const uint32_t *value, const uint32_t *seed, const uint32_t *add,
                       const stage_span *span, const uint64_t *ns, int stages, int batches,
                       uint64_t slack_ns, tally *values, tally *order)
{
    size_t wrong = 0, late = 0, first_wrong = 0, first_late = 0;
    for (int b = 0; b < batches; b++) {
        uint32_t want = seed[b];
        for (int s = 0; s < stages; s++) {
            const stage_span *at = &span[s * batches + b];
            int bad = at->end_ns < at->start_ns || at->end_ns - at->start_ns < ns[s] ||
                      (s > 0 && at->start_ns + slack_ns < at[-batches].end_ns);
            if (bad && !late++)
                first_late = (size_t)s * (size_t)batches + (size_t)b;
            want = pipeline_stage_reference(want, add[s * batches + b]);
        }
        if (value[b] != want && !wrong++)
            first_wrong = (size_t)b;
    }
    tally_add(values, (size_t)batches, wrong, first_wrong);
    tally_add(order, (size_t)stages * (size_t)batches, late, first_late);
    return wrong + late;
}

size_t verify_fork_join(const uint32_t *value, const uint32_t *seed, const uint32_t *add,
                        const stage_span *span, const uint64_t *ns, int batches,
                        uint64_t slack_ns, tally *values, tally *order)
{
    enum { FIRST, BRANCH_A, BRANCH_B, JOIN, STAGES };
    size_t wrong = 0, late = 0, first_wrong = 0, first_late = 0;
    for (int b = 0; b < batches; b++) {
        const stage_span *at[STAGES];
        for (int s = 0; s < STAGES; s++)
            at[s] = &span[s * batches + b];
        for (int s = 0; s < STAGES; s++) {
            /* each stage after every stage it reads: a branch after the
             * first, the join after both branches */
            unsigned long long after = s == FIRST ? 0 : s != JOIN ? at[FIRST]->end_ns
                                       : at[BRANCH_A]->end_ns > at[BRANCH_B]->end_ns
                                           ? at[BRANCH_A]->end_ns : at[BRANCH_B]->end_ns;
            int bad = at[s]->end_ns < at[s]->start_ns ||
                      at[s]->end_ns - at[s]->start_ns < ns[s * batches + b] ||
                      at[s]->start_ns + slack_ns < after;
            if (bad && !late++)
                first_late = (size_t)s * (size_t)batches + (size_t)b;
        }
        uint32_t x = pipeline_stage_reference(seed[b], add[FIRST * batches + b]);
        uint32_t want = pipeline_join_reference(
            pipeline_stage_reference(x, add[BRANCH_A * batches + b]),
            pipeline_stage_reference(x, add[BRANCH_B * batches + b]), add[JOIN * batches + b]);
        if (value[b] != want && !wrong++)
            first_wrong = (size_t)b;
    }
    tally_add(values, (size_t)batches, wrong, first_wrong);
    tally_add(order, (size_t)STAGES * (size_t)batches, late, first_late);
    return wrong + late;
}
