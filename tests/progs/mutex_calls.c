/* Each pthread_mutex_* routine, successful and failing: mutex_calls CASE (see cases[]). */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static int locked, release;

static void case_init(void)
{
    pthread_mutex_t x;
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
    put_addr("x", &x);
    put_addr("attr", &a);
    put_line("@errorcheck=%d", PTHREAD_MUTEX_ERRORCHECK);
    CALL("init_default", pthread_mutex_init(&x, NULL));
    CALL("destroy_default", pthread_mutex_destroy(&x));
    CALL("init_attr", pthread_mutex_init(&x, &a));
    CALL("destroy_attr", pthread_mutex_destroy(&x));
    /* glibc refuses robust priority-protected mutexes (ENOTSUP). */
    pthread_mutexattr_t bad;
    CHECK(pthread_mutexattr_init(&bad));
    CHECK(pthread_mutexattr_setrobust(&bad, PTHREAD_MUTEX_ROBUST));
    CHECK(pthread_mutexattr_setprotocol(&bad, PTHREAD_PRIO_PROTECT));
    put_addr("bad", &bad);
    CALL("init_bad", pthread_mutex_init(&x, &bad));
}

/* Uncontended lock; relock of an errorcheck mutex (EDEADLK). */
static void case_lock(void)
{
    CALL("lock", pthread_mutex_lock(&m));
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("lock_e", pthread_mutex_lock(&e));
    CALL("relock_e", pthread_mutex_lock(&e));
    CALL("unlock_e", pthread_mutex_unlock(&e));
}

static void *locker(void *arg)
{
    put_tid("t2");
    CALL("t2_lock", pthread_mutex_lock(&m));
    CALL("t2_unlock", pthread_mutex_unlock(&m));
    return arg;
}

static void *timed_locker(void *arg)
{
    put_tid("t2");
    struct timespec ts = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("t2_abs", &ts);
    CALL("t2_timedlock", pthread_mutex_timedlock(&m, &ts));
    CALL("t2_unlock", pthread_mutex_unlock(&m));
    return arg;
}

/* Thread t2 locks m while main holds it: it must wait (MUTEX_WAIT, owner main). */
static void contended(void *(*fn)(void *))
{
    pthread_t th;
    void *v = NULL;
    put_fn("fn", fn);
    put_addr("th_ptr", &th);
    CALL("lock", pthread_mutex_lock(&m));
    CALL("create", pthread_create(&th, NULL, fn, (void *)0x7));
    put_pthread("th", th);
    wait_mutex_waiter(&m);
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("join", pthread_join(th, &v));
    put_value("join.value", v);
}

static void case_lock_wait(void)
{
    contended(locker);
}

static void case_timedlock_wait(void)
{
    contended(timed_locker);
}

static void case_trylock(void)
{
    CALL("trylock_free", pthread_mutex_trylock(&m));
    CALL("trylock_held", pthread_mutex_trylock(&m));
    CALL("unlock", pthread_mutex_unlock(&m));
}

static void case_timedlock(void)
{
    struct timespec a1 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs1", &a1);
    CALL("timedlock_free", pthread_mutex_timedlock(&m, &a1));
    /* A normal mutex held by the caller: the timed lock waits until the time-out. */
    struct timespec a2 = in_ms(CLOCK_REALTIME, 30);
    put_abstime("abs2", &a2);
    CALL("timedlock_held", pthread_mutex_timedlock(&m, &a2));
    /* A timeout out of range, on a mutex it has to wait for: EINVAL. */
    struct timespec bad = {a2.tv_sec, 1000000000};
    put_abstime("abs_bad", &bad);
    CALL("timedlock_bad", pthread_mutex_timedlock(&m, &bad));
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("lock_e", pthread_mutex_lock(&e));
    struct timespec a3 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs3", &a3);
    CALL("timedlock_e", pthread_mutex_timedlock(&e, &a3));
    CALL("unlock_e", pthread_mutex_unlock(&e));
}

static void *holder(void *arg)
{
    put_tid("t2");
    CALL("t2_lock_e", pthread_mutex_lock(&e));
    set_flag(&locked);
    wait_flag(&release);
    CALL("t2_unlock_e", pthread_mutex_unlock(&e));
    return arg;
}

/* Unlock: owned (0), an errorcheck mutex not locked (EPERM), one locked by t2 (EPERM). */
static void case_unlock(void)
{
    CALL("lock", pthread_mutex_lock(&m));
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("unlock_e_free", pthread_mutex_unlock(&e));
    pthread_t th;
    put_fn("fn", holder);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, holder, NULL));
    put_pthread("th", th);
    wait_flag(&locked);
    CALL("unlock_e_other", pthread_mutex_unlock(&e));
    set_flag(&release);
    CALL("join", pthread_join(th, NULL));
}

static void case_destroy(void)
{
    pthread_mutex_t x = PTHREAD_MUTEX_INITIALIZER;
    put_addr("x", &x);
    CALL("lock", pthread_mutex_lock(&x));
    CALL("destroy_locked", pthread_mutex_destroy(&x));
    CALL("unlock", pthread_mutex_unlock(&x));
    CALL("destroy", pthread_mutex_destroy(&x));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},           {"lock", case_lock},
    {"lock_wait", case_lock_wait}, {"trylock", case_trylock},
    {"timedlock", case_timedlock}, {"timedlock_wait", case_timedlock_wait},
    {"unlock", case_unlock},       {"destroy", case_destroy},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("m", &m);
            put_addr("e", &e);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: mutex_calls CASE\n");
    return 2;
}
