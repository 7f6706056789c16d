/* The guardian of a session (guardian.h). It runs between fork and _exit only, and ptt trace has
 * no thread when it starts it, yet it keeps to system calls: no allocation, no stdio. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session/daemon.h"
#include "session/guardian.h"
#include "session/procs.h"

#define MAX_WATCHED 8

static char watched[MAX_WATCHED][256];
static unsigned nwatched;
static char pool_name[256]; /* the pool, named before it is created */

static void watch(const char *path)
{
    if (nwatched < MAX_WATCHED && strlen(path) < sizeof watched[0])
        memcpy(watched[nwatched++], path, strlen(path) + 1);
}

/* The sockets of the session, named after ptt trace's pid, which no other process has until
 * ptt trace is reaped; ours (the directory is the user's alone). */
static void remove_watched(void)
{
    for (unsigned i = 0; i < nwatched; i++) {
        struct stat st;
        if (!lstat(watched[i], &st) && S_ISSOCK(st.st_mode) && st.st_uid == geteuid())
            unlink(watched[i]);
    }
}

/* Alone: descriptors 0-2 on /dev/null (a pipe of the terminal's or of a test's that we held
 * would not see its end), ptt trace's stream on 3, nothing else; the terminal's signals
 * ignored. */
static int detach(int rfd)
{
    if (rfd != 3) {
        if (dup2(rfd, 3) < 0)
            return -1;
        close(rfd);
    }
    if (syscall(SYS_close_range, 4u, ~0u, 0u)) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = 4; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
            close((int)fd);
    }
    int nul = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && nul >= 0; fd++)
        if (fd != nul)
            dup2(nul, fd);
    if (nul > 3)
        close(nul);
    int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        signal(ignored[i], SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (chdir("/")) { /* keeps no directory busy; nothing to do if it fails */
    }
    prctl(PR_SET_NAME, "ptt-guardian");
    return 3;
}

/* Mark the pool abandoned, so that writers stop at once, and remove its name: if it is ours (a
 * name ptt trace found taken was another's). */
static void abandon_pool(void)
{
    if (!pool_name[0])
        return;
    int fd = shm_open(pool_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    struct stat st;
    if (fd < 0)
        return;
    /* Root's ptt trace -p gives the pool to the traced process's user (trace.c, give_pool): its
     * name, which ptt trace made, is still root's to remove. */
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (st.st_uid == geteuid() || geteuid() == 0)) {
        if ((size_t)st.st_size >= sizeof(struct ptt_pool)) {
            struct ptt_pool *p = mmap(0, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) {
                ptt_pool_abandon(p);
                munmap(p, sizeof *p);
            }
        }
        shm_unlink(pool_name); /* /dev/shm is sticky: it is still ours */
    }
    close(fd);
}

/* The rest of the pool, from sub-buffer `from` on, reserved as the writers need it, for the whole
 * session: zeroing pages costs the kernel about 20 ms of CPU per 64 MiB and freeing them as much
 * again with the accounting (measured: a 0.46 s pigz session's guardian used 47 to 53 ms of CPU
 * when it reserved the whole pool), which the program shares. A step (as daemon.c's, 4 MiB)
 * whenever fewer than half a step's sub-buffers are free, looked at every LOOK_MS over the first
 * READY_MS of the session (the program's start, its first threads); after that a step whenever
 * fewer than a whole step's are free, looked at after twice as long each time nothing was
 * needed, up to LATE_LOOK_MS, or IDLE_LOOK_MS while the drain sleeps for want of anything to
 * drain (pool->idle): an idle session wakes the guardian once a second, and a burst after it
 * wakes the guardian itself (reserve_wanted) if it finds the reserved part used up. The
 * drain gives sub-buffers back as it writes them: the pool grows only while the writers get
 * ahead of it. The pool stays open and mapped here: the last to let go of its memory frees it,
 * and the guardian's end, not ptt trace's, waits for it. */
#define STEP_BYTES (4u << 20)
#define LOOK_MS 2
#define READY_MS 200
#define LATE_LOOK_MS 16
#define IDLE_LOOK_MS 1000
static struct {
    struct ptt_pool_geom g; /* read once, while the pool was ours alone (common/pool.h) */
    int fd;
    uint32_t from; /* the first sub-buffer not reserved */
    uint64_t since;
    int late_wait; /* ms between two looks after READY_MS */
    int eager;     /* a writer had to wake us: the rest reserved step after step, needed or not */
} rest = {.fd = -1};

/* A writer's wake-up (SIGURG): it only ends the guardian's poll, which then looks. */
static void on_wanted(int sig)
{
    (void)sig;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The layout in header p, if it fits in size bytes as ptt trace makes it (daemon.c: descriptors
 * and ready bits, then the sub-buffers, to the end). */
static int geom_of(struct ptt_pool *p, uint64_t size, struct ptt_pool_geom *g)
{
    *g = (struct ptt_pool_geom){
        p, p->nbufs, p->buf_size, p->desc_offset, p->data_offset, p->total_size};
    uint64_t descs = (uint64_t)g->nbufs * sizeof(struct ptt_desc) + PTT_POOL_READY_BYTES(g->nbufs);
    if (g->total_size == size && g->buf_size && g->desc_offset >= sizeof *p &&
        g->desc_offset <= g->data_offset && g->data_offset <= size &&
        descs <= g->data_offset - g->desc_offset &&
        (uint64_t)g->nbufs * g->buf_size <= size - g->data_offset)
        return 1;
    *g = (struct ptt_pool_geom){0};
    return 0;
}

static void rest_open(const char *first)
{
    int fd = pool_name[0] ? shm_open(pool_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0) : -1;
    struct stat st;
    if (fd < 0 || rest.g.base)
        return;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (size_t)st.st_size >= sizeof(struct ptt_pool)) {
        void *m = mmap(0, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED && geom_of(m, (uint64_t)st.st_size, &rest.g)) {
            rest.fd = fd;
            rest.from = (uint32_t)strtoul(first, NULL, 10);
            rest.since = mono_ms();
            rest.late_wait = LOOK_MS;
            /* Delivered only within guard's ppoll: a wake-up sent between a look and the sleep
             * that follows ends that sleep, instead of being spent outside it. */
            sigaction(SIGURG, &(struct sigaction){.sa_handler = on_wanted}, NULL);
            sigset_t urg;
            sigemptyset(&urg);
            sigaddset(&urg, SIGURG);
            sigprocmask(SIG_BLOCK, &urg, NULL);
            atomic_store(&rest.g.base->reserve_wanted, 0);
            atomic_store(&rest.g.base->reserver_pid, (int32_t)getpid());
            return;
        }
        if (m != MAP_FAILED)
            munmap(m, (size_t)st.st_size);
    }
    close(fd);
}

/* Whether fewer than half a step's reserved sub-buffers are free. */
static int rest_needed(const struct ptt_pool_geom *g, uint32_t step)
{
    uint32_t free = 0;
    for (uint32_t i = 0; i < rest.from && free < step / 2; i++)
        free +=
            atomic_load_explicit(&ptt_geom_desc(g, i)->state, memory_order_relaxed) == PTT_BUF_FREE;
    return free < step / 2;
}

/* One look: a step if needed. The time to the next look (ms), or -1: nothing left to reserve. A
 * writer that found no free sub-buffer has woken the guardian (reserve_wanted): the looks start
 * again from LOOK_MS. /dev/shm full (another's use since the start): tried again after
 * FULL_RETRY_MS, the pool meanwhile as it is (writers wait for the drain). */
#define FULL_RETRY_MS 100
static int rest_look(void)
{
    const struct ptt_pool_geom *g = &rest.g;
    if (!g->base || rest.from >= g->nbufs || atomic_load(&g->base->abandoned)) {
        if (g->base)
            atomic_store(&g->base->reserver_pid, 0);
        return -1;
    }
    /* A writer found none free: a burst (many threads starting at once) the looks did not
     * foresee. The rest goes at once, a step at a time, so that one burst waits, not each. */
    if (atomic_exchange(&g->base->reserve_wanted, 0))
        rest.eager = 1;
    int late = mono_ms() - rest.since >= READY_MS;
    uint32_t step = STEP_BYTES / g->buf_size;
    step = step ? step : 1;
    if (!rest.eager && !rest_needed(g, late ? 2 * step : step)) { /* late: a step ahead */
        if (!late)
            return LOOK_MS;
        int most = atomic_load(&g->base->idle) ? IDLE_LOOK_MS : LATE_LOOK_MS;
        rest.late_wait = rest.late_wait * 2 > most ? most : rest.late_wait * 2;
        return rest.late_wait;
    }
    rest.late_wait = LOOK_MS;
    uint32_t upto = g->nbufs - rest.from > step ? rest.from + step : g->nbufs;
    int e = ptt_pool_reserve(g, rest.fd, rest.from, upto);
    if (e)
        return e == EINTR ? 0 : FULL_RETRY_MS;
    rest.from = upto;
    return 0;
}

/* Read ptt trace's lines ("P<name>": the pool's name, "W<path>": a file to remove, "R<n>":
 * reserve the pool from sub-buffer n on, "E": clean end) until the stream's end. */
static _Noreturn void guard(int fd)
{
    char buf[1024];
    size_t have = 0;
    int wait = -1; /* ms to the next look at the pool's rest (rest_look); -1: none */
    sigset_t none; /* SIGURG, blocked once the rest is watched (rest_open), is let in here */
    sigemptyset(&none);
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        struct timespec ts = {wait / 1000, wait % 1000 * 1000000L};
        int r = ppoll(&pf, 1, wait < 0 ? NULL : &ts, &none);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0) {
            wait = rest_look();
            continue;
        }
        ssize_t k = read(fd, buf + have, sizeof buf - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        have += (size_t)k;
        char *nl;
        while ((nl = memchr(buf, '\n', have))) {
            *nl = 0;
            if (buf[0] == 'E')
                _exit(0);
            if (buf[0] == 'W')
                watch(buf + 1);
            if (buf[0] == 'R') {
                rest_open(buf + 1);
                wait = rest_look();
            }
            if (buf[0] == 'P' && strlen(buf + 1) < sizeof pool_name)
                memcpy(pool_name, buf + 1, strlen(buf + 1) + 1);
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have - used);
            have -= used;
        }
        if (have == sizeof buf) /* a line that long is none of ours */
            have = 0;
    }
    /* ptt trace is gone without a clean end. */
    abandon_pool();
    remove_watched();
    _exit(0);
}

int ptt_guardian_start(int *procs_ok, pid_t *gpid)
{
    *procs_ok = 0;
    *gpid = 0;
    /* A socket pair rather than a pipe: ptt trace writing to a guardian someone killed gets an
     * error, not SIGPIPE. */
    int p[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
        return -1;
    pid_t c = fork();
    if (c < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        errno = e;
        return -1;
    }
    if (c == 0) {
        /* Only ptt trace may hold its end: the guardian sees its death as the end of the stream. */
        close(p[1]);
        if (setsid() < 0)
            _exit(1);
        pid_t g = fork();
        if (g != 0)
            _exit(g < 0);
        pid_t me = getpid(); /* ptt trace's child after all when it is a namespace's init */
        if (send(p[0], &me, sizeof me, MSG_NOSIGNAL) != sizeof me)
            _exit(1);
        int fd = detach(p[0]);
        if (fd < 0)
            _exit(1);
        guard(fd);
    }
    close(p[0]);
    int st, pidfd = (int)syscall(SYS_pidfd_open, c, 0);
    while (waitpid(c, &st, 0) < 0 && errno == EINTR)
        ;
    if (pidfd >= 0) {
        *procs_ok = ptt_procs_supported_by(pidfd);
        close(pidfd);
    }
    struct pollfd pf = {p[1], POLLIN, 0};
    if (!WIFEXITED(st) || WEXITSTATUS(st) || poll(&pf, 1, 10000) != 1 ||
        recv(p[1], gpid, sizeof *gpid, 0) != sizeof *gpid) {
        close(p[1]);
        errno = EAGAIN;
        return -1;
    }
    return p[1];
}

static void send_line(int fd, char kind, const char *text)
{
    char line[300];
    size_t n = strlen(text);
    if (fd < 0 || n + 3 > sizeof line)
        return;
    line[0] = kind;
    memcpy(line + 1, text, n);
    line[n + 1] = '\n';
    /* A few hundred bytes: written whole, the socket's buffer holds far more. */
    while (send(fd, line, n + 2, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

void ptt_guardian_pool(int fd, const char *name)
{
    send_line(fd, 'P', name);
}

void ptt_guardian_reserve(int fd, uint32_t first)
{
    char n[16];
    snprintf(n, sizeof n, "%u", first);
    send_line(fd, 'R', n);
}

void ptt_guardian_watch(int fd, const char *path)
{
    send_line(fd, 'W', path);
}

void ptt_guardian_end(int fd)
{
    if (fd < 0)
        return;
    send_line(fd, 'E', "");
    close(fd);
}
