/* Every kind of interaction the exporters show, for tests/e2e/test_chrome.py and test_ctf.py:
 * export_mix ROUNDS. Named workers meet at a barrier (releases), queue up behind main for a mutex
 * and then contend for it (waiters, handoffs); a producer posts a semaphore a consumer sleeps on
 * each time (posts, the semaphore's value); a condvar is signalled (wakes); a rwlock and a spinlock
 * are taken; pthread_once runs; a signal handler posts a named semaphore (strings, octal modes,
 * events nested in a handler); a thread blocked in sem_wait is cancelled (a call it never
 * leaves); main joins everyone. A few ms.
 *
 * Prints "threads=N" (the threads it created) and "rounds=N". */
#include "progs.h"

#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>

#define WORKERS 4

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t flag_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flag_set = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t phase;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t items, never;
static sem_t *named;
static int rounds, flag, waiting, arrived;
static pid_t consumer_tid;
static int consumed;

static void busy_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void init_once(void)
{
    busy_us(20);
}

static void on_usr1(int sig)
{
    (void)sig;
    sem_post(named); /* async-signal-safe: recorded inside the handler */
}

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", (long)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    pthread_once(&once, init_once);
    pthread_barrier_wait(&phase);
    __atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < rounds; i++) {
        pthread_mutex_lock(&big_lock);
        busy_us(30);
        pthread_mutex_unlock(&big_lock);
        pthread_rwlock_rdlock(&table);
        pthread_rwlock_unlock(&table);
        pthread_spin_lock(&spin);
        pthread_spin_unlock(&spin);
        busy_us(5);
    }
    pthread_barrier_wait(&phase);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "consumer");
    __atomic_store_n(&consumer_tid, gettid(), __ATOMIC_RELEASE);
    for (int i = 0; i < rounds; i++) {
        sem_wait(&items);
        __atomic_store_n(&consumed, i + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_lock(&flag_lock);
    waiting = 1;
    while (!flag)
        pthread_cond_wait(&flag_set, &flag_lock);
    pthread_mutex_unlock(&flag_lock);
    return NULL;
}

static void *stuck(void *arg)
{
    (void)arg;
    sem_wait(&never); /* cancelled in there */
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 20;
    char semname[64];
    snprintf(semname, sizeof semname, "/ptt-export-mix-%d", (int)getpid());
    named = sem_open(semname, O_CREAT | O_EXCL, 0640, 0);
    if (named == SEM_FAILED) {
        perror("sem_open");
        return 99;
    }
    sem_unlink(semname);
    CHECK(pthread_spin_init(&spin, 0));
    CHECK(pthread_barrier_init(&phase, NULL, WORKERS));
    CHECK(sem_init(&items, 0, 0));
    CHECK(sem_init(&never, 0, 0));
    signal(SIGUSR1, on_usr1);

    pthread_t w[WORKERS], cons, st;
    pthread_mutex_lock(&big_lock); /* the workers queue up behind main: waiters, handoffs */
    for (long i = 0; i < WORKERS; i++)
        CHECK(pthread_create(&w[i], NULL, worker, (void *)i));
    CHECK(pthread_create(&cons, NULL, consumer, NULL));
    CHECK(pthread_create(&st, NULL, stuck, NULL));
    while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < WORKERS)
        busy_us(10);
    wait_mutex_waiter(&big_lock);
    busy_us(300);
    pthread_mutex_unlock(&big_lock);
    /* Each post finds the consumer asleep in sem_wait: every wait blocks and every post wakes
     * it, however the machine schedules the threads. */
    while (!__atomic_load_n(&consumer_tid, __ATOMIC_ACQUIRE))
        busy_us(10);
    for (int i = 0; i < rounds; i++) {
        while (__atomic_load_n(&consumed, __ATOMIC_ACQUIRE) < i) /* not last round's wait */
            busy_us(10);
        wait_blocked(consumer_tid, &items, sizeof items);
        sem_post(&items);
    }
    pthread_rwlock_wrlock(&table);
    busy_us(20);
    pthread_rwlock_unlock(&table);
    for (;;) { /* signalled once the consumer waits on the condvar: a wake-up */
        pthread_mutex_lock(&flag_lock);
        if (waiting)
            break;
        pthread_mutex_unlock(&flag_lock);
        busy_us(50);
    }
    flag = 1;
    pthread_cond_signal(&flag_set);
    pthread_mutex_unlock(&flag_lock);
    pthread_kill(pthread_self(), SIGUSR1);
    sem_wait(named);
    busy_us(100);
    pthread_cancel(st);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    pthread_join(cons, NULL);
    pthread_join(st, NULL);
    sem_close(named);
    printf("threads=%d\nrounds=%d\n", WORKERS + 2, rounds);
    return 0;
}
