/* The calls a stopped session passes straight on, in phases that a test starts one at a time:
 * stopped_calls N
 *   Each phase waits for a line on stdin, then main makes one of each call (cond signal,
 *   broadcast and a timed wait already timed out; sem post, wait and a trywait that fails;
 *   setspecific, getspecific; a barrier of one; sched_yield; pthread_once done; testcancel,
 *   setcancelstate; pthread_sigmask that reads the mask) and prints "phase=P". In phase 1 the
 *   worker blocks in sem_wait on w before main prints; in phase 2 main posts w (before its calls)
 *   and waits until the worker is back. The worker ends after the last phase. The threads hand
 *   the phases over through atomic flags, never through a traced routine. The worker names
 *   itself "stopper" as it starts, while the session is stopped. */
#include <sched.h>
#include <semaphore.h>
#include <signal.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_barrier_t b;
static pthread_key_t key;
static sem_t s, w;
static int go, back, end;
static pid_t worker_tid;

static void init_once(void)
{
}

static void *worker(void *arg)
{
    pthread_setname_np(pthread_self(), "stopper"); /* while stopped: known from THREAD_RUNNING */
    worker_tid = (pid_t)syscall(SYS_gettid);
    put_tid("worker");
    set_flag(&go);
    CHECK(sem_wait(&w) ? errno : 0);
    set_flag(&back);
    wait_flag(&end);
    return arg;
}

static void calls(void)
{
    const struct timespec past = {1, 0};
    CHECK(pthread_cond_signal(&c));
    CHECK(pthread_cond_broadcast(&c));
    CHECK(pthread_mutex_lock(&m));
    CHECK(pthread_cond_timedwait(&c, &m, &past) == ETIMEDOUT ? 0 : 1);
    CHECK(pthread_mutex_unlock(&m));
    CHECK(sem_post(&s) || sem_wait(&s) ? errno : 0);
    CHECK(sem_trywait(&s) == -1 && errno == EAGAIN ? 0 : 1);
    CHECK(pthread_setspecific(key, &key));
    CHECK(pthread_getspecific(key) == &key ? 0 : 1);
    CHECK(pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : 1);
    CHECK(sched_yield());
    CHECK(pthread_once(&once, init_once));
    pthread_testcancel();
    int old;
    CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old));
    sigset_t mask;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &mask));
}

int main(int argc, char **argv)
{
    int nphases;
    if (argc != 2 || (nphases = atoi(argv[1])) < 2) {
        fprintf(stderr, "usage: stopped_calls N (N >= 2)\n");
        return 2;
    }
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    CHECK(sem_init(&s, 0, 0) || sem_init(&w, 0, 0) ? errno : 0);
    CHECK(pthread_barrier_init(&b, NULL, 1));
    CHECK(pthread_key_create(&key, NULL));
    CHECK(pthread_once(&once, init_once));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, NULL));
    fflush(stdout);
    char line[64];
    for (int p = 1; p <= nphases; p++) {
        if (!fgets(line, sizeof line, stdin))
            return 99;
        if (p == 1) {
            wait_flag(&go);
            wait_blocked(worker_tid, &w, sizeof w);
        } else if (p == 2) {
            CHECK(sem_post(&w) ? errno : 0);
            wait_flag(&back);
        }
        calls();
        put_line("phase=%d", p);
        fflush(stdout);
    }
    set_flag(&end);
    CHECK(pthread_join(th, NULL));
    return 0;
}
