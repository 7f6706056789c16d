/* A program idle outside any traced call: idle_sleep MS
 * A thread locks and unlocks a mutex and ends, main joins it, sleeps MS ms in sleep(3)-like
 * nanosleep (not traced), then locks and unlocks the mutex again. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *once(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    long ms;
    if (argc != 2 || (ms = atol(argv[1])) < 0) {
        fprintf(stderr, "usage: idle_sleep MS\n");
        return 2;
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, once, NULL));
    CHECK(pthread_join(th, NULL));
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&d, &d))
        ;
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    put_line("slept=%ld", ms);
    return 0;
}
