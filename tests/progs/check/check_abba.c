/* Expected findings (tests/progs/check/README.md):
 *   deadlock: objects a, b; threads "t1" (holds a, waits for b) and "t2" (holds b, waits for a);
 *             lines check:t1_lock_b, check:t2_lock_a.
 * Hangs: a barrier makes both threads hold their first lock before asking the second. */
#include "../progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *t1(void *arg)
{
    (void)arg;
    put_tid("t1");
    fflush(stdout);
    pthread_mutex_lock(&a); /* check:t1_lock_a */
    pthread_barrier_wait(&both);
    pthread_mutex_lock(&b); /* check:t1_lock_b */
    return NULL;
}

static void *t2(void *arg)
{
    (void)arg;
    put_tid("t2");
    fflush(stdout);
    pthread_mutex_lock(&b); /* check:t2_lock_b */
    pthread_barrier_wait(&both);
    pthread_mutex_lock(&a); /* check:t2_lock_a */
    return NULL;
}

int main(void)
{
    pthread_t x, y;
    put_addr("a", &a);
    put_addr("b", &b);
    fflush(stdout);
    CHECK(pthread_barrier_init(&both, NULL, 2));
    CHECK(pthread_create(&x, NULL, t1, NULL));
    CHECK(pthread_create(&y, NULL, t2, NULL));
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
