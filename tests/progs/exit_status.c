/* How a traced program ends: exit_status ACTION N [blocked]
 *   ACTION exit: exit(N); kill: raise(N); segv: a write through a null pointer (N unused);
 *   pause: print "@ready=1" and wait for a signal (N unused).
 *   blocked: first start a thread that blocks in pthread_mutex_lock (main holds the mutex), so
 *   the program ends with a call still open in that thread. */
#include <signal.h>
#include <sys/prctl.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *locker(void *arg)
{
    put_tid("t2");
    fflush(stdout);
    pthread_mutex_lock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "blocked"))) {
        fprintf(stderr, "usage: exit_status exit|kill|segv|pause N [blocked]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    put_addr("m", &m);
    CHECK(pthread_mutex_lock(&m));
    if (argc == 4) {
        pthread_t th;
        put_fn("fn", locker);
        put_addr("th_ptr", &th);
        CHECK(pthread_create(&th, NULL, locker, NULL));
        put_pthread("th", th);
        wait_mutex_waiter(&m);
    } else {
        CHECK(pthread_mutex_unlock(&m));
    }
    if (!strcmp(argv[1], "pause")) {
        put_line("@ready=1");
        fflush(stdout);
        for (;;)
            pause();
    }
    fflush(stdout);
    if (!strcmp(argv[1], "exit"))
        exit(n);
    prctl(PR_SET_DUMPABLE, 0); /* no core file */
    if (!strcmp(argv[1], "kill"))
        raise(n);
    else if (!strcmp(argv[1], "segv"))
        *(volatile int *)(uintptr_t)0 = 1;
    fprintf(stderr, "exit_status: still alive\n");
    return 3;
}
