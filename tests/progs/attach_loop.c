/* The program ptt trace -p attaches to (tests/e2e/test_attach.py). Two workers lock and unlock
 * one mutex, counting their calls, only while told to: commands on stdin, one a line,
 *   go     the workers run
 *   pause  they stop; prints "locks=N", the lock calls made since the last go
 *   handler   installs a SIGUSR1 handler with sigaction, raises it: "handled=N"
 *   query     whether sigaction reports that handler as installed: "handler_ours=1"
 *   exec   prints "exec=1" and executes sleep 2 (ptt trace -p must then find nothing to detach)
 *   slowload  a thread loads libslowinit.so (next to this program), whose constructor prints
 *          "ctor=1" and holds the dynamic linker's lock a while; "slowloaded=1" once loaded
 *   seccomp   a seccomp filter on every thread that refuses (EPERM) the system calls numbered
 *          1024 and above, -1 among them, as container runtimes' do: "seccomp=1" once installed
 *   vecread   reads one byte of stdin with a bare read system call, a pattern in ymm0 around it:
 *          "vecread=1" if ymm0 still holds it after (all 256 bits), 0 if not, -1 without AVX
 *   quit   prints "total=N" and "ok=1" if the mutex-protected counter agrees, and ends.
 * Idle workers poll a flag with nanosleep: no POSIX threads call outside the lock loop, so the
 * calls made while attached are exactly those between a go and a pause. */
#include <dlfcn.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdatomic.h>

#include "progs.h"

#define WORKERS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int go, quit, pause_gen, ack[WORKERS];
static atomic_long phase_locks;
static long counter;

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void snooze(void)
{
    struct timespec d = {0, 200000};
    nanosleep(&d, NULL);
}

static void *worker(void *arg)
{
    atomic_int *my_ack = arg;
    long mine = 0;
    while (!atomic_load(&quit)) {
        if (!atomic_load(&go)) { /* paused: hand the count over once per pause */
            int g = atomic_load(&pause_gen);
            if (atomic_load(my_ack) != g) {
                atomic_fetch_add(&phase_locks, mine);
                mine = 0;
                atomic_store(my_ack, g);
            }
            snooze();
            continue;
        }
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        mine++;
    }
    return NULL;
}

static void *slow_load(void *arg)
{
    (void)arg;
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    if (n <= 0)
        return NULL;
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, "libslowinit.so");
    put_line("slowloaded=%d", dlopen(path, RTLD_NOW) != NULL);
    return NULL;
}

/* The seccomp command: 1 once the filter is on every thread. */
static int filter_calls(void)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 1024, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof *code, code};
    return !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) &&
           !syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

/* The vecread command: what a thread stopped in a system call had in its vector registers is
 * there when the call returns, whatever ptt trace -p made it run meanwhile. */
static int vec_read(void)
{
    static const uint64_t pat[4] = {0x0123456789abcdefull, 0xfedcba9876543210ull,
                                    0x1111222233334444ull, 0x5555666677778888ull};
    uint64_t back[4] = {0};
    char c;
    long r;
    if (!__builtin_cpu_supports("avx"))
        return -1;
    __asm__ volatile("vmovdqu %[pat], %%ymm0\n\t"
                     "syscall\n\t"
                     "vmovdqu %%ymm0, %[back]\n\t"
                     "vzeroupper"
                     : "=a"(r), [back] "=m"(back)
                     : "a"(0L), "D"(0L), "S"(&c), "d"(1L), [pat] "m"(pat)
                     : "rcx", "r11", "memory", "xmm0");
    return r == 1 && !memcmp(back, pat, sizeof pat);
}

int main(void)
{
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, &ack[i]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    put_line("@pid=%d", (int)getpid());
    put_line("ready=1");
    long total = 0;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (!strcmp(line, "go\n")) {
            atomic_store(&go, 1);
            put_line("going=1");
        } else if (!strcmp(line, "pause\n")) {
            atomic_store(&go, 0);
            int g = atomic_fetch_add(&pause_gen, 1) + 1;
            for (int i = 0; i < WORKERS; i++)
                while (atomic_load(&ack[i]) != g)
                    snooze();
            long n = atomic_exchange(&phase_locks, 0);
            total += n;
            put_line("locks=%ld", n);
        } else if (!strcmp(line, "handler\n")) {
            struct sigaction sa = {.sa_handler = on_usr1};
            sigemptyset(&sa.sa_mask);
            sigaction(SIGUSR1, &sa, NULL);
            raise(SIGUSR1);
            put_line("handled=%d", (int)handled);
        } else if (!strcmp(line, "query\n")) {
            struct sigaction old;
            sigaction(SIGUSR1, NULL, &old);
            raise(SIGUSR1);
            put_line("handler_ours=%d", old.sa_handler == on_usr1 && handled == 2);
        } else if (!strcmp(line, "exec\n")) {
            put_line("exec=1");
            execlp("sleep", "sleep", "2", (char *)NULL);
            put_line("exec_failed=%d", errno);
        } else if (!strcmp(line, "slowload\n")) {
            pthread_t l;
            pthread_create(&l, NULL, slow_load, NULL);
            pthread_detach(l);
        } else if (!strcmp(line, "seccomp\n")) {
            put_line("seccomp=%d", filter_calls());
        } else if (!strcmp(line, "vecread\n")) {
            put_line("vecread=%d", vec_read());
        } else if (!strcmp(line, "quit\n")) {
            break;
        }
    }
    atomic_store(&quit, 1);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    put_line("total=%ld", total);
    put_line("ok=%d", counter == total);
    return 0;
}
