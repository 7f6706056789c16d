/* Expected findings:
 *   error EOWNERDEAD: object rm (a robust mutex whose owner "owner" ended holding it); thread
 *         "main" ignores the error and unlocks without pthread_mutex_consistent; line
 *         check:lock_dead.
 *   error ENOTRECOVERABLE: object rm; thread "main"; line check:lock_unrecoverable.
 * (The owner's death with a robust mutex is not itself a misuse.)
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t rm;

static void *owner(void *arg)
{
    (void)arg;
    put_tid("owner");
    pthread_mutex_lock(&rm);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    pthread_t t;
    put_tid("main");
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
    CHECK(pthread_mutex_init(&rm, &a));
    put_addr("rm", &rm);
    CHECK(pthread_create(&t, NULL, owner, NULL));
    CHECK(pthread_join(t, NULL));
    pthread_mutex_lock(&rm); /* check:lock_dead */
    pthread_mutex_unlock(&rm);
    pthread_mutex_lock(&rm); /* check:lock_unrecoverable */
    return 0;
}
