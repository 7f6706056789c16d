/* The directories of ptt export's files and their files: private, no link followed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outdir.h"

int ptt_outdir_make(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0700) && errno != EEXIST)
        return -1;
    if (lstat(dir, &st))
        return -1;
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        errno = S_ISLNK(st.st_mode) ? ELOOP : S_ISDIR(st.st_mode) ? EPERM : ENOTDIR;
        return -1;
    }
    return 0;
}

/* fd if it is a regular file of the user's with no other name, else closed: -1 with errno. */
static int checked(int fd)
{
    struct stat st;
    int e = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st))
        e = errno;
    else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
        e = EPERM;
    else if (st.st_nlink != 1)
        e = EMLINK;
    if (!e)
        return fd;
    close(fd);
    errno = e;
    return -1;
}

int ptt_outdir_create(const char *path)
{
    for (int again = 0;; again = 1) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST || again)
            return checked(fd);
        /* Something is there: an earlier export's file goes, anything else stays. */
        struct stat st;
        if (lstat(path, &st))
            return -1;
        if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            errno = S_ISLNK(st.st_mode) ? ELOOP : EPERM;
            return -1;
        }
        if (unlink(path)) /* a name, never followed */
            return -1;
    }
}

int ptt_outdir_append(const char *path)
{
    return checked(open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
}

FILE *ptt_outdir_fopen(const char *path, int append)
{
    int fd = append ? ptt_outdir_append(path) : ptt_outdir_create(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f && fd >= 0) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

const char *ptt_outdir_strerror(int err)
{
    switch (err) {
    case ELOOP: return "a symbolic link: refused, ptt export follows none";
    case EPERM: return "not a file or directory of the user's own: refused";
    case EMLINK: return "a file with other links: refused";
    default: return strerror(err);
    }
}
