/* hang_churn N: N threads made and joined one after the other (each locks and unlocks a mutex),
 * then thread holder takes mutex H and ends holding it, and main locks H: a hang whose holder
 * has ended, after many ended threads. Prints the pid, holder's tid and H, flushed once main is
 * about to block. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, h = PTHREAD_MUTEX_INITIALIZER;

static void *churn(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

static void *holder(void *arg)
{
    *(int *)arg = (int)gettid();
    pthread_mutex_lock(&h); /* site:holder_lock */
    return NULL;            /* still holding h */
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t th;
    int tid = 0;
    put_line("@pid=%d", (int)getpid());
    put_addr("H", &h);
    for (long i = 0; i < n; i++) {
        CHECK(pthread_create(&th, NULL, churn, NULL));
        CHECK(pthread_join(th, NULL));
    }
    CHECK(pthread_create(&th, NULL, holder, &tid));
    CHECK(pthread_join(th, NULL));
    put_line("@tid_holder=%d", tid);
    fflush(stdout);
    pthread_mutex_lock(&h); /* never returns */ /* site:main_lock */
    return 1;
}
