/* Expected findings:
 *   misuse (cond_wait without holding the mutex): objects c, m; thread "main";
 *          line check:wait.
 * Does not hang: "signaller" signals until main is back from the wait. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done;

static void *signaller(void *arg)
{
    (void)arg;
    put_tid("signaller");
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        pthread_cond_signal(&c);
        nap();
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("c", &c);
    put_addr("m", &m);
    CHECK(pthread_create(&t, NULL, signaller, NULL));
    pthread_cond_wait(&c, &m); /* check:wait */
    set_flag(&done);
    pthread_mutex_unlock(&m); /* the wait returned holding m */
    CHECK(pthread_join(t, NULL));
    return 0;
}
