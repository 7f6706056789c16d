/* many_blocked MODE N: N threads, all blocked at once in one call before any goes on, as the
 * workers of a large pool wait for work: MODE barrier (pthread_barrier_wait of N + 1 with the
 * main thread), mutex (pthread_mutex_lock of a mutex the main thread holds until all N have
 * come to it), cond (pthread_cond_wait until the main thread broadcasts), sigwait (for a SIGUSR1
 * the main thread sends each) or once (pthread_once of a routine that runs until all N have come
 * to it; the first worker runs it). Traced into a pool
 * of fewer sub-buffers than N, it shows whether blocked threads hold the sub-buffers the others
 * need. Prints threads=N and waits=N (calls that returned 0). MODE deadlock: as mutex, but the
 * main thread then joins the first worker instead of unlocking: a hang (prints @tid=T, the main
 * thread's, and @first=T, the worker's, before it). */
#include <signal.h>
#include <stdatomic.h>

#include "progs.h"

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static atomic_long arrived, ok;
static int go;
static char mode;
static long nthreads;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Run by the first worker that comes: it returns once every other one is waiting for it. */
static void init_once(void)
{
    while (atomic_load(&arrived) < nthreads)
        usleep(1000);
    usleep(50000);
}

static void *worker(void *arg)
{
    int r = 0;
    if (mode == 'b') {
        r = pthread_barrier_wait(&barrier);
        r = r == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : r;
    } else if (mode == 'm' || mode == 'd') {
        if (mode == 'd' && !arg)
            put_line("@first=%ld", (long)gettid());
        atomic_fetch_add(&arrived, 1);
        r = pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
    } else if (mode == 's') {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        int sig = 0;
        atomic_fetch_add(&arrived, 1);
        r = sigwait(&set, &sig);
        r = r ? r : sig != SIGUSR1;
    } else if (mode == 'o') {
        atomic_fetch_add(&arrived, 1);
        r = pthread_once(&once, init_once);
    } else {
        pthread_mutex_lock(&lock);
        atomic_fetch_add(&arrived, 1);
        while (!go && !r)
            r = pthread_cond_wait(&cond, &lock);
        pthread_mutex_unlock(&lock);
    }
    if (!r)
        atomic_fetch_add(&ok, 1);
    return NULL;
}

/* Until all n workers have come to their wait (a mutex: counted before they lock it, and then
 * given 50 ms to block in it). */
static void wait_arrivals(long n)
{
    while (atomic_load(&arrived) < n)
        usleep(1000);
    if (mode != 'c')
        usleep(50000);
}

int main(int argc, char **argv)
{
    if (argc != 3 || !strchr("bmcdso", argv[1][0]))
        return 2;
    mode = argv[1][0];
    long n = nthreads = atol(argv[2]);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the workers inherit it: sigwait takes it */
    pthread_t *th = calloc((size_t)n, sizeof *th);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 << 10);
    pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
    int held = mode == 'm' || mode == 'd';
    if (held)
        pthread_mutex_lock(&lock);
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], &a, worker, (void *)i))
            return 1;
    if (mode == 'b') {
        pthread_barrier_wait(&barrier);
    } else if (mode == 'd') {
        wait_arrivals(n);
        put_line("@tid=%ld", (long)gettid());
        fflush(stdout);
        pthread_join(th[0], NULL); /* never returns: the first worker waits for our lock */
    } else if (mode == 's') {
        wait_arrivals(n);
        for (long i = 0; i < n; i++)
            pthread_kill(th[i], SIGUSR1);
    } else if (mode != 'o') {
        wait_arrivals(n);
        if (mode == 'c') {
            pthread_mutex_lock(&lock);
            go = 1;
            pthread_cond_broadcast(&cond);
        }
        pthread_mutex_unlock(&lock);
    }
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    printf("threads=%ld\nwaits=%ld\n", n, atomic_load(&ok));
    free(th);
    return 0;
}
