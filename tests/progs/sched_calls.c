/* Thread identity and scheduling: sched_calls CASE (see cases[]). */
#include <dlfcn.h>
#include <sched.h>
#include <sys/prctl.h>

#include "progs.h"

static int started, go;
static pid_t t2_tid;

static void *idle(void *arg)
{
    put_tid((const char *)arg);
    t2_tid = gettid();
    set_flag(&started);
    wait_flag(&go);
    return NULL;
}

static void case_setname(void)
{
    pthread_t th;
    char name[32];
    put_fn("fn", idle);
    put_addr("th_ptr", &th);
    put_addr("arg", "t2");
    CALL("create", pthread_create(&th, NULL, idle, "t2"));
    put_pthread("th", th);
    put_pthread("self", pthread_self());
    CALL("setname_self", pthread_setname_np(pthread_self(), "ptt-main"));
    CALL("setname_t2", pthread_setname_np(th, "ptt \"t2\""));
    /* 16 bytes with the NUL at most: ERANGE. */
    CALL("setname_long", pthread_setname_np(th, "a-name-longer-than-15"));
    CHECK(pthread_getname_np(th, name, sizeof name));
    put_line("t2_name=%s", name);
    set_flag(&go);
    CALL("join", pthread_join(th, NULL));
}

/* prctl(PR_SET_NAME): an address that is no string fails (EFAULT) as untraced; a name names
 * the thread, one over 15 bytes cut there. */
static void case_prctl(void)
{
    char name[16];
    CALL("prctl_bad", prctl(PR_SET_NAME, 16ul, 0ul, 0ul, 0ul));
    CALL("prctl_name", prctl(PR_SET_NAME, (unsigned long)"ptt-prctl", 0ul, 0ul, 0ul));
    CALL("prctl_long", prctl(PR_SET_NAME, (unsigned long)"a-name-longer-than-15", 0ul, 0ul, 0ul));
    CHECK(prctl(PR_GET_NAME, (unsigned long)name, 0ul, 0ul, 0ul));
    put_line("name=%s", name);
}

static void case_sched(void)
{
    pthread_t self = pthread_self();
    struct sched_param p = {0};
    put_pthread("self", self);
    put_line("@fifo=%d", SCHED_FIFO);
    CALL("other_0", pthread_setschedparam(self, SCHED_OTHER, &p));
    p.sched_priority = 5;
    CALL("other_5", pthread_setschedparam(self, SCHED_OTHER, &p));
    /* A real-time policy: allowed or not (EPERM) depending on privileges, as untraced. */
    p.sched_priority = 1;
    CALL("fifo_1", pthread_setschedparam(self, SCHED_FIFO, &p));
    p.sched_priority = 0;
    CALL("back", pthread_setschedparam(self, SCHED_OTHER, &p));
    CALL("prio_0", pthread_setschedprio(self, 0));
    CALL("prio_5", pthread_setschedprio(self, 5));
}

static uint64_t mask_of(const cpu_set_t *set)
{
    uint64_t m = 0;
    for (int c = 0; c < 64; c++)
        if (CPU_ISSET(c, set))
            m |= 1ull << c;
    return m;
}

static void case_affinity(void)
{
    pthread_t self = pthread_self();
    cpu_set_t orig, one, none;
    put_pthread("self", self);
    CHECK(sched_getaffinity(0, sizeof orig, &orig) ? errno : 0);
    int first = 0;
    while (!CPU_ISSET(first, &orig))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CPU_ZERO(&none);
    put_line("@orig_mask=0x%" PRIx64, mask_of(&orig));
    put_line("@one_mask=0x%" PRIx64, mask_of(&one));
    CALL("set_one", pthread_setaffinity_np(self, sizeof one, &one));
    CALL("set_none", pthread_setaffinity_np(self, sizeof none, &none));
    CALL("set_orig", pthread_setaffinity_np(self, sizeof orig, &orig));
}

static void case_yield(void)
{
    CALL("sched_yield", sched_yield());
}

/* pthread_yield as binaries built before glibc 2.34 call it: glibc keeps it as a compat symbol
 * (pthread_yield@GLIBC_2.2.5), which its header now redirects to sched_yield. */
int compat_pthread_yield(void);
__asm__(".symver compat_pthread_yield, pthread_yield@GLIBC_2.2.5");

static void case_pthread_yield(void)
{
    CALL("pthread_yield", compat_pthread_yield());
}

/* Through dlsym: glibc 2.34 and later define no default pthread_yield, dlsym finds none. */
static void case_pthread_yield_dlsym(void)
{
    int (*y)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "pthread_yield");
    put_line("found=%d", y != NULL);
    if (y)
        CALL("pthread_yield", y());
}

/* What THREAD_CREATE_IN records of an attribute: stack size, detached, policy, priority,
 * inherited scheduling. */
static void case_attr(void)
{
    pthread_attr_t a, b;
    pthread_t t1, t2;
    struct sched_param p = {.sched_priority = 5};
    size_t stack = 0;
    CHECK(pthread_attr_init(&a));
    CHECK(pthread_attr_setstacksize(&a, 256 * 1024));
    CHECK(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED));
    CHECK(pthread_attr_setschedpolicy(&a, SCHED_FIFO));
    CHECK(pthread_attr_setschedparam(&a, &p));
    /* Inherited: the policy above is ignored, the thread runs as its creator. */
    CHECK(pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED));
    CHECK(pthread_attr_init(&b));
    CHECK(pthread_attr_setschedpolicy(&b, SCHED_OTHER));
    CHECK(pthread_attr_setinheritsched(&b, PTHREAD_EXPLICIT_SCHED));
    CHECK(pthread_attr_getstacksize(&b, &stack));
    put_line("@b_stack=%zu", stack);
    put_line("@fifo=%d", SCHED_FIFO);
    put_fn("fn", idle);
    put_addr("a", &a);
    put_addr("b", &b);
    put_addr("t1_ptr", &t1);
    put_addr("t2_ptr", &t2);
    put_addr("t1_arg", "t1");
    put_addr("t2_arg", "t2");
    CALL("create_a", pthread_create(&t1, &a, idle, "t1"));
    put_pthread("t1", t1);
    wait_flag(&started);
    pid_t t1_tid = t2_tid;
    set_flag(&go);
    wait_thread_gone(t1_tid); /* detached: its end is recorded before main goes on */
    CALL("create_b", pthread_create(&t2, &b, idle, "t2"));
    put_pthread("t2", t2);
    CALL("join", pthread_join(t2, NULL));
}

/* A thread started past the pthread_create interposer (as jemalloc's background threads are:
 * libc's own, found with dlsym) names itself, then locks and unlocks a mutex. */
static void *hidden(void *arg)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    put_tid("hidden");
    CALL("setname_hidden", pthread_setname_np(pthread_self(), "ptt-hidden"));
    CHECK(pthread_mutex_lock(&m));
    CHECK(pthread_mutex_unlock(&m));
    return arg;
}

static void case_setname_hidden(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        libc ? (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
                   libc, "pthread_create")
             : NULL;
    if (!create)
        exit(99);
    pthread_t th;
    CALL("create_hidden", create(&th, NULL, hidden, NULL));
    CALL("join_hidden", pthread_join(th, NULL));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"setname", case_setname},
    {"setname_hidden", case_setname_hidden},
    {"prctl", case_prctl},
    {"sched", case_sched},
    {"affinity", case_affinity},
    {"yield", case_yield},
    {"pthread_yield", case_pthread_yield},
    {"pthread_yield_dlsym", case_pthread_yield_dlsym},
    {"attr", case_attr},
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
    fprintf(stderr, "usage: sched_calls CASE\n");
    return 2;
}
