/* Signals sent to threads that block them: sig_blocked_storm WORKERS ROUNDS [BACKLOG]
 *   WORKERS threads loop ROUNDS times: block SIGUSR1, SIGUSR2 and SIGRTMIN, lock and unlock a
 *   mutex, unblock them (the pending ones, coalesced, are delivered there), lock and unlock it
 *   again. Two sender threads pthread_kill them with those signals, a few per round of each
 *   worker, all along. The handlers record events of their own: SIGUSR1 posts a semaphore,
 *   SIGUSR2 locks and unlocks a mutex of its thread's, SIGRTMIN sends SIGUSR1 to its own thread.
 *   No handler blocks the other signals (empty sa_mask), so they interrupt one another and the
 *   events being recorded. Prints what the handlers did and the workers' lock calls. */
#include <sched.h>
#include <semaphore.h>
#include <signal.h>

#include "progs.h"

#define MAXW 16

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t hm[MAXW];
static __thread int self_index;
static sem_t s;
static long h_usr1, h_usr2, h_rt, sent, finished;
static long got[MAXW], to[MAXW]; /* signals each worker handled, and was sent */
static int started, stop_send, senders_done;
static pthread_t workers[MAXW];
static long nworkers, rounds, backlog = 6;

static void on_usr1(int sig)
{
    (void)sig;
    sem_post(&s);
    __atomic_fetch_add(&h_usr1, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&got[self_index], 1, __ATOMIC_RELEASE);
}

static void on_usr2(int sig)
{
    (void)sig;
    pthread_mutex_lock(&hm[self_index]);
    pthread_mutex_unlock(&hm[self_index]);
    __atomic_fetch_add(&h_usr2, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&got[self_index], 1, __ATOMIC_RELEASE);
}

static void on_rt(int sig)
{
    (void)sig;
    int e = errno;
    /* Counted as sent: its handler counts it as handled, and the senders' backlog must stay true,
     * or they send on while handlers nest unfinished, until the stack is gone. */
    __atomic_fetch_add(&to[self_index], 1, __ATOMIC_RELAXED);
    pthread_kill(pthread_self(), SIGUSR1);
    errno = e;
    __atomic_fetch_add(&h_rt, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&got[self_index], 1, __ATOMIC_RELEASE);
}

static void *worker(void *arg)
{
    self_index = (int)(intptr_t)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGRTMIN);
    for (long r = 0; r < rounds; r++) {
        CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL));
        for (int k = 0; k < 4; k++) {
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
        }
        CHECK(pthread_sigmask(SIG_UNBLOCK, &set, NULL));
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    /* Signals unblocked until nobody sends any more: a thread that ended cannot be sent one. */
    __atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&senders_done, __ATOMIC_ACQUIRE))
        syscall(SYS_sched_yield);
    return NULL;
}

/* Signals all along, but never more than BACKLOG (6) sent and not yet handled to a worker: it
 * goes on. */
static void *sender(void *arg)
{
    const int sigs[] = {SIGUSR1, SIGUSR2, SIGRTMIN};
    unsigned k = (unsigned)(intptr_t)arg;
    long n = 0;
    wait_flag(&started);
    while (!__atomic_load_n(&stop_send, __ATOMIC_ACQUIRE)) {
        int any = 0;
        for (long w = 0; w < nworkers; w++) {
            if (__atomic_load_n(&to[w], __ATOMIC_RELAXED) -
                    __atomic_load_n(&got[w], __ATOMIC_ACQUIRE) >
                backlog)
                continue;
            any = 1;
            __atomic_fetch_add(&to[w], 1, __ATOMIC_RELAXED);
            if (pthread_kill(workers[w], sigs[k++ % 3]) == 0)
                n++;
        }
        if (!any)
            syscall(SYS_sched_yield);
    }
    __atomic_fetch_add(&sent, n, __ATOMIC_RELAXED);
    return NULL;
}

static void handle(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa = {.sa_handler = fn, .sa_flags = SA_RESTART | flags};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, NULL) ? errno : 0);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (nworkers = atol(argv[1])) < 1 || nworkers > MAXW ||
        (rounds = atol(argv[2])) < 1 || (argc == 4 && (backlog = atol(argv[3])) < 1)) {
        fprintf(stderr, "usage: sig_blocked_storm WORKERS ROUNDS [BACKLOG]\n");
        return 2;
    }
    CHECK(sem_init(&s, 0, 0) ? errno : 0);
    for (int i = 0; i < MAXW; i++)
        CHECK(pthread_mutex_init(&hm[i], NULL));
    handle(SIGUSR1, on_usr1, SA_NODEFER); /* even into itself */
    handle(SIGUSR2, on_usr2, 0);          /* not into itself: its mutex is locked */
    handle(SIGRTMIN, on_rt, SA_NODEFER);
    /* Only the workers take the signals (threads inherit the mask). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGRTMIN);
    CHECK(pthread_sigmask(SIG_BLOCK, &set, NULL));
    pthread_t snd[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&snd[i], NULL, sender, (void *)(intptr_t)i));
    for (long i = 0; i < nworkers; i++)
        CHECK(pthread_create(&workers[i], NULL, worker, (void *)(intptr_t)i));
    set_flag(&started);
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < nworkers)
        nap();
    __atomic_store_n(&stop_send, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(snd[i], NULL));
    __atomic_store_n(&senders_done, 1, __ATOMIC_RELEASE);
    for (long i = 0; i < nworkers; i++)
        CHECK(pthread_join(workers[i], NULL));
    int value = -1;
    sem_getvalue(&s, &value);
    put_line("@usr1=%ld", h_usr1);
    put_line("@usr2=%ld", h_usr2);
    put_line("@rt=%ld", h_rt);
    put_line("@sent=%ld", sent);
    put_line("@value=%d", value);
    return 0;
}
