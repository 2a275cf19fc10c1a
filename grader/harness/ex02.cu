/* Grading harness for ex02: are the student's staging buffers pinned, so
 * that cudaMemcpyAsync returns at once and each copy runs while the host
 * produces the next chunk?
 *
 * The student wrote make_staging() and free_staging(). The harness runs its
 * own pipeline through the two staging buffers, as the exercise does: the
 * host produces chunk i (fresh random words: its work) into buffer i % 2 and
 * queues its copy, then produces the next, waiting for the copy that last
 * read a buffer before it reuses it. It prints:
 *   pinned         1 when cudaPointerGetAttributes says both buffers are
 *                  page-locked host memory;
 *   call_fraction  chunk by chunk, the time inside cudaMemcpyAsync alone over
 *                  that chunk's copy (events), the median over every chunk of
 *                  every run: near 0 when the call only queues the copy (an
 *                  H100: 16 MiB queue in about 5 us, copy in 0.3 ms), 0.8 or
 *                  more from pageable memory, where it returns after staging
 *                  the copy (lab02's pageable_call_waits_for_copy);
 *   overlap        (host work + copies - wall) / the shorter of the two: the
 *                  share of it that ran beside the other; the model (n-1)/n;
 *   words_wrong    words on the GPU that differ from what the host produced. */
#include "grading.h"
#define main student_main
#include "submission.cu"
#undef main

typedef struct {
    double wall, host, copies; /* ms per run: all of it, the host's work, the copies */
    double call[MAX_CHUNKS];   /* ms inside each chunk's cudaMemcpyAsync, and nothing else */
    double copy[MAX_CHUNKS];   /* ms of each chunk's copy, by its events */
} grader_times;

static int grader_pinned(const void *ptr)
{
    cudaPointerAttributes a;
    CUDA_CHECK(cudaPointerGetAttributes(&a, ptr));
    return a.type == cudaMemoryTypeHost; /* malloc'd memory: cudaMemoryTypeUnregistered */
}

/* The exercise's run_pipeline(), done again here: the student's copy of the
 * given code is the student's to change, the grader's is not. */
static grader_times grader_pipeline(pipeline *p, uint64_t seed)
{
    grader_times t;
    memset(&t, 0, sizeof t);
    double start = host_time_ms();
    for (int i = 0; i < p->n; i++) {
        int b = i % STAGES;
        if (i >= STAGES) /* the copy that last read buffer b */
            CUDA_CHECK(cudaEventSynchronize(p->copy[i - STAGES].stop));
        double t0 = host_time_ms();
        fill_random_u32(p->stage[b], p->words, seed + (uint64_t)i);
        double t1 = host_time_ms();
        event_timer_start(&p->copy[i], p->stream);
        double t2 = host_time_ms(); /* the call alone: recording the event is not the copy's */
        CUDA_CHECK(cudaMemcpyAsync(p->d_data + (size_t)i * p->words, p->stage[b], p->bytes,
                                   cudaMemcpyHostToDevice, p->stream));
        t.call[i] = host_time_ms() - t2;
        event_timer_stop(&p->copy[i], p->stream);
        t.host += t1 - t0;
    }
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    t.wall = host_time_ms() - start;
    for (int i = 0; i < p->n; i++)
        t.copies += t.copy[i] = event_timer_ms(&p->copy[i]);
    return t;
}

/* Words on the GPU that differ from what the host produced for them. */
static size_t grader_verify(const pipeline *p, uint64_t seed, uint32_t *back, uint32_t *want)
{
    size_t wrong = 0;
    CUDA_CHECK(cudaMemcpy(back, p->d_data, p->bytes * p->n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < p->n; i++) {
        fill_random_u32(want, p->words, seed + (uint64_t)i);
        wrong += verify_equal_u32(back + (size_t)i * p->words, want, p->words, NULL);
    }
    return wrong;
}

int main(int argc, char **argv)
{
    int check = grading_begin("ex02", argc, argv);
    int runs = check ? 1 : 3;
    pipeline p; /* the exercise's own struct: make_staging() fills p.stage[] */
    memset(&p, 0, sizeof p);
    p.n = check ? 4 : 8;
    p.bytes = (size_t)(check ? 1 : 16) << 20; /* the exercise's sizes */
    p.words = p.bytes / sizeof(uint32_t);
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
    for (int i = 0; i < p.n; i++)
        event_timer_create(&p.copy[i]);
    CUDA_CHECK(cudaMalloc((void **)&p.d_data, p.bytes * p.n));
    uint32_t *back = (uint32_t *)xmalloc(p.bytes * p.n), *want = (uint32_t *)xmalloc(p.bytes);

    make_staging(&p); /* the student's */
    int pinned = grader_pinned(p.stage[0]) && grader_pinned(p.stage[1]);

    double wall[8], host[8], copies[8], call[8 * MAX_CHUNKS], copy[8 * MAX_CHUNKS];
    size_t wrong = 0;
    for (int run = -1; run < runs; run++) { /* run -1 warms up: checked, not timed */
        uint64_t seed = fresh_seed();
        CUDA_CHECK(cudaMemset(p.d_data, 0xff, p.bytes * p.n)); /* poison */
        CUDA_CHECK(cudaDeviceSynchronize());
        grader_times t = grader_pipeline(&p, seed);
        wrong += grader_verify(&p, seed, back, want);
        if (run >= 0) {
            wall[run] = t.wall;
            host[run] = t.host;
            copies[run] = t.copies;
            memcpy(call + run * p.n, t.call, p.n * sizeof *call);
            memcpy(copy + run * p.n, t.copy, p.n * sizeof *copy);
        }
    }
    double w = stats_of(wall, runs).median, h = stats_of(host, runs).median;
    double c = stats_of(copies, runs).median;
    double shorter = h < c ? h : c;

    grading_value("pinned", pinned);
    grading_value("words_wrong", (double)wrong);
    grading_value("words_checked", (double)(p.words * p.n * (runs + 1)));
    grading_value("host_ms", h);
    grading_value("copies_ms", c);
    grading_value("wall_ms", w);
    grading_value("overlap", (h + c - w) / shorter);
    grading_value("model_overlap", (p.n - 1.0) / p.n);
    grading_value("call_fraction", stats_of_ratios(call, copy, runs * p.n).median);

    free_staging(&p); /* the student's */
    free(want);
    free(back);
    CUDA_CHECK(cudaFree(p.d_data));
    for (int i = 0; i < p.n; i++)
        event_timer_destroy(&p.copy[i]);
    CUDA_CHECK(cudaStreamDestroy(p.stream));
    return grading_finish();
}
