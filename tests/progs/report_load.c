/* Many threads, many events, for the HTML report's size and speed (tests/e2e/test_report.py):
 * report_load THREADS ITERATIONS ALIVE. THREADS threads in all, in waves of at most ALIVE (each
 * live thread holds a sub-buffer of ptt trace's pool); each thread ITERATIONS times locks and
 * unlocks a shared mutex (a little work under it: others wait) and its own, then waits at a
 * barrier with the rest of its wave: every iteration blocks all but one thread of the wave. */
#include "progs.h"

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t wave_barrier;
static long iters;
static volatile long counter;

static void *worker(void *arg)
{
    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    for (long k = 0; k < iters; k++) {
        pthread_mutex_lock(&shared_lock);
        for (int i = 0; i < 50; i++)
            counter++;
        pthread_mutex_unlock(&shared_lock);
        pthread_mutex_lock(&own);
        pthread_mutex_unlock(&own);
        pthread_barrier_wait(&wave_barrier);
    }
    return arg;
}

int main(int argc, char **argv)
{
    long n, alive;
    if (argc != 4 || (n = atol(argv[1])) < 1 || (iters = atol(argv[2])) < 1 ||
        (alive = atol(argv[3])) < 1 || alive > 256) {
        fprintf(stderr, "usage: report_load THREADS ITERATIONS ALIVE (at most 256)\n");
        return 2;
    }
    pthread_t th[256];
    for (long started = 0; started < n;) {
        long wave = n - started < alive ? n - started : alive;
        CHECK(pthread_barrier_init(&wave_barrier, NULL, (unsigned)wave));
        for (long i = 0; i < wave; i++)
            CHECK(pthread_create(&th[i], NULL, worker, NULL));
        for (long i = 0; i < wave; i++)
            CHECK(pthread_join(th[i], NULL));
        CHECK(pthread_barrier_destroy(&wave_barrier));
        started += wave;
    }
    put_line("counter=%ld", counter);
    return 0;
}
