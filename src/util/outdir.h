/* The directories that ptt export writes its files into (CTF, SCO, tables) and those files: the
 * user's alone, never written through a link another user planted (docs/security.md). */
#ifndef PTT_OUTDIR_H
#define PTT_OUTDIR_H

/* DIR made private (0700) when missing; an existing one must be a directory of the user's, not
 * a symbolic link. 0, or -1 with errno (ELOOP: a link; EPERM: another user's; ENOTDIR). */
int ptt_outdir_make(const char *dir);
/* A file of DIR written anew: created 0600 with O_EXCL and O_NOFOLLOW, an existing regular file
 * of the user's (an earlier export's) removed first, anything else refused; checked once open
 * (a regular file of the user's with no other link). A descriptor, or -1 with errno (ELOOP: a
 * link; EPERM: another user's, or not a regular file; EMLINK: a file with other links). */
int ptt_outdir_create(const char *path);
/* A file made by ptt_outdir_create, opened again to append to it, checked the same way. */
int ptt_outdir_append(const char *path);
/* ptt_outdir_create (append: ptt_outdir_append) as a stdio stream: NULL with errno, nothing left
 * open. */
#include <stdio.h>
FILE *ptt_outdir_fopen(const char *path, int append);
/* strerror, but what the three above refuse said as such. */
const char *ptt_outdir_strerror(int err);

#endif
