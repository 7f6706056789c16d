/* Expected findings: none (readers and writers on one rwlock, readers nested with a mutex
 * always in the order rw then stats). */
#include "../progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;
static int value, reads;

static void *reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        pthread_rwlock_rdlock(&rw);
        pthread_mutex_lock(&stats);
        reads += value >= 0;
        pthread_mutex_unlock(&stats);
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        pthread_rwlock_wrlock(&rw);
        value++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    put_addr("rw", &rw);
    put_addr("stats", &stats);
    CHECK(pthread_create(&t[0], NULL, reader, NULL));
    CHECK(pthread_create(&t[1], NULL, reader, NULL));
    CHECK(pthread_create(&t[2], NULL, writer, NULL));
    CHECK(pthread_create(&t[3], NULL, writer, NULL));
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(t[i], NULL));
    put_line("value=%d reads=%d", value, reads);
    return 0;
}
