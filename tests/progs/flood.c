/* Events as fast as the threads can record them: flood T N [MS]
 * T threads, each N times lock/unlock of its own mutex (no waits: every count is known). With MS,
 * each thread spreads its N iterations over MS milliseconds instead: it checks the clock every
 * 1024 iterations and sleeps while it is ahead of its share (a trace that spans MS ms, for the
 * benchmark of the readers' windows, bench/readers.sh). */
#include "progs.h"

#define MAXT 64
#define STEP 1024

static long iters, ms;
static pthread_mutex_t own[MAXT];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep until the time iteration k of the thread's share is due, from start. */
static void pace(uint64_t start, long k)
{
    uint64_t due = start + (uint64_t)((double)k / (double)iters * (double)ms * 1e6), t = now_ns();
    if (t < due) {
        struct timespec ts = {(time_t)((due - t) / 1000000000u), (long)((due - t) % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

static void *worker(void *arg)
{
    pthread_mutex_t *m = arg;
    uint64_t start = ms ? now_ns() : 0;
    for (long k = 0; k < iters; k++) {
        if (ms && k % STEP == 0)
            pace(start, k);
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n;
    if ((argc != 3 && argc != 4) || (n = atoi(argv[1])) < 1 || n > MAXT ||
        (iters = atol(argv[2])) < 1 || (argc == 4 && (ms = atol(argv[3])) < 1)) {
        fprintf(stderr, "usage: flood THREADS ITERATIONS [MS]\n");
        return 2;
    }
    pthread_t th[MAXT];
    for (int i = 0; i < n; i++) {
        own[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
        CHECK(pthread_create(&th[i], NULL, worker, &own[i]));
    }
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(th[i], NULL));
    put_line("done=%ld", (long)n * iters);
    return 0;
}
