/* Expected findings: none. Two threads take rw and m in opposite orders, but both take rw's
 * read side: readers do not exclude each other, so this is no lock-order cycle.
 * The threads run one after the other. */
#include "../progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *rw_then_m(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&rw);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_rwlock_unlock(&rw);
    return NULL;
}

static void *m_then_rw(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_unlock(&rw);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_addr("rw", &rw);
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, rw_then_m, NULL));
    CHECK(pthread_join(t, NULL));
    CHECK(pthread_create(&t, NULL, m_then_rw, NULL));
    CHECK(pthread_join(t, NULL));
    return 0;
}
