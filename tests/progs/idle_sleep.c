/* A program idle outside any traced call: idle_sleep MS [WORKERS [park]]
 * A thread locks and unlocks a mutex and ends, main joins it, sleeps MS ms in sleep(3)-like
 * nanosleep (not traced), then locks and unlocks the mutex again. With WORKERS, that many
 * threads wait on a condvar meanwhile, as a server's pool waits for work its main thread hands
 * out: main wakes them after the sleep, and joins them; with "park", it leaves them parked and
 * returns (a server that exits with its pool idle). */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int parked, done;

static void *once(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

static void *worker(void *arg)
{
    pthread_mutex_lock(&m);
    parked++;
    while (!done)
        pthread_cond_wait(&work, &m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    long ms, workers = argc >= 3 ? atol(argv[2]) : 0;
    int park = argc == 4 && !strcmp(argv[3], "park");
    if (argc < 2 || argc > 4 || (argc == 4 && !park) || (ms = atol(argv[1])) < 0 || workers < 0 ||
        workers > 64) {
        fprintf(stderr, "usage: idle_sleep MS [WORKERS [park]]\n");
        return 2;
    }
    pthread_t th, pool[64];
    CHECK(pthread_create(&th, NULL, once, NULL));
    CHECK(pthread_join(th, NULL));
    for (long i = 0; i < workers; i++)
        CHECK(pthread_create(&pool[i], NULL, worker, NULL));
    for (int all = !workers; !all;) { /* every worker waiting before the sleep */
        pthread_mutex_lock(&m);
        all = parked == workers;
        pthread_mutex_unlock(&m);
        if (!all)
            usleep(1000);
    }
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&d, &d))
        ;
    pthread_mutex_lock(&m);
    done = !park;
    if (workers && !park)
        pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&m);
    for (long i = 0; i < workers && !park; i++)
        CHECK(pthread_join(pool[i], NULL));
    put_line("slept=%ld", ms);
    return 0;
}
