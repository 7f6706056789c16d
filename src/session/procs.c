/* How every process of a session ends: the pidfds that traced processes hand over (procs.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "session/procs.h"

/* Linux 6.15's struct pidfd_info, up to exit_code (Debian 12's headers predate it); the kernel
 * takes any size from its first version's 64 bytes. */
struct pidfd_info {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code; /* a wait status, once the process is reaped */
};
#define PIDFD_GET_INFO_ _IOWR(0xFF, 11, struct pidfd_info)
#define PIDFD_INFO_PID_ (1ull << 0)
#define PIDFD_INFO_EXIT_ (1ull << 3)

enum kind { LISTENER, CONN, PIDFD };

struct entry {
    pid_t pid;
    ino_t ino; /* the process itself: pidfs gives each one an inode number never reused */
    int fd;    /* the pidfd */
    int dead;  /* it has ended; its status comes once it is reaped */
    /* When its pidfd said so (the trace clock), 0: unknown. Its parent reaps it after, and
     * records that (CHILD_EXIT): the end is stamped then, not when its status comes. */
    uint64_t dead_at;
};

/* A set of pidfs inode numbers (never 0): open addressing, at most half full. */
struct inoset {
    uint64_t *v;
    size_t n, cap;
};

struct ptt_procs {
    int listener, ep;
    int paused; /* accept failed (no descriptor left): the listener is out of the epoll set */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct entry *e; /* in the order announced: an ended process before a new one of its pid */
    size_t n, cap;
    /* The processes whose end is recorded: an announcement that comes after (late, or again
     * after an exec) is not one more process, whatever its pid has become since. */
    struct inoset done;
    pid_t reaped[256]; /* the latest pids ptt trace reaped itself without knowing the process
                          (no pidfd of it could be had), whose announcement may be on its way */
    unsigned nreaped;
};

static size_t ino_slot(const struct inoset *s, uint64_t ino)
{
    size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);
    while (s->v[i] && s->v[i] != ino)
        i = (i + 1) & (s->cap - 1);
    return i;
}

static int ino_has(const struct inoset *s, uint64_t ino)
{
    return s->cap && s->v[ino_slot(s, ino)] == ino;
}

static void ino_add(struct inoset *s, uint64_t ino)
{
    if (2 * (s->n + 1) > s->cap) {
        struct inoset g = {calloc(s->cap ? 2 * s->cap : 1024, sizeof *g.v), 0,
                           s->cap ? 2 * s->cap : 1024};
        if (!g.v)
            return; /* out of memory: a late announcement may count a process twice */
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i])
                g.v[ino_slot(&g, s->v[i])] = s->v[i], g.n++;
        free(s->v);
        *s = g;
    }
    size_t i = ino_slot(s, ino);
    if (!s->v[i]) {
        s->v[i] = ino;
        s->n++;
    }
}

static int info(int fd, uint64_t mask, struct pidfd_info *i)
{
    memset(i, 0, sizeof *i);
    i->mask = mask;
    return ioctl(fd, PIDFD_GET_INFO_, i);
}

int ptt_procs_supported_by(int pidfd)
{
    struct pidfd_info i;
    return pidfd >= 0 && info(pidfd, PIDFD_INFO_EXIT_, &i) == 0 && (i.mask & PIDFD_INFO_EXIT_);
}

int ptt_procs_exit_status(int pidfd, int *status)
{
    struct pidfd_info i;
    if (pidfd < 0 || info(pidfd, PIDFD_INFO_EXIT_, &i) || !(i.mask & PIDFD_INFO_EXIT_))
        return -1;
    *status = i.exit_code;
    return 0;
}

int ptt_procs_recorded(const struct ptt_procs *p, int pidfd)
{
    struct stat st;
    return p && !fstat(pidfd, &st) && ino_has(&p->done, st.st_ino);
}

void ptt_procs_each_live(const struct ptt_procs *p, void (*fn)(void *arg, pid_t pid, int pidfd),
                         void *arg)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (!p->e[i].dead)
            fn(arg, p->e[i].pid, p->e[i].fd);
}

int ptt_procs_supported(void)
{
    pid_t c = fork();
    if (c < 0)
        return 0;
    if (c == 0)
        _exit(0);
    int fd = (int)syscall(SYS_pidfd_open, c, 0), st;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    int ok = ptt_procs_supported_by(fd);
    if (fd >= 0)
        close(fd);
    return ok;
}

static int watch(struct ptt_procs *p, enum kind k, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)k << 32 | (uint32_t)fd};
    return epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev);
}

struct ptt_procs *ptt_procs_open(const char *path, char *err, size_t errlen)
{
    struct ptt_procs *p = calloc(1, sizeof *p);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (!p || strlen(path) >= sizeof a.sun_path) {
        snprintf(err, errlen, "%s", p ? "socket path too long" : strerror(errno));
        free(p);
        return NULL;
    }
    memcpy(a.sun_path, path, strlen(path));
    snprintf(p->path, sizeof p->path, "%s", path);
    unlink(path); /* left by a killed session that had our pid */
    p->ep = epoll_create1(EPOLL_CLOEXEC);
    p->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* A burst of forks queues one connection each: the kernel caps the backlog at somaxconn. */
    if (p->ep < 0 || p->listener < 0 || bind(p->listener, (struct sockaddr *)&a, sizeof a) ||
        listen(p->listener, 4096) || watch(p, LISTENER, p->listener)) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
        ptt_procs_close(p);
        return NULL;
    }
    return p;
}

int ptt_procs_fd(const struct ptt_procs *p)
{
    return p->ep;
}

static void drop(struct ptt_procs *p, size_t i)
{
    close(p->e[i].fd);
    memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof p->e[0]);
    p->n--;
}

static int was_reaped(const struct ptt_procs *p, pid_t pid)
{
    unsigned n = p->nreaped < 256 ? p->nreaped : 256;
    for (unsigned i = 0; i < n; i++)
        if (p->reaped[i] == pid)
            return 1;
    return 0;
}

static void add(struct ptt_procs *p, pid_t pid, uint32_t before, int fd,
                const struct ptt_procs_hooks *h)
{
    struct pidfd_info i;
    int ended;
    if (pid <= 0) {
        close(fd);
        return;
    }
    if (info(fd, PIDFD_INFO_PID_ | PIDFD_INFO_EXIT_, &i)) {
        /* ESRCH: its parent is reaping it right now (its pid is gone, its exit status not
         * yet there): ended, its status asked for at each step until it is. */
        if (errno != ESRCH) {
            close(fd);
            return;
        }
        ended = 1;
    } else if ((i.mask & PIDFD_INFO_PID_) && i.pid && (pid_t)i.pid != pid) {
        close(fd); /* not a pidfd of the process it says (once reaped, the kernel says 0) */
        return;
    } else {
        ended = (i.mask & PIDFD_INFO_EXIT_) != 0;
    }
    struct stat st;
    if (fstat(fd, &st) || ino_has(&p->done, st.st_ino) || (ended && was_reaped(p, pid))) {
        close(fd); /* its end is recorded already */
        return;
    }
    for (size_t k = 0; k < p->n; k++)
        if (p->e[k].ino == st.st_ino) {
            close(fd); /* the same process, announced again after an exec */
            if (before && h->execd)
                h->execd(h->arg, pid, before);
            return;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct entry *e = realloc(p->e, cap * sizeof *e);
        if (!e) {
            close(fd);
            return;
        }
        p->e = e;
        p->cap = cap;
    }
    if (!ended && watch(p, PIDFD, fd)) {
        close(fd);
        return;
    }
    p->e[p->n++] = (struct entry){pid, st.st_ino, fd, ended, 0};
    if (before && h->started)
        h->started(h->arg, pid, before);
}

/* One announcement: the process's pid, the last thread number given before its program started
 * (lib/init.c), and, attached, a pidfd of it. */
static void receive(struct ptt_procs *p, int c, const struct ptt_procs_hooks *hooks)
{
    int32_t msg[2] = {0, 0};
    struct iovec iov = {msg, sizeof msg};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } u;
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
    ssize_t k = recvmsg(c, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (k < 0 && (errno == EAGAIN || errno == EINTR))
        return; /* connected, not sent yet: it stays watched */
    struct ucred cr;
    socklen_t cl = sizeof cr;
    int ours = !getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) && cr.uid == getuid();
    close(c);
    /* (4 bytes: a libptt before `before` was sent, which says no exec) */
    struct cmsghdr *h = k == sizeof msg || k == sizeof msg[0] ? CMSG_FIRSTHDR(&m) : NULL;
    if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
        h->cmsg_len != CMSG_LEN(sizeof(int)))
        return;
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof fd);
    if (ours)
        add(p, msg[0], (uint32_t)msg[1], fd, hooks);
    else
        close(fd);
}

static void take_connections(struct ptt_procs *p)
{
    for (;;) {
        int c = accept4(p->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            /* Out of descriptors, say: the listener waits out of the set until the next step,
             * rather than wake us at once, again and again. */
            if (errno != EAGAIN && errno != EWOULDBLOCK &&
                !epoll_ctl(p->ep, EPOLL_CTL_DEL, p->listener, NULL))
                p->paused = 1;
            return;
        }
        if (watch(p, CONN, c))
            close(c);
    }
}

void ptt_procs_step(struct ptt_procs *p, const struct ptt_procs_hooks *h)
{
    struct epoll_event ev[64];
    int n;
    if (p->paused && !watch(p, LISTENER, p->listener))
        p->paused = 0;
    do {
        n = epoll_wait(p->ep, ev, 64, 0);
        for (int i = 0; i < n; i++) {
            int fd = (int)(uint32_t)ev[i].data.u64;
            switch ((enum kind)(ev[i].data.u64 >> 32)) {
            case LISTENER: take_connections(p); break;
            case CONN: receive(p, fd, h); break;
            case PIDFD: /* ended: readable for good, out of the set */
                epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
                for (size_t k = 0; k < p->n; k++)
                    if (p->e[k].fd == fd && !p->e[k].dead) {
                        p->e[k].dead = 1;
                        p->e[k].dead_at = ptt_ticks(h->clock_tsc);
                    }
                break;
            }
        }
    } while (n > 0); /* until nothing is ready: a connection taken now is read at once */
    /* A status exists once the process is reaped; until then it is a zombie, asked again. */
    for (size_t k = 0; k < p->n;) {
        struct pidfd_info i;
        if (p->e[k].dead && !info(p->e[k].fd, PIDFD_INFO_EXIT_, &i) &&
            (i.mask & PIDFD_INFO_EXIT_)) {
            pid_t pid = p->e[k].pid;
            uint64_t at = p->e[k].dead_at;
            ino_add(&p->done, p->e[k].ino);
            drop(p, k);
            h->ended(h->arg, pid, i.exit_code, at);
        } else {
            k++;
        }
    }
}

/* The process is known before it is reaped (a zombie still has its pidfd): by its inode,
 * which no other process ever has, rather than by its pid, which another may have by the time
 * its announcement comes. */
pid_t ptt_procs_reap(struct ptt_procs *p, int *status)
{
    if (!p)
        return waitpid(-1, status, WNOHANG);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
        return -1;
    if (!si.si_pid)
        return 0;
    uint64_t ino = 0;
    struct stat st;
    int fd = (int)syscall(SYS_pidfd_open, si.si_pid, 0);
    if (fd >= 0) {
        if (!fstat(fd, &st))
            ino = st.st_ino;
        close(fd);
    }
    pid_t pid = waitpid(si.si_pid, status, WNOHANG);
    if (pid <= 0)
        return pid;
    if (ino)
        ino_add(&p->done, ino);
    else
        p->reaped[p->nreaped++ % 256] = pid;
    for (size_t k = p->n; k-- > 0;) /* else the newest of that pid: an older one ended before */
        if (ino ? p->e[k].ino == ino : p->e[k].pid == pid) {
            drop(p, k);
            break;
        }
    return pid;
}

void ptt_procs_close(struct ptt_procs *p)
{
    if (!p)
        return;
    for (size_t k = 0; k < p->n; k++)
        close(p->e[k].fd);
    if (p->listener >= 0)
        close(p->listener);
    if (p->ep >= 0)
        close(p->ep);
    if (p->path[0])
        unlink(p->path);
    free(p->e);
    free(p->done.v);
    free(p);
}
