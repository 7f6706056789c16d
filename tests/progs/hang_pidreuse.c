/* hang_pidreuse (root): child C1 is forked and exits; the parent reaps it (ptt trace hears of
 * C1's end only then) and forks C2 with C1's pid (ns_last_pid). In C2, main holds B and wants
 * A, thread t holds A and wants B. The parent kills C2 after 3 s and exits 0. Prints C1's and
 * C2's pids and t's tid. */
#include <signal.h>
#include <sys/wait.h>

#include "pidreuse.h"
#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static _Atomic int t_tid;

static void *t(void *arg)
{
    t_tid = (int)gettid();
    pthread_mutex_lock(&a); /* site:t_lock_a */
    pthread_barrier_wait(&bar);
    pthread_mutex_lock(&b); /* never returns */ /* site:t_lock_b */
    return arg;
}

int main(void)
{
    pid_t c1 = fork();
    if (!c1)
        _exit(0);
    waitpid(c1, NULL, 0);
    set_last_pid(c1 - 1);
    pid_t c2 = fork();
    if (!c2) {
        pthread_t th;
        pthread_barrier_init(&bar, NULL, 2);
        pthread_mutex_lock(&b); /* site:main_lock_b */
        CHECK(pthread_create(&th, NULL, t, NULL));
        pthread_barrier_wait(&bar);
        put_line("@c1=%d", (int)c1);
        put_line("@c2=%d", (int)getpid());
        put_line("@tid_t=%d", t_tid);
        fflush(stdout);
        pthread_mutex_lock(&a); /* never returns */ /* site:main_lock_a */
        _exit(1);
    }
    sleep(3);
    kill(c2, SIGKILL);
    waitpid(c2, NULL, 0);
    return 0;
}
