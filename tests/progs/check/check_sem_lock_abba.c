/* Expected findings:
 *   deadlock: objects sa, sb (semaphores made with the value 1, used as locks, as CPython's
 *             threading.Lock is); threads "t1" (took sa, waits for sb) and "t2" (took sb, waits
 *             for sa); lines check:t1_take_a, check:t1_wait_b, check:t2_take_b, check:t2_wait_a.
 * Hangs: a barrier makes both threads take their first semaphore before the second. */
#include "../progs.h"
#include <semaphore.h>

static sem_t sa, sb;
static pthread_barrier_t both;

static void *t1(void *arg)
{
    (void)arg;
    put_tid("t1");
    fflush(stdout);
    sem_wait(&sa); /* check:t1_take_a */
    pthread_barrier_wait(&both);
    sem_wait(&sb); /* check:t1_wait_b */
    return NULL;
}

static void *t2(void *arg)
{
    (void)arg;
    put_tid("t2");
    fflush(stdout);
    sem_wait(&sb); /* check:t2_take_b */
    pthread_barrier_wait(&both);
    sem_wait(&sa); /* check:t2_wait_a */
    return NULL;
}

int main(void)
{
    pthread_t x, y;
    CHECK(sem_init(&sa, 0, 1));
    CHECK(sem_init(&sb, 0, 1));
    /* Used as locks a while first: taken and given back by the same thread. */
    for (int i = 0; i < 3; i++) {
        sem_wait(&sa);
        sem_post(&sa);
        sem_wait(&sb);
        sem_post(&sb);
    }
    put_addr("sa", &sa);
    put_addr("sb", &sb);
    fflush(stdout);
    CHECK(pthread_barrier_init(&both, NULL, 2));
    CHECK(pthread_create(&x, NULL, t1, NULL));
    CHECK(pthread_create(&y, NULL, t2, NULL));
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
