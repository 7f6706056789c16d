/* Expected findings:
 *   deadlock: objects l0, l1, l2; threads "t0" (holds l0, waits l1), "t1" (holds l1, waits l2),
 *             "t2" (holds l2, waits l0); lines check:t0_next, check:t1_next, check:t2_next.
 * Hangs: a barrier makes every thread hold its first lock before asking the next. */
#include "../progs.h"

static pthread_mutex_t l0 = PTHREAD_MUTEX_INITIALIZER, l1 = PTHREAD_MUTEX_INITIALIZER,
                       l2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all;

static void *t0(void *arg)
{
    (void)arg;
    put_tid("t0");
    pthread_mutex_lock(&l0);
    pthread_barrier_wait(&all);
    pthread_mutex_lock(&l1); /* check:t0_next */
    return NULL;
}

static void *t1(void *arg)
{
    (void)arg;
    put_tid("t1");
    pthread_mutex_lock(&l1);
    pthread_barrier_wait(&all);
    pthread_mutex_lock(&l2); /* check:t1_next */
    return NULL;
}

static void *t2(void *arg)
{
    (void)arg;
    put_tid("t2");
    pthread_mutex_lock(&l2);
    pthread_barrier_wait(&all);
    pthread_mutex_lock(&l0); /* check:t2_next */
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    put_addr("l0", &l0);
    put_addr("l1", &l1);
    put_addr("l2", &l2);
    fflush(stdout);
    CHECK(pthread_barrier_init(&all, NULL, 3));
    CHECK(pthread_create(&t[0], NULL, t0, NULL));
    CHECK(pthread_create(&t[1], NULL, t1, NULL));
    CHECK(pthread_create(&t[2], NULL, t2, NULL));
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
