/* Each pthread_cond_* routine: cond_calls CASE (see cases[]). */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go, timed;

static void case_init(void)
{
    pthread_cond_t x;
    pthread_condattr_t a;
    CHECK(pthread_condattr_init(&a));
    CHECK(pthread_condattr_setclock(&a, CLOCK_MONOTONIC));
    put_addr("x", &x);
    put_addr("attr", &a);
    CALL("init_default", pthread_cond_init(&x, NULL));
    CALL("destroy_default", pthread_cond_destroy(&x));
    CALL("init_attr", pthread_cond_init(&x, &a));
    CALL("destroy_attr", pthread_cond_destroy(&x));
}

/* A waiter: locks m, waits on c until go (timed or not), unlocks. arg is its name. */
static void *waiter(void *arg)
{
    const char *name = arg;
    char key[64];
    put_tid(name);
    snprintf(key, sizeof key, "%s_lock", name);
    CALL(key, pthread_mutex_lock(&m));
    while (!go) {
        snprintf(key, sizeof key, "%s_wait", name);
        if (timed) {
            /* timed 1: pthread_cond_timedwait; 2: pthread_cond_clockwait, CLOCK_MONOTONIC. */
            struct timespec ts = in_ms(timed == 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC, 30000);
            snprintf(key, sizeof key, "%s_abs", name);
            put_abstime(key, &ts);
            snprintf(key, sizeof key, "%s_wait", name);
            if (timed == 1)
                CALL(key, pthread_cond_timedwait(&c, &m, &ts));
            else
                CALL(key, pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts));
        } else {
            CALL(key, pthread_cond_wait(&c, &m));
        }
    }
    snprintf(key, sizeof key, "%s_unlock", name);
    CALL(key, pthread_mutex_unlock(&m));
    return (void *)0x5;
}

/* Start n waiters one after the other (each inside its wait before the next starts, so they
 * never contend for m), then wake them with a signal or a broadcast. */
static void wake_waiters(unsigned n, int broadcast)
{
    static char *names[] = {"w1", "w2"};
    pthread_t th[2];
    char key[64];
    put_fn("fn", waiter);
    for (unsigned i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s_th_ptr", names[i]);
        put_addr(key, &th[i]);
        snprintf(key, sizeof key, "%s_arg", names[i]);
        put_addr(key, names[i]);
        snprintf(key, sizeof key, "%s_create", names[i]);
        CALL(key, pthread_create(&th[i], NULL, waiter, names[i]));
        snprintf(key, sizeof key, "%s_th", names[i]);
        put_pthread(key, th[i]);
        wait_cond_waiters(&c, &m, i + 1);
    }
    CALL("lock", pthread_mutex_lock(&m));
    go = 1;
    if (broadcast)
        CALL("broadcast", pthread_cond_broadcast(&c));
    else
        CALL("signal", pthread_cond_signal(&c));
    CALL("unlock", pthread_mutex_unlock(&m));
    for (unsigned i = 0; i < n; i++) {
        void *v = NULL;
        snprintf(key, sizeof key, "%s_join", names[i]);
        CALL(key, pthread_join(th[i], &v));
        snprintf(key, sizeof key, "%s_join.value", names[i]);
        put_value(key, v);
    }
}

static void case_wait(void)
{
    wake_waiters(1, 0);
}

/* Waits that fail at once: on an errorcheck mutex the caller does not hold (EPERM), with a
 * timeout out of range (EINVAL). */
static void case_wait_errors(void)
{
    static pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    put_addr("e", &e);
    CALL("wait_unowned", pthread_cond_wait(&c, &e));
    CALL("lock", pthread_mutex_lock(&m));
    struct timespec ts = {time(NULL) + 30, 1000000000};
    put_abstime("abs_bad", &ts);
    CALL("timedwait_bad", pthread_cond_timedwait(&c, &m, &ts));
    CALL("unlock", pthread_mutex_unlock(&m));
}

static void case_timedwait(void)
{
    CALL("lock_t", pthread_mutex_lock(&m));
    struct timespec ts = in_ms(CLOCK_REALTIME, 30);
    put_abstime("abs", &ts);
    CALL("timedwait_timeout", pthread_cond_timedwait(&c, &m, &ts));
    CALL("unlock_t", pthread_mutex_unlock(&m));
    timed = 1;
    wake_waiters(1, 0);
}

static void case_clockwait(void)
{
    CALL("lock_t", pthread_mutex_lock(&m));
    struct timespec ts = in_ms(CLOCK_MONOTONIC, 20);
    put_abstime("abs", &ts);
    CALL("clockwait_timeout", pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts));
    struct timespec rt = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs_rt", &rt);
    CALL("clockwait_realtime", pthread_cond_clockwait(&c, &m, CLOCK_REALTIME, &rt));
    /* An unsupported clock: EINVAL, before any wait. */
    put_line("@cputime=%d", CLOCK_PROCESS_CPUTIME_ID);
    CALL("clockwait_badclock", pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &ts));
    CALL("unlock_t", pthread_mutex_unlock(&m));
    timed = 2;
    wake_waiters(1, 0);
}

static void case_signal(void)
{
    CALL("signal_nowaiter", pthread_cond_signal(&c));
    wake_waiters(1, 0);
}

static void case_broadcast(void)
{
    CALL("broadcast_nowaiter", pthread_cond_broadcast(&c));
    wake_waiters(2, 1);
}

/* Destroy a condvar never used, and one that a wait used (timed out). */
static void case_destroy(void)
{
    pthread_cond_t x = PTHREAD_COND_INITIALIZER, y;
    put_addr("x", &x);
    put_addr("y", &y);
    CALL("destroy_unused", pthread_cond_destroy(&x));
    CALL("init_y", pthread_cond_init(&y, NULL));
    CALL("lock", pthread_mutex_lock(&m));
    struct timespec ts = in_ms(CLOCK_REALTIME, 1);
    put_abstime("abs", &ts);
    CALL("timedwait", pthread_cond_timedwait(&y, &m, &ts));
    CALL("unlock", pthread_mutex_unlock(&m));
    CALL("destroy_used", pthread_cond_destroy(&y));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},
    {"wait", case_wait},
    {"timedwait", case_timedwait},
    {"signal", case_signal},
    {"broadcast", case_broadcast},
    {"destroy", case_destroy},
    {"wait_errors", case_wait_errors},
    {"clockwait", case_clockwait},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("m", &m);
            put_addr("c", &c);
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: cond_calls CASE\n");
    return 2;
}
