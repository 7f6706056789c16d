/* pthread_once: once_calls CASE (see cases[]). */
#include "progs.h"

static pthread_once_t once = PTHREAD_ONCE_INIT, inner = PTHREAD_ONCE_INIT;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int in_init, finish, runs, t2_started;
static pid_t t2_tid;

/* The init routine: makes calls of its own (traced inside pthread_once), then waits until main
 * says finish. */
static void init(void)
{
    runs++;
    CALL("init_lock", pthread_mutex_lock(&m));
    CALL("init_unlock", pthread_mutex_unlock(&m));
    set_flag(&in_init);
    wait_flag(&finish);
}

static void *runner(void *arg)
{
    put_tid((const char *)arg);
    if (!strcmp(arg, "t2")) {
        t2_tid = gettid();
        set_flag(&t2_started);
    }
    char key[64];
    snprintf(key, sizeof key, "%s_once", (const char *)arg);
    CALL(key, pthread_once(&once, init));
    return NULL;
}

/* t1 runs the init routine; t2 calls pthread_once meanwhile and waits for it; main calls it
 * when it is done. */
static void case_once(void)
{
    pthread_t t1, t2;
    put_line("@init=0x%" PRIxPTR, (uintptr_t)init);
    put_fn("fn", runner);
    put_addr("t1_ptr", &t1);
    put_addr("t2_ptr", &t2);
    put_addr("t1_arg", "t1");
    put_addr("t2_arg", "t2");
    CALL("create_1", pthread_create(&t1, NULL, runner, "t1"));
    put_pthread("t1", t1);
    wait_flag(&in_init);
    CALL("create_2", pthread_create(&t2, NULL, runner, "t2"));
    put_pthread("t2", t2);
    wait_flag(&t2_started);
    wait_blocked(t2_tid, &once, sizeof once);
    set_flag(&finish);
    CALL("join_1", pthread_join(t1, NULL));
    CALL("join_2", pthread_join(t2, NULL));
    CALL("main_once", pthread_once(&once, init));
    put_line("runs=%d", runs);
}

static void inner_init(void)
{
    runs++;
}

static void outer_init(void)
{
    runs++;
    CALL("inner_once", pthread_once(&inner, inner_init));
}

/* An init routine that calls pthread_once itself. */
static void case_nested(void)
{
    put_addr("inner", &inner);
    put_line("@outer_init=0x%" PRIxPTR, (uintptr_t)outer_init);
    put_line("@inner_init=0x%" PRIxPTR, (uintptr_t)inner_init);
    CALL("outer_once", pthread_once(&once, outer_init));
    CALL("again_once", pthread_once(&once, outer_init));
    put_line("runs=%d", runs);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"once", case_once},
    {"nested", case_nested},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("once", &once);
            put_addr("m", &m);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: once_calls CASE\n");
    return 2;
}
