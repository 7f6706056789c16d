/* Each sem_* routine, successful and failing: sem_calls CASE [KIND] (see cases[]; KIND, for a
 * wait that blocks, is plain, timed or clock). */
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>

#include "progs.h"

static sem_t s;
static int started;
static pid_t t2_tid;
static const char *kind = "plain";

static void case_init(void)
{
    sem_t x;
    put_addr("x", &x);
    put_line("@max=%u", (unsigned)SEM_VALUE_MAX);
    CALL("init_0", sem_init(&x, 0, 0));
    CALL("destroy_0", sem_destroy(&x));
    CALL("init_shared", sem_init(&x, 1, 3));
    CALL("destroy_shared", sem_destroy(&x));
    CALL("init_max", sem_init(&x, 0, SEM_VALUE_MAX));
    CALL("destroy_max", sem_destroy(&x));
    CALL("init_over", sem_init(&x, 0, (unsigned)SEM_VALUE_MAX + 1));
}

/* sem_open's result: failed or not (the pointer itself changes from run to run), and errno. */
static sem_t *open_sem(const char *key, sem_t *r)
{
    int e = errno;
    char k[64];
    snprintf(k, sizeof k, "%s.failed", key);
    put_line("%s=%d", k, r == SEM_FAILED);
    snprintf(k, sizeof k, "%s.errno", key);
    put_line("%s=%d", k, e);
    put_addr(key, r);
    return r;
}

static void case_named(void)
{
    char name[64], other[64];
    snprintf(name, sizeof name, "/ptt-e2e-sem-%d", (int)getpid());
    snprintf(other, sizeof other, "/ptt-e2e-none-%d", (int)getpid());
    put_line("@name=\"%s\"", name);
    put_line("@other=\"%s\"", other);
    put_line("@creat_excl=0x%x", O_CREAT | O_EXCL);
    put_line("@creat=0x%x", O_CREAT);
    errno = ERRNO_SENTINEL;
    sem_t *a = open_sem("open_new", sem_open(name, O_CREAT | O_EXCL, 0600, 2));
    errno = ERRNO_SENTINEL;
    open_sem("open_excl", sem_open(name, O_CREAT | O_EXCL, 0600, 2));
    errno = ERRNO_SENTINEL;
    sem_t *b = open_sem("open_again", sem_open(name, O_CREAT, 0644, 5));
    errno = ERRNO_SENTINEL;
    open_sem("open_none", sem_open(other, 0));
    int v = -1;
    CALL("getvalue", sem_getvalue(b, &v));
    put_line("value=%d", v);
    CALL("close_a", sem_close(a));
    CALL("close_b", sem_close(b));
    /* Not a semaphore sem_open gave: glibc does not find it among its mappings. */
    CALL("close_unnamed", sem_close(&s));
    CALL("unlink", sem_unlink(name));
    CALL("unlink_again", sem_unlink(name));
}

static void case_wait(void)
{
    CALL("init", sem_init(&s, 0, 1));
    CALL("wait", sem_wait(&s));
    CALL("trywait_0", sem_trywait(&s));
    CALL("post", sem_post(&s));
    CALL("trywait_1", sem_trywait(&s));
}

static void case_timedwait(void)
{
    CALL("init", sem_init(&s, 0, 0));
    struct timespec a1 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs1", &a1);
    CALL("timedwait_timeout", sem_timedwait(&s, &a1));
    CALL("post", sem_post(&s));
    /* Out of range: EINVAL, even though the value is 1 and the wait need not block. */
    struct timespec bad = {a1.tv_sec + 30, 1000000000};
    put_abstime("abs_bad", &bad);
    CALL("timedwait_bad", sem_timedwait(&s, &bad));
    struct timespec a2 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs2", &a2);
    CALL("timedwait", sem_timedwait(&s, &a2));
}

static void case_clockwait(void)
{
    CALL("init", sem_init(&s, 0, 0));
    struct timespec a1 = in_ms(CLOCK_MONOTONIC, 20);
    put_abstime("abs1", &a1);
    CALL("clockwait_timeout", sem_clockwait(&s, CLOCK_MONOTONIC, &a1));
    CALL("post", sem_post(&s));
    struct timespec a2 = in_ms(CLOCK_MONOTONIC, 30000);
    put_abstime("abs2", &a2);
    put_line("@cputime=%d", CLOCK_PROCESS_CPUTIME_ID);
    /* An unsupported clock: EINVAL, even though the value is 1. */
    CALL("clockwait_badclock", sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &a2));
    struct timespec bad = {a2.tv_sec, -1};
    put_abstime("abs_bad", &bad);
    CALL("clockwait_bad", sem_clockwait(&s, CLOCK_MONOTONIC, &bad));
    CALL("clockwait", sem_clockwait(&s, CLOCK_REALTIME, &a2));
}

static void case_post(void)
{
    CALL("init", sem_init(&s, 0, 0));
    CALL("post_0", sem_post(&s));
    CALL("post_1", sem_post(&s));
    int v = -1;
    CALL("getvalue", sem_getvalue(&s, &v));
    put_line("value=%d", v);
    CALL("destroy", sem_destroy(&s));
    CALL("init_max", sem_init(&s, 0, SEM_VALUE_MAX));
    put_line("@max=%d", SEM_VALUE_MAX);
    CALL("post_max", sem_post(&s));
    CALL("getvalue_max", sem_getvalue(&s, &v));
    put_line("value_max=%d", v);
}

static void *waiter(void *arg)
{
    put_tid("t2");
    t2_tid = gettid();
    set_flag(&started);
    if (!strcmp(kind, "plain")) {
        CALL("t2_wait", sem_wait(&s));
    } else if (!strcmp(kind, "timed")) {
        struct timespec ts = in_ms(CLOCK_REALTIME, 30000);
        put_abstime("t2_abs", &ts);
        CALL("t2_wait", sem_timedwait(&s, &ts));
    } else {
        struct timespec ts = in_ms(CLOCK_MONOTONIC, 30000);
        put_abstime("t2_abs", &ts);
        CALL("t2_wait", sem_clockwait(&s, CLOCK_MONOTONIC, &ts));
    }
    return arg;
}

/* t2 waits on s (value 0) until main posts. */
static void case_block(void)
{
    pthread_t th;
    CALL("init", sem_init(&s, 0, 0));
    put_fn("fn", waiter);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, waiter, (void *)0x3));
    put_pthread("th", th);
    wait_flag(&started);
    wait_blocked(t2_tid, &s, sizeof s);
    CALL("post", sem_post(&s));
    CALL("join", pthread_join(th, NULL));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},           {"named", case_named},         {"wait", case_wait},
    {"timedwait", case_timedwait}, {"clockwait", case_clockwait}, {"post", case_post},
    {"block", case_block},
};

int main(int argc, char **argv)
{
    if (argc == 3)
        kind = argv[2];
    for (size_t i = 0; (argc == 2 || argc == 3) && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("s", &s);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: sem_calls CASE [plain|timed|clock]\n");
    return 2;
}
