/* Each pthread_rwlock_* routine, successful and failing: rwlock_calls CASE [KIND] (see cases[];
 * KIND, for the waits, is plain, timed or clock). */
#include "progs.h"

static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static int held, release;
static pid_t t2_tid;

static void case_init(void)
{
    pthread_rwlock_t x;
    pthread_rwlockattr_t a;
    CHECK(pthread_rwlockattr_init(&a));
    CHECK(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP));
    put_addr("x", &x);
    put_addr("attr", &a);
    CALL("init_default", pthread_rwlock_init(&x, NULL));
    CALL("destroy_default", pthread_rwlock_destroy(&x));
    CALL("init_attr", pthread_rwlock_init(&x, &a));
    CALL("wrlock", pthread_rwlock_wrlock(&x));
    CALL("unlock", pthread_rwlock_unlock(&x));
    CALL("destroy_attr", pthread_rwlock_destroy(&x));
}

/* Two read locks by one thread; a read lock and a write lock while holding the write lock
 * (EDEADLK: libptt's first try finds it held, by this thread). */
static void case_lock(void)
{
    CALL("rdlock_1", pthread_rwlock_rdlock(&l));
    CALL("rdlock_2", pthread_rwlock_rdlock(&l));
    CALL("unlock_1", pthread_rwlock_unlock(&l));
    CALL("unlock_2", pthread_rwlock_unlock(&l));
    CALL("wrlock", pthread_rwlock_wrlock(&l));
    CALL("rdlock_own", pthread_rwlock_rdlock(&l));
    CALL("wrlock_own", pthread_rwlock_wrlock(&l));
    CALL("unlock", pthread_rwlock_unlock(&l));
}

static void case_trylock(void)
{
    CALL("tryrdlock_free", pthread_rwlock_tryrdlock(&l));
    CALL("trywrlock_read", pthread_rwlock_trywrlock(&l));
    CALL("unlock_r", pthread_rwlock_unlock(&l));
    CALL("trywrlock_free", pthread_rwlock_trywrlock(&l));
    CALL("tryrdlock_write", pthread_rwlock_tryrdlock(&l));
    CALL("trywrlock_write", pthread_rwlock_trywrlock(&l));
    CALL("unlock_w", pthread_rwlock_unlock(&l));
}

/* Timed and clock locks by one thread: free, timing out (a write lock while it holds a read
 * lock: glibc does not see that deadlock), EDEADLK, and timeouts glibc refuses up front. */
static void case_timed(void)
{
    struct timespec a1 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs1", &a1);
    CALL("timedrdlock_free", pthread_rwlock_timedrdlock(&l, &a1));
    struct timespec a2 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs2", &a2);
    CALL("timedwrlock_read", pthread_rwlock_timedwrlock(&l, &a2));
    struct timespec a3 = in_ms(CLOCK_MONOTONIC, 20);
    put_abstime("abs3", &a3);
    CALL("clockwrlock_read", pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &a3));
    CALL("unlock_r", pthread_rwlock_unlock(&l));
    struct timespec a4 = in_ms(CLOCK_MONOTONIC, 30000);
    put_abstime("abs4", &a4);
    CALL("clockwrlock_free", pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &a4));
    CALL("timedrdlock_own", pthread_rwlock_timedrdlock(&l, &a1));
    CALL("clockrdlock_own", pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &a4));
    CALL("timedwrlock_own", pthread_rwlock_timedwrlock(&l, &a1));
    CALL("unlock_w", pthread_rwlock_unlock(&l));
    CALL("clockrdlock_free", pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &a4));
    CALL("unlock_r2", pthread_rwlock_unlock(&l));
    struct timespec bad = {a1.tv_sec, 1000000000};
    put_abstime("abs_bad", &bad);
    CALL("timedrdlock_bad", pthread_rwlock_timedrdlock(&l, &bad));
    CALL("timedwrlock_bad", pthread_rwlock_timedwrlock(&l, &bad));
    put_line("@cputime=%d", CLOCK_PROCESS_CPUTIME_ID);
    /* An unsupported clock: EINVAL, even though the lock is free. */
    CALL("clockrdlock_badclock", pthread_rwlock_clockrdlock(&l, CLOCK_PROCESS_CPUTIME_ID, &a4));
    CALL("clockwrlock_badclock", pthread_rwlock_clockwrlock(&l, CLOCK_PROCESS_CPUTIME_ID, &a4));
}

static void *writer_holder(void *arg)
{
    put_tid("t2");
    CALL("t2_wrlock", pthread_rwlock_wrlock(&l));
    set_flag(&held);
    wait_flag(&release);
    CALL("t2_unlock", pthread_rwlock_unlock(&l));
    return arg;
}

/* Another thread holds the write lock: main's read locks fail or time out. */
static void case_timeout(void)
{
    pthread_t th;
    put_fn("fn", writer_holder);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, writer_holder, NULL));
    put_pthread("th", th);
    wait_flag(&held);
    CALL("tryrdlock", pthread_rwlock_tryrdlock(&l));
    CALL("trywrlock", pthread_rwlock_trywrlock(&l));
    struct timespec a1 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs1", &a1);
    CALL("timedrdlock", pthread_rwlock_timedrdlock(&l, &a1));
    struct timespec a2 = in_ms(CLOCK_MONOTONIC, 20);
    put_abstime("abs2", &a2);
    CALL("clockrdlock", pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &a2));
    struct timespec a3 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs3", &a3);
    CALL("timedwrlock", pthread_rwlock_timedwrlock(&l, &a3));
    set_flag(&release);
    CALL("join", pthread_join(th, NULL));
}

static const char *kind = "plain";

/* Lock l for mode 'r' or 'w' the way KIND says. */
static int lock(int mode, const char *key)
{
    char k[64];
    struct timespec ts;
    if (!strcmp(kind, "plain"))
        return CALL(key, mode == 'r' ? pthread_rwlock_rdlock(&l) : pthread_rwlock_wrlock(&l));
    int timed = !strcmp(kind, "timed");
    ts = in_ms(timed ? CLOCK_REALTIME : CLOCK_MONOTONIC, 30000);
    snprintf(k, sizeof k, "%s_abs", key);
    put_abstime(k, &ts);
    if (timed)
        return CALL(key, mode == 'r' ? pthread_rwlock_timedrdlock(&l, &ts)
                                     : pthread_rwlock_timedwrlock(&l, &ts));
    return CALL(key, mode == 'r' ? pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts)
                                 : pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &ts));
}

static void *waiter(void *arg)
{
    put_tid("t2");
    t2_tid = gettid();
    set_flag(&held);
    lock((int)(intptr_t)arg, "t2_lock");
    CALL("t2_unlock", pthread_rwlock_unlock(&l));
    return arg;
}

/* main holds l (mode 'r' or 'w'); t2 locks it the other way, and must wait until main
 * unlocks. */
static void contended(int main_mode)
{
    pthread_t th;
    void *arg = (void *)(intptr_t)(main_mode == 'r' ? 'w' : 'r');
    put_fn("fn", waiter);
    put_addr("th_ptr", &th);
    put_value("arg", arg);
    CALL("lock", main_mode == 'r' ? pthread_rwlock_rdlock(&l) : pthread_rwlock_wrlock(&l));
    CALL("create", pthread_create(&th, NULL, waiter, arg));
    put_pthread("th", th);
    wait_flag(&held);
    wait_blocked(t2_tid, &l, sizeof l);
    CALL("unlock", pthread_rwlock_unlock(&l));
    CALL("join", pthread_join(th, NULL));
}

/* A writer blocked by a reader. */
static void case_wait_writer(void)
{
    contended('r');
}

/* A reader blocked by a writer. */
static void case_wait_reader(void)
{
    contended('w');
}

static void case_unlock(void)
{
    CALL("rdlock", pthread_rwlock_rdlock(&l));
    CALL("unlock_r", pthread_rwlock_unlock(&l));
    CALL("wrlock", pthread_rwlock_wrlock(&l));
    CALL("unlock_w", pthread_rwlock_unlock(&l));
}

static void case_destroy(void)
{
    pthread_rwlock_t x = PTHREAD_RWLOCK_INITIALIZER;
    put_addr("x", &x);
    CALL("destroy_static", pthread_rwlock_destroy(&x));
    CALL("init", pthread_rwlock_init(&x, NULL));
    CALL("rdlock", pthread_rwlock_rdlock(&x));
    CALL("unlock", pthread_rwlock_unlock(&x));
    CALL("destroy", pthread_rwlock_destroy(&x));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},
    {"lock", case_lock},
    {"trylock", case_trylock},
    {"timed", case_timed},
    {"timeout", case_timeout},
    {"wait_writer", case_wait_writer},
    {"wait_reader", case_wait_reader},
    {"unlock", case_unlock},
    {"destroy", case_destroy},
};

int main(int argc, char **argv)
{
    if (argc == 3)
        kind = argv[2];
    for (size_t i = 0; (argc == 2 || argc == 3) && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("l", &l);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: rwlock_calls CASE [plain|timed|clock]\n");
    return 2;
}
