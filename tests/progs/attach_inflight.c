/* The program ptt trace -p attaches to while its threads are blocked (tests/e2e/
 * test_attach_inflight.py): "waiter" waits on a condvar, main joins it, "locker" waits for a
 * mutex ("gate") that "commands" holds, "taker" waits on a semaphore ("sem"); "commands" reads
 * stdin, one command a line:
 *   wake   unlocks the gate (the locker takes it, unlocks it and ends), posts the semaphore (the
 *          taker returns and ends) and signals the condvar: the waiter returns, unlocks and
 *          ends; main's join returns
 *   again  starts a second waiter ("@waiter2_tid=", then "waiting2=1" once in its wait on
 *          cond2), while ptt trace may be attached: its wait goes through libptt's interposer
 *   free2  wakes it and joins it: "woken2=1"
 *   quit   the commands thread ends (main joins it too)
 * Prints "@pid=", "@cond=", "@mutex=", "@gate=", "@cond2=", "@sem=", "@waiter=" (its pthread_t),
 * "@waiter_tid=", "@locker_tid=", "@taker_tid=", then "waiting=1" once the four are blocked; at
 * the end "locked=0" (the locker's lock), "taken=0" (the taker's sem_wait), "woken=1" (the wait
 * returned 0 with the mutex held), "joined=0" (the join's result) and "retval=42" (the waiter's).
 */
#include <semaphore.h>

#include "progs.h"
#include "in_futex.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond2 = PTHREAD_COND_INITIALIZER;
static int ready, woken = -1, locked = -1, ready2;
static pid_t waiter_tid, locker_tid, taker_tid;
static sem_t sem;
static int taken = -1;

static void *taker(void *arg)
{
    (void)arg;
    __atomic_store_n(&taker_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    taken = sem_wait(&sem);
    return NULL;
}
static pthread_barrier_t held; /* the gate is held by commands before the locker asks for it */

static void *locker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&held);
    locker_tid = (pid_t)syscall(SYS_gettid);
    locked = pthread_mutex_lock(&gate);
    pthread_mutex_unlock(&gate);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mutex);
    waiter_tid = (pid_t)syscall(SYS_gettid);
    int r = 0;
    while (!ready && !r)
        r = pthread_cond_wait(&cond, &mutex);
    /* still locked by us after the wait: trylock of a normal mutex says EBUSY */
    woken = r == 0 && pthread_mutex_trylock(&mutex) == EBUSY;
    pthread_mutex_unlock(&mutex);
    return (void *)42;
}

static pid_t waiter2_tid;

static void *waiter2(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mutex);
    waiter2_tid = (pid_t)syscall(SYS_gettid);
    while (!ready2)
        pthread_cond_wait(&cond2, &mutex);
    pthread_mutex_unlock(&mutex);
    return NULL;
}

/* The second waiter started, and in its wait. */
static void again(pthread_t *t)
{
    pthread_create(t, NULL, waiter2, NULL);
    for (;;) {
        pthread_mutex_lock(&mutex);
        pid_t w = waiter2_tid;
        pthread_mutex_unlock(&mutex);
        if (w && in_futex(w))
            break;
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    put_line("@waiter2_tid=%d", (int)waiter2_tid);
    put_line("waiting2=1");
}

static void *commands(void *arg)
{
    (void)arg;
    char line[64];
    pthread_t w2;
    pthread_mutex_lock(&gate);
    pthread_barrier_wait(&held);
    while (fgets(line, sizeof line, stdin)) {
        if (!strncmp(line, "wake", 4)) {
            pthread_mutex_unlock(&gate);
            sem_post(&sem);
            pthread_mutex_lock(&mutex);
            ready = 1;
            pthread_cond_signal(&cond);
            pthread_mutex_unlock(&mutex);
        } else if (!strncmp(line, "again", 5)) {
            again(&w2);
        } else if (!strncmp(line, "free2", 5)) {
            pthread_mutex_lock(&mutex);
            ready2 = 1;
            pthread_cond_signal(&cond2);
            pthread_mutex_unlock(&mutex);
            pthread_join(w2, NULL);
            put_line("woken2=1");
        } else if (!strncmp(line, "quit", 4)) {
            break;
        }
    }
    return NULL;
}

static void *announce(void *arg)
{
    pid_t main_tid = *(pid_t *)arg;
    for (;;) { /* all blocked: the waiter in its wait, main in its join, the locker */
        pthread_mutex_lock(&mutex);
        pid_t w = waiter_tid, l = __atomic_load_n(&locker_tid, __ATOMIC_SEQ_CST),
              t = __atomic_load_n(&taker_tid, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&mutex);
        if (w && l && t && in_futex(w) && in_futex(main_tid) && in_futex(l) && in_futex(t))
            break;
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    put_line("@waiter_tid=%d", (int)waiter_tid);
    put_line("@locker_tid=%d", (int)locker_tid);
    put_line("@taker_tid=%d", (int)taker_tid);
    put_line("waiting=1");
    fflush(stdout);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t w, c, a, l, t;
    pid_t main_tid = getpid();
    put_line("@pid=%d", (int)getpid());
    put_line("@cond=0x%lx", (unsigned long)(uintptr_t)&cond);
    put_line("@mutex=0x%lx", (unsigned long)(uintptr_t)&mutex);
    put_line("@gate=0x%lx", (unsigned long)(uintptr_t)&gate);
    put_line("@cond2=0x%lx", (unsigned long)(uintptr_t)&cond2);
    put_line("@sem=0x%lx", (unsigned long)(uintptr_t)&sem);
    pthread_barrier_init(&held, NULL, 2);
    sem_init(&sem, 0, 0);
    pthread_create(&w, NULL, waiter, NULL);
    put_line("@waiter=0x%lx", (unsigned long)w);
    pthread_create(&c, NULL, commands, NULL);
    pthread_create(&l, NULL, locker, NULL);
    pthread_create(&t, NULL, taker, NULL);
    pthread_create(&a, NULL, announce, &main_tid);
    pthread_detach(a);
    void *v = NULL;
    int r = pthread_join(w, &v);
    pthread_join(l, NULL);
    pthread_join(t, NULL);
    put_line("locked=%d", locked);
    put_line("taken=%d", taken);
    put_line("woken=%d", woken);
    put_line("joined=%d", r);
    put_line("retval=%ld", (long)(intptr_t)v);
    pthread_join(c, NULL);
    return 0;
}
