/* Expected findings: none. A pool of workers parked on a condvar, never signalled again, when
 * main returns: the process exits by itself, so the parked workers are no hang; a worker that
 * had a timed wait pending is not one either. */
#include "../progs.h"

#define WORKERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int parked, jobs;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    parked++;
    while (!jobs)
        pthread_cond_wait(&work, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    parked++;
    for (;;) {
        struct timespec t = in_ms(CLOCK_REALTIME, 60000);
        pthread_cond_timedwait(&work, &m, &t);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    for (int i = 0; i < WORKERS; i++)
        CHECK(pthread_create(&t, NULL, worker, NULL));
    CHECK(pthread_create(&t, NULL, ticker, NULL));
    for (;;) {
        pthread_mutex_lock(&m);
        int n = parked;
        pthread_mutex_unlock(&m);
        if (n == WORKERS + 1)
            break;
        sched_yield();
    }
    return 0;
}
