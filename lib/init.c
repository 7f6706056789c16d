/* Start-up of libptt in each traced process: find the real routines, attach the pool that
 * ptt trace created, and keep a forked child from writing into its parent's sub-buffer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "libptt.h"

__thread struct ptt_thread ptt_self __attribute__((tls_model("initial-exec")));
int ptt_active;
int ptt_clock_tsc;
static _Atomic uint64_t no_masks[2]; /* before the pool is attached: nothing */
_Atomic uint64_t *ptt_masks = no_masks;
struct ptt_pool *ptt_pool;
int ptt_pid;
static char pool_name[64];

#define PTT_DEFINE_REAL(ret, name, params) ret(*ptt_real_##name) params;
PTT_REAL_FUNCS(PTT_DEFINE_REAL)
#undef PTT_DEFINE_REAL

void ptt_backtrace_init(unsigned depth);

void ptt_resolve(void)
{
#define PTT_RESOLVE(ret, name, params) \
    if (!ptt_real_##name)              \
        *(void **)&ptt_real_##name = dlsym(RTLD_NEXT, #name);
    PTT_REAL_FUNCS(PTT_RESOLVE)
#undef PTT_RESOLVE
    /* glibc 2.34 and later keep pthread_yield only as a compat symbol of an older version. */
    if (!ptt_real_pthread_yield)
        *(void **)&ptt_real_pthread_yield = dlvsym(RTLD_NEXT, "pthread_yield", "GLIBC_2.2.5");
    if (!ptt_real_pthread_yield)
        ptt_real_pthread_yield = ptt_real_sched_yield;
}

/* In a forked child: the parent's sub-buffer is not ours; take fresh ones under our own pid
 * and a new thread number.
 * Registered first (our constructor runs before the application's), so this runs before the
 * application's own child handlers, which may well record events. */
static void atfork_child(void)
{
    struct ptt_thread *t = &ptt_self;
    ptt_pid = (int)getpid();
    t->desc = 0;
    t->pos = t->end = t->data = t->last_data = 0;
    t->parked = 0; /* the parent's */
    t->parked_len = 0;
    t->nest = 0;
    t->serial = 0;
    t->seq = 0;
    t->lost = 0;
    if (ptt_active) {
        PTT_REC(PROCESS_START, PTT_I(getppid()),
                PTT_U(ptt_clock_tsc ? PTT_CLOCK_TSC : PTT_CLOCK_MONO));
        ptt_announce();
    }
}

/* A pidfd of this process, handed to ptt trace: it learns how the process ends even when glibc's
 * system() or popen() reaps it, where no interposer sees. Raw system calls: connect, sendmsg and
 * close are cancellation points in glibc, and this runs in a constructor and in fork's child
 * handler. A full backlog (a burst of processes while ptt trace is busy) is waited out, as long as
 * ptt trace exists, as writers wait for a free sub-buffer; a session gone leaves the process
 * unannounced, as on a kernel without pidfds. */
void ptt_announce(void)
{
    const char *path = ptt_pool->proc_socket;
    if (!path[0])
        return;
    int saved = errno;
    int pidfd = (int)syscall(SYS_pidfd_open, ptt_pid, 0);
    int s = pidfd < 0
                ? -1
                : (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t len = strnlen(path, sizeof ptt_pool->proc_socket);
    if (s >= 0 && len < sizeof a.sun_path) {
        memcpy(a.sun_path, path, len);
        long r, us = 50;
        while ((r = syscall(SYS_connect, s, (struct sockaddr *)&a, sizeof a)) < 0 &&
               errno == EAGAIN && syscall(SYS_kill, ptt_pool->daemon_pid, 0) == 0) {
            struct timespec d = {0, us * 1000};
            syscall(SYS_nanosleep, &d, NULL);
            us = us < 100000 ? 2 * us : us;
        }
        if (r == 0) {
            int32_t pid = ptt_pid;
            struct iovec iov = {&pid, sizeof pid};
            union {
                struct cmsghdr h;
                char b[CMSG_SPACE(sizeof(int))];
            } u;
            memset(&u, 0, sizeof u);
            struct msghdr m = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
            struct cmsghdr *h = CMSG_FIRSTHDR(&m);
            h->cmsg_level = SOL_SOCKET;
            h->cmsg_type = SCM_RIGHTS;
            h->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(h), &pidfd, sizeof pidfd);
            syscall(SYS_sendmsg, s, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
    }
    if (s >= 0)
        syscall(SYS_close, s);
    if (pidfd >= 0)
        syscall(SYS_close, pidfd);
    errno = saved;
}

void ptt_forget_pool(void)
{
    if (pool_name[0])
        shm_unlink(pool_name);
}

static struct ptt_pool *attach(const char *name)
{
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct ptt_pool))
        m = mmap(0, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    struct ptt_pool *p = m;
    /* Positions in the pool leave 16 bits above them for a tag (record.h). */
    if (p->magic != PTT_POOL_MAGIC || p->version != PTT_POOL_VERSION ||
        p->total_size != (uint64_t)st.st_size ||
        (uintptr_t)m + (uintptr_t)st.st_size > PTT_POS_ADDR) {
        munmap(m, (size_t)st.st_size);
        return 0;
    }
    return p;
}

__attribute__((constructor(101))) static void ptt_init(void)
{
    ptt_resolve();
    const char *name = getenv(PTT_ENV_SHM);
    if (!name || !(ptt_pool = attach(name)))
        return; /* not under ptt trace, or its pool is gone: trace nothing */
    snprintf(pool_name, sizeof pool_name, "%s", name);
    ptt_clock_tsc = ptt_pool->clock == PTT_CLOCK_TSC;
    ptt_masks = ptt_pool->masks;
    ptt_backtrace_init(ptt_pool->backtrace_depth);
    ptt_pid = (int)getpid();
    pthread_atfork(0, 0, atfork_child);
    ptt_active = 1;
    PTT_REC(PROCESS_START, PTT_I(getppid()), PTT_U(ptt_pool->clock));
    ptt_announce();
    ptt_record_modules();
}

/* exit(): hand the exiting thread's events over; threads still running keep theirs, which the
 * daemon drains when the process is gone. */
__attribute__((destructor(101))) static void ptt_fini(void)
{
    if (ptt_active) {
        ptt_report_lost(&ptt_self);
        ptt_thread_release(&ptt_self);
    }
}
