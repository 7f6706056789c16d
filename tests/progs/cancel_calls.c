/* Cancellation: cancel_calls CASE (see cases[]). The cleanup handlers of a cancelled thread
 * write what they did into a log, which main prints once it has joined the thread. */
#include <semaphore.h>

#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t s;
static int started, cancelled;
static pid_t t2_tid;
static char log_[256];
static long loops;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    size_t n = strlen(log_);
    va_start(ap, fmt);
    vsnprintf(log_ + n, sizeof log_ - n, fmt, ap);
    va_end(ap);
}

static void case_settings(void)
{
    int old = 7;
    CALL("disable", pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old));
    put_line("disable.old=%d", old);
    CALL("enable", pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old));
    put_line("enable.old=%d", old);
    old = 7;
    CALL("state_bad", pthread_setcancelstate(5, &old));
    put_line("state_bad.old=%d", old);
    CALL("enable_null", pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL));
    CALL("async", pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old));
    put_line("async.old=%d", old);
    CALL("deferred_null", pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL));
    old = 7;
    CALL("type_bad", pthread_setcanceltype(9, &old));
    put_line("type_bad.old=%d", old);
    pthread_testcancel(); /* nothing pending: returns */
    put_line("testcancel=returned");
}

static void outer_handler(void *arg)
{
    note("outer(%s);", (const char *)arg);
}

static int enable_r, enable_errno, enable_old;

/* Cancellation off until main has cancelled it, then a cancellation point. Between the two, no
 * output (a write is a cancellation point too): main prints what pthread_setcancelstate gave. */
static void *late(void *arg)
{
    int old = 7;
    put_tid("t2");
    pthread_cleanup_push(outer_handler, arg);
    CALL("t2_disable", pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old));
    put_line("t2_disable.old=%d", old);
    fflush(stdout);
    set_flag(&started);
    wait_flag(&cancelled);
    errno = ERRNO_SENTINEL;
    enable_r = pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &enable_old);
    enable_errno = errno;
    pthread_testcancel();
    note("not cancelled;");
    pthread_cleanup_pop(0);
    return NULL;
}

static void inner_handler(void *arg)
{
    const char *where = arg;
    if (strstr(where, "cond")) {
        /* Cancelled in a condvar wait: the thread holds the mutex again. */
        note("inner(%s): unlock %d;", where, pthread_mutex_unlock(&m));
    } else {
        int v = -1;
        sem_getvalue(&s, &v);
        note("inner(%s): value %d;", where, v);
    }
}

/* Blocks in the wait ARG names, with two cleanup handlers pushed. */
static void *waiter(void *arg)
{
    const char *where = arg;
    put_tid("t2");
    t2_tid = gettid();
    int cond = strstr(where, "cond") != NULL;
    pthread_cleanup_push(outer_handler, arg);
    if (cond)
        CALL("t2_lock", pthread_mutex_lock(&m));
    pthread_cleanup_push(inner_handler, arg);
    struct timespec far = in_ms(CLOCK_REALTIME, 60000);
    put_abstime("t2_abs", &far);
    fflush(stdout);
    set_flag(&started);
    if (!strcmp(where, "cond_wait"))
        pthread_cond_wait(&c, &m);
    else if (!strcmp(where, "cond_timedwait"))
        pthread_cond_timedwait(&c, &m, &far);
    else if (!strcmp(where, "sem_wait"))
        sem_wait(&s);
    else
        sem_timedwait(&s, &far);
    note("not cancelled;");
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static void post_handler(void *arg)
{
    note("post(%s): %d;", (const char *)arg, sem_post(&s));
}

/* Cancellable at any instruction, lock and unlock m in a loop. */
static void spin(void)
{
    int old = 7;
    CALL("t2_async", pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old));
    put_line("t2_async.old=%d", old);
    fflush(stdout);
    /* Nothing below takes a lock a cancellation could leave held, but m's. */
    for (;;) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        __atomic_add_fetch(&loops, 1, __ATOMIC_RELEASE);
    }
}

static void *spinner(void *arg)
{
    put_tid("t2");
    spin();
    return arg;
}

/* The same, with a cleanup handler that posts s. */
static void *spinner_cleanup(void *arg)
{
    put_tid("t2");
    pthread_cleanup_push(post_handler, arg);
    spin();
    pthread_cleanup_pop(0);
    return arg;
}

static const char *which;

static void cancel_thread(void *(*fn)(void *), const char *arg)
{
    pthread_t th;
    void *v = NULL;
    put_fn("fn", fn);
    put_addr("th_ptr", &th);
    put_addr("arg", arg);
    CALL("create", pthread_create(&th, NULL, fn, (void *)arg));
    put_pthread("th", th);
    if (fn == spinner || fn == spinner_cleanup) {
        while (__atomic_load_n(&loops, __ATOMIC_ACQUIRE) < 2000)
            nap();
    } else {
        wait_flag(&started);
        if (fn == waiter)
            wait_blocked(t2_tid, strstr(arg, "cond") ? (void *)&c : (void *)&s,
                         strstr(arg, "cond") ? sizeof c : sizeof s);
    }
    CALL("cancel", pthread_cancel(th));
    set_flag(&cancelled);
    CALL("join", pthread_join(th, &v));
    put_value("join.value", v);
    put_line("cleanup=%s", log_);
    if (fn == late) {
        put_result("t2_enable", enable_r, enable_errno);
        put_line("t2_enable.old=%d", enable_old);
    }
    if (fn == spinner || fn == spinner_cleanup) {
        put_line("@loops=%ld", loops);
    } else {
        /* The cleanup handlers left the mutex free. */
        CALL("trylock", pthread_mutex_trylock(&m));
        CALL("unlock", pthread_mutex_unlock(&m));
    }
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"settings", case_settings},
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cancel_calls CASE\n");
        return 2;
    }
    which = argv[1];
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    put_addr("m", &m);
    put_addr("c", &c);
    put_addr("s", &s);
    CHECK(sem_init(&s, 0, 0));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(which, cases[i].name)) {
            cases[i].fn();
            return 0;
        }
    if (!strcmp(which, "testcancel"))
        cancel_thread(late, "testcancel");
    else if (!strcmp(which, "async"))
        cancel_thread(spinner, which);
    else if (!strcmp(which, "async_cleanup"))
        cancel_thread(spinner_cleanup, which);
    else if (!strcmp(which, "cond_wait") || !strcmp(which, "cond_timedwait") ||
             !strcmp(which, "sem_wait") || !strcmp(which, "sem_timedwait"))
        cancel_thread(waiter, which);
    else
        return 2;
    return 0;
}
