/* The witness of ptt trace's process group (witness.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session/witness.h"
#include "util/util.h"

/* The signals ptt trace passes on (session.c). */
static void passed_on(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGQUIT);
}

/* The witness itself: its socket on 3, nothing else open (a pipe of a test's it held would not
 * see its end); the signals blocked, at their default actions; each byte, a signal's number,
 * asks it to take that signal, pending, and is answered once it has. Its command line is not
 * ptt trace's: a signal sent by name to ptt trace alone (pkill -f) would reach it too, and seem
 * sent to the whole group. */
static void witness_run(int fd)
{
    ptt_retitle("sigwitness");
    sigset_t set, all;
    passed_on(&set);
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < 32; sig++)
        if (sigismember(&set, sig))
            sigaction(sig, &dfl, NULL);
    if (fd != 3 && (dup2(fd, 3) < 0 || close(fd)))
        _exit(1);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int i = 0; i < 3; i++)
        if (null < 0 || dup2(null, i) < 0)
            close(i);
    if (syscall(SYS_close_range, 4u, ~0u, 0u))
        for (int i = 4; i < 1024; i++)
            close(i);
    /* Only the passed-on signals blocked: the others act as they would on any process. */
    sigprocmask(SIG_SETMASK, &set, NULL);
    pid_t me = getpid();
    if (send(3, &me, sizeof me, MSG_NOSIGNAL) != sizeof me)
        _exit(1);
    for (;;) {
        char c;
        ssize_t n = recv(3, &c, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0); /* ptt trace has ended */
        sigset_t one;
        sigemptyset(&one);
        if (c > 0 && c < 32 && sigismember(&set, c))
            sigaddset(&one, c);
        struct timespec zero = {0, 0};
        while (sigtimedwait(&one, NULL, &zero) > 0)
            ;
        if (send(3, &c, 1, MSG_NOSIGNAL) != 1)
            _exit(0);
    }
}

/* Whether the witness has ended (its pid may be another process's then). */
static int gone(const struct ptt_witness *w)
{
    struct pollfd p = {w->pidfd, POLLIN, 0};
    return poll(&p, 1, 0) != 0;
}

void ptt_witness_start(struct ptt_witness *w)
{
    *w = (struct ptt_witness){0, -1, -1};
    int p[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p))
        return;
    pid_t c = fork();
    if (c == 0) { /* in our process group, and a child of no one we wait for */
        close(p[0]);
        pid_t g = fork();
        if (g != 0)
            _exit(g < 0);
        witness_run(p[1]);
    }
    close(p[1]);
    int st = 1;
    while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    pid_t pid = 0;
    struct pollfd pf = {p[0], POLLIN, 0};
    if (c < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || poll(&pf, 1, 10000) != 1 ||
        recv(p[0], &pid, sizeof pid, 0) != sizeof pid || pid <= 0) {
        close(p[0]);
        return;
    }
    w->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    w->pid = pid;
    w->sock = p[0];
    /* Alive once its pidfd is open (its socket still open): the pidfd is the witness's. */
    pf = (struct pollfd){p[0], POLLIN, 0};
    if (w->pidfd < 0 || poll(&pf, 1, 0) != 0)
        ptt_witness_stop(w);
}

/* The signals pending for the whole process pid (ShdPnd in /proc/PID/status); 0 if unread. */
static unsigned long long shared_pending(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    const char *at = strstr(buf, "\nShdPnd:");
    return at ? strtoull(at + 8, NULL, 16) : 0;
}

int ptt_witness_got(struct ptt_witness *w, int sig)
{
    if (!w->pid || gone(w))
        return -1;
    unsigned long long pending = shared_pending(w->pid);
    if (gone(w))
        return -1;
    if (!(pending >> (sig - 1) & 1))
        return 0;
    /* Taken before we answer: the next signal is told apart from this one. A witness that does
     * not answer at once (someone stopped it) will not say again: every signal is passed on
     * from now. */
    char c = (char)sig;
    struct pollfd p = {w->sock, POLLIN, 0};
    if (send(w->sock, &c, 1, MSG_NOSIGNAL) != 1 || poll(&p, 1, 100) != 1 ||
        recv(w->sock, &c, 1, 0) != 1)
        ptt_witness_stop(w);
    return 1;
}

void ptt_witness_stop(struct ptt_witness *w)
{
    if (w->pidfd >= 0) /* ended even if stopped, when it would not see its socket's end */
        syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
    if (w->sock >= 0)
        close(w->sock);
    if (w->pidfd >= 0)
        close(w->pidfd);
    *w = (struct ptt_witness){0, -1, -1};
}
