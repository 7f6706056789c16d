/* Expected findings: none. The owner of a robust mutex ends holding it; main's lock returns
 * EOWNERDEAD, which main handles: it repairs the state and calls pthread_mutex_consistent. */
#include "../progs.h"

static pthread_mutex_t rm;
static int state;

static void *owner(void *arg)
{
    (void)arg;
    put_tid("owner");
    pthread_mutex_lock(&rm);
    state = -1; /* left half-updated */
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
    int r = CALL("lock", pthread_mutex_lock(&rm));
    if (r == EOWNERDEAD) {
        state = 0;
        CHECK(pthread_mutex_consistent(&rm));
    } else if (r) {
        return 1;
    }
    pthread_mutex_unlock(&rm);
    CHECK(pthread_mutex_lock(&rm));
    CHECK(pthread_mutex_unlock(&rm));
    CHECK(pthread_mutex_destroy(&rm));
    return state;
}
