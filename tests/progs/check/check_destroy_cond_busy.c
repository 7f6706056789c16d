/* Expected findings:
 *   misuse (destroying a condvar with waiters): objects c (and m); thread "main" destroys it
 *          while "waiter" waits on it; line check:destroy.
 *   hang: object c, never signalled after the wait began; thread "waiter"; line check:wait.
 * Hangs: glibc's pthread_cond_destroy waits for the waiter, which no one wakes. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go;

static void *waiter(void *arg)
{
    (void)arg;
    put_tid("waiter");
    pthread_mutex_lock(&m);
    while (!go)
        pthread_cond_wait(&c, &m); /* check:wait */
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("c", &c);
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, waiter, NULL));
    wait_cond_waiters(&c, &m, 1);
    fflush(stdout);
    pthread_cond_destroy(&c); /* check:destroy */
    pthread_join(t, NULL);
    return 0;
}
