/* A fixed amount of work that measures its own duration: timed_work N
 *   N lock/unlock of a mutex; "@started=1" after the first N/100; then "@elapsed_ms=MS", the
 *   time from start to end on CLOCK_MONOTONIC. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    long n;
    if (argc != 2 || (n = atol(argv[1])) < 100) {
        fprintf(stderr, "usage: timed_work N (N >= 100)\n");
        return 2;
    }
    double t0 = now_ms();
    put_line("@pid=%d", (int)getpid());
    fflush(stdout);
    for (long k = 1; k <= n; k++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        if (k == n / 100) {
            put_line("@started=1");
            fflush(stdout);
        }
    }
    put_line("@elapsed_ms=%.1f", now_ms() - t0);
    return 0;
}
