/* Expected findings:
 *   misuse (second join): object the thread "worker"; thread "main" joins it twice, the second
 *          time after the first join returned; line check:second_join.
 * Does not hang (glibc 2.36 answers the second join at once: the thread has ended). */
#include "../progs.h"

static void *worker(void *arg)
{
    (void)arg;
    put_tid("worker");
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    CHECK(pthread_create(&t, NULL, worker, NULL));
    put_pthread("worker", t);
    pthread_join(t, NULL);                      /* check:first_join */
    CALL("second_join", pthread_join(t, NULL)); /* check:second_join */
    return 0;
}
