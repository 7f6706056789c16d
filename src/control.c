/* The control socket of a session, and its client. */
#define _GNU_SOURCE
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

#include "control.h"

int ptt_ctl_dir(char *dir, size_t len, char *err, size_t errlen)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    if (run && *run)
        snprintf(dir, len, "%s/ptt", run);
    else
        snprintf(dir, len, "/tmp/ptt-%u", (unsigned)getuid());
    if (mkdir(dir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "%s is not a directory of ours closed to others: not used", dir);
        return -1;
    }
    return 0;
}

static int sock_path(const char *session, struct sockaddr_un *a, char *err, size_t errlen)
{
    char dir[200];
    if (ptt_ctl_dir(dir, sizeof dir, err, errlen))
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
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 8)) {
        snprintf(err, errlen, "cannot listen on %s: %s", a.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(path, len, "%s", a.sun_path);
    return fd;
}

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

static void write_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

void ptt_ctl_serve(int fd, void (*handler)(void *arg, const char *req, char *reply, size_t len),
                   void *arg)
{
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    struct ucred cr;
    socklen_t cl = sizeof cr;
    char req[512], reply[8192];
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) || cr.uid != getuid()) {
        write_all(c, "error: this session belongs to another user\n");
    } else if (read_line(c, req, sizeof req, 1000) > 0) {
        req[strcspn(req, "\n")] = 0;
        handler(arg, req, reply, sizeof reply);
        write_all(c, reply);
    }
    close(c);
}

int ptt_ctl_request(const char *session, const char *req, char *reply, size_t len)
{
    struct sockaddr_un a;
    if (sock_path(session, &a, reply, len))
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        snprintf(reply, len, "no session '%s' of this user (%s)", session, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char line[600];
    snprintf(line, sizeof line, "%s\n", req);
    write_all(fd, line);
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
        char name[256], reply[64];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        if (ptt_ctl_request(name, "ping", reply, sizeof reply)) {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p); /* its ptt trace is gone */
            continue;
        }
        o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s\n", name);
    }
    closedir(d);
    return 0;
}
