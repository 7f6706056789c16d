/* A process that ends abruptly while its threads record: crash_loop MODE N
 *   Main loops on lock/unlock of a mutex and prints "i=K" after its K-th unlock; a second thread
 *   loops on sem_post (its own semaphore: other events than main's, so that the counts of ptt
 *   view --summary tell the threads apart) and prints "j=K" after its K-th post. Each line is
 *   one write(2): once it is out, the events of those K iterations were recorded.
 *   MODE loop: forever (the test kills the process); segv, abort, kill (raise(SIGKILL)), _exit
 *   (_exit(7)): that, right after main's N-th iteration; badlock: pthread_mutex_lock of address
 *   16 then, which crashes inside the call (SIGSEGV). Main starts once the second thread
 *   loops. */
#include <semaphore.h>
#include <signal.h>
#include <sys/prctl.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t s;
static int looping;

static void say(const char *fmt, long v)
{
    char b[64];
    int n = snprintf(b, sizeof b, fmt, v);
    if (write(1, b, (size_t)n) != n)
        _exit(98);
}

static void *second(void *arg)
{
    say("@tid_t2=%ld\n", (long)gettid());
    for (long k = 1;; k++) {
        sem_post(&s);
        say("j=%ld\n", k);
        set_flag(&looping);
    }
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: crash_loop loop|segv|abort|kill|_exit|badlock N\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = !strcmp(mode, "loop") ? -1 : atol(argv[2]);
    prctl(PR_SET_DUMPABLE, 0); /* no core file */
    say("@pid=%ld\n", (long)getpid());
    CHECK(sem_init(&s, 0, 0) ? errno : 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, second, NULL));
    wait_flag(&looping); /* both threads record when the process ends */
    for (long k = 1; k != n + 1; k++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        say("i=%ld\n", k);
    }
    if (!strcmp(mode, "segv"))
        *(volatile int *)(uintptr_t)0 = 1;
    else if (!strcmp(mode, "abort"))
        abort();
    else if (!strcmp(mode, "kill"))
        raise(SIGKILL);
    else if (!strcmp(mode, "_exit"))
        _exit(7);
    else if (!strcmp(mode, "badlock"))
        pthread_mutex_lock((pthread_mutex_t *)(uintptr_t)16); /* site:badlock */
    fprintf(stderr, "crash_loop: unknown mode %s\n", mode);
    return 2;
}
