/* Each pthread_barrier_* routine: barrier_calls CASE (see cases[]). */
#include "progs.h"

static pthread_barrier_t b;

static void case_init(void)
{
    pthread_barrierattr_t a;
    CHECK(pthread_barrierattr_init(&a));
    CHECK(pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_PRIVATE));
    put_addr("attr", &a);
    CALL("init_2", pthread_barrier_init(&b, NULL, 2));
    CALL("destroy_2", pthread_barrier_destroy(&b));
    CALL("init_attr", pthread_barrier_init(&b, &a, 1));
    CALL("destroy_attr", pthread_barrier_destroy(&b));
    CALL("init_0", pthread_barrier_init(&b, NULL, 0));
}

/* Which thread is the serial one changes from run to run: print it as a run value, and only
 * the number of serial threads as a result. */
static int serial_count;

static void checked_wait(const char *who)
{
    char key[64];
    errno = ERRNO_SENTINEL;
    int r = pthread_barrier_wait(&b);
    int e = errno;
    snprintf(key, sizeof key, "@%s_wait", who);
    put_line("%s=%d", key, r);
    put_line("%s_wait.errno=%d", who, e);
    put_line("%s_wait.ok=%d", who, r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
    if (r == PTHREAD_BARRIER_SERIAL_THREAD)
        __atomic_fetch_add(&serial_count, 1, __ATOMIC_RELAXED);
}

static void *t2_main(void *arg)
{
    put_tid("t2");
    checked_wait("t2");
    return arg;
}

static void case_wait(void)
{
    /* Alone at a barrier of 1: always the serial thread. */
    CALL("init_1", pthread_barrier_init(&b, NULL, 1));
    CALL("wait_alone", pthread_barrier_wait(&b));
    CALL("destroy_1", pthread_barrier_destroy(&b));
    pthread_t th;
    put_fn("fn", t2_main);
    put_addr("th_ptr", &th);
    CALL("init_2", pthread_barrier_init(&b, NULL, 2));
    CALL("create", pthread_create(&th, NULL, t2_main, NULL));
    put_pthread("th", th);
    checked_wait("main");
    CALL("join", pthread_join(th, NULL));
    CALL("destroy_2", pthread_barrier_destroy(&b));
    put_line("serial_count=%d", serial_count);
}

static void case_destroy(void)
{
    CALL("init_3", pthread_barrier_init(&b, NULL, 3));
    CALL("destroy_unused", pthread_barrier_destroy(&b));
    CALL("init_1", pthread_barrier_init(&b, NULL, 1));
    CALL("wait", pthread_barrier_wait(&b));
    CALL("destroy_used", pthread_barrier_destroy(&b));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},
    {"wait", case_wait},
    {"destroy", case_destroy},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("b", &b);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: barrier_calls CASE\n");
    return 2;
}
