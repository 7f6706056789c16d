/* pthread_create, pthread_exit, pthread_join, pthread_tryjoin_np, pthread_timedjoin_np,
 * pthread_detach: thread_calls CASE (see cases[]). */
#include "progs.h"

static int started, go;
static pid_t child_tid;

/* Returns its argument; prints its thread id under the key "tid_<arg>". */
static void *child(void *arg)
{
    put_line("@tid_%lx=%d", (unsigned long)(uintptr_t)arg, (int)gettid());
    return arg;
}

/* Tells main its thread id, then waits for main's go, and returns 0x55. */
static void *blocked_child(void *arg)
{
    (void)arg;
    put_tid("t2");
    child_tid = gettid();
    set_flag(&started);
    wait_flag(&go);
    return (void *)0x55;
}

static pthread_t start_blocked(void)
{
    pthread_t th;
    put_fn("fn", blocked_child);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, blocked_child, NULL));
    put_pthread("th", th);
    wait_flag(&started);
    return th;
}

static void case_create(void)
{
    pthread_t t1, t2, t3;
    pthread_attr_t a, big;
    CHECK(pthread_attr_init(&a));
    CHECK(pthread_attr_init(&big));
    /* A stack larger than the address space: pthread_create fails (EAGAIN). */
    CHECK(pthread_attr_setstacksize(&big, (size_t)1 << 47));
    put_fn("fn", child);
    put_addr("t1_ptr", &t1);
    put_addr("t2_ptr", &t2);
    put_addr("t3_ptr", &t3);
    put_addr("attr", &a);
    put_addr("big", &big);
    size_t stack = 0;
    CHECK(pthread_attr_getstacksize(&a, &stack));
    put_line("@attr_stack=%zu", stack);
    CHECK(pthread_attr_getstacksize(&big, &stack));
    put_line("@big_stack=%zu", stack);
    CALL("create_1", pthread_create(&t1, NULL, child, (void *)0x11));
    put_pthread("t1", t1);
    CHECK(pthread_join(t1, NULL));
    CALL("create_2", pthread_create(&t2, &a, child, (void *)0x22));
    put_pthread("t2", t2);
    CHECK(pthread_join(t2, NULL));
    CALL("create_fail", pthread_create(&t3, &big, child, (void *)0x33));
}

/* pthread_exit from below the thread's function: the thread unwinds through it. */
static __attribute__((noinline)) void finish(void *v)
{
    pthread_exit(v);
}

static void *exiting_child(void *arg)
{
    (void)arg;
    put_tid("t2");
    finish((void *)0x2a);
    put_line("not reached");
    return NULL;
}

static void *late_child(void *arg)
{
    put_tid("t3");
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    return arg;
}

/* A thread ends with pthread_exit; then main ends with it, while another thread still runs. */
static void case_exit(void)
{
    pthread_t t2, t3;
    void *v = NULL;
    put_fn("fn2", exiting_child);
    put_fn("fn3", late_child);
    put_addr("t2_ptr", &t2);
    put_addr("t3_ptr", &t3);
    CALL("create_2", pthread_create(&t2, NULL, exiting_child, NULL));
    put_pthread("t2", t2);
    CALL("join_2", pthread_join(t2, &v));
    put_value("join_2.value", v);
    CALL("create_3", pthread_create(&t3, NULL, late_child, (void *)0x3));
    put_pthread("t3", t3);
    fflush(stdout);
    pthread_exit((void *)0x99);
}

static void case_join(void)
{
    pthread_t t1, t2;
    void *v = NULL;
    put_fn("fn", child);
    put_addr("t1_ptr", &t1);
    put_addr("t2_ptr", &t2);
    put_pthread("self", pthread_self());
    CALL("create_1", pthread_create(&t1, NULL, child, (void *)0x44));
    put_pthread("t1", t1);
    CALL("join_1", pthread_join(t1, &v));
    put_value("join_1.value", v);
    CALL("create_2", pthread_create(&t2, NULL, child, (void *)0x45));
    put_pthread("t2", t2);
    CALL("join_2_novalue", pthread_join(t2, NULL));
    v = (void *)0x1;
    CALL("join_self", pthread_join(pthread_self(), &v));
    put_value("join_self.value", v);
}

static void case_tryjoin(void)
{
    void *v = (void *)0x1;
    pthread_t th = start_blocked();
    CALL("tryjoin_running", pthread_tryjoin_np(th, &v));
    put_value("tryjoin_running.value", v);
    set_flag(&go);
    wait_thread_gone(child_tid);
    CALL("tryjoin_ended", pthread_tryjoin_np(th, &v));
    put_value("tryjoin_ended.value", v);
}

static void case_timedjoin(void)
{
    void *v = (void *)0x1;
    pthread_t th = start_blocked();
    struct timespec a1 = in_ms(CLOCK_REALTIME, 30);
    put_abstime("abs1", &a1);
    CALL("timedjoin_timeout", pthread_timedjoin_np(th, &v, &a1));
    put_value("timedjoin_timeout.value", v);
    set_flag(&go);
    struct timespec a2 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs2", &a2);
    CALL("timedjoin", pthread_timedjoin_np(th, &v, &a2));
    put_value("timedjoin.value", v);
}

static void case_detach(void)
{
    pthread_t th = start_blocked();
    CALL("detach", pthread_detach(th));
    /* Still running (it waits for go), so still there: detached already. */
    CALL("detach_again", pthread_detach(th));
    set_flag(&go);
    wait_thread_gone(child_tid);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"create", case_create},   {"exit", case_exit},           {"join", case_join},
    {"tryjoin", case_tryjoin}, {"timedjoin", case_timedjoin}, {"detach", case_detach},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: thread_calls CASE\n");
    return 2;
}
