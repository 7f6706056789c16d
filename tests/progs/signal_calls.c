/* Signals: signal_calls CASE (see cases[]). Handlers note what they got; main prints it. */
#include <link.h>
#include <semaphore.h>
#include <signal.h>
#include <ucontext.h>

#include "progs.h"

static sem_t s;
static volatile sig_atomic_t got_sig, got_code, got_pid, handled;
static void *volatile got_value;
static int started;
static pid_t t2_tid;

static void on_info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got_sig = sig;
    got_code = si->si_code;
    got_pid = si->si_pid;
    got_value = si->si_value.sival_ptr;
    handled++;
    sem_post(&s); /* a call inside the handler */
}

static void on_plain(int sig)
{
    got_sig = sig;
    handled++;
}

static void put_got(const char *key)
{
    put_line("%s.sig=%d", key, (int)got_sig);
    put_line("%s.code=%d", key, (int)got_code);
    put_line("%s.from_self=%d", key, got_pid == getpid());
    put_line("%s.handled=%d", key, (int)handled);
    got_sig = got_code = got_pid = 0;
}

/* Signals 1..64 as a mask, bit n-1 for signal n, as ptt view prints a sigset field. */
static void put_mask(const char *key, const sigset_t *set)
{
    uint64_t m = 0;
    for (int i = 1; i <= 64 && i < NSIG; i++)
        if (sigismember(set, i) == 1)
            m |= 1ull << (i - 1);
    put_line("%s=0x%" PRIx64, key, m);
}

static void install_info(int sig)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_info;
    a.sa_flags = SA_SIGINFO;
    sigemptyset(&a.sa_mask);
    CHECK(sigaction(sig, &a, NULL));
}

static void case_kill(void)
{
    install_info(SIGUSR1);
    pthread_t self = pthread_self();
    put_pthread("self", self);
    CALL("kill_0", pthread_kill(self, 0));
    CALL("kill_bad", pthread_kill(self, 99));
    /* To this thread, unblocked: the handler runs before pthread_kill returns. */
    CALL("kill_usr1", pthread_kill(self, SIGUSR1));
    put_got("kill_usr1");
}

static void case_sigqueue(void)
{
    install_info(SIGUSR1);
    pthread_t self = pthread_self();
    put_pthread("self", self);
    CALL("sigqueue", pthread_sigqueue(self, SIGUSR1, (union sigval){.sival_ptr = (void *)0x1234}));
    put_got("sigqueue");
    put_value("sigqueue.value", got_value);
    CALL("sigqueue_bad", pthread_sigqueue(self, 99, (union sigval){.sival_int = 1}));
}

static void case_mask(void)
{
    sigset_t set, old, empty;
    sigemptyset(&set);
    sigemptyset(&empty);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGTERM);
    put_mask("@set", &set);
    CALL("block", pthread_sigmask(SIG_BLOCK, &set, &old));
    put_mask("block.old", &old);
    CALL("query", pthread_sigmask(SIG_BLOCK, NULL, &old));
    put_mask("query.old", &old);
    CALL("bad_how", pthread_sigmask(99, &empty, &old));
    CALL("setmask", pthread_sigmask(SIG_SETMASK, &empty, &old));
    put_mask("setmask.old", &old);
    CALL("unblock_null", pthread_sigmask(SIG_UNBLOCK, &set, NULL));
}

static void case_wait(void)
{
    sigset_t set, old;
    pthread_t self = pthread_self();
    put_pthread("self", self);
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    put_mask("@set", &set);
    CHECK(pthread_sigmask(SIG_BLOCK, &set, &old));
    /* Blocked: pending, no handler runs. */
    CALL("kill", pthread_kill(self, SIGUSR1));
    int sig = 0;
    CALL("sigwait", sigwait(&set, &sig));
    put_line("sigwait.sig=%d", sig);
    CALL("sigqueue", pthread_sigqueue(self, SIGUSR2, (union sigval){.sival_int = 0x42}));
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CALL("sigwaitinfo", sigwaitinfo(&set, &si));
    put_line("sigwaitinfo.code=%d", si.si_code);
    put_line("sigwaitinfo.value=%d", si.si_value.sival_int);
    put_line("sigwaitinfo.from_self=%d", si.si_pid == getpid());
    struct timespec ten = {0, 10000000}, far = {30, 0}, bad = {0, 2000000000};
    CALL("sigtimedwait_timeout", sigtimedwait(&set, &si, &ten));
    CALL("kill_2", pthread_kill(self, SIGUSR1));
    CALL("sigtimedwait", sigtimedwait(&set, NULL, &far));
    CALL("sigtimedwait_bad", sigtimedwait(&set, &si, &bad));
    CALL("kill_3", pthread_kill(self, SIGUSR2));
    CALL("sigwaitinfo_null", sigwaitinfo(&set, NULL));
    CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL));
}

/* Handlers installed with sigaction and with signal(): both run (SIGNAL_DELIVERED/HANDLED),
 * whoever sends the signal, and both routines report the program's own handlers. */
static void case_handlers(void)
{
    struct sigaction a, old;
    memset(&a, 0, sizeof a);
    a.sa_handler = on_plain;
    sigemptyset(&a.sa_mask);
    CALL("sigaction", sigaction(SIGUSR1, &a, &old));
    put_line("sigaction.old_dfl=%d", old.sa_handler == SIG_DFL);
    memset(&old, 0, sizeof old);
    CALL("sigaction_query", sigaction(SIGUSR1, NULL, &old));
    put_line("sigaction_query.mine=%d", old.sa_handler == on_plain);
    put_line("sigaction_query.siginfo=%d", !!(old.sa_flags & SA_SIGINFO));
    put_line("signal_first.dfl=%d", signal(SIGUSR2, on_plain) == SIG_DFL);
    put_line("signal_again.mine=%d", signal(SIGUSR2, on_plain) == on_plain);
    memset(&old, 0, sizeof old);
    CALL("sigaction_usr2", sigaction(SIGUSR2, NULL, &old));
    put_line("sigaction_usr2.mine=%d", old.sa_handler == on_plain);
    put_line("sigaction_usr2.restart=%d", !!(old.sa_flags & SA_RESTART));
    /* raise (tgkill) and kill: no traced call around the handler. */
    CALL("raise", raise(SIGUSR1));
    put_got("raise");
    CALL("kill", kill(getpid(), SIGUSR2));
    put_got("kill");
    /* Ignored: never wrapped, nothing runs. */
    a.sa_handler = SIG_IGN;
    CALL("ignore", sigaction(SIGUSR1, &a, &old));
    put_line("ignore.old_mine=%d", old.sa_handler == on_plain);
    CALL("raise_ignored", raise(SIGUSR1));
    put_got("raise_ignored");
    memset(&old, 0, sizeof old);
    CALL("sigaction_ign", sigaction(SIGUSR1, NULL, &old));
    put_line("sigaction_ign.ign=%d", old.sa_handler == SIG_IGN);
    CALL("sigaction_bad", sigaction(SIGKILL, &a, NULL));
    CALL("sigaction_bad_2", sigaction(0, NULL, &old));
}

/* The flags sigaction reports for the program's handlers: those the kernel has. */
static void case_flags(void)
{
    struct sigaction a, old;
    memset(&a, 0, sizeof a);
    a.sa_handler = on_plain;
    a.sa_flags = SA_RESTART | SA_NODEFER;
    sigemptyset(&a.sa_mask);
    sigaddset(&a.sa_mask, SIGUSR2);
    CHECK(sigaction(SIGUSR1, &a, NULL));
    CALL("sigaction_query", sigaction(SIGUSR1, NULL, &old));
    put_line("flags=0x%x", (unsigned)old.sa_flags);
    put_line("mask_usr2=%d", sigismember(&old.sa_mask, SIGUSR2));
    signal(SIGUSR2, on_plain);
    CALL("sigaction_usr2", sigaction(SIGUSR2, NULL, &old));
    put_line("signal.flags=0x%x", (unsigned)old.sa_flags);
}

static void *waiter(void *arg)
{
    put_tid("t2");
    t2_tid = gettid();
    set_flag(&started);
    CALL("t2_wait", sem_wait(&s));
    return arg;
}

/* A handler (installed with signal(): SA_RESTART) interrupts another thread's sem_wait: its
 * events come inside that call; the wait goes on, and takes what the handler posted. */
static void case_thread(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_info;
    a.sa_flags = SA_SIGINFO | SA_RESTART;
    CHECK(sigaction(SIGUSR1, &a, NULL));
    pthread_t th;
    put_fn("fn", waiter);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, waiter, NULL));
    put_pthread("th", th);
    wait_flag(&started);
    wait_blocked(t2_tid, &s, sizeof s);
    CALL("kill", pthread_kill(th, SIGUSR1));
    CALL("join", pthread_join(th, NULL));
    put_got("t2");
}

static int stop;
static volatile sig_atomic_t posts, armed, inside;
static uintptr_t ptt_lo, ptt_hi;

/* Where libptt's code is (nowhere untraced). */
static int find_libptt(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (!strstr(info->dlpi_name, "libptt"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            ptt_lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            ptt_hi = ptt_lo + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

/* A handler that makes many calls (more than a small sub-buffer holds); it counts the times it
 * interrupted libptt (most likely recording an event). */
static void on_burst(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    armed = 0;
    if (pc >= ptt_lo && pc < ptt_hi)
        inside++;
    for (int i = 0; i < 100; i++)
        if (sem_post(&s) == 0)
            posts++;
    handled++;
}

/* Once armed, records events (locks and unlocks) until a signal comes, 2000 pairs at most. */
static long iters;

static void *looper(void *arg)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    put_tid("t2");
    set_flag(&started);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
        for (int n = 0; armed; n++) {
            if (n == 2000) {
                armed = 0;
                break;
            }
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
            __atomic_add_fetch(&iters, 1, __ATOMIC_RELEASE);
        }
    return arg;
}

/* Signals to a thread busy recording events, until 3 of them interrupted libptt (at most 30:
 * untraced, none does): the handler's events are then recorded inside an event of the thread. */
static void case_burst(void)
{
    pthread_t th;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_burst;
    a.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGUSR1, &a, NULL));
    dl_iterate_phdr(find_libptt, NULL);
    put_fn("fn", looper);
    put_addr("th_ptr", &th);
    CALL("create", pthread_create(&th, NULL, looper, NULL));
    put_pthread("th", th);
    wait_flag(&started);
    for (int i = 0; i < 30 && inside < 3; i++) {
        long before = __atomic_load_n(&iters, __ATOMIC_ACQUIRE);
        armed = 1;
        while (__atomic_load_n(&iters, __ATOMIC_ACQUIRE) == before)
            ; /* until t2 records */
        CHECK(pthread_kill(th, SIGUSR1));
        while (handled <= i)
            nap();
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    CALL("join", pthread_join(th, NULL));
    put_line("@handled=%d", (int)handled);
    put_line("@inside=%d", (int)inside);
    put_line("posts_per_handler=%d", (int)(posts / handled));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"kill", case_kill},     {"sigqueue", case_sigqueue}, {"mask", case_mask},
    {"wait", case_wait},     {"handlers", case_handlers}, {"flags", case_flags},
    {"thread", case_thread}, {"burst", case_burst},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("s", &s);
            put_line("@usr1=%d", SIGUSR1);
            put_line("@usr2=%d", SIGUSR2);
            CHECK(sem_init(&s, 0, 0));
            cases[i].fn();
            return 0;
        }
    fprintf(stderr, "usage: signal_calls CASE\n");
    return 2;
}
