/* The built-in probes of ptt scal (probes.h). One probe runs per child process, so that each
 * keeps its fixture in file-scope state. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scal/probes.h"

#define STACK_SIZE (64 * 1024)   /* the fixtures' threads: thousands of them fit */
#define SETTLE_NS 10000000000ull /* the longest a fixture may take to settle: 10 s */
#define CROWD_MAX 30000          /* threads of a fixture: the largest N of the probes */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pause_briefly(void)
{
    struct timespec t = {0, 20000};
    nanosleep(&t, NULL);
}

/* ---- threads of a fixture ---------------------------------------------------------------- */

/* A fixture's threads, with their kernel ids, to see them asleep in /proc. */
struct crowd {
    pthread_t *t;
    _Atomic pid_t *tid; /* set by each thread when it starts */
    long n, cap;
};

static pthread_attr_t small_stack;
static int taskdir = -1; /* /proc/self/task */

/* The thread's id into its slot of c; what every fixture thread does first. */
static void crowd_started(struct crowd *c, void *arg)
{
    atomic_store(&c->tid[(intptr_t)arg], gettid());
}

static int crowd_add(struct crowd *c, void *(*fn)(void *), char *err, size_t len)
{
    if (!c->cap) { /* never moved: the threads write their ids into it as they start */
        c->t = calloc(CROWD_MAX, sizeof *c->t);
        c->tid = calloc(CROWD_MAX, sizeof *c->tid);
        if (!c->t || !c->tid) {
            snprintf(err, len, "out of memory");
            return -1;
        }
        c->cap = CROWD_MAX;
    }
    if (c->n == c->cap) {
        snprintf(err, len, "at most %d threads", CROWD_MAX);
        return -1;
    }
    atomic_store(&c->tid[c->n], 0);
    int e = pthread_create(&c->t[c->n], &small_stack, fn, (void *)(intptr_t)c->n);
    if (e) {
        snprintf(err, len,
                 "pthread_create: %s, with %ld threads made (see ulimit -u and "
                 "/proc/sys/kernel/threads-max)",
                 strerror(e), c->n);
        return -1;
    }
    c->n++;
    return 0;
}

/* Threads [n, c->n) joined (each was told to return): the crowd is n. */
static void crowd_shrink(struct crowd *c, long n)
{
    while (c->n > n)
        pthread_join(c->t[--c->n], NULL);
}

static void crowd_join(struct crowd *c)
{
    for (long i = 0; i < c->n; i++)
        pthread_join(c->t[i], NULL);
    free(c->t);
    free((void *)c->tid);
    memset(c, 0, sizeof *c);
}

/* Whether thread tid of this process sleeps (state S in /proc/self/task/TID/stat). */
static int asleep(pid_t tid)
{
    char path[32], buf[512];
    if (taskdir < 0)
        taskdir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    snprintf(path, sizeof path, "%d/stat", (int)tid);
    int fd = tid > 0 ? openat(taskdir, path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0)
        return 0;
    buf[k] = 0;
    const char *p = strrchr(buf, ')'); /* after the name, which may hold anything */
    return p && p[1] == ' ' && p[2] == 'S';
}

/* Waits until every thread of c sleeps: then each waits in the kernel, where the operation
 * timed finds it. */
static int crowd_asleep(const struct crowd *c, char *err, size_t len)
{
    uint64_t deadline = now_ns() + SETTLE_NS;
    for (long i = 0; i < c->n; i++)
        while (!asleep(atomic_load(&c->tid[i]))) {
            if (now_ns() > deadline) {
                snprintf(err, len, "thread %ld of %ld did not go to sleep within 10 s", i + 1,
                         c->n);
                return -1;
            }
            pause_briefly();
        }
    return 0;
}

/* ---- sem_open, sem_close: N named semaphores open ---------------------------------------- */

static sem_t **sems;
static long nsems, capsems;

/* Named semaphore k of the fixture ("t": the one timed): /ptt-scal-PID-k, which
 * ptt_probe_sweep finds by the pid. */
static void sem_name(char *buf, size_t len, long k)
{
    if (k < 0)
        snprintf(buf, len, "/ptt-scal-%d-t", (int)getpid());
    else
        snprintf(buf, len, "/ptt-scal-%d-%ld", (int)getpid(), k);
}

static int sem_size(long n, char *err, size_t len)
{
    char name[64];
    while (nsems > n) {
        sem_close(sems[--nsems]);
        sem_name(name, sizeof name, nsems);
        sem_unlink(name);
    }
    while (nsems < n) {
        if (nsems == capsems) {
            long cap = capsems ? 2 * capsems : 256;
            sem_t **s = realloc(sems, (size_t)cap * sizeof *s);
            if (!s) {
                snprintf(err, len, "out of memory with %ld named semaphores", nsems);
                return -1;
            }
            sems = s;
            capsems = cap;
        }
        sem_name(name, sizeof name, nsems);
        sem_unlink(name); /* one of a process of the same pid that was killed */
        sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
        if (s == SEM_FAILED) {
            snprintf(err, len, "sem_open: %s, with %ld named semaphores open", strerror(errno),
                     nsems);
            return -1;
        }
        sems[nsems++] = s;
    }
    return 0;
}

/* One more opened and closed, one of the two timed (close: 1). */
static int sem_time(double *ns, int close, char *err, size_t len)
{
    char name[64];
    sem_name(name, sizeof name, -1);
    sem_unlink(name);
    uint64_t t0 = now_ns();
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    uint64_t t1 = now_ns();
    if (s == SEM_FAILED) {
        snprintf(err, len, "sem_open: %s, with %ld named semaphores open", strerror(errno), nsems);
        return -1;
    }
    uint64_t t2 = now_ns();
    sem_close(s);
    uint64_t t3 = now_ns();
    sem_unlink(name);
    *ns = close ? (double)(t3 - t2) : (double)(t1 - t0);
    return 0;
}

static int sem_open_measure(double *ns, char *err, size_t len)
{
    return sem_time(ns, 0, err, len);
}

static int sem_close_measure(double *ns, char *err, size_t len)
{
    return sem_time(ns, 1, err, len);
}

static void sem_clean(void)
{
    char name[64];
    for (long k = 0; k < nsems; k++) {
        sem_close(sems[k]);
        sem_name(name, sizeof name, k);
        sem_unlink(name);
    }
    free(sems);
    sems = NULL;
    nsems = capsems = 0;
}

/* ---- thread_create: N threads alive ----------------------------------------------------- */

static struct crowd alive;
static int hold[2] = {-1, -1}; /* the alive threads read hold[0] until it is closed */

static void *alive_thread(void *arg)
{
    char c;
    crowd_started(&alive, arg);
    while (read(hold[0], &c, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void *quick_thread(void *arg)
{
    return arg;
}

static int create_size(long n, char *err, size_t len)
{
    if (hold[0] < 0 && pipe2(hold, O_CLOEXEC)) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        return -1;
    }
    for (long i = n; i < alive.n; i++)
        pthread_cancel(alive.t[i]); /* in read, a cancellation point */
    crowd_shrink(&alive, n);
    while (alive.n < n)
        if (crowd_add(&alive, alive_thread, err, len))
            return -1;
    return 0;
}

static int create_measure(double *ns, char *err, size_t len)
{
    pthread_t t;
    uint64_t t0 = now_ns();
    int e = pthread_create(&t, &small_stack, quick_thread, NULL);
    uint64_t t1 = now_ns();
    if (e) {
        snprintf(err, len, "pthread_create: %s, with %ld threads alive", strerror(e), alive.n);
        return -1;
    }
    pthread_join(t, NULL);
    *ns = (double)(t1 - t0);
    return 0;
}

static void create_clean(void)
{
    if (hold[1] >= 0)
        close(hold[1]); /* end of file: every alive thread returns */
    crowd_join(&alive);
    if (hold[0] >= 0)
        close(hold[0]);
    hold[0] = hold[1] = -1;
}

/* ---- mutex_unlock: N threads waiting for the mutex ---------------------------------------- */

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static struct crowd mx_waiters;
static atomic_int mx_stop;
static int mx_held;

/* Waits for the mutex the main thread holds, again and again: when woken by an unlock it
 * either finds it taken again and sleeps, or takes it and comes back. */
static void *mx_waiter(void *arg)
{
    crowd_started(&mx_waiters, arg);
    for (;;) {
        pthread_mutex_lock(&mx);
        int stop = atomic_load(&mx_stop);
        pthread_mutex_unlock(&mx);
        if (stop)
            return NULL;
    }
}

static void mx_clean(void);

static int mx_size(long n, char *err, size_t len)
{
    if (n < mx_waiters.n) /* fewer: all of them return, n new ones */
        mx_clean();
    if (!mx_held) {
        pthread_mutex_lock(&mx);
        mx_held = 1;
    }
    while (mx_waiters.n < n)
        if (crowd_add(&mx_waiters, mx_waiter, err, len))
            return -1;
    return 0;
}

static int mx_measure(double *ns, char *err, size_t len)
{
    if (crowd_asleep(&mx_waiters, err, len)) /* all of them in the kernel, waiting */
        return -1;
    uint64_t t0 = now_ns();
    pthread_mutex_unlock(&mx);
    uint64_t t1 = now_ns();
    pthread_mutex_lock(&mx);
    *ns = (double)(t1 - t0);
    return 0;
}

static void mx_clean(void)
{
    atomic_store(&mx_stop, 1);
    if (mx_held)
        pthread_mutex_unlock(&mx);
    mx_held = 0;
    crowd_join(&mx_waiters);
    atomic_store(&mx_stop, 0);
}

/* ---- cond_signal, cond_broadcast: N threads waiting on the condvar ----------------------- */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER, ready = PTHREAD_COND_INITIALIZER;
static struct crowd cwaiters;
/* Under cm: the threads inside pthread_cond_wait, how many there should be, the wake-ups seen
 * and those the operations timed so far caused. */
static long cwaiting, ctarget;
static unsigned long cwoken, cexpected;
static int cstop;

static void *cond_waiter(void *arg)
{
    crowd_started(&cwaiters, arg);
    pthread_mutex_lock(&cm);
    while (!cstop) {
        if (++cwaiting == ctarget)
            pthread_cond_signal(&ready);
        pthread_cond_wait(&cv, &cm);
        cwaiting--;
        cwoken++;
    }
    pthread_mutex_unlock(&cm);
    return NULL;
}

static void cond_clean(void);

static int cond_size(long n, char *err, size_t len)
{
    if (n < cwaiters.n) /* fewer: all of them return, n new ones */
        cond_clean();
    pthread_mutex_lock(&cm);
    ctarget = n;
    pthread_mutex_unlock(&cm);
    while (cwaiters.n < n)
        if (crowd_add(&cwaiters, cond_waiter, err, len))
            return -1;
    return 0;
}

/* Until every waiter woken so far is back in pthread_cond_wait, and asleep. */
static int cond_settle(char *err, size_t len)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += SETTLE_NS / 1000000000u;
    int e = 0;
    pthread_mutex_lock(&cm);
    while (!e && (cwaiting < ctarget || cwoken < cexpected))
        e = pthread_cond_timedwait(&ready, &cm, &until);
    pthread_mutex_unlock(&cm);
    if (e) {
        snprintf(err, len, "the waiters did not come back within 10 s");
        return -1;
    }
    return crowd_asleep(&cwaiters, err, len);
}

static int cond_time(double *ns, int broadcast, char *err, size_t len)
{
    if (cond_settle(err, len))
        return -1;
    uint64_t t0 = now_ns();
    if (broadcast)
        pthread_cond_broadcast(&cv);
    else
        pthread_cond_signal(&cv);
    uint64_t t1 = now_ns();
    cexpected += broadcast ? (unsigned long)cwaiters.n : 1;
    *ns = (double)(t1 - t0);
    return 0;
}

static int signal_measure(double *ns, char *err, size_t len)
{
    return cond_time(ns, 0, err, len);
}

static int broadcast_measure(double *ns, char *err, size_t len)
{
    return cond_time(ns, 1, err, len);
}

static void cond_clean(void)
{
    pthread_mutex_lock(&cm);
    cstop = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&cm);
    crowd_join(&cwaiters);
    cstop = 0;
    cwaiting = ctarget = 0;
    cwoken = cexpected = 0;
}

/* ---- key_create: N keys ------------------------------------------------------------------ */

static pthread_key_t keys[PTHREAD_KEYS_MAX];
static long nkeys;

static int key_size(long n, char *err, size_t len)
{
    while (nkeys > n)
        pthread_key_delete(keys[--nkeys]);
    while (nkeys < n) {
        int e = pthread_key_create(&keys[nkeys], NULL);
        if (e) {
            snprintf(err, len, "pthread_key_create: %s, with %ld keys", strerror(e), nkeys);
            return -1;
        }
        nkeys++;
    }
    return 0;
}

static int key_measure(double *ns, char *err, size_t len)
{
    pthread_key_t k;
    uint64_t t0 = now_ns();
    int e = pthread_key_create(&k, NULL);
    uint64_t t1 = now_ns();
    if (e) {
        snprintf(err, len, "pthread_key_create: %s, with %ld keys", strerror(e), nkeys);
        return -1;
    }
    pthread_key_delete(k);
    *ns = (double)(t1 - t0);
    return 0;
}

static void key_clean(void)
{
    while (nkeys > 0)
        pthread_key_delete(keys[--nkeys]);
}

/* ---- barrier_wait: N threads at the barrier ---------------------------------------------- */

static pthread_barrier_t bar;
static struct crowd bhelpers;
static atomic_long barrived; /* helpers' arrivals, all rounds */
static atomic_int bstop;
static atomic_int bgate;       /* 0: the helpers wait to start, 1: they go, 2: they return */
static long bthreads, brounds; /* the barrier's count (0: none), rounds completed */

static void *bar_helper(void *arg)
{
    int gate;
    crowd_started(&bhelpers, arg);
    while (!(gate = atomic_load(&bgate)))
        pause_briefly();
    if (gate == 2) /* not all helpers could be made: the barrier would never fill */
        return NULL;
    for (;;) {
        atomic_fetch_add(&barrived, 1);
        pthread_barrier_wait(&bar);
        if (atomic_load(&bstop))
            return NULL;
    }
}

/* Until the helpers have all arrived at this round, and sleep there. */
static int bar_settle(char *err, size_t len)
{
    uint64_t deadline = now_ns() + SETTLE_NS;
    while (atomic_load(&barrived) < (brounds + 1) * (bthreads - 1)) {
        if (now_ns() > deadline) {
            snprintf(err, len, "the threads did not reach the barrier within 10 s");
            return -1;
        }
        pause_briefly();
    }
    return crowd_asleep(&bhelpers, err, len);
}

static void bar_clean(void)
{
    if (!bthreads)
        return;
    char err[8];
    bar_settle(err, sizeof err);
    atomic_store(&bstop, 1);
    pthread_barrier_wait(&bar); /* the last round: the helpers see bstop and return */
    crowd_join(&bhelpers);
    pthread_barrier_destroy(&bar);
    bthreads = 0;
}

/* A barrier's count is fixed: a new one for each N, with N - 1 new helper threads. */
static int bar_size(long n, char *err, size_t len)
{
    bar_clean();
    int e = pthread_barrier_init(&bar, NULL, (unsigned)n);
    if (e) {
        snprintf(err, len, "pthread_barrier_init: %s, count %ld", strerror(e), n);
        return -1;
    }
    brounds = 0;
    atomic_store(&barrived, 0);
    atomic_store(&bstop, 0);
    atomic_store(&bgate, 0);
    for (long i = 1; i < n; i++)
        if (crowd_add(&bhelpers, bar_helper, err, len)) {
            atomic_store(&bgate, 2);
            crowd_join(&bhelpers);
            pthread_barrier_destroy(&bar);
            return -1;
        }
    atomic_store(&bgate, 1);
    bthreads = n;
    return 0;
}

static int bar_measure(double *ns, char *err, size_t len)
{
    if (bar_settle(err, len))
        return -1;
    uint64_t t0 = now_ns();
    pthread_barrier_wait(&bar); /* the last to arrive: it wakes the others */
    uint64_t t1 = now_ns();
    brounds++;
    *ns = (double)(t1 - t0);
    return 0;
}

/* ---- the table and the run --------------------------------------------------------------- */

static const struct ptt_probe probes[] = {
    {"sem_open", "named semaphores open", "sem_open of one more (O_CREAT|O_EXCL)", 0, 60000, 100,
     5000, sem_size, sem_open_measure, sem_clean},
    {"sem_close", "named semaphores open", "sem_close of one more", 0, 60000, 100, 5000, sem_size,
     sem_close_measure, sem_clean},
    {"thread_create", "threads alive", "pthread_create of one more thread (64 KiB stack)", 0, 30000,
     10, 2000, create_size, create_measure, create_clean},
    {"mutex_unlock", "threads waiting for the mutex", "pthread_mutex_unlock that wakes one of them",
     1, 4000, 1, 200, mx_size, mx_measure, mx_clean},
    {"cond_signal", "threads waiting on the condvar", "pthread_cond_signal that wakes one", 1, 4000,
     1, 200, cond_size, signal_measure, cond_clean},
    {"cond_broadcast", "threads waiting on the condvar", "pthread_cond_broadcast that wakes all", 1,
     4000, 1, 200, cond_size, broadcast_measure, cond_clean},
    {"key_create", "keys created", "pthread_key_create of one more", 0, 1000, 1, 1000, key_size,
     key_measure, key_clean},
    {"barrier_wait", "threads at the barrier, the timed one included",
     "pthread_barrier_wait of the last thread, which releases the others", 2, 4000, 2, 200,
     bar_size, bar_measure, bar_clean},
};

const struct ptt_probe *ptt_probe_list(size_t *n)
{
    *n = sizeof probes / sizeof probes[0];
    return probes;
}

const struct ptt_probe *ptt_probe_find(const char *name)
{
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (!strcmp(probes[i].name, name))
            return &probes[i];
    return NULL;
}

/* One step: the fixture brought to n, warmup operations, then repeat timed ones written out. */
static int run_step(const struct ptt_probe *p, size_t step, long n, int repeat, int warmup,
                    FILE *out, char *err, size_t len)
{
    double ns;
    fprintf(out, "step %zu\n", step);
    if (fflush(out) || p->size(n, err, len))
        return -1;
    for (int i = 0; i < warmup; i++)
        if (p->measure(&ns, err, len))
            return -1;
    for (int i = 0; i < repeat; i++) {
        if (p->measure(&ns, err, len))
            return -1;
        fprintf(out, "%zu %.0f\n", step, ns);
    }
    return fflush(out) ? -1 : 0;
}

int ptt_probe_run(const struct ptt_probe *p, const long *values, const size_t *step, size_t n,
                  int repeat, int warmup, int fd)
{
    FILE *out = fdopen(fd, "w");
    char err[256] = "";
    int rc = 0;
    if (!out)
        return 1;
    pthread_attr_init(&small_stack);
    pthread_attr_setstacksize(&small_stack, STACK_SIZE);
    for (size_t i = 0; i < n && !rc; i++)
        if (run_step(p, step[i], values[i], repeat, warmup, out, err, sizeof err))
            rc = 1;
    /* After a failure the fixture may not be able to end (a thread that never went to sleep):
     * the child's exit ends it, and the parent removes its named semaphores. */
    if (!rc)
        p->clean();
    else
        fprintf(out, "error %s\n", *err ? err : "the probe failed");
    fclose(out);
    return rc;
}

void ptt_probe_sweep(pid_t pid)
{
    char prefix[64], name[NAME_MAX + 2];
    int len = snprintf(prefix, sizeof prefix, "sem.ptt-scal-%d-", (int)pid);
    DIR *d = opendir("/dev/shm"); /* glibc's named semaphores: /dev/shm/sem.NAME */
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, (size_t)len)) {
            snprintf(name, sizeof name, "/%s", e->d_name + 4);
            sem_unlink(name);
        }
    closedir(d);
}
