/* hang_pidreuse_cycle (root): in child C1, main holds B and wants A, thread t holds A and wants
 * B; the parent, which locks a mutex every 20 ms meanwhile, kills it 3 s later, reaps it and
 * forks C2 with C1's pid (ns_last_pid), which does the same and is killed 3 s later. Each
 * deadlock is a new one, though both are keyed by the same pid and tid (main's). C2 prints
 * C1's and C2's pids. */
#include <signal.h>
#include <sys/wait.h>

#include "pidreuse.h"
#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;

static void *t(void *arg)
{
    pthread_mutex_lock(&a);
    pthread_barrier_wait(&bar);
    pthread_mutex_lock(&b); /* never returns */
    return arg;
}

static _Noreturn void deadlock(pid_t c1)
{
    pthread_t th;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_mutex_lock(&b);
    CHECK(pthread_create(&th, NULL, t, NULL));
    pthread_barrier_wait(&bar);
    if (c1) {
        put_line("@c1=%d", (int)c1);
        put_line("@c2=%d", (int)getpid());
        fflush(stdout);
    }
    pthread_mutex_lock(&a); /* never returns */
    _exit(1);
}

/* 3 s of a lock every 20 ms: the session is never quiet, a deadlock is reported as such. */
static void run_and_kill(pid_t c)
{
    static pthread_mutex_t tick = PTHREAD_MUTEX_INITIALIZER;
    for (int i = 0; i < 150; i++) {
        pthread_mutex_lock(&tick);
        pthread_mutex_unlock(&tick);
        usleep(20000);
    }
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

int main(void)
{
    pid_t c1 = fork();
    if (!c1)
        deadlock(0);
    run_and_kill(c1);
    set_last_pid(c1 - 1);
    pid_t c2 = fork();
    if (!c2)
        deadlock(c1);
    run_and_kill(c2);
    return 0;
}
