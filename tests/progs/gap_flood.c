/* Events as fast as one thread records them, and the longest pause between two: gap_flood N
 *   N lock/unlock of a mutex; "@started=1" after the first N/100; then "@max_gap_ms=MS", the
 *   longest time (CLOCK_MONOTONIC) between the starts of two iterations after that line, and
 *   "done=N". A pause is the program waiting on ptt trace (its pool full), or on nothing. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n;
    if (argc != 2 || (n = atol(argv[1])) < 100) {
        fprintf(stderr, "usage: gap_flood N (N >= 100)\n");
        return 2;
    }
    put_line("@pid=%d", (int)getpid());
    fflush(stdout);
    uint64_t last = 0, gap = 0;
    for (long k = 1; k <= n; k++) {
        uint64_t t = now_ns();
        if (last && t - last > gap)
            gap = t - last;
        if (k == n / 100) {
            put_line("@started=1");
            fflush(stdout);
            t = now_ns(); /* the pipe's reader is no pause of ours */
        }
        if (k >= n / 100)
            last = t;
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    put_line("@max_gap_ms=%.1f", (double)gap / 1e6);
    put_line("done=%ld", n);
    return 0;
}
