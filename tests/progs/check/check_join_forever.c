/* Expected findings:
 *   hang: object the thread "forever" (joined, never ends); thread "main" joins it;
 *         line check:join.
 * Hangs: "forever" waits in sigwait for a signal no one sends (no synchronisation object; a
 * traced call, so that --kill-on-hang sees every thread blocked and ends the program). */
#include "../progs.h"
#include <signal.h>

static void *forever(void *arg)
{
    (void)arg;
    put_tid("forever");
    fflush(stdout);
    sigset_t set;
    int sig;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    for (;;)
        sigwait(&set, &sig);
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
