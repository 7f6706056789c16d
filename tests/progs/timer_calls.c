/* POSIX timers: timer_calls CASE (see cases[]). */
#include <semaphore.h>
#include <signal.h>

#include "progs.h"

static sem_t s;
static volatile sig_atomic_t got_code = 99, fired;
static int notified;
static pid_t notify_tid;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    got_code = si->si_code;
    fired = 1;
}

static struct itimerspec in_ns(long value, long interval)
{
    struct itimerspec v = {{interval / 1000000000, interval % 1000000000},
                           {value / 1000000000, value % 1000000000}};
    return v;
}

static void case_signal(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_timer;
    a.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGUSR1, &a, NULL));
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_ptr = (void *)0x55;
    timer_t id, dfl, bad;
    put_line("@usr1=%d", SIGUSR1);
    put_line("@alrm=%d", SIGALRM);
    CALL("create", timer_create(CLOCK_MONOTONIC, &ev, &id));
    put_addr("timer", id);
    /* Far away, periodic: changed again before it expires. */
    struct itimerspec far = in_ns(60000000000, 30000000000);
    CALL("settime_far", timer_settime(id, 0, &far, NULL));
    struct itimerspec soon = in_ns(10000000, 0);
    CALL("settime", timer_settime(id, 0, &soon, NULL));
    while (!fired)
        nap();
    put_line("code=%d", (int)got_code);
    struct itimerspec out_of_range = {{0, 0}, {0, 2000000000}};
    CALL("settime_bad", timer_settime(id, 0, &out_of_range, NULL));
    struct itimerspec abs;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &abs.it_value) ? errno : 0);
    abs.it_value.tv_sec += 60;
    abs.it_interval = (struct timespec){0, 0};
    put_abstime("abs", &abs.it_value);
    CALL("settime_abs", timer_settime(id, TIMER_ABSTIME, &abs, NULL));
    CALL("delete", timer_delete(id));
    CALL("delete_again", timer_delete(id));
    CALL("settime_deleted", timer_settime(id, 0, &soon, NULL));
    /* No sigevent: SIGEV_SIGNAL with SIGALRM. */
    CALL("create_default", timer_create(CLOCK_REALTIME, NULL, &dfl));
    put_addr("timer_default", dfl);
    CALL("delete_default", timer_delete(dfl));
    put_line("@bad_clock=%d", 12345);
    CALL("create_bad", timer_create(12345, &ev, &bad));
}

static void notify(union sigval v)
{
    put_tid("notify");
    notify_tid = gettid();
    put_value("notify.value", v.sival_ptr);
    CALL("notify_post", sem_post(&s));
    set_flag(&notified);
}

/* A SIGEV_THREAD timer: glibc runs the function in a thread of its own. */
static void case_thread(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = notify;
    ev.sigev_value.sival_ptr = (void *)0x77;
    timer_t id;
    put_line("@notify=0x%" PRIxPTR, (uintptr_t)notify);
    CALL("create", timer_create(CLOCK_MONOTONIC, &ev, &id));
    put_addr("timer", id);
    struct itimerspec soon = in_ns(10000000, 0);
    CALL("settime", timer_settime(id, 0, &soon, NULL));
    wait_flag(&notified);
    CALL("wait", sem_wait(&s));
    wait_thread_gone(notify_tid);
    CALL("delete", timer_delete(id));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"signal", case_signal},
    {"thread", case_thread},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("s", &s);
            CHECK(sem_init(&s, 0, 0));
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: timer_calls CASE\n");
    return 2;
}
