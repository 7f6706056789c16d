/* hang_exec: a thread other than main calls exec while main waits for it in pthread_join; the
 * new program (the same, with "2") deadlocks: main holds M and joins u, u waits for M. Only the
 * new program's two threads are blocked; the old program's threads are gone. Prints (the new
 * program) the pid, u's tid and u's pthread_t, flushed before main joins.
 * hang_exec rw: the same, but each program's main holds rwlock RW for reading (the old one after
 * 3000 locks and unlocks of M, so that its first sub-buffers are drained), and the new program's
 * u waits to write it. Run without address randomization, RW is at the same address in both.
 * hang_exec chain N: the same exec N times over (no wait, no deadlock), then prints execs=done. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static char *self, *next[4];
static int use_rw;

/* Whether the main thread waits in the kernel (its join): -1 when the kernel does not say. */
static int main_waits(void)
{
    char path[64], buf[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)getpid());
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    return ok && atoi(buf) == SYS_futex;
}

static void *execer(void *arg)
{
    (void)arg;
    if (!next[1]) { /* main is in pthread_join */
        int w;
        for (int i = 0; i < 5000 && !(w = main_waits()); i++)
            usleep(1000);
        if (w < 0)
            usleep(100000);
        next[1] = use_rw ? "rw2" : "2";
    }
    next[0] = self;
    execv("/proc/self/exe", next);
    perror("execv");
    exit(2);
}

static void *u_main(void *arg)
{
    *(int *)arg = (int)gettid();
    if (use_rw)
        pthread_rwlock_wrlock(&rw); /* never returns */ /* site:u_wrlock */
    else
        pthread_mutex_lock(&m); /* never returns */ /* site:u_lock */
    return NULL;
}

static int second(void)
{
    int tid = 0;
    pthread_t th;
    if (use_rw)
        CHECK(pthread_rwlock_rdlock(&rw)); /* site:main_rdlock */
    else
        CHECK(pthread_mutex_lock(&m)); /* site:main_lock */
    CHECK(pthread_create(&th, NULL, u_main, &tid));
    while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
        usleep(1000);
    put_line("@pid=%d", (int)getpid());
    put_line("@tid_u=%d", tid);
    put_pthread("th_u", th);
    fflush(stdout);
    pthread_join(th, NULL); /* never returns */ /* site:join */
    return 1;
}

int main(int argc, char **argv)
{
    self = argv[0];
    char left[16];
    if (argc == 3 && !strcmp(argv[1], "chain")) {
        int n = atoi(argv[2]);
        if (n <= 0) {
            put_line("execs=done");
            return 0;
        }
        snprintf(left, sizeof left, "%d", n - 1);
        next[1] = "chain";
        next[2] = left;
    } else if (argc > 1) {
        use_rw = !strcmp(argv[1], "rw2");
        if (use_rw || !strcmp(argv[1], "2"))
            return second();
        use_rw = !strcmp(argv[1], "rw");
        for (int i = 0; use_rw && i < 3000; i++) {
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
        }
        if (use_rw)
            CHECK(pthread_rwlock_rdlock(&rw));
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, execer, NULL));
    pthread_join(th, NULL); /* never returns: the exec ends this program */
    return 1;
}
