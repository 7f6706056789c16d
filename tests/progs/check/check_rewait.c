/* Expected findings:
 *   hang: object c (a condvar waited on again after the one signal woke the first wait: no lost
 *         wake-up, that signal was heard), with m; thread "consumer" alone; line check:wait_again.
 * Hangs: main signals once, while the consumer waits, then joins it; the consumer takes the
 * token and waits for another. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER, ready_cv = PTHREAD_COND_INITIALIZER;
static int ready, tokens;

static void *consumer(void *arg)
{
    (void)arg;
    put_tid("consumer");
    fflush(stdout);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&ready_cv);
    while (!tokens)
        pthread_cond_wait(&c, &m); /* check:wait */
    tokens--;
    while (!tokens)
        pthread_cond_wait(&c, &m); /* check:wait_again */
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    put_addr("m", &m);
    put_addr("c", &c);
    put_addr("ready_cv", &ready_cv);
    CHECK(pthread_create(&t, NULL, consumer, NULL));
    pthread_mutex_lock(&m);
    while (!ready) /* woken holding m: the consumer is inside its wait on c */
        pthread_cond_wait(&ready_cv, &m);
    tokens = 1;
    pthread_cond_signal(&c); /* check:signal */
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    return 0;
}
