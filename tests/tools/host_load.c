/* host_load: other work on the host's memory, for `make stress LOAD=host`.
 * Pageable copies, and every lab's host-side timing, share the memory bus
 * with whatever else the machine runs; this is that something else, on purpose.
 *
 *   host_load --seconds S [--threads N] [--mib M]
 *
 * Each of N threads (default 4) touches two buffers of M MiB (default 128),
 * so that the pages exist before the clock starts, then copies one into the
 * other and back, over and over. It prints one line starting "ready" once
 * every thread is copying, keeps copying for S seconds, and exits 0. A usage
 * error exits 2 saying what was wrong; no memory or no thread exits 1.
 *
 * Plain C99 and POSIX threads, no CUDA, so that it builds and runs anywhere
 * the CPU tests do (tests/cpu_stress.bats).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_THREADS = 256, MAX_MIB = 4096 };
#define MAX_SECONDS 86400.0

typedef struct {
    size_t bytes;
    volatile unsigned char last; /* a byte of each copy, read back so no copy is optimised away */
} worker;

/* What the threads share: how many are copying, and whether to stop. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_running = PTHREAD_COND_INITIALIZER;
static int running = 0, stop = 0;

/* Prints the usage to `to`, after `why`; returns 2, the usage error's exit code. */
static int usage(FILE *to, const char *why)
{
    fprintf(to, "host_load: %s\n"
                "usage: host_load --seconds S [--threads N] [--mib M]\n"
                "  --seconds S   how long to copy, 0.001 to %g\n"
                "  --threads N   copying threads, 1 to %d (default 4)\n"
                "  --mib M       each of a thread's two buffers, 1 to %d MiB (default 128)\n",
            why, MAX_SECONDS, MAX_THREADS, MAX_MIB);
    return 2;
}

static int should_stop(void)
{
    pthread_mutex_lock(&lock);
    int s = stop;
    pthread_mutex_unlock(&lock);
    return s;
}

static void *copy_back_and_forth(void *arg)
{
    worker *w = arg;
    unsigned char *a = malloc(w->bytes), *b = malloc(w->bytes);
    if (a && b) {
        /* Touch every page first: a first touch is the kernel's work, not memory traffic. */
        memset(a, 0x5a, w->bytes);
        memset(b, 0xa5, w->bytes);
    }
    pthread_mutex_lock(&lock);
    running += a && b ? 1 : -MAX_THREADS - 1; /* negative: one thread had no memory */
    pthread_cond_signal(&all_running);
    pthread_mutex_unlock(&lock);
    if (a && b) {
        /* The lock is taken once per copy of M MiB: a few milliseconds at least. */
        for (size_t n = 0; !should_stop(); n++) {
            memcpy(n % 2 ? a : b, n % 2 ? b : a, w->bytes);
            w->last = (n % 2 ? a : b)[n % w->bytes];
        }
    }
    free(a);
    free(b);
    return NULL;
}

/* A number for option `name`: all of `text` must be one, within [low, high]. */
static int number(const char *name, const char *text, double low, double high, double *out)
{
    char *end;
    errno = 0;
    *out = text ? strtod(text, &end) : 0;
    if (!text || end == text || *end || errno || !(*out >= low && *out <= high)) {
        char why[160];
        snprintf(why, sizeof why, "--%s wants a number from %g to %g (got '%s')", name, low,
                 high, text ? text : "nothing");
        return usage(stderr, why);
    }
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = -1, threads = 4, mib = 128;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int bad;
        if (strcmp(opt, "--help") == 0) {
            usage(stdout, "keeps the host's memory busy, for make stress LOAD=host");
            return 0;
        }
        if (strcmp(opt, "--seconds") == 0)
            bad = number("seconds", value, 1e-3, MAX_SECONDS, &seconds);
        else if (strcmp(opt, "--threads") == 0)
            bad = number("threads", value, 1, MAX_THREADS, &threads);
        else if (strcmp(opt, "--mib") == 0)
            bad = number("mib", value, 1, MAX_MIB, &mib);
        else {
            char why[160];
            snprintf(why, sizeof why, "unknown option '%s'", opt);
            return usage(stderr, why);
        }
        if (bad)
            return bad;
        i++; /* the option's value */
    }
    if (seconds < 0)
        return usage(stderr, "--seconds is required");
    if (threads != (int)threads || mib != (int)mib)
        return usage(stderr, "--threads and --mib want whole numbers");

    int n = (int)threads;
    pthread_t id[MAX_THREADS];
    worker w[MAX_THREADS];
    for (int i = 0; i < n; i++) {
        w[i].bytes = (size_t)mib << 20;
        w[i].last = 0;
        if (pthread_create(&id[i], NULL, copy_back_and_forth, &w[i]) != 0) {
            fprintf(stderr, "host_load: cannot start thread %d of %d\n", i + 1, n);
            exit(1); /* the threads already started end with the process */
        }
    }

    pthread_mutex_lock(&lock);
    while (running >= 0 && running < n)
        pthread_cond_wait(&all_running, &lock);
    int ok = running == n;
    pthread_mutex_unlock(&lock);
    if (!ok) {
        fprintf(stderr, "host_load: cannot allocate 2 x %d MiB for each of %d threads\n",
                (int)mib, n);
        exit(1);
    }
    printf("ready: %d threads copying %d MiB back and forth for %g s\n", n, (int)mib, seconds);
    fflush(stdout);

    struct timespec nap = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&lock);
    stop = 1;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        pthread_join(id[i], NULL);
    return 0;
}
