/* Writing a trace file: whole records appended with write(2), so that a reader sees a prefix of
 * whole records even when ptt trace itself is killed mid-way (at worst a truncated last one).
 * A write that fails (a full disk, the file-size limit) leaves the file cut back to its last
 * whole record; the chunks after it are counted, not written. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <linux/magic.h>
#include <unistd.h>

#include "util/util.h"
#include "trace/writer.h"

#define BATCH 64 /* records per writev: 3 iovecs each, far below IOV_MAX */

/* What helps, after errno e. */
static void remedy(int e, char *buf, size_t len)
{
    struct rlimit fs;
    if (e == EFBIG && !getrlimit(RLIMIT_FSIZE, &fs) && fs.rlim_cur != RLIM_INFINITY)
        snprintf(buf, len,
                 "the file-size limit (ulimit -f) is %llu bytes: raise it, or keep only the "
                 "newest events with --flight-recorder=SIZE",
                 (unsigned long long)fs.rlim_cur);
    else if (e == EFBIG || e == ENOSPC || e == EDQUOT)
        snprintf(buf, len,
                 "free some space, write elsewhere with -o, or keep only the newest events with "
                 "--flight-recorder=SIZE");
    else if (e == EPIPE)
        snprintf(buf, len, "its reader went away");
    else
        snprintf(buf, len, "write elsewhere with -o");
}

static void report(const struct ptt_writer *w)
{
    if (!w->path)
        return;
    char what[256];
    remedy(w->error, what, sizeof what);
    ptt_warn("trace",
             "cannot write %s: %s; it keeps its first %llu events, the next ones are counted but "
             "not written (%s)",
             w->path, strerror(w->error), (unsigned long long)w->events, what);
}

int (*ptt_writer_fault_hook)(const struct iovec *iov, int n);

/* writev until done or an error: the bytes written, and the errno (0: none; ECANCELED: the
 * memory written from was cut meanwhile). */
static uint64_t write_iov(int fd, struct iovec *iov, int n, int *err)
{
    uint64_t done = 0;
    *err = 0;
    while (n > 0) {
        ssize_t k = writev(fd, iov, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EFAULT && ptt_writer_fault_hook && ptt_writer_fault_hook(iov, n)) {
            *err = ECANCELED; /* the rest of the memory reads zeros now: not written */
            return done;
        }
        if (k <= 0) {
            *err = k < 0 ? errno : EIO;
            return done;
        }
        done += (uint64_t)k;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return done;
}

static uint32_t nevents(const struct ptt_writer_rec *r)
{
    return r->type == PTT_REC_CHUNK ? ((const struct ptt_rec_chunk *)r->head)->nevents : 0;
}

/* The file's blocks reserved ahead of the writes, a step at a time, beyond its end (its size stays
 * that of its whole records, for a reader and after a kill): ext4 then reserves no block per
 * page written: 5 to 30 % of the drain's CPU in three rounds (docs/performance.md). Where the file
 * system is not ext4 (tmpfs would zero the pages first), or a step cannot be had, nothing is
 * reserved: the writes say what fails. The rest is given back at the close. */
#define PREALLOC_STEP (64u << 20)
#define PREALLOC_OFF UINT64_MAX

static void grow(struct ptt_writer *w, uint64_t end)
{
    if (w->prealloc == PREALLOC_OFF || end <= w->prealloc)
        return;
    if (!w->prealloc) {
        struct statfs f;
        struct stat st;
        if (fstatfs(w->fd, &f) || f.f_type != EXT4_SUPER_MAGIC || fstat(w->fd, &st) ||
            !S_ISREG(st.st_mode)) {
            w->prealloc = PREALLOC_OFF;
            return;
        }
    }
    uint64_t from = w->offset > w->prealloc ? w->offset : w->prealloc;
    w->reserved = 1; /* a step that failed may have reserved part of itself */
    if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)from, PREALLOC_STEP))
        w->prealloc = errno == ENOSPC || errno == EDQUOT ? from + PREALLOC_STEP : PREALLOC_OFF;
    else
        w->prealloc = from + PREALLOC_STEP;
}

/* Whether the memory of the chunks was cut (the fault hook, asked with no iovec): the chunks
 * that would be written from it are counted, not written (zeros, not events). */
static int source_cut(struct ptt_writer *w)
{
    if (!w->cut && ptt_writer_fault_hook && ptt_writer_fault_hook(NULL, 0))
        w->cut = 1;
    return w->cut;
}

/* Cut a partly written record off, so that the file reads whole to its end. The file-size
 * limit lets a file shrink. -1 where the output cannot be cut (a pipe). */
static int cut_partial(struct ptt_writer *w, uint64_t end)
{
    if (end <= w->offset)
        return 0;
    int r;
    while ((r = ftruncate(w->fd, (off_t)w->offset)) && errno == EINTR) {
    }
    lseek(w->fd, (off_t)w->offset, SEEK_SET); /* where a last try writes the END record */
    return r;
}

/* The rest of a record cut short, up to rec_end, as zeros, where the output cannot be cut back
 * (a pipe): the records after it still begin where a reader looks for them. */
static void pad_partial(struct ptt_writer *w, uint64_t end, uint64_t rec_end)
{
    static const char zeros[4096];
    while (end < rec_end) {
        size_t n = rec_end - end < sizeof zeros ? (size_t)(rec_end - end) : sizeof zeros;
        ssize_t k = write(w->fd, zeros, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->error = k < 0 ? errno : EIO;
            return;
        }
        end += (uint64_t)k;
    }
    w->offset = rec_end;
}

/* Up to BATCH records in one writev; only whole records count as written. */
static int put(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n)
{
    static const char zeros[8];
    int cut = source_cut(w);
    if (w->error) {
        for (unsigned i = 0; i < n; i++)
            w->unwritten += nevents(&r[i]);
        return -1;
    }
    struct iovec iov[3 * BATCH];
    uint64_t ends[BATCH], at = w->offset;
    int k = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t len = r[i].head_len + r[i].payload_len, pad = (8 - len % 8) % 8;
        struct ptt_record *h = r[i].head;
        ends[i] = 0; /* not written */
        if (cut && r[i].type == PTT_REC_CHUNK)
            continue;
        h->type = r[i].type;
        h->size = (uint32_t)(len + pad);
        iov[k++] = (struct iovec){r[i].head, r[i].head_len};
        if (r[i].payload_len)
            iov[k++] = (struct iovec){(void *)r[i].payload, r[i].payload_len};
        if (pad)
            iov[k++] = (struct iovec){(void *)zeros, pad};
        ends[i] = at += h->size;
    }
    grow(w, at);
    int err;
    uint64_t end = w->offset + write_iov(w->fd, iov, k, &err);
    unsigned i = 0;
    for (; i < n && ends[i] <= end; i++) {
        if (!ends[i]) { /* a chunk of the memory cut */
            w->unwritten += nevents(&r[i]);
            continue;
        }
        w->events += nevents(&r[i]);
        w->bytes += r[i].type == PTT_REC_CHUNK ? r[i].payload_len : 0;
        w->offset = ends[i];
    }
    for (unsigned j = i; j < n && err != ECANCELED; j++)
        w->unwritten += nevents(&r[j]);
    if (!err)
        return 0;
    if (err == ECANCELED) { /* the rest again, without the chunks */
        w->cut = 1;
        w->unwritten += nevents(&r[i]);
        if (cut_partial(w, end))
            pad_partial(w, end, ends[i]);
        if (!w->error)
            return i + 1 < n ? put(w, r + i + 1, n - i - 1) : 0;
        for (unsigned j = i + 1; j < n; j++)
            w->unwritten += nevents(&r[j]);
    } else {
        cut_partial(w, end); /* it fails, harmlessly, on a pipe */
        w->error = err;
    }
    report(w);
    return -1;
}

int ptt_writer_records(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n)
{
    int ret = 0;
    for (unsigned i = 0; i < n; i += BATCH)
        ret |= put(w, r + i, n - i < BATCH ? n - i : BATCH);
    return ret;
}

int ptt_writer_start(struct ptt_writer *w, int fd, const char *path)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->path = path;
    struct ptt_file_header h;
    memcpy(h.magic, PTT_FILE_MAGIC, 8);
    h.major = PTT_FORMAT_MAJOR;
    h.minor = PTT_FORMAT_MINOR;
    h.header_size = sizeof h;
    struct iovec iov = {&h, sizeof h};
    int err;
    w->offset = write_iov(fd, &iov, 1, &err);
    if (err) {
        w->error = errno = err;
        return -1;
    }
    return 0;
}

int ptt_writer_open(struct ptt_writer *w, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (ptt_writer_start(w, fd, NULL)) {
        int e = errno;
        close(fd);
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

int ptt_writer_record(struct ptt_writer *w, uint32_t type, const void *head, size_t head_len,
                      const void *payload, size_t payload_len)
{
    struct ptt_writer_rec r = {type, (void *)head, head_len, payload, payload_len};
    return put(w, &r, 1);
}

int ptt_writer_retry(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n)
{
    const char *path = w->path;
    int e = w->error;
    w->error = 0;
    w->path = NULL; /* the error was reported already */
    int ret = put(w, r, n);
    if (!w->error)
        w->error = e; /* the trace stays incomplete */
    w->path = path;
    return ret;
}

int ptt_writer_info(struct ptt_writer *w, const char *text)
{
    struct ptt_record h = {0}; /* put() fills it */
    return ptt_writer_record(w, PTT_REC_INFO, &h, sizeof h, text, strlen(text));
}

int ptt_writer_clock(struct ptt_writer *w, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns)
{
    struct ptt_rec_clock c = {{0, 0}, ticks, mono_ns, real_ns};
    return ptt_writer_record(w, PTT_REC_CLOCK, &c, sizeof c, 0, 0);
}

void ptt_writer_trim(struct ptt_writer *w)
{
    if (w->reserved) /* the blocks reserved beyond the end, even if reserving stopped since */
        while (ftruncate(w->fd, (off_t)w->offset) && errno == EINTR) {
        }
    w->prealloc = 0;
    w->reserved = 0;
}

int ptt_writer_close(struct ptt_writer *w)
{
    int r = w->error ? -1 : 0;
    ptt_writer_trim(w);
    if (close(w->fd) && !r && errno != EINTR) {
        w->error = errno;
        r = -1;
    }
    if (r && w->error)
        errno = w->error;
    return r;
}

/* Whether the kernel's protected_symlinks and protected_regular rules let the user write through
 * path, a link or a file of owner: not in a sticky world-writable directory, or owned by the user
 * or by the directory's owner. On a refusal, the one line in err (what: "a symbolic link", "a
 * file"). */
static int may_use(const char *path, uid_t owner, const char *what, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat d;
    if (stat(dir, &d)) {
        snprintf(err, errlen, "cannot create %s: %s: %s", path, dir, strerror(errno));
        return 0;
    }
    if (!(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH) || owner == geteuid() || owner == d.st_uid)
        return 1;
    snprintf(err, errlen,
             "refusing to write through %s: %s of uid %u in the sticky, world-writable "
             "directory %s, owned by neither you nor the directory's owner; give another -o",
             path, what, (unsigned)owner, dir);
    return 0;
}

/* An existing regular file opened to be overwritten (fd): the user's own, or one the rule above
 * lets them write, with no other name (a hard link another user made to a file of the user's
 * elsewhere); then made private, as a new one would be. */
static int may_overwrite(const char *path, int fd, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st)) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return 0;
    }
    if (!S_ISREG(st.st_mode))
        return 1;
    if (!may_use(path, st.st_uid, "a file", err, errlen))
        return 0;
    if (st.st_nlink > 1) {
        snprintf(err, errlen,
                 "refusing to overwrite %s: the file has other names (hard links); give "
                 "another -o",
                 path);
        return 0;
    }
    if (st.st_uid == geteuid() && (st.st_mode & 07777) != 0600)
        fchmod(fd, 0600);
    return 1;
}

/* Another name of a descriptor already open: /dev/stdout, /dev/fd/N, /proc/self/fd/N. */
static int names_descriptor(const char *path)
{
    char l[PATH_MAX];
    ssize_t n = readlink(path, l, sizeof l - 1);
    l[n > 0 ? n : 0] = 0;
    return !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14) ||
           !strncmp(l, "/proc/self/fd/", 14);
}

/* A special file (a FIFO, a device, a descriptor's name) opened for writing, as it is: the one
 * checked, (dev, ino) of target, nothing another user swapped in since. It is pinned first
 * without opening it (O_PATH: no wait for a FIFO's reader, no device's open), compared, then
 * opened through its descriptor, which names that very inode. link: path is the user's own
 * link (to /dev/stdout, say), followed. */
static int open_special(const char *path, const struct stat *target, int link, char *err,
                        size_t errlen)
{
    int pin = open(path, O_PATH | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
    struct stat p;
    if (pin < 0 || fstat(pin, &p)) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        if (pin >= 0)
            close(pin);
        return -1;
    }
    if (p.st_dev != target->st_dev || p.st_ino != target->st_ino) {
        snprintf(err, errlen,
                 "refusing to write %s: it changed while ptt opened it; give another -o", path);
        close(pin);
        return -1;
    }
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", pin);
    int fd = open(self, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == ENOENT) /* no /proc: the name again, its inode compared after */
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (link ? 0 : O_NOFOLLOW));
    int e = errno;
    close(pin);
    if (fd >= 0 && (fstat(fd, &p) || p.st_dev != target->st_dev || p.st_ino != target->st_ino)) {
        close(fd);
        snprintf(err, errlen,
                 "refusing to write %s: it changed while ptt opened it; give another -o", path);
        return -1;
    }
    if (fd < 0)
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(e));
    return fd;
}

int ptt_output_open(const char *path, int force, int open_it, struct ptt_output *o, char *err,
                    size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    struct stat st, t;
    int exists = !lstat(path, &st);
    if (!exists && errno != ENOENT) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    int link = exists && S_ISLNK(st.st_mode);
    if (link && !may_use(path, st.st_uid, "a symbolic link", err, errlen))
        return -1;
    int target = exists && !stat(path, &t); /* a dangling link has none */
    o->special = target && (!S_ISREG(t.st_mode) || (link && names_descriptor(path)));
    if (o->special && !open_it) {
        snprintf(err, errlen, "%s is not a regular file: --flight-recorder writes one", path);
        return -1;
    }
    /* Another user's FIFO in /tmp would read the session, or stop it (the protected_fifos
     * rule, whatever the system's setting). */
    if (o->special && !link && !may_use(path, st.st_uid, "a special file", err, errlen))
        return -1;
    if (o->special) {
        o->fd = open_it ? open_special(path, &t, link, err, errlen) : -1;
        return o->fd < 0 ? -1 : 0;
    }
    int flags = O_WRONLY | O_CLOEXEC;
    int overwrite = exists && force;
    /* Said before the open, which a kernel's protected_regular may refuse less clearly. */
    if (overwrite && !link && !may_use(path, st.st_uid, "a file", err, errlen))
        return -1;
    if (overwrite) /* truncated only once checked again (may_overwrite) */
        flags |= O_CREAT | (link ? 0 : O_NOFOLLOW);
    else {
        char old[PATH_MAX];
        errno = ENAMETOOLONG;
        if (exists && (snprintf(old, sizeof old, "%s.old", path) >= (int)sizeof old ||
                       rename(path, old))) { /* rename never follows a link */
            snprintf(err, errlen,
                     "cannot keep the existing %s as %s.old: %s (--force overwrites it)", path,
                     path, strerror(errno));
            return -1;
        }
        o->kept_old = exists;
        flags |= O_CREAT | O_EXCL | O_NOFOLLOW;
    }
    o->created = !(overwrite && link); /* the user's own link is theirs to keep */
    if (!open_it)
        return 0;
    o->fd = open(path, flags, 0600);
    if (o->fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        o->created = 0; /* what is there now is not ours */
        ptt_output_undo(path, o);
        return -1;
    }
    if (overwrite) {
        int ok = may_overwrite(path, o->fd, err, errlen);
        if (ok && ftruncate(o->fd, 0)) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            ok = 0;
        }
        if (!ok) {
            close(o->fd);
            o->fd = -1;
            o->created = 0; /* what is there is not ours: left as it was */
            return -1;
        }
    }
    return 0;
}

void ptt_output_undo(const char *path, const struct ptt_output *o)
{
    char old[PATH_MAX];
    if (o->created)
        unlink(path);
    if (o->kept_old && snprintf(old, sizeof old, "%s.old", path) < (int)sizeof old)
        rename(old, path);
}

FILE *ptt_output_fopen(const char *path, char *err, size_t errlen)
{
    int fd;
    if (!strcmp(path, "-"))
        fd = dup(STDOUT_FILENO); /* the caller's fclose leaves standard output open */
    else {
        struct ptt_output o;
        if (ptt_output_open(path, 1, 1, &o, err, errlen))
            return NULL;
        fd = o.fd;
    }
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f && !strcmp(path, "-")) /* EINVAL: a read-only one, where ptt found it closed */
        snprintf(err, errlen, "cannot write standard output: %s",
                 strerror(errno == EINVAL ? EBADF : errno));
    else if (!f)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (!f && fd >= 0)
        close(fd);
    return f;
}
