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

/* Uncontended lock; relock of an errorcheck mutex (EDEADLK), a plain one and a
 * priority-inheriting one (another path in glibc). */
static void case_lock(void)
{
    pthread_mutex_t pi;
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
    CHECK(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT));
    put_addr("pi", &pi);
    put_addr("pi_attr", &a);
    CHECK(pthread_mutex_init(&pi, &a));
    CALL("lock", pthread_mutex_lock(&m));
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("lock_e", pthread_mutex_lock(&e));
    CALL("relock_e", pthread_mutex_lock(&e));
    CALL("unlock_e", pthread_mutex_unlock(&e));
    CALL("lock_pi", pthread_mutex_lock(&pi));
    CALL("relock_pi", pthread_mutex_lock(&pi));
    CALL("unlock_pi", pthread_mutex_unlock(&pi));
    CHECK(pthread_mutex_destroy(&pi));
}

static void *locker(void *arg)
{
    put_tid("t2");
    CALL("t2_lock", pthread_mutex_lock(&m));
    CALL("t2_unlock", pthread_mutex_unlock(&m));
    return arg;
}

static void *clock_locker(void *arg)
{
    put_tid("t2");
    struct timespec ts = in_ms(CLOCK_MONOTONIC, 30000);
    put_abstime("t2_abs", &ts);
    CALL("t2_clocklock", pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts));
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

static void case_clocklock_wait(void)
{
    contended(clock_locker);
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

static void case_clocklock(void)
{
    put_line("@cputime=%d", CLOCK_PROCESS_CPUTIME_ID);
    struct timespec a1 = in_ms(CLOCK_MONOTONIC, 30000);
    put_abstime("abs1", &a1);
    /* An unsupported clock: EINVAL, even though the mutex is free. */
    CALL("clocklock_badclock_free", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &a1));
    CALL("clocklock_free", pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &a1));
    struct timespec a2 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs2", &a2);
    CALL("clocklock_held", pthread_mutex_clocklock(&m, CLOCK_REALTIME, &a2));
    CALL("clocklock_badclock", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &a1));
    struct timespec bad = {a1.tv_sec, -1};
    put_abstime("abs_bad", &bad);
    CALL("clocklock_bad", pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &bad));
    CALL("unlock", pthread_mutex_unlock(&m));
}

/* The type, protocol, robustness and sharing MUTEX_INIT records for each kind of attribute. */
static void case_types(void)
{
    static const struct {
        const char *name;
        int type, protocol, robust, pshared;
    } kinds[] = {
        {"normal", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 0},
        {"recursive", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE, 0, 0},
        {"errorcheck", PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, 0, 0},
        {"robust", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 1, 0},
        {"inherit", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT, 0, 0},
        {"protect", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_PROTECT, 0, 0},
        {"shared", PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE, 0, 1},
        {"all", PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_INHERIT, 1, 1},
    };
    pthread_mutex_t x;
    put_addr("x", &x);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        pthread_mutexattr_t a;
        char key[64];
        CHECK(pthread_mutexattr_init(&a));
        CHECK(pthread_mutexattr_settype(&a, kinds[i].type));
        CHECK(pthread_mutexattr_setprotocol(&a, kinds[i].protocol));
        if (kinds[i].robust)
            CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
        if (kinds[i].pshared)
            CHECK(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED));
        snprintf(key, sizeof key, "%s_attr", kinds[i].name);
        put_addr(key, &a);
        put_line("@%s_kind=%d %d %d %d", kinds[i].name, kinds[i].type, kinds[i].protocol,
                 kinds[i].robust, kinds[i].pshared);
        snprintf(key, sizeof key, "%s_init", kinds[i].name);
        CALL(key, pthread_mutex_init(&x, &a));
        snprintf(key, sizeof key, "%s_destroy", kinds[i].name);
        CALL(key, pthread_mutex_destroy(&x));
        CHECK(pthread_mutexattr_destroy(&a));
    }
}

static pthread_mutex_t r1, r2, r3;
static pid_t main_tid;

/* Locks the robust mutexes r1 and r2 (and r3, once main waits for it), and ends holding
 * them. */
static void *dier(void *arg)
{
    put_tid("t2");
    CALL("t2_lock_r1", pthread_mutex_lock(&r1));
    CALL("t2_lock_r2", pthread_mutex_lock(&r2));
    CALL("t2_lock_r3", pthread_mutex_lock(&r3));
    set_flag(&locked);
    wait_blocked(main_tid, &r3, sizeof r3);
    return arg;
}

/* A thread ends holding robust mutexes: the next lock says EOWNERDEAD. r1: made consistent again;
 * r2: unlocked without that, it cannot be locked any more (ENOTRECOVERABLE); r3: main waits for
 * it while the thread ends. */
static void case_robust(void)
{
    pthread_mutexattr_t a;
    pthread_t th;
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK));
    put_addr("attr", &a);
    put_addr("r1", &r1);
    put_addr("r2", &r2);
    put_addr("r3", &r3);
    put_fn("fn", dier);
    put_addr("th_ptr", &th);
    main_tid = gettid();
    CALL("init_r1", pthread_mutex_init(&r1, &a));
    CALL("init_r2", pthread_mutex_init(&r2, &a));
    CALL("init_r3", pthread_mutex_init(&r3, &a));
    CALL("consistent_ok", pthread_mutex_consistent(&r1));
    CALL("create", pthread_create(&th, NULL, dier, NULL));
    put_pthread("th", th);
    wait_flag(&locked);
    CALL("lock_r3", pthread_mutex_lock(&r3));
    CALL("join", pthread_join(th, NULL));
    CALL("lock_r1", pthread_mutex_lock(&r1));
    CALL("consistent_r1", pthread_mutex_consistent(&r1));
    CALL("unlock_r1", pthread_mutex_unlock(&r1));
    CALL("relock_r1", pthread_mutex_lock(&r1));
    CALL("unlock_r1_again", pthread_mutex_unlock(&r1));
    CALL("trylock_r2", pthread_mutex_trylock(&r2));
    CALL("unlock_r2", pthread_mutex_unlock(&r2));
    CALL("lock_r2", pthread_mutex_lock(&r2));
    CALL("consistent_r2", pthread_mutex_consistent(&r2));
    CALL("consistent_r3", pthread_mutex_consistent(&r3));
    CALL("unlock_r3", pthread_mutex_unlock(&r3));
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
    {"clocklock", case_clocklock}, {"clocklock_wait", case_clocklock_wait},
    {"types", case_types},         {"robust", case_robust},
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
