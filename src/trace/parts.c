/* The parts of a rotated trace: their names, the previous run's out of the way, a new part
 * created as safely as the single output file (parts.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/parts.h"
#include "util/util.h"

/* N of a name "BASE.N", else 0. */
static unsigned part_number(const char *name, const char *base, size_t bl)
{
    if (strncmp(name, base, bl) || name[bl] != '.' || name[bl + 1] < '1' || name[bl + 1] > '9')
        return 0;
    unsigned long v = 0;
    for (const char *p = name + bl + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > UINT_MAX / 10)
            return 0;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    return v <= UINT_MAX ? (unsigned)v : 0;
}

static int by_number(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

unsigned *ptt_parts_list(const char *base, unsigned *n)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(base, '/'), *name = slash ? slash + 1 : base;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == base ? 1 : (int)(slash - base), base);
    *n = 0;
    DIR *d = *name ? opendir(dir) : NULL;
    if (!d)
        return NULL;
    unsigned *v = NULL, cap = 0;
    size_t bl = strlen(name);
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned k = part_number(e->d_name, name, bl);
        if (!k)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            v = ptt_must(realloc(v, cap * sizeof *v));
        }
        v[(*n)++] = k;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, by_number);
    return v;
}

int ptt_part_name(char *buf, size_t len, const char *base, unsigned n)
{
    return snprintf(buf, len, "%s.%u", base, n) < (int)len ? 0 : -1;
}

/* The range a-b (a alone when b is a) after the at bytes of buf, ", " before it but the first;
 * "..." in its place when, not the last, it would leave no room for "..." after it. -1 when not
 * written: nothing more can be. */
static int put_range(char *buf, size_t len, size_t *at, unsigned a, unsigned b, int last)
{
    char r[32];
    const char *sep = *at ? ", " : "";
    int k =
        b > a ? snprintf(r, sizeof r, "%s%u-%u", sep, a, b) : snprintf(r, sizeof r, "%s%u", sep, a);
    if (*at + (size_t)k + (last ? 1 : sizeof ", ...") > len) {
        snprintf(buf + *at, len - *at, "%s...", sep);
        *at = len;
        return -1;
    }
    memcpy(buf + *at, r, (size_t)k + 1);
    *at += (size_t)k;
    return 0;
}

char *ptt_parts_ranges(char *buf, size_t len, const unsigned *nums, unsigned n)
{
    size_t at = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j + 1 < n && nums[j + 1] == nums[j] + 1)
            j++;
        if (put_range(buf, len, &at, nums[i], nums[j], j + 1 == n))
            break;
        i = j + 1;
    }
    return buf;
}

char *ptt_parts_missing(char *buf, size_t len, const unsigned *nums, unsigned n, unsigned from)
{
    size_t at = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < n; from = nums[i++] + 1)
        if (nums[i] > from && put_range(buf, len, &at, from, nums[i] - 1, i + 1 == n))
            break;
    return buf;
}

/* Remove the parts BASE.N; -1 with one line in err. */
static int remove_parts(const char *base, char *err, size_t errlen)
{
    unsigned n, *v = ptt_parts_list(base, &n);
    char p[PATH_MAX];
    int r = 0;
    for (unsigned i = 0; i < n && !r; i++)
        if (!ptt_part_name(p, sizeof p, base, v[i]) && unlink(p) && errno != ENOENT) {
            snprintf(err, errlen, "cannot remove the existing %s: %s", p, strerror(errno));
            r = -1;
        }
    free(v);
    return r;
}

/* rename, or -1 with the line that says which file could not be kept. */
static int keep(const char *from, const char *to, char *err, size_t errlen)
{
    if (!rename(from, to) || errno == ENOENT)
        return 0;
    snprintf(err, errlen, "cannot keep the existing %s as %s: %s (--force removes it)", from, to,
             strerror(errno));
    return -1;
}

/* The parts BASE.N renamed OLD.N. */
static int keep_parts(const char *base, const char *old, const unsigned *v, unsigned n, char *err,
                      size_t errlen)
{
    char from[PATH_MAX], to[PATH_MAX];
    for (unsigned i = 0; i < n; i++) {
        if (ptt_part_name(from, sizeof from, base, v[i]) ||
            ptt_part_name(to, sizeof to, old, v[i])) {
            snprintf(err, errlen, "%s: name too long", base);
            return -1;
        }
        if (keep(from, to, err, errlen))
            return -1;
    }
    return 0;
}

/* FILE with rotation: what is there, or -1 with one line in err when it cannot be moved away. */
static int single_file(const char *path, int *exists, char *err, size_t errlen)
{
    struct stat st;
    *exists = !lstat(path, &st);
    if (!*exists && errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (*exists && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        snprintf(err, errlen,
                 "%s is not a regular file: --max-size writes the parts %s.1, %s.2, ... and a "
                 "reader given %s would read it instead; give another -o",
                 path, path, path, path);
        return -1;
    }
    return 0;
}

/* The previous run removed: FILE (with rotate) and its parts. */
static int remove_previous(const char *path, int single, char *err, size_t errlen)
{
    if (single && unlink(path) && errno != ENOENT) {
        snprintf(err, errlen, "cannot remove the existing %s: %s", path, strerror(errno));
        return -1;
    }
    return remove_parts(path, err, errlen);
}

int ptt_parts_aside(const char *path, int force, int rotate, int *moved, char *err, size_t errlen)
{
    char old[PATH_MAX];
    int single = 0, r = 0;
    *moved = 0;
    if (rotate && single_file(path, &single, err, errlen))
        return -1;
    if (snprintf(old, sizeof old, "%s.old", path) >= (int)sizeof old) {
        snprintf(err, errlen, "%s: name too long", path);
        return -1;
    }
    unsigned n, *v = ptt_parts_list(path, &n);
    if (!single && !n)
        return 0;
    if (force)
        r = remove_previous(path, single, err, errlen);
    else {
        /* FILE.old names one run: the one before the previous goes. */
        r = remove_parts(old, err, errlen);
        if (!r && !single && (rotate || access(path, F_OK)) && unlink(old) && errno != ENOENT) {
            snprintf(err, errlen, "cannot remove the older %s: %s", old, strerror(errno));
            r = -1;
        }
        if (!r && single)
            r = keep(path, old, err, errlen);
        if (!r)
            r = keep_parts(path, old, v, n, err, errlen);
        *moved = !r;
    }
    free(v);
    return r;
}

void ptt_parts_restore(const char *path, int rotate)
{
    char old[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
    if (snprintf(old, sizeof old, "%s.old", path) >= (int)sizeof old)
        return;
    unsigned n, *v = ptt_parts_list(old, &n);
    for (unsigned i = 0; i < n; i++)
        if (!ptt_part_name(from, sizeof from, old, v[i]) &&
            !ptt_part_name(to, sizeof to, path, v[i]))
            rename(from, to);
    free(v);
    if (rotate)
        rename(old, path);
}

/* What is at path already, for the line that refuses it. */
static void what_is_there(const char *path, char *buf, size_t len)
{
    struct stat st;
    if (lstat(path, &st))
        snprintf(buf, len, "something");
    else
        snprintf(buf, len, "%s of uid %u",
                 S_ISLNK(st.st_mode)   ? "a symbolic link"
                 : S_ISREG(st.st_mode) ? "a file"
                                       : "a special file",
                 (unsigned)st.st_uid);
}

int ptt_part_create(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        char what[128];
        what_is_there(path, what, sizeof what);
        snprintf(err, errlen,
                 "refusing to write %s: %s is there already, which this session did not make "
                 "(nothing is written through it)",
                 path, what);
        errno = EEXIST;
        return -1;
    }
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
        snprintf(err, errlen, "cannot create %s: it is not a new file of ours", path);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}
