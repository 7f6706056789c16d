/* Known contention, for ptt stat (tests/e2e/test_stat.py): contend ROUNDS HOLD_MS
 *
 * Two threads started at worker (worker, then worker#2: the second is created once the first has
 * started) and main:
 * - gate, a barrier of 3: each thread waits once (acquisitions 3, contended 3);
 * - big_lock, a mutex the workers take in turns, ROUNDS times each, holding it HOLD_MS ms: the
 *   holder releases it only once the other is blocked in its lock, so every acquisition but the
 *   very first waits (acquisitions 2*ROUNDS, contended 2*ROUNDS-1);
 * - table_lock, a rwlock each worker read-locks once a round outside big_lock (no writer: never
 *   contended);
 * - done, a semaphore main waits on twice, each worker posting once main is blocked in its wait
 *   (acquisitions 2, contended 2), both times through wait_done, inlined: two calls, one line.
 * The calls whose site the tests check carry a comment "site:KEY" on their line.
 * Prints the addresses, thread ids, and its own measure of every wait for and hold of big_lock:
 * @wait_J_K and @hold_J_K (ns, CLOCK_MONOTONIC, the K-th round of worker J), taken right outside
 * the calls. */
#include <semaphore.h>

#include "progs.h"

#define MAXR 1000

static long rounds, hold_ms;
static pthread_barrier_t gate;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t done;
static int seq; /* acquisitions of big_lock so far */
static int started[2], got_first;
static pid_t main_tid, worker_tid[2];
static int64_t waits[2][MAXR], holds[2][MAXR];
static const char *const tid_keys[2] = {"worker0", "worker1"};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *worker(void *arg)
{
    int j = *(int *)arg;
    put_tid(tid_keys[j]);
    worker_tid[j] = (pid_t)gettid();
    set_flag(&started[j]);
    pthread_barrier_wait(&gate); /* site:worker_gate */
    for (long k = 0; k < rounds; k++) {
        int s = (int)(2 * k + j); /* this acquisition's number */
        while (__atomic_load_n(&seq, __ATOMIC_ACQUIRE) < s)
            nap(); /* the other holds big_lock (acquisition s - 1) */
        int64_t t0 = now_ns();
        pthread_mutex_lock(&big_lock); /* site:worker_lock */
        int64_t t1 = now_ns();
        __atomic_store_n(&seq, s + 1, __ATOMIC_RELEASE);
        struct timespec d = {hold_ms / 1000, hold_ms % 1000 * 1000000};
        while (nanosleep(&d, &d))
            ;
        if (s + 1 < 2 * rounds)
            /* the other waits: its lock is contended (the mutex's word is no proof: a waiter
             * woken takes it with the value "waiters", 2, whether another waits or not) */
            wait_blocked(worker_tid[1 - j], &big_lock, sizeof big_lock);
        int64_t t2 = now_ns();
        pthread_mutex_unlock(&big_lock);
        waits[j][k] = t1 - t0;
        holds[j][k] = t2 - t1;
        pthread_rwlock_rdlock(&table_lock);
        pthread_rwlock_unlock(&table_lock);
    }
    if (j == 1)
        wait_flag(&got_first);
    wait_blocked(main_tid, &done, sizeof done);
    sem_post(&done);
    return NULL;
}

static inline __attribute__((always_inline)) void wait_done(void)
{
    sem_wait(&done); /* site:wait_done */
}

int main(int argc, char **argv)
{
    if (argc != 3 || (rounds = atol(argv[1])) < 1 || rounds > MAXR ||
        (hold_ms = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: contend ROUNDS HOLD_MS (ROUNDS <= %d)\n", MAXR);
        return 2;
    }
    main_tid = gettid();
    put_tid("main");
    put_addr("gate", &gate);
    put_addr("big_lock", &big_lock);
    put_addr("table_lock", &table_lock);
    put_addr("done", &done);
    CHECK(pthread_barrier_init(&gate, NULL, 3));
    CHECK(sem_init(&done, 0, 0));
    pthread_t th[2];
    int ids[2] = {0, 1};
    for (int j = 0; j < 2; j++) {
        CHECK(pthread_create(&th[j], NULL, worker, &ids[j]));
        wait_flag(&started[j]);
    }
    pthread_barrier_wait(&gate); /* site:main_gate */
    wait_done();
    set_flag(&got_first);
    wait_done();
    for (int j = 0; j < 2; j++)
        CHECK(pthread_join(th[j], NULL));
    for (int j = 0; j < 2; j++)
        for (long k = 0; k < rounds; k++) {
            put_line("@wait_%d_%ld=%" PRId64, j, k, waits[j][k]);
            put_line("@hold_%d_%ld=%" PRId64, j, k, holds[j][k]);
        }
    put_line("acquisitions=%ld", 2 * rounds);
    return 0;
}
