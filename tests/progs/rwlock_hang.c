/* A writer waits forever for a rwlock two readers hold: r1 and r2 read-lock rw and wait on a
 * semaphore nobody posts, w write-locks rw, main joins w. Prints the threads' ids, the objects'
 * addresses and w's pthread_t, flushed once all four are blocked. rwlock_hang N: r1 first
 * read-locks and unlocks rw N times (sub-buffers full of events before the hang). */
#include <semaphore.h>

#include "progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t never;
static int tid_r1, tid_r2, tid_w, read1, read2;
static long rounds;

static void *r1(void *arg)
{
    __atomic_store_n(&tid_r1, (int)gettid(), __ATOMIC_RELEASE);
    for (long i = 0; i < rounds; i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
    }
    pthread_rwlock_rdlock(&rw); /* site:r1_rdlock */
    set_flag(&read1);
    sem_wait(&never); /* site:r1_wait */
    return arg;
}

static void *r2(void *arg)
{
    __atomic_store_n(&tid_r2, (int)gettid(), __ATOMIC_RELEASE);
    pthread_rwlock_rdlock(&rw); /* site:r2_rdlock */
    set_flag(&read2);
    sem_wait(&never); /* site:r2_wait */
    return arg;
}

static void *w(void *arg)
{
    __atomic_store_n(&tid_w, (int)gettid(), __ATOMIC_RELEASE);
    pthread_rwlock_wrlock(&rw); /* site:w_wrlock */
    return arg;
}

int main(int argc, char **argv)
{
    pthread_t t1, t2, tw;
    rounds = argc > 1 ? atol(argv[1]) : 0;
    put_line("@pid=%d", (int)getpid());
    put_addr("rw", &rw);
    put_addr("never", &never);
    CHECK(sem_init(&never, 0, 0));
    CHECK(pthread_create(&t1, NULL, r1, NULL));
    CHECK(pthread_create(&t2, NULL, r2, NULL));
    wait_flag(&read1);
    wait_flag(&read2);
    CHECK(pthread_create(&tw, NULL, w, NULL));
    put_pthread("tw", tw);
    while (!__atomic_load_n(&tid_w, __ATOMIC_ACQUIRE))
        nap();
    put_line("@tid_r1=%d", tid_r1);
    put_line("@tid_r2=%d", tid_r2);
    put_line("@tid_w=%d", tid_w);
    wait_blocked(tid_w, &rw, sizeof rw);
    wait_blocked(tid_r1, &never, sizeof never);
    wait_blocked(tid_r2, &never, sizeof never);
    fflush(stdout);
    pthread_join(tw, NULL); /* site:join */
    return 1;
}
