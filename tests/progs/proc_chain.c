/* The processes of one session: proc_chain OTHER [GOFILE]
 *   Main does, in this order (each child records a known number of events, then ends with its
 *   own exit status, which main prints as a result):
 *     fork, then FORK_ITERS lock/unlock in the child, then exec of this program ("leaf");
 *     fork, then exec of OTHER (proc_other);
 *     vfork, then exec of the leaf;
 *     posix_spawn of the leaf;
 *     system("exec LEAF") and popen("exec LEAF"): the shell's process becomes the leaf;
 *     system("exec LEAF") again, a leaf killed by SIGSEGV (glibc reaps it: no interposer sees
 *     how it ended);
 *     a daemon: a child that forks a grandchild and _exits; the grandchild (setsid, stdio on
 *     /dev/null) waits until main has ended and ptt trace has reaped it, [then until GOFILE
 *     exists,] records DAEMON_ITERS lock/unlock [, creates GOFILE.done] and exits with
 *     DAEMON_CODE.
 *   Then main exits with MAIN_CODE.
 * proc_chain leaf NAME CODE: LEAF_ITERS lock/unlock, print "@pid_NAME=PID", exit with CODE, or
 * raise signal -CODE when CODE is negative. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "progs.h"

#define FORK_ITERS 3
#define LEAF_ITERS 5
#define DAEMON_ITERS 7
#define DAEMON_CODE 17
#define MAIN_CODE 3

extern char **environ;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char self[PATH_MAX];

static void lock_unlock(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
}

/* A child's exit code, or -signal. */
static int code_of(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? -WTERMSIG(st) : -1000;
}

static int reap(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) {
        perror("waitpid");
        exit(99);
    }
    return code_of(st);
}

static pid_t fork_or_die(void)
{
    fflush(NULL); /* a child must not print main's buffered lines again */
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        exit(99);
    }
    return p;
}

static void sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

static void daemon_child(pid_t main_pid, const char *gofile)
{
    int started[2];
    if (setsid() < 0 || pipe(started))
        _exit(98);
    pid_t p = fork_or_die();
    if (p > 0) {
        /* Once the grandchild has recorded its start (parent: us), it is left to ptt trace, the
         * subreaper. */
        char c;
        _exit(read(started[0], &c, 1) == 1 ? 0 : 95);
    }
    put_line("@pid_daemon=%d", (int)getpid());
    fflush(stdout);
    if (write(started[1], "", 1) != 1)
        _exit(94);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    /* main is reaped when kill() no longer finds it (a zombie is still found). */
    for (int i = 0; kill(main_pid, 0) == 0; i++) {
        if (i > 60000)
            _exit(97); /* 60 s: the test has failed anyway */
        sleep_ms(1);
    }
    for (int i = 0; gofile && access(gofile, F_OK); i++) {
        if (i > 60000)
            _exit(96);
        sleep_ms(1);
    }
    lock_unlock(DAEMON_ITERS);
    if (gofile) {
        char done[PATH_MAX];
        snprintf(done, sizeof done, "%s.done", gofile);
        close(open(done, O_CREAT | O_WRONLY, 0600));
    }
    exit(DAEMON_CODE);
}

static int leaf(const char *name, int code)
{
    lock_unlock(LEAF_ITERS);
    put_line("@pid_%s=%d", name, (int)getpid());
    put_line("@ppid_%s=%d", name, (int)getppid());
    if (code < 0) {
        fflush(stdout);
        prctl(PR_SET_DUMPABLE, 0); /* no core file */
        raise(-code);
    }
    return code;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "leaf"))
        return leaf(argv[2], atoi(argv[3]));
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: proc_chain OTHER [GOFILE] | proc_chain leaf NAME CODE\n");
        return 2;
    }
    const char *other = argv[1], *gofile = argc == 3 ? argv[2] : NULL;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 99;
    self[n] = 0;
    put_line("@pid=%d", (int)getpid());

    pid_t p = fork_or_die();
    if (p == 0) {
        lock_unlock(FORK_ITERS);
        execl(self, self, "leaf", "fork_exec", "11", (char *)NULL);
        _exit(127);
    }
    put_line("@pid_fork=%d", (int)p);
    put_line("fork_exec=%d", reap(p));

    p = fork_or_die();
    if (p == 0) {
        execl(other, other, "12", (char *)NULL);
        _exit(127);
    }
    put_line("@pid_fork_other=%d", (int)p);
    put_line("fork_other=%d", reap(p));

    fflush(NULL);
    p = vfork();
    if (p == 0) {
        execl(self, self, "leaf", "vfork", "13", (char *)NULL);
        _exit(127);
    }
    put_line("@pid_vfork_parent=%d", (int)p);
    put_line("vfork=%d", reap(p));

    fflush(NULL);
    char *spawn_argv[] = {self, "leaf", "spawn", "14", NULL};
    CHECK(posix_spawn(&p, self, NULL, NULL, spawn_argv, environ));
    put_line("@pid_spawn_parent=%d", (int)p);
    put_line("spawn=%d", reap(p));

    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "exec '%s' leaf system 15", self);
    fflush(NULL);
    put_line("system=%d", code_of(system(cmd)));

    snprintf(cmd, sizeof cmd, "exec '%s' leaf popen 16", self);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 99;
    char line[256];
    while (fgets(line, sizeof line, f))
        fputs(line, stdout); /* the leaf's pid lines */
    put_line("popen=%d", code_of(pclose(f)));

    snprintf(cmd, sizeof cmd, "exec '%s' leaf system_kill -%d", self, SIGSEGV);
    fflush(NULL);
    put_line("system_kill=%d", code_of(system(cmd)));

    p = fork_or_die();
    if (p == 0)
        daemon_child(getppid(), gofile);
    put_line("@pid_daemon_parent=%d", (int)p);
    put_line("daemon_parent=%d", reap(p));
    return MAIN_CODE;
}
