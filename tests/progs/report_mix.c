/* Threads blocked in every common way, for the HTML report (tests/e2e/test_report.py):
 * report_mix ROUNDS. Named threads (pthread_setname_np) contend for a mutex, a rwlock and a
 * spinlock, wait on a condvar, a semaphore and a barrier; main joins them. Each kind of wait
 * happens at least once for a few ms (a holder sleeps), whatever the scheduling; then ROUNDS
 * rounds of short contention. About 20 ms. */
#include "progs.h"

#include <semaphore.h>

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t stats_spin;
static pthread_barrier_t phase;
static sem_t slots;
static int rounds, queued, done, big_held, table_held;

static void sleep_ms(long ms)
{
    struct timespec d = {0, ms * 1000000};
    nanosleep(&d, NULL);
}

static void busy_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *locker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "locker-%ld", (long)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&phase);
    if (arg == (void *)1) { /* the others wait for big_lock */
        pthread_mutex_lock(&big_lock);
        set_flag(&big_held);
        sleep_ms(4);
        pthread_mutex_unlock(&big_lock);
    } else {
        wait_flag(&big_held);
    }
    for (int i = 0; i < rounds; i++) {
        pthread_mutex_lock(&big_lock);
        busy_us(150);
        pthread_mutex_unlock(&big_lock);
        busy_us(40);
        pthread_spin_lock(&stats_spin);
        busy_us(10);
        pthread_spin_unlock(&stats_spin);
    }
    pthread_barrier_wait(&phase);
    return NULL;
}

static void *reader(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "reader-%ld", (long)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&phase);
    wait_flag(&table_held); /* the writer holds table_lock */
    for (int i = 0; i < rounds; i++) {
        pthread_rwlock_rdlock(&table_lock);
        busy_us(60);
        pthread_rwlock_unlock(&table_lock);
        busy_us(30);
    }
    pthread_barrier_wait(&phase);
    return NULL;
}

static void *writer(void *arg)
{
    pthread_setname_np(pthread_self(), "writer");
    pthread_barrier_wait(&phase);
    pthread_rwlock_wrlock(&table_lock); /* the readers wait */
    set_flag(&table_held);
    sleep_ms(4);
    pthread_rwlock_unlock(&table_lock);
    for (int i = 0; i < rounds; i++) {
        pthread_rwlock_wrlock(&table_lock);
        busy_us(120);
        pthread_rwlock_unlock(&table_lock);
        busy_us(100);
    }
    pthread_barrier_wait(&phase);
    return arg;
}

static void *producer(void *arg)
{
    pthread_setname_np(pthread_self(), "producer");
    pthread_barrier_wait(&phase);
    sleep_ms(3); /* the consumer waits on queue_ready */
    for (int i = 0; i < rounds; i++) {
        sem_wait(&slots);
        busy_us(80);
        pthread_mutex_lock(&queue_lock);
        queued++;
        pthread_cond_signal(&queue_ready);
        pthread_mutex_unlock(&queue_lock);
    }
    pthread_mutex_lock(&queue_lock);
    done = 1;
    pthread_cond_broadcast(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
    pthread_barrier_wait(&phase);
    return arg;
}

static void *consumer(void *arg)
{
    pthread_setname_np(pthread_self(), "consumer");
    pthread_barrier_wait(&phase);
    for (int first = 1;; first = 0) {
        pthread_mutex_lock(&queue_lock);
        while (!queued && !done)
            pthread_cond_wait(&queue_ready, &queue_lock);
        if (!queued && done) {
            pthread_mutex_unlock(&queue_lock);
            break;
        }
        queued--;
        pthread_mutex_unlock(&queue_lock);
        if (first) /* the producer, out of slots, waits on the semaphore */
            sleep_ms(4);
        busy_us(200);
        sem_post(&slots);
    }
    pthread_barrier_wait(&phase);
    return arg;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 40;
    if (rounds < 1) {
        fprintf(stderr, "usage: report_mix [ROUNDS]\n");
        return 2;
    }
    enum { NLOCKERS = 3, NREADERS = 2, N = NLOCKERS + NREADERS + 3 };
    pthread_t th[N];
    int n = 0;
    CHECK(pthread_spin_init(&stats_spin, PTHREAD_PROCESS_PRIVATE));
    CHECK(pthread_barrier_init(&phase, NULL, N));
    CHECK(sem_init(&slots, 0, 2) ? errno : 0);
    for (long i = 0; i < NLOCKERS; i++)
        CHECK(pthread_create(&th[n++], NULL, locker, (void *)(intptr_t)(i + 1)));
    for (long i = 0; i < NREADERS; i++)
        CHECK(pthread_create(&th[n++], NULL, reader, (void *)(intptr_t)(i + 1)));
    CHECK(pthread_create(&th[n++], NULL, writer, NULL));
    CHECK(pthread_create(&th[n++], NULL, producer, NULL));
    CHECK(pthread_create(&th[n++], NULL, consumer, NULL));
    for (int i = 0; i < n; i++)
        CHECK(pthread_join(th[i], NULL));
    put_line("threads=%d", n + 1);
    return 0;
}
