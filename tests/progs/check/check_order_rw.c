/* Expected findings:
 *   lock-order: objects rw (writer side against readers), m; threads "reader" (rdlock rw, then
 *               m) and "writer" (m, then wrlock rw); lines check:reader_m, check:writer_rw.
 * Does not hang: the threads run one after the other. */
#include "../progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *reader(void *arg)
{
    (void)arg;
    put_tid("reader");
    pthread_rwlock_rdlock(&rw);
    pthread_mutex_lock(&m); /* check:reader_m */
    pthread_mutex_unlock(&m);
    pthread_rwlock_unlock(&rw);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    put_tid("writer");
    pthread_mutex_lock(&m);
    pthread_rwlock_wrlock(&rw); /* check:writer_rw */
    pthread_rwlock_unlock(&rw);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_addr("rw", &rw);
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, reader, NULL));
    CHECK(pthread_join(t, NULL));
    CHECK(pthread_create(&t, NULL, writer, NULL));
    CHECK(pthread_join(t, NULL));
    return 0;
}
