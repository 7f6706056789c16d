/* Expected findings:
 *   hang: object the thread "forever" (joined, never ends); thread "main" joins it;
 *         line check:join.
 * Hangs: "forever" sleeps in pause() (no synchronisation object). */
#include "../progs.h"

static void *forever(void *arg)
{
    (void)arg;
    put_tid("forever");
    fflush(stdout);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    pthread_t t;
    put_tid("main");
    CHECK(pthread_create(&t, NULL, forever, NULL));
    put_pthread("forever", t);
    fflush(stdout);
    pthread_join(t, NULL); /* check:join */
    return 0;
}
