/* Expected findings:
 *   lock-order: objects s (a spinlock), m; threads "t_sm" (s, then m) and "t_ms" (m, then s);
 *               lines check:sm, check:ms.
 * Does not hang: the threads run one after the other. */
#include "../progs.h"

static pthread_spinlock_t s;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *t_sm(void *arg)
{
    (void)arg;
    put_tid("t_sm");
    pthread_spin_lock(&s);
    pthread_mutex_lock(&m); /* check:sm */
    pthread_mutex_unlock(&m);
    pthread_spin_unlock(&s);
    return NULL;
}

static void *t_ms(void *arg)
{
    (void)arg;
    put_tid("t_ms");
    pthread_mutex_lock(&m);
    pthread_spin_lock(&s); /* check:ms */
    pthread_spin_unlock(&s);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    CHECK(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
    put_addr("s", &s);
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, t_sm, NULL));
    CHECK(pthread_join(t, NULL));
    CHECK(pthread_create(&t, NULL, t_ms, NULL));
    CHECK(pthread_join(t, NULL));
    return 0;
}
