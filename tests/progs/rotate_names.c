/* Names in the parts of a rotated trace (tests/e2e/test_rotation.py): rotate_names T N
 *
 * main names the mutexes last_lock[K] "lastK" (ptt_namef), starts T threads at worker and names
 * them w0, w1, ... (pthread_setname_np), then locks and unlocks a mutex of its own 5000 times:
 * its first events (the process's start, its modules, the names) are handed over before the
 * workers begin, into the first parts. Worker K locks and unlocks its own mutex N times, then
 * last_lock[K] once (its lock is on the line marked site:last): those last events are in the
 * last parts, whose readers name the threads, the mutexes and the line from the carried state
 * alone. No thread waits for another's lock: every event is known. Prints the workers' thread
 * ids (@tid_wK). */
#include <ptt.h>

#include "progs.h"

#define MAXT 16
#define MAIN_ITERATIONS 5000

static long iters;
/* The workers wait for their names and main's first events (nanosleep: no traced call): those
 * reach the first parts whatever the scheduling. */
static int ready;
static pthread_mutex_t own[MAXT + 1], last_lock[MAXT];

static void *worker(void *arg)
{
    long k = (long)arg;
    put_line("@tid_w%ld=%ld", k, (long)syscall(SYS_gettid));
    struct timespec ms = {0, 1000000};
    while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        nanosleep(&ms, NULL);
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&own[k]);
        pthread_mutex_unlock(&own[k]);
    }
    pthread_mutex_lock(&last_lock[k]); /* site:last */
    pthread_mutex_unlock(&last_lock[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    int n;
    if (argc != 3 || (n = atoi(argv[1])) < 1 || n > MAXT || (iters = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: rotate_names THREADS ITERATIONS\n");
        return 2;
    }
    pthread_t th[MAXT];
    for (long i = 0; i <= n; i++)
        own[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    for (long i = 0; i < n; i++) {
        last_lock[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
        ptt_namef(&last_lock[i], "last%ld", i);
    }
    for (long i = 0; i < n; i++) {
        char name[16];
        CHECK(pthread_create(&th[i], NULL, worker, (void *)i));
        snprintf(name, sizeof name, "w%ld", i);
        CHECK(pthread_setname_np(th[i], name));
    }
    for (long i = 0; i < MAIN_ITERATIONS; i++) {
        pthread_mutex_lock(&own[n]);
        pthread_mutex_unlock(&own[n]);
    }
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(th[i], NULL));
    put_line("done=%ld", (long)n * iters);
    return 0;
}
