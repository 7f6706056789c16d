/* Expected findings, each an error the program ignores, thread "main":
 *   error EDEADLK: object ec (an error-checking mutex relocked by its holder); line
 *         check:edeadlk.
 *   error EINVAL: objects c, m (a timed wait whose tv_nsec is out of range); line check:einval.
 *   error ETIMEDOUT: object held (locked by "holder" during main's timed lock); line
 *         check:etimedout.
 * (A trylock's EBUSY is a trylock's ordinary answer, never an error finding: ok_trylock_backoff.)
 * Does not hang: the timed lock waits 50 ms. */
#include "../progs.h"
#include <semaphore.h>

static pthread_mutex_t ec, m = PTHREAD_MUTEX_INITIALIZER, held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t locked, done;

static void *holder(void *arg)
{
    (void)arg;
    put_tid("holder");
    pthread_mutex_lock(&held);
    sem_post(&locked);
    sem_wait(&done);
    pthread_mutex_unlock(&held);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    pthread_t t;
    put_tid("main");
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
    CHECK(pthread_mutex_init(&ec, &a));
    CHECK(sem_init(&locked, 0, 0));
    CHECK(sem_init(&done, 0, 0));
    put_addr("ec", &ec);
    put_addr("c", &c);
    put_addr("m", &m);
    put_addr("held", &held);

    pthread_mutex_lock(&ec);
    pthread_mutex_lock(&ec); /* check:edeadlk */
    pthread_mutex_unlock(&ec);

    struct timespec bad = {time(NULL) + 10, 2000000000};
    pthread_mutex_lock(&m);
    pthread_cond_timedwait(&c, &m, &bad); /* check:einval */
    pthread_mutex_unlock(&m);

    CHECK(pthread_create(&t, NULL, holder, NULL));
    sem_wait(&locked);
    struct timespec soon = in_ms(CLOCK_REALTIME, 50);
    pthread_mutex_timedlock(&held, &soon); /* check:etimedout */
    sem_post(&done);
    CHECK(pthread_join(t, NULL));
    return 0;
}
