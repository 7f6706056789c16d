/* Asynchronous cancellation at random moments: cancel_storm ROUNDS THREADS SEED
 *   Each round starts THREADS threads that switch to PTHREAD_CANCEL_ASYNCHRONOUS and, all at
 *   once when main says go, loop on lock/unlock of their own mutex; main cancels each after a
 *   random number of its iterations (1 to 1000, from SEED) and joins them. Prints how many joins
 *   returned PTHREAD_CANCELED. The threads spin rather than sleep, and a thread that main is
 *   slow to cancel stops recording after CAP iterations (it spins, still cancellable): the trace
 *   stays small. */
#include "progs.h"

#define MAXT 16
#define CAP 2000

struct worker {
    pthread_mutex_t m;
    long count;
    int started;
};

static struct worker w[MAXT];
static int go;

static void *loop(void *arg)
{
    struct worker *me = arg;
    int old;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    set_flag(&me->started);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (long k = 1; k <= CAP; k++) {
        pthread_mutex_lock(&me->m);
        pthread_mutex_unlock(&me->m);
        __atomic_store_n(&me->count, k, __ATOMIC_RELEASE);
    }
    for (;;)
        __atomic_load_n(&go, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds, n;
    if (argc != 4 || (rounds = atoi(argv[1])) < 1 || (n = atoi(argv[2])) < 1 || n > MAXT) {
        fprintf(stderr, "usage: cancel_storm ROUNDS THREADS SEED\n");
        return 2;
    }
    unsigned seed = (unsigned)atoi(argv[3]);
    long cancelled = 0;
    pthread_t th[MAXT];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            /* A cancelled thread may leave its mutex locked: a fresh one each round. */
            w[i] = (struct worker){PTHREAD_MUTEX_INITIALIZER, 0, 0};
            CHECK(pthread_create(&th[i], NULL, loop, &w[i]));
        }
        for (int i = 0; i < n; i++)
            wait_flag(&w[i].started);
        set_flag(&go);
        for (int i = 0; i < n; i++) {
            long at = 1 + rand_r(&seed) % 1000;
            while (__atomic_load_n(&w[i].count, __ATOMIC_ACQUIRE) < at)
                ;
            CHECK(pthread_cancel(th[i]));
        }
        for (int i = 0; i < n; i++) {
            void *ret;
            CHECK(pthread_join(th[i], &ret));
            cancelled += ret == PTHREAD_CANCELED;
        }
        go = 0;
    }
    put_line("cancelled=%ld", cancelled);
    return 0;
}
