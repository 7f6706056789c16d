/* join_reuse: main joins a slow thread, then threads made after it, which glibc gives the slow
 * one's pthread_t (its stack is reused): SLOW_MS in the first join, a few µs in each of the
 * FAST later ones. ptt stat must charge the long join to thread slow, not to the last thread
 * that had its handle. Prints "@slow_tid" and every handle's reuse count ("reused=N"). */
#include "progs.h"

#define SLOW_MS 200
#define FAST 8

static void *slow(void *arg)
{
    printf("@slow_tid=%ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    wait_blocked(getpid(), (void *)pthread_self(), 1024); /* main in its join (on our tid) */
    usleep(SLOW_MS * 1000);
    return arg;
}

static void *fast(void *arg)
{
    return arg;
}

int main(void)
{
    pthread_t first, t;
    if (pthread_create(&first, NULL, slow, NULL) || pthread_join(first, NULL))
        return 1;
    int reused = 0;
    for (int i = 0; i < FAST; i++) {
        if (pthread_create(&t, NULL, fast, NULL) || pthread_join(t, NULL))
            return 1;
        reused += pthread_equal(t, first) != 0;
    }
    printf("reused=%d\n", reused);
    return 0;
}
