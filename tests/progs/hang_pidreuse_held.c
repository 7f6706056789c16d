/* hang_pidreuse_held (root): child C1 ends holding rwlock rw for reading twice: its thread x
 * ends holding it, then main _exits holding it. The parent reaps C1 and forks C2 with C1's pid
 * (ns_last_pid): rw is at the same address there, and nobody holds it. In C2, thread r read-locks
 * rw and waits for mutex m, which main holds; main waits to write-lock rw. The parent kills C2
 * after 3 s and exits 0. Prints C1's and C2's pids and the tids of x and r. With "free", C1
 * ends holding nothing: x unlocks rw, main does not take it (x's tid, which r gets, is then
 * x's as a thread that ended holding nothing). */
#include <signal.h>
#include <sys/wait.h>

#include "pidreuse.h"
#include "progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int holding = 1;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static _Atomic int r_tid;

static void *x(void *arg)
{
    put_tid("x");
    fflush(stdout);
    pthread_rwlock_rdlock(&rw);
    if (!holding)
        pthread_rwlock_unlock(&rw);
    return arg; /* rw still held, but with "free" */
}

static void *r(void *arg)
{
    r_tid = (int)gettid();
    pthread_rwlock_rdlock(&rw); /* site:r_rdlock */
    pthread_barrier_wait(&bar);
    pthread_mutex_lock(&m); /* never returns */ /* site:r_lock_m */
    return arg;
}

static void c1(void)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, x, NULL));
    CHECK(pthread_join(th, NULL));
    if (holding)
        pthread_rwlock_rdlock(&rw);
    _exit(0);
}

static void c2(pid_t first)
{
    pthread_t th;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_mutex_lock(&m); /* site:main_lock_m */
    CHECK(pthread_create(&th, NULL, r, NULL));
    pthread_barrier_wait(&bar);
    put_line("@c1=%d", (int)first);
    put_line("@c2=%d", (int)getpid());
    put_line("@tid_r=%d", r_tid);
    fflush(stdout);
    pthread_rwlock_wrlock(&rw); /* never returns */ /* site:main_wrlock */
    _exit(1);
}

int main(int argc, char **argv)
{
    holding = !(argc > 1 && !strcmp(argv[1], "free"));
    fflush(stdout);
    pid_t first = fork();
    if (!first)
        c1();
    waitpid(first, NULL, 0);
    set_last_pid(first - 1);
    pid_t second = fork();
    if (!second)
        c2(first);
    sleep(3);
    kill(second, SIGKILL);
    waitpid(second, NULL, 0);
    return 0;
}
