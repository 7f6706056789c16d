/* thread_churn N: create and join N threads, one after the other, each returning at once; prints
 * threads=N. The system calls of a thread's lifetime under tracing
 * (tests/e2e/test_thread_syscalls.py) are counted on it. */
#include "progs.h"

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100, done = 0;
    for (long i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, nothing, NULL) || pthread_join(th, NULL))
            break;
        done++;
    }
    printf("threads=%ld\n", done);
    return done == n ? 0 : 1;
}
