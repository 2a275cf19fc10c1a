/* ex11: feed the GPU from producer threads through a ring of pinned buffers.
 *
 * The reference solution: exercises/ex11_ring_loader.cu with its TODOs
 * done, marked SOLUTION with the reason. The task, the target and the
 * contract are there and in exercises/given/ex11.h.
 *
 * Build and run:   make sol11 && ./sol11      (./sol11 --quick: a short run)
 */
#include "ex11.h"
#include "streamlab.h"

#include <math.h>
#include <pthread.h>

/* SOLUTION: the ring's host side. filled[s] is the batch slot s holds
 * (ready to step), queued how many batches this thread has stepped; one
 * mutex guards both, one condition variable says either changed. */
typedef struct {
    const loader *l;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int filled[EX11_MAX_SLOTS], queued;
} ring;

typedef struct {
    ring *r;
    int first;
} producer;

static void *produce(void *arg)
{
    ring *r = ((producer *)arg)->r;
    const loader *l = r->l;
    for (int b = ((producer *)arg)->first; b < l->batches; b += l->producers) {
        int s = b % l->slots;
        /* SOLUTION: slot s held batch b - slots. Wait until its step is
         * queued (so slot_free[s] is recorded for it), then until the GPU
         * has passed that record: the copy out of s has run. */
        pthread_mutex_lock(&r->lock);
        while (r->queued <= b - l->slots)
            pthread_cond_wait(&r->changed, &r->lock);
        pthread_mutex_unlock(&r->lock);
        if (b >= l->slots)
            CUDA_CHECK(cudaEventSynchronize(l->slot_free[s]));
        l->prepare(b, s); /* SOLUTION: the CPU's work, on this thread, beside the others */
        pthread_mutex_lock(&r->lock);
        r->filled[s] = b;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

void run_loader(const loader *l)
{
    ring r = {l};
    pthread_t t[EX11_MAX_PRODUCERS];
    producer p[EX11_MAX_PRODUCERS];
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    for (int s = 0; s < EX11_MAX_SLOTS; s++)
        r.filled[s] = -1;
    for (int j = 0; j < l->producers; j++) {
        p[j] = (producer){&r, j};
        if (pthread_create(&t[j], NULL, produce, &p[j]))
            fail_wrong("pthread_create failed");
    }
    /* SOLUTION: this thread only steps, in order, each batch once it is
     * filled; the event after step() is what the producer reusing the slot
     * waits for. */
    for (int b = 0; b < l->batches; b++) {
        int s = b % l->slots;
        pthread_mutex_lock(&r.lock);
        while (r.filled[s] != b)
            pthread_cond_wait(&r.changed, &r.lock);
        pthread_mutex_unlock(&r.lock);
        l->step(b, s);
        CUDA_CHECK(cudaEventRecord(l->slot_free[s], l->stream));
        pthread_mutex_lock(&r.lock);
        r.queued = b + 1;
        pthread_cond_broadcast(&r.changed);
        pthread_mutex_unlock(&r.lock);
    }
    for (int j = 0; j < l->producers; j++)
        pthread_join(t[j], NULL);
    pthread_cond_destroy(&r.changed);
    pthread_mutex_destroy(&r.lock);
}

loader_size choose_loader(const level2_job *job, double *predicted_busy)
{
    /* SOLUTION: the GPU takes a batch every C + K; w producers deliver one
     * every P / w (while w <= cores): they keep pace from w = ceil(P / (C + K)).
     * A slot is out of the producers' hands from its preparation until the
     * event after its step passes, P + C + K, and the ring hands the GPU n
     * slots in that time: n = ceil((P + C + K) / (C + K)), one more than w.
     * That least size has no room for a preparation slower than P (lab11
     * measured them at 0.8x to 1.7x of the calibrated P), so one more of
     * each, as much as the price allows. The GPU is then the bottleneck:
     * busy B K over P + B (C + K), the first batch's preparation idle. */
    double per = job->copy_ms + job->step_ms;
    int w = (int)ceil(job->prep_ms / per - 1e-9) + 1;
    int n = (int)ceil((job->prep_ms + per) / per - 1e-9) + 1;
    if (w > job->cores - 1) /* a core left for the thread that steps */
        w = job->cores > 1 ? job->cores - 1 : 1;
    if (w > EX11_MAX_PRODUCERS)
        w = EX11_MAX_PRODUCERS;
    if (n > EX11_MAX_SLOTS)
        n = EX11_MAX_SLOTS;
    *predicted_busy = job->batches * job->step_ms / (job->prep_ms + job->batches * per);
    return (loader_size){w, n};
}
