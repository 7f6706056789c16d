/* A burst of threads that each hold a sub-buffer at once: burst_hold N DELAY_MS HOLD_MS
 *   after DELAY_MS, N threads each lock and unlock a mutex (their first events: each takes a
 *   sub-buffer) and wait on a barrier with main; main sleeps HOLD_MS (the threads holding their
 *   sub-buffers meanwhile) before it joins the barrier, then joins them all. Prints "done=N". */
#include "progs.h"

static pthread_barrier_t b;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *fn(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_barrier_wait(&b);
    return NULL;
}

int main(int argc, char **argv)
{
    int n;
    if (argc != 4 || (n = atoi(argv[1])) < 1) {
        fprintf(stderr, "usage: burst_hold N DELAY_MS HOLD_MS\n");
        return 2;
    }
    usleep((useconds_t)atoi(argv[2]) * 1000);
    pthread_barrier_init(&b, NULL, (unsigned)n + 1);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, fn, NULL))
            return 1;
    usleep((useconds_t)atoi(argv[3]) * 1000);
    pthread_barrier_wait(&b);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    put_line("done=%d", n);
    return 0;
}
