/* lab10, part 4: who may free a buffer that another stream reads?
 *
 * Stream A makes a buffer X (cudaMallocAsync) and fills it; stream B waits
 * for that, works --delay-ms, then reads X. The pool reuses memory in
 * stream order: freed in A, X is free for A's next allocation as soon as A
 * reaches the free, whatever B has still queued. So three ways to free it:
 *   freed in A, no wait       A's next buffer gets X's address, A refills
 *                             it at once, and B, still working, reads A's
 *                             new words: every word wrong (a use-after-free
 *                             that compute-sanitizer's memcheck names with
 *                             --track-stream-ordered-races all);
 *   A waits for B's event     cudaEventRecord in B after its read,
 *                             cudaStreamWaitEvent in A, then the free: 0;
 *   freed in B, its last user cudaFreeAsync(X, B): 0.
 * PyTorch's tensor.record_stream() exists for exactly this (torch_lab10.py).
 * B counts the wrong words itself, on the GPU (kernels/handoff.cu). */
#include "lab10.h"

#include <string.h>

const char *free_ways = "all";

void check_free_ways(void)
{
    if (strcmp(free_ways, "all") && strcmp(free_ways, "safe") && strcmp(free_ways, "unsafe"))
        fail_usage("--free must be all, safe or unsafe (got '%s')", free_ways);
}

void bench_open(lab_run *run, bench *b, size_t words, uint64_t delay_ns, int records,
                int samples)
{
    memset(b, 0, sizeof *b);
    b->pool = default_mem_pool(run->opt.device);
    b->reps = run->opt.reps;
    b->tag = fresh_seed() >> 1;
    b->a = lab_stream(run, "A", cudaStreamNonBlocking, 0);
    b->b = lab_stream(run, "B", cudaStreamNonBlocking, 0);
    b->h = (buffer_handoff){b->a, b->b, lab_event(run, cudaEventDisableTiming),
                            lab_event(run, cudaEventDisableTiming),
                            (unsigned long long *)lab_device(run, sizeof(unsigned long long)),
                            words, delay_ns};
    b->d_rec = (launch_record *)lab_device(run, records * sizeof(launch_record));
    b->h_rec = (launch_record *)lab_pageable(run, records * sizeof(launch_record));
    b->samples = (double *)lab_pageable(run, samples * sizeof(double));
}

enum free_way { UNSAFE, EVENT_WAIT, LAST_USER, FREE_WAYS };
static const char *const free_name[] = {"freed in A, no wait", "A waits for B's event, then frees",
                                        "freed in B, its last user"};

/* handoff_begin (kernels/handoff.cu): A makes X and fills it, B waits for
 * that, works delay_ms, then counts X's wrong words, its last use. Then X
 * is freed one of three ways, and handoff_end has A make its next buffer at
 * once, X's size, and fill it with other words. Returns B's count. */
static unsigned long long free_run(bench *b, enum free_way how, int *reused)
{
    uint64_t seed = fresh_seed();
    uint32_t *x = handoff_begin(&b->h, seed);
    if (how == EVENT_WAIT) /* A's free, and all A does after it, waits for B's read */
        CUDA_CHECK(cudaStreamWaitEvent(b->a, b->h.used, 0));
    CUDA_CHECK(cudaFreeAsync(x, how == LAST_USER ? b->b : b->a));
    return handoff_end(&b->h, x, seed, reused);
}

/* The model: B reads X delay_ms after A refilled it (a fill takes
 * microseconds), so every word is wrong; over half, median run, and the
 * address must have been reused: nothing else makes a word wrong here. */
static const verdict RACE_SEEN = {
    "unsafe_free_reads_reused_memory", 0.5, INFINITY, "%",
    "B read its words right although A freed X without waiting: A's next allocation did not "
    "get X's address (see reused), or B read before A refilled it (a --delay-ms too short)"};

typedef struct {
    bench *b;
    int from, to; /* the ways to run: --free */
    tally t[FREE_WAYS];
    int reused[FREE_WAYS];
    stats frac;   /* the unsafe way's wrong words, a fraction per run */
} part4;

static int attempt_frees(void *ctx, double *spread)
{
    part4 *p = (part4 *)ctx;
    double n = (double)p->b->h.words;
    for (int w = p->from; w < p->to; w++)
        p->reused[w] = 0, p->t[w] = (tally){0}, p->t[w].where = free_name[w];
    for (int i = 0; i < p->b->reps; i++)
        for (int w = p->from; w < p->to; w++) { /* in turns: the same moments for each way */
            int reused;
            unsigned long long wrong = free_run(p->b, (enum free_way)w, &reused);
            tally_add(&p->t[w], (size_t)n, (size_t)wrong, 0);
            p->reused[w] += reused;
            if (w == UNSAFE)
                p->b->samples[i] = wrong / n;
        }
    *spread = 0; /* counts, not timings */
    if (p->from != UNSAFE)
        return 1;
    p->frac = stats_of(p->b->samples, p->b->reps);
    return verdict_holds(&RACE_SEEN, p->frac.median);
}

void who_frees(lab_run *run, bench *b)
{
    int unsafe_only = !strcmp(free_ways, "unsafe"), safe_only = !strcmp(free_ways, "safe");
    part4 p = {b, safe_only ? EVENT_WAIT : UNSAFE, unsafe_only ? EVENT_WAIT : FREE_WAYS};
    report_section(run->r, "Part 4: A makes a buffer, B reads it late; who frees it?");
    report_param(run->r, "size_mib", (double)b->h.words * sizeof(uint32_t) / MIB, "MiB");
    report_param(run->r, "delay_ms", b->h.delay_ns / 1e6, "ms");
    lab_attempt(run, "who frees", attempt_frees, &p);
    for (int w = p.from; w < p.to; w++) {
        report_value(run->r, free_name[w], "wrong_words", (double)p.t[w].wrong, "count");
        report_value(run->r, free_name[w], "next_allocation_reused", p.reused[w], "count");
        report_text(run->r, "  %-36s %zu of %zu words B read were wrong; A's next buffer got the "
                    "freed address in %d of %d runs\n", free_name[w], p.t[w].wrong, p.t[w].checked,
                    p.reused[w], b->reps);
    }
    if (p.from == UNSAFE && !unsafe_only)
        report_verdict(run->r, &RACE_SEEN, p.frac.median, "freed in A without waiting: %.0f%% of "
                       "the words B read were A's next buffer's (median run; model: all)",
                       100 * p.frac.median);
    if (unsafe_only)
        report_tally(run->r, "unsafe_free_words_right", &p.t[UNSAFE], "words B read after A "
                     "freed the buffer under it (--free unsafe: a failure)");
    if (p.to == FREE_WAYS) {
        report_tally(run->r, "event_wait_words_right", &p.t[EVENT_WAIT], "words wrong");
        report_tally(run->r, "last_user_words_right", &p.t[LAST_USER], "words wrong");
    }
}
