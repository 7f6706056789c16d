/* Threads that name themselves while a session records nothing: renamed_stopped
 *   Reads a line on stdin before each step, then prints "step=N":
 *   1: thread a starts and names itself "first" (the session is stopped);
 *   2: thread b starts, from its start routine late (the test started the session);
 *   3: a names itself "second", b "later" (the test stopped it again);
 *   4: each thread locks and unlocks m once (the test started it again), and they end.
 *   The threads hand the steps over through atomic flags, never through a traced routine. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int first, renames, locks, renamed_a, renamed_b;

static void run(const char *name, int *renamed)
{
    wait_flag(&renames);
    CHECK(pthread_setname_np(pthread_self(), name));
    set_flag(renamed);
    wait_flag(&locks);
    CHECK(pthread_mutex_lock(&m));
    CHECK(pthread_mutex_unlock(&m));
}

static void *early(void *arg)
{
    put_tid("a");
    CHECK(pthread_setname_np(pthread_self(), "first"));
    set_flag(&first);
    run("second", &renamed_a);
    return arg;
}

static void *late(void *arg)
{
    put_tid("b");
    run("later", &renamed_b);
    return arg;
}

static void step(int n)
{
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        exit(99);
    if (n == 1) {
        static pthread_t a;
        CHECK(pthread_create(&a, NULL, early, NULL));
        wait_flag(&first);
    } else if (n == 2) {
        static pthread_t b;
        CHECK(pthread_create(&b, NULL, late, NULL));
    } else if (n == 3) {
        set_flag(&renames);
        wait_flag(&renamed_a);
        wait_flag(&renamed_b);
    } else {
        set_flag(&locks);
    }
    put_line("step=%d", n);
    fflush(stdout);
}

int main(void)
{
    put_line("@pid=%d", (int)getpid());
    fflush(stdout);
    for (int n = 1; n <= 4; n++)
        step(n);
    pthread_exit(NULL); /* the threads end after their lock */
}
