/* Start-up of libptt in each traced process: find the real routines, attach the pool that
 * ptt trace created (only that one: docs/security.md), and keep a forked child from writing into
 * its parent's sub-buffer. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
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

void ptt_backtrace_init(unsigned depth);
static void record_args(void);

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
    t->call = NULL;  /* the parent's slot: a call the parent had begun ends with its OUT here */
    t->dict_tag = 1; /* the parent's dictionary: none here */
    t->serial = 0;
    t->seq = 0;
    t->lost = 0;
    if (ptt_active) {
        uint32_t before = atomic_load(&ptt_pool->next_serial);
        PTT_REC(PROCESS_START, PTT_I(getppid()),
                PTT_U(ptt_clock_tsc ? PTT_CLOCK_TSC : PTT_CLOCK_MONO), PTT_U(pthread_self()));
        record_args(); /* its copy of the parent's, as they were at the fork */
        ptt_announce(before);
    }
}

/* A pidfd of this process, handed to ptt trace: it learns how the process ends even when glibc's
 * system() or popen() reaps it, where no interposer sees. With it, `before`: the threads of the
 * session numbered so far (none of this program's), so that after an exec ptt trace drains what
 * the old program's threads left in the pool (src/session/procs.h). Raw system calls: connect,
 * sendmsg and close are cancellation points in glibc, and this runs in a constructor and in fork's
 * child handler. A full backlog (a burst of processes while ptt trace is busy) is waited out, as
 * long as ptt trace exists, as writers wait for a free sub-buffer; a session gone leaves the
 * process unannounced, as on a kernel without pidfds. */
void ptt_announce(uint32_t before)
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
            int32_t msg[2] = {ptt_pid, (int32_t)before};
            struct iovec iov = {msg, sizeof msg};
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

/* Why this process is not traced, in one line on stderr (fd 2: the program's stdio untouched). */
static __attribute__((format(printf, 1, 2))) void refuse(const char *fmt, ...)
{
    char line[256] = "ptt: libptt: not tracing: ";
    size_t n = strlen(line);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    n += k < 0 ? 0 : (size_t)k < sizeof line - n - 1 ? (size_t)k : sizeof line - n - 2;
    line[n++] = '\n';
    if (write(2, line, n) < 0) { /* nowhere to say it */
    }
}

/* The pool name and the secret of PTT_SHM ("/NAME:HEX"): 0 if malformed. */
static int parse_env(const char *v, char *name, size_t len, uint8_t *secret)
{
    const char *colon = strchr(v, ':');
    size_t nl = colon ? (size_t)(colon - v) : 0;
    if (!colon || nl < 2 || nl >= len || v[0] != '/' || memchr(v + 1, '/', nl - 1) ||
        strlen(colon + 1) != 2 * PTT_POOL_SECRET)
        return 0;
    for (size_t i = 0; i < PTT_POOL_SECRET; i++) {
        unsigned x;
        char hex[3] = {colon[1 + 2 * i], colon[2 + 2 * i], 0};
        if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]) ||
            sscanf(hex, "%2x", &x) != 1)
            return 0;
        secret[i] = (uint8_t)x;
    }
    memcpy(name, v, nl);
    name[nl] = 0;
    return 1;
}

#define POOL_MAX_SIZE (1ull << 41) /* ptt trace's --buffer is 1T at most */
#define SUBBUFFER_MAX (16u << 20)

/* What is wrong with the header of a pool of size bytes, before anything is written there: every
 * offset and size libptt uses. NULL: nothing. */
static const char *invalid(const struct ptt_pool *p, uint64_t size, const uint8_t *secret)
{
    if (p->magic != PTT_POOL_MAGIC || p->version != PTT_POOL_VERSION)
        return "not a pool of this version of ptt";
    uint8_t diff = 0; /* no early exit: how much matched stays unknown */
    for (size_t i = 0; i < PTT_POOL_SECRET; i++)
        diff |= (uint8_t)(p->secret[i] ^ secret[i]);
    if (diff)
        return "not this session's secret";
    if (p->nbufs < 2 || p->nbufs >= PTT_POOL_EMPTY)
        return "bad sub-buffer count";
    if (p->buf_size < 4096 || p->buf_size > SUBBUFFER_MAX || p->buf_size % 4096)
        return "bad sub-buffer size";
    if (p->desc_offset < sizeof *p || p->desc_offset % 64 || p->desc_offset > size)
        return "bad descriptor offset";
    if (p->data_offset % 4096 || p->data_offset > size ||
        p->data_offset < p->desc_offset + (uint64_t)p->nbufs * sizeof(struct ptt_desc))
        return "bad data offset";
    if (p->total_size != size || p->data_offset + (uint64_t)p->nbufs * p->buf_size != size)
        return "bad size";
    if (!memchr(p->proc_socket, 0, sizeof p->proc_socket))
        return "bad socket path";
    if ((p->clock != PTT_CLOCK_TSC && p->clock != PTT_CLOCK_MONO) ||
        (p->overflow != PTT_OVERFLOW_BLOCK && p->overflow != PTT_OVERFLOW_DISCARD) ||
        p->backtrace_depth > 32 || p->daemon_pid <= 0)
        return "bad settings";
    return NULL;
}

/* The pool PTT_SHM names, if it is ptt trace's for this session: ours (effective uid), closed to
 * others, a regular file reached without a symbolic link, carrying the session's secret, and
 * well formed. Another user may have created the name once it was free (docs/security.md). */
struct ptt_pool *ptt_pool_attach(const char *env)
{
    char name[64];
    uint8_t secret[PTT_POOL_SECRET];
    if (!parse_env(env, name, sizeof name, secret)) {
        refuse("%s is malformed (not /NAME:SECRET)", PTT_ENV_SHM);
        return 0;
    }
    int fd = shm_open(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno != ENOENT) /* ENOENT: the session is over */
            refuse("cannot open pool %s: %s", name,
                   errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return 0;
    }
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st))
        refuse("cannot check pool %s: %s", name, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        refuse("pool %s is not a regular file", name);
    else if (st.st_uid != geteuid())
        refuse("pool %s is owned by uid %u, not %u", name, (unsigned)st.st_uid,
               (unsigned)geteuid());
    else if (st.st_mode & 077)
        refuse("pool %s is open to other users (mode %04o)", name, (unsigned)st.st_mode & 07777);
    else if ((uint64_t)st.st_size < sizeof(struct ptt_pool) || (uint64_t)st.st_size > POOL_MAX_SIZE)
        refuse("pool %s has a bad size", name);
    else if ((m = mmap(0, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
             MAP_FAILED)
        refuse("cannot map pool %s: %s", name, strerror(errno));
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    struct ptt_pool *p = m;
    const char *why = invalid(p, (uint64_t)st.st_size, secret);
    /* Positions in the pool leave 16 bits above them for a tag (record.h). */
    if (!why && (uintptr_t)m + (uintptr_t)st.st_size > PTT_POS_ADDR)
        why = "mapped too high";
    if (why || atomic_load(&p->abandoned)) { /* abandoned: the session is over */
        if (why)
            refuse("pool %s: %s", name, why);
        munmap(m, (size_t)st.st_size);
        return 0;
    }
    ptt_keep_pool_name(name);
    return p;
}

/* The program's arguments as glibc passes them to a constructor (ptt_init), NULL elsewhere. */
static int prog_argc;
static char **prog_argv;

/* One argument quoted as for a shell: as it is when it holds only ASCII letters, digits and
 * -_./=:,+@%, else in '...' ('\'' for a quote); into line[*n..len - 1), cut there. No locale:
 * this runs in fork's child handler too. */
static void put_arg(char *line, size_t len, size_t *n, const char *a)
{
    size_t k = *n;
    int plain = *a != 0;
    for (const char *c = a; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                strchr("-_./=:,+@%", *c);
    const char *q = plain ? "" : "'";
    for (const char *c = q; *c && k < len - 1; c++)
        line[k++] = *c;
    for (; *a && k < len - 1; a++) {
        if (*a == '\'' && !plain)
            for (const char *c = "'\\'"; *c && k < len - 1; c++)
                line[k++] = *c;
        if (k < len - 1)
            line[k++] = *a;
    }
    for (const char *c = q; *c && k < len - 1; c++)
        line[k++] = *c;
    line[k] = 0;
    *n = k;
}

/* PROCESS_ARGS: the command line, after each PROCESS_START. */
static void record_args(void)
{
    char line[PTT_STR_MAX];
    size_t n = 0;
    line[0] = 0;
    for (int i = 0; i < prog_argc && prog_argv && prog_argv[i] && n < sizeof line - 1; i++) {
        if (i)
            line[n++] = ' ';
        put_arg(line, sizeof line, &n, prog_argv[i]);
    }
    if (prog_argv)
        PTT_REC_STR(PROCESS_ARGS, line, PTT_U(prog_argc));
}

/* Recording into the pool just attached. */
void ptt_start(void)
{
    /* First: a thread that records from here on (one a constructor started) is not the old
     * program's. */
    uint32_t before = atomic_load(&ptt_pool->next_serial);
    static int atfork_set;
    ptt_clock_tsc = ptt_pool->clock == PTT_CLOCK_TSC;
    ptt_masks = ptt_pool->masks;
    ptt_backtrace_init(ptt_pool->backtrace_depth);
    ptt_pid = (int)getpid();
    ptt_tid_init();
    if (!atfork_set++)
        pthread_atfork(0, 0, atfork_child);
    ptt_active = 1;
    PTT_REC(PROCESS_START, PTT_I(getppid()), PTT_U(ptt_pool->clock), PTT_U(pthread_self()));
    record_args();
    ptt_announce(before);
    ptt_record_modules();
}

/* glibc gives a constructor the program's argc, argv and environment (ELF's DT_INIT_ARRAY
 * convention, which it follows for preloaded and dlopen'd objects alike); other C libraries may
 * not: then none is recorded. */
__attribute__((constructor(101))) static void ptt_init(int argc, char **argv, char **envp)
{
    (void)envp;
#ifdef __GLIBC__
    prog_argc = argc;
    prog_argv = argv;
#else
    (void)argc, (void)argv;
#endif
    ptt_resolve();
    const char *env = getenv(PTT_ENV_SHM);
    if (!env || !(ptt_pool = ptt_pool_attach(env)))
        return; /* not under ptt trace, or not its pool: trace nothing */
    ptt_start();
}

/* exit(): hand the exiting thread's events over; threads still running keep theirs, which the
 * daemon drains when the process is gone. */
__attribute__((destructor(101))) static void ptt_fini(void)
{
    if (ptt_active) {
        ptt_report_lost(&ptt_self);
        ptt_thread_release(&ptt_self);
        ptt_call_give(&ptt_self);
    }
}
