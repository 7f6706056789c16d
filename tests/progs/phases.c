/* Work in phases that a test starts one at a time: phases N K
 *   Each phase waits for a line on stdin, then: main locks m, the worker locks it too and must
 *   wait (one MUTEX_WAIT, one MUTEX_ACQUIRED), main unlocks, the worker unlocks; then main calls
 *   pthread_cond_signal K times (no waiter) and sem_post K times; then prints "phase=P". The
 *   threads hand the phases over through atomic flags, never through a traced routine. */
#include <semaphore.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t s;
static int phase, done, nphases;

static void *worker(void *arg)
{
    put_tid("worker");
    for (int p = 1; p <= nphases; p++) {
        while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) < p)
            nap();
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        __atomic_store_n(&done, p, __ATOMIC_RELEASE);
    }
    return arg;
}

int main(int argc, char **argv)
{
    int k;
    if (argc != 3 || (nphases = atoi(argv[1])) < 1 || (k = atoi(argv[2])) < 0) {
        fprintf(stderr, "usage: phases N K\n");
        return 2;
    }
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    CHECK(sem_init(&s, 0, 0) ? errno : 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, NULL));
    fflush(stdout);
    char line[64];
    for (int p = 1; p <= nphases; p++) {
        if (!fgets(line, sizeof line, stdin))
            return 99;
        pthread_mutex_lock(&m);
        __atomic_store_n(&phase, p, __ATOMIC_RELEASE);
        wait_mutex_waiter(&m);
        pthread_mutex_unlock(&m);
        while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < p)
            nap();
        for (int i = 0; i < k; i++)
            pthread_cond_signal(&c);
        for (int i = 0; i < k; i++)
            sem_post(&s);
        put_line("phase=%d", p);
        fflush(stdout);
    }
    CHECK(pthread_join(th, NULL));
    return 0;
}
