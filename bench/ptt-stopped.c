/* ptt-stopped: loops of one uncontended call each, for counting what a call costs with libptt
 * merely preloaded and in a stopped session (docs/performance.md, "Session lifetime"). Run under
 * valgrind --tool=callgrind twice, with n and 2n calls: the difference of the two counts over n is
 * the instructions per call (bench/stopped.sh does it), whatever the start-up costs.
 *
 *   ptt-stopped --child CALL N   make N calls of CALL, after its set-up
 *   ptt-stopped --list           the calls, one a line
 *
 * It says on stderr whether libptt is mapped in the process ("libptt: loaded" or "libptt: not
 * loaded"), so that a run under valgrind can be checked to measure what it claims to. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_barrier_t barrier;
static pthread_key_t key;
static sem_t sem;
static int bad; /* a call that did not return what it should: the run is worth nothing */

static void init_once(void)
{
}

static void lock(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mutex);
        pthread_mutex_unlock(&mutex);
    }
}

static void cond_signal(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_cond_signal(&cond);
}

static void cond_broadcast(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_cond_broadcast(&cond);
}

/* A timeout long past: ETIMEDOUT at once, the mutex held again. */
static void cond_timedwait(long n)
{
    const struct timespec past = {1, 0};
    pthread_mutex_lock(&mutex);
    for (long i = 0; i < n; i++)
        bad |= pthread_cond_timedwait(&cond, &mutex, &past) != ETIMEDOUT;
    pthread_mutex_unlock(&mutex);
}

static void sem_post_wait(long n)
{
    for (long i = 0; i < n; i++)
        bad |= sem_post(&sem) | sem_wait(&sem);
}

/* On a count of 0: EAGAIN at once. */
static void sem_trywait_empty(long n)
{
    for (long i = 0; i < n; i++)
        bad |= sem_trywait(&sem) != -1;
}

static void getspecific(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_getspecific(key) != &key;
}

static void setspecific(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_setspecific(key, &key);
}

/* A barrier of one: every wait is the serial thread's. */
static void barrier_wait(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_barrier_wait(&barrier) != PTHREAD_BARRIER_SERIAL_THREAD;
}

static void yield(long n)
{
    for (long i = 0; i < n; i++)
        bad |= sched_yield();
}

/* Done already (run once in the set-up). */
static void once_done(long n)
{
    for (long i = 0; i < n; i++)
        bad |= pthread_once(&once, init_once);
}

static void testcancel(long n)
{
    for (long i = 0; i < n; i++)
        pthread_testcancel();
}

static void setcancelstate(long n)
{
    int old;
    for (long i = 0; i < n; i++)
        bad |= pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
}

/* The mask read, not changed. */
static void sigmask_read(long n)
{
    sigset_t old;
    for (long i = 0; i < n; i++)
        bad |= pthread_sigmask(SIG_BLOCK, NULL, &old);
}

static const struct {
    const char *name;
    void (*loop)(long);
} calls[] = {
    {"lock", lock}, /* lock+unlock: the families that were already off when stopped */
    {"cond_signal", cond_signal},
    {"cond_broadcast", cond_broadcast},
    {"cond_timedwait", cond_timedwait},
    {"sem_post_wait", sem_post_wait},
    {"sem_trywait", sem_trywait_empty},
    {"getspecific", getspecific},
    {"setspecific", setspecific},
    {"barrier_wait", barrier_wait},
    {"sched_yield", yield},
    {"once", once_done},
    {"testcancel", testcancel},
    {"setcancelstate", setcancelstate},
    {"sigmask", sigmask_read},
};
#define NCALLS (sizeof calls / sizeof calls[0])

static int libptt_loaded(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "/libptt.so") != NULL;
    if (f)
        fclose(f);
    return found;
}

static int setup(void)
{
    return pthread_barrier_init(&barrier, NULL, 1) || pthread_key_create(&key, NULL) ||
           pthread_setspecific(key, &key) || sem_init(&sem, 0, 0) || pthread_once(&once, init_once);
}

static int child(const char *name, long n)
{
    for (size_t i = 0; i < NCALLS; i++) {
        if (strcmp(calls[i].name, name))
            continue;
        fprintf(stderr, "libptt: %s\n", libptt_loaded() ? "loaded" : "not loaded");
        if (setup()) {
            fprintf(stderr, "ptt-stopped: set-up failed\n");
            return 1;
        }
        calls[i].loop(n);
        if (bad)
            fprintf(stderr, "ptt-stopped: %s returned an unexpected value\n", name);
        return bad ? 1 : 0;
    }
    fprintf(stderr, "ptt-stopped: unknown call '%s' (--list lists them)\n", name);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (size_t i = 0; i < NCALLS; i++)
            printf("%s\n", calls[i].name);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "--child")) {
        char *end;
        long n = strtol(argv[3], &end, 10);
        if (*end || n < 0) {
            fprintf(stderr, "ptt-stopped: bad count '%s'\n", argv[3]);
            return 2;
        }
        return child(argv[2], n);
    }
    fprintf(stderr, "usage: ptt-stopped --child CALL N | --list\n");
    return 2;
}
