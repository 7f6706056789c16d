/* Known numbers of calls: counts T M R
 * T threads, each M times: lock/unlock then trylock/unlock of its own mutex, a signal and a
 * broadcast of its own condvar (no waiter), and every R-th time a wait at a barrier of all T
 * threads. No two threads share a mutex, so no lock has to wait: every count is known.
 * counts T M shared: T threads, each M times lock/unlock of one shared mutex. */
#include "progs.h"

#define MAXT 64

static int nthreads, iters, every, shared;
static pthread_barrier_t b;
static pthread_mutex_t own[MAXT], one = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv[MAXT];
static long total;

static void *worker(void *arg)
{
    long i = (long)(intptr_t)arg;
    for (int k = 0; k < iters; k++) {
        if (shared) {
            CHECK(pthread_mutex_lock(&one));
            total++;
            CHECK(pthread_mutex_unlock(&one));
            continue;
        }
        CHECK(pthread_mutex_lock(&own[i]));
        CHECK(pthread_mutex_unlock(&own[i]));
        CHECK(pthread_mutex_trylock(&own[i]));
        CHECK(pthread_mutex_unlock(&own[i]));
        CHECK(pthread_cond_signal(&cv[i]));
        CHECK(pthread_cond_broadcast(&cv[i]));
        if (k % every == 0) {
            int r = pthread_barrier_wait(&b);
            if (r != 0 && r != PTHREAD_BARRIER_SERIAL_THREAD)
                CHECK(r);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (nthreads = atoi(argv[1])) < 1 || nthreads > MAXT ||
        (iters = atoi(argv[2])) < 1) {
        fprintf(stderr, "usage: counts THREADS ITERATIONS EVERY|shared\n");
        return 2;
    }
    shared = !strcmp(argv[3], "shared");
    if (!shared && (every = atoi(argv[3])) < 1) {
        fprintf(stderr, "counts: EVERY must be at least 1\n");
        return 2;
    }
    pthread_t th[MAXT];
    put_line("@pid=%d", (int)getpid());
    put_addr("one", &one);
    put_addr("b", &b);
    put_fn("worker", worker);
    if (!shared) {
        CHECK(pthread_barrier_init(&b, NULL, (unsigned)nthreads));
        for (int i = 0; i < nthreads; i++) {
            CHECK(pthread_mutex_init(&own[i], NULL));
            CHECK(pthread_cond_init(&cv[i], NULL));
        }
    }
    for (int i = 0; i < nthreads; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i));
    for (int i = 0; i < nthreads; i++)
        CHECK(pthread_join(th[i], NULL));
    if (!shared) {
        for (int i = 0; i < nthreads; i++) {
            CHECK(pthread_mutex_destroy(&own[i]));
            CHECK(pthread_cond_destroy(&cv[i]));
        }
        CHECK(pthread_barrier_destroy(&b));
    }
    put_line("total=%ld", total);
    return 0;
}
