/* hang_exec: a thread other than main calls exec while main waits for it in pthread_join; the
 * new program (the same, with "2") deadlocks: main holds M and joins u, u waits for M. Only the
 * new program's two threads are blocked; the old program's threads are gone. Prints (the new
 * program) the pid, u's tid and u's pthread_t, flushed before main joins.
 * hang_exec chain N: the same exec N times over (no sleep, no deadlock), then prints execs=N. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char *self, *next[4];

static void *execer(void *arg)
{
    (void)arg;
    if (!next[1]) {
        usleep(100000); /* main is in pthread_join */
        next[1] = "2";
    }
    next[0] = self;
    execv("/proc/self/exe", next);
    perror("execv");
    exit(2);
}

static void *u_main(void *arg)
{
    *(int *)arg = (int)gettid();
    pthread_mutex_lock(&m); /* never returns */ /* site:u_lock */
    return NULL;
}

static int second(void)
{
    int tid = 0;
    pthread_t th;
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
        return second();
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, execer, NULL));
    pthread_join(th, NULL); /* never returns: the exec ends this program */
    return 1;
}
