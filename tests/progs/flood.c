/* Events as fast as the threads can record them: flood T N
 * T threads, each N times lock/unlock of its own mutex (no waits: every count is known). */
#include "progs.h"

#define MAXT 64

static long iters;
static pthread_mutex_t own[MAXT];

static void *worker(void *arg)
{
    pthread_mutex_t *m = arg;
    for (long k = 0; k < iters; k++) {
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n;
    if (argc != 3 || (n = atoi(argv[1])) < 1 || n > MAXT || (iters = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: flood THREADS ITERATIONS\n");
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
