/* Expected findings:
 *   misuse (one condvar with two mutexes): objects c, m1, m2; threads "w1" (waits on c with m1)
 *          and "w2" (waits on c with m2, while w1 still waits); lines check:w1_wait,
 *          check:w2_wait.
 * Does not hang: main broadcasts once both wait. */
#include "../progs.h"

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go;

static void *w1(void *arg)
{
    (void)arg;
    put_tid("w1");
    pthread_mutex_lock(&m1);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&c, &m1); /* check:w1_wait */
    pthread_mutex_unlock(&m1);
    return NULL;
}

static void *w2(void *arg)
{
    (void)arg;
    put_tid("w2");
    pthread_mutex_lock(&m2);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&c, &m2); /* check:w2_wait */
    pthread_mutex_unlock(&m2);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    put_addr("c", &c);
    put_addr("m1", &m1);
    put_addr("m2", &m2);
    CHECK(pthread_create(&a, NULL, w1, NULL));
    wait_cond_waiters(&c, &m1, 1);
    CHECK(pthread_create(&b, NULL, w2, NULL));
    wait_cond_waiters(&c, &m2, 2);
    /* Both mutexes are taken so that neither waiter can miss the broadcast. */
    pthread_mutex_lock(&m1);
    pthread_mutex_lock(&m2);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m2);
    pthread_mutex_unlock(&m1);
    CHECK(pthread_join(a, NULL));
    CHECK(pthread_join(b, NULL));
    return 0;
}
