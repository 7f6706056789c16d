/* The control socket of a session, and its client. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "session/control.h"
#include "util/util.h"

#define PTT_CTL_STR_(x) #x
#define PTT_CTL_STR(x) PTT_CTL_STR_(x)

int ptt_ctl_dir(char *dir, size_t len, char *err, size_t errlen)
{
    /* The runtime directory only if it is ours and closed to others' writes: in someone else's,
     * the ptt directory could be swapped after our checks. */
    const char *run = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (run && *run && !stat(run, &st) && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
        !(st.st_mode & 022))
        snprintf(dir, len, "%s/ptt", run);
    else
        snprintf(dir, len, "/tmp/ptt-%u", (unsigned)getuid());
    if (mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    /* mkdir never follows a symlink: what is there now is what another user may have planted. */
    if (lstat(dir, &st)) {
        snprintf(err, errlen, "cannot use %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        snprintf(err, errlen,
                 "%s is %s owned by uid %u, not a directory of this user (uid %u): not used", dir,
                 S_ISLNK(st.st_mode)   ? "a symbolic link"
                 : S_ISDIR(st.st_mode) ? "a directory"
                                       : "a file",
                 (unsigned)st.st_uid, (unsigned)getuid());
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s (owned by uid %u) is open to others (mode %04o): not used", dir,
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

/* A session named ptt-UID-PID belongs to user UID: another user's is refused by name, before
 * any look for it (it could not be reached anyway: its directory is closed to us). */
static int foreign_session(const char *session, char *err, size_t errlen)
{
    unsigned long uid;
    char *end;
    if (strncmp(session, "ptt-", 4) || !isdigit((unsigned char)session[4]))
        return 0;
    uid = strtoul(session + 4, &end, 10);
    if (*end != '-' || uid == getuid())
        return 0;
    snprintf(err, errlen, "session '%s' belongs to uid %lu, not to this user (uid %u): refused",
             session, uid, (unsigned)getuid());
    return 1;
}

static int sock_path(const char *session, struct sockaddr_un *a, char *err, size_t errlen)
{
    char dir[200];
    if (foreign_session(session, err, errlen) || ptt_ctl_dir(dir, sizeof dir, err, errlen))
        return -1;
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* A bare pid names the session of that ptt trace. */
    char name[80];
    if (strspn(session, "0123456789") == strlen(session) && *session)
        snprintf(name, sizeof name, "ptt-%u-%s", (unsigned)getuid(), session);
    else
        snprintf(name, sizeof name, "%s", session);
    if (strchr(name, '/') || snprintf(a->sun_path, sizeof a->sun_path, "%s/%s.sock", dir, name) >=
                                 (int)sizeof a->sun_path) {
        snprintf(err, errlen, "bad session name '%s'", session);
        return -1;
    }
    return 0;
}

int ptt_ctl_listen(const char *session, char *path, size_t len, char *err, size_t errlen)
{
    struct sockaddr_un a;
    if (sock_path(session, &a, err, errlen))
        return -1;
    unlink(a.sun_path); /* left by a killed session that had our pid */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 16)) {
        snprintf(err, errlen, "cannot listen on %s: %s", a.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(path, len, "%s", a.sun_path);
    return fd;
}

/* The server: a small table of non-blocking clients, each reading its request line, then
 * writing its reply, within its time. MSG_NOSIGNAL on every send: a client that goes away
 * early must not end ptt trace with SIGPIPE. */
struct client {
    int fd; /* -1: a free slot */
    int writing;
    uint64_t until;
    size_t got, sent, len;
    char req[512];
    char reply[8192];
};

struct ptt_ctl_server {
    int fd;
    ptt_ctl_handler handler;
    void *arg;
    struct client c[PTT_CTL_CLIENTS];
};

struct ptt_ctl_server *ptt_ctl_server_new(int fd, ptt_ctl_handler handler, void *arg)
{
    struct ptt_ctl_server *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->handler = handler;
    c->arg = arg;
    for (int i = 0; i < PTT_CTL_CLIENTS; i++)
        c->c[i].fd = -1;
    return c;
}

static void drop(struct client *k)
{
    close(k->fd);
    k->fd = -1;
}

/* A line to a client we do not serve, if its socket takes it now. */
static void refuse(int fd, const char *line)
{
    if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* nothing to do: the client learns it from the close */
    }
    close(fd);
}

static void accept_clients(struct ptt_ctl_server *c, uint64_t now)
{
    for (int n = 0; n < 2 * PTT_CTL_CLIENTS; n++) { /* a bounded batch: the drain comes first */
        int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) || cr.uid != getuid()) {
            refuse(fd, "error: this session belongs to another user\n");
            continue;
        }
        struct client *k = NULL;
        for (int i = 0; i < PTT_CTL_CLIENTS && !k; i++)
            if (c->c[i].fd < 0)
                k = &c->c[i];
        if (!k) {
            refuse(fd, "error: the session serves " PTT_CTL_STR(
                           PTT_CTL_CLIENTS) " clients at once already; try again\n");
            continue;
        }
        k->fd = fd;
        k->writing = 0;
        k->until = now + PTT_CTL_CLIENT_NS;
        k->got = k->sent = k->len = 0;
    }
}

static void answer(struct ptt_ctl_server *c, struct client *k)
{
    if (k->got == sizeof k->req - 1 && !memchr(k->req, '\n', k->got))
        snprintf(k->reply, sizeof k->reply, "error: request too long\n");
    else {
        k->req[strcspn(k->req, "\n")] = 0;
        c->handler(c->arg, k->req, k->reply, sizeof k->reply);
    }
    k->len = strlen(k->reply);
    k->writing = 1;
}

/* Reads what the socket has; the request is complete at its newline, at the end of the
 * client's writing, or when the buffer is full. */
static void client_read(struct ptt_ctl_server *c, struct client *k)
{
    for (;;) {
        ssize_t r = recv(k->fd, k->req + k->got, sizeof k->req - 1 - k->got, MSG_DONTWAIT);
        if (r < 0) {
            if (errno != EAGAIN && errno != EINTR)
                drop(k);
            if (errno != EINTR)
                return;
            continue;
        }
        if (r == 0 && !k->got) {
            drop(k);
            return;
        }
        k->got += (size_t)r;
        k->req[k->got] = 0;
        if (r == 0 || memchr(k->req, '\n', k->got) || k->got == sizeof k->req - 1) {
            answer(c, k);
            return;
        }
    }
}

static void client_write(struct client *k)
{
    while (k->sent < k->len) {
        ssize_t r = send(k->fd, k->reply + k->sent, k->len - k->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                drop(k);
            return;
        }
        k->sent += (size_t)r;
    }
    drop(k);
}

unsigned ptt_ctl_pollfds(const struct ptt_ctl_server *c, struct pollfd *fds)
{
    unsigned n = 0;
    fds[n++] = (struct pollfd){c->fd, POLLIN, 0};
    for (int i = 0; i < PTT_CTL_CLIENTS; i++)
        if (c->c[i].fd >= 0)
            fds[n++] = (struct pollfd){c->c[i].fd, c->c[i].writing ? POLLOUT : POLLIN, 0};
    return n;
}

void ptt_ctl_step(struct ptt_ctl_server *c, const struct pollfd *fds, unsigned n)
{
    uint64_t now = ptt_mono_ns();
    for (int i = 0; i < PTT_CTL_CLIENTS; i++) {
        struct client *k = &c->c[i];
        if (k->fd < 0)
            continue;
        if (now > k->until) { /* too slow: its slot goes to others */
            drop(k);
            continue;
        }
        short ev = 0;
        for (unsigned j = 1; j < n; j++)
            if (fds[j].fd == k->fd)
                ev = fds[j].revents;
        if (!ev)
            continue;
        if (!k->writing)
            client_read(c, k);
        if (k->fd >= 0 && k->writing)
            client_write(k);
    }
    if (n && (fds[0].revents & POLLIN))
        accept_clients(c, now);
}

void ptt_ctl_server_free(struct ptt_ctl_server *c)
{
    if (!c)
        return;
    for (int i = 0; i < PTT_CTL_CLIENTS; i++)
        if (c->c[i].fd >= 0)
            drop(&c->c[i]);
    free(c);
}

/* The client side. */
static ssize_t read_line(int fd, char *buf, size_t len, int timeout_ms)
{
    size_t got = 0;
    while (got + 1 < len) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        ssize_t k = read(fd, buf + got, len - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
        if (memchr(buf, '\n', got))
            break;
    }
    buf[got] = 0;
    return (ssize_t)got;
}

static int send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Connects to the session's socket, checking that its server is of this user; -2 when nobody
 * listens there any more (a stale socket), -1 on other errors, with the message in err. */
static int connect_session(const char *session, char *err, size_t errlen)
{
    struct sockaddr_un a;
    if (sock_path(session, &a, err, errlen))
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        int e = errno;
        snprintf(err, errlen, "no session '%s' of this user (%s)", session, strerror(e));
        if (fd >= 0)
            close(fd);
        return e == ECONNREFUSED ? -2 : -1;
    }
    struct ucred cr = {0, (uid_t)-1, (gid_t)-1};
    socklen_t cl = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) || cr.uid != getuid()) {
        snprintf(err, errlen,
                 "session '%s' is served by uid %u (pid %d), not by this user: refused", session,
                 (unsigned)cr.uid, (int)cr.pid);
        close(fd);
        return -1;
    }
    return fd;
}

static int request(const char *session, const char *req, char *reply, size_t len)
{
    int fd = connect_session(session, reply, len);
    if (fd < 0)
        return fd;
    char line[600];
    snprintf(line, sizeof line, "%s\n", req);
    send_all(fd, line);
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    for (;;) { /* the reply may come in pieces: read it all */
        ssize_t k = read_line(fd, reply + got, len - got, 30000);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (!got) {
        snprintf(reply, len, "session '%s' did not answer", session);
        return -1;
    }
    return strncmp(reply, "error", 5) ? 0 : -1;
}

int ptt_ctl_request(const char *session, const char *req, char *reply, size_t len)
{
    return request(session, req, reply, len) ? -1 : 0;
}

int ptt_ctl_list(char *out, size_t len)
{
    char dir[200], err[300];
    out[0] = 0;
    if (ptt_ctl_dir(dir, sizeof dir, err, sizeof err)) {
        snprintf(out, len, "%s", err);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t o = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".sock"))
            continue;
        char name[256], reply[256];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        int r = request(name, "ping", reply, sizeof reply);
        if (r == -2) { /* nobody listens: its ptt trace is gone */
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        if (r)
            continue;
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s\n", name);
    }
    closedir(d);
    return 0;
}
