/* Expected findings:
 *   misuse (thread ending holding a lock): object m; thread "owner"; line check:owner_lock.
 *   misuse (unlock of a mutex not held): object m (a default mutex, held by "owner");
 *          thread "main" unlocks it; line check:unlock.
 * Does not hang: main unlocks after "owner" has ended. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *owner(void *arg)
{
    (void)arg;
    put_tid("owner");
    pthread_mutex_lock(&m); /* check:owner_lock */
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, owner, NULL));
    CHECK(pthread_join(t, NULL));
    pthread_mutex_unlock(&m); /* check:unlock */
    return 0;
}
