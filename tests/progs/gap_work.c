/* Work that measures how long it was ever held up: gap_work MS PAUSE_US
 *   lock/unlock of a mutex, then PAUSE_US microseconds of computing, for MS ms of wall time (a
 *   steady flow of events that a stalled ptt trace would hold up, yet not so many that the
 *   writing of the trace file throttles it); "@started=1" after the first 1000; then
 *   "@max_gap_ms=G", the longest time between the starts of two iterations (CLOCK_MONOTONIC),
 *   "@iterations=N" and "done=1". */
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
    long ms, pause_us;
    if (argc != 3 || (ms = atol(argv[1])) < 1 || (pause_us = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: gap_work MS PAUSE_US\n");
        return 2;
    }
    double t0 = now_ms(), last = t0, gap = 0;
    long n = 0;
    for (double t = t0; t - t0 < (double)ms; t = now_ms()) {
        if (t - last > gap)
            gap = t - last;
        last = t;
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        while (now_ms() - t < (double)pause_us / 1e3)
            ;
        if (++n == 1000) {
            put_line("@started=1");
            fflush(stdout);
        }
    }
    put_line("@max_gap_ms=%.1f", gap);
    put_line("@iterations=%ld", n);
    put_line("done=1");
    return 0;
}
