/* A signal storm against a thread that records: sig_storm SIGNALS HZ
 *   A worker loops on lock/unlock of a mutex; SIGALRM, from an interval timer at HZ, reaches it
 *   alone (every other thread blocks it), and its handler posts a semaphore and counts. When
 *   SIGNALS were handled the worker stops and blocks the signal. Prints the handler runs, the
 *   worker's iterations and the semaphore's final value. */
#include <semaphore.h>
#include <signal.h>
#include <sys/time.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t s;
static long handled, iterations;
static int ready, stop;

static void on_alarm(int sig)
{
    (void)sig;
    sem_post(&s);
    __atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    put_tid("worker");
    CHECK(pthread_sigmask(SIG_UNBLOCK, &set, NULL));
    set_flag(&ready);
    long k = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        k++;
    }
    CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL));
    iterations = k;
    return arg;
}

int main(int argc, char **argv)
{
    long want, hz;
    if (argc != 3 || (want = atol(argv[1])) < 1 || (hz = atol(argv[2])) < 1 || hz > 1000000) {
        fprintf(stderr, "usage: sig_storm SIGNALS HZ\n");
        return 2;
    }
    CHECK(sem_init(&s, 0, 0) ? errno : 0);
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) ? errno : 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, NULL));
    wait_flag(&ready);
    long period = 1000000 / hz;
    struct itimerval it = {{0, period ? period : 1}, {0, period ? period : 1}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) ? errno : 0);
    for (int ms = 0; __atomic_load_n(&handled, __ATOMIC_RELAXED) < want; ms++) {
        if (ms > 60000) {
            fprintf(stderr, "sig_storm: only %ld signals in 60 s\n", handled);
            return 99;
        }
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    CHECK(pthread_join(th, NULL));
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    int value = -1;
    sem_getvalue(&s, &value);
    put_line("@handled=%ld", handled);
    put_line("@iterations=%ld", iterations);
    put_line("@value=%d", value);
    return 0;
}
