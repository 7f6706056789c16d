/* The parts of a rotated trace (ptt trace --max-size, docs/trace.md "Long runs: rotation"): for
 * the output FILE, the files FILE.1, FILE.2, ... next to it; the previous run's become
 * FILE.old.1, ... as a single FILE becomes FILE.old. */
#ifndef PTT_PARTS_H
#define PTT_PARTS_H

#include <stddef.h>

/* The numbers N of the entries named "BASE.N" (N decimal from 1, no leading zero) in BASE's
 * directory, ascending, into a new array (NULL and *n 0 when there is none). */
unsigned *ptt_parts_list(const char *base, unsigned *n);
/* "BASE.N" into buf; -1 when it does not fit. */
int ptt_part_name(char *buf, size_t len, const char *base, unsigned n);
/* The numbers nums[0..n) (ascending) as ranges: "1-5, 7", ending in "..." if they do not fit. */
char *ptt_parts_ranges(char *buf, size_t len, const unsigned *nums, unsigned n);
/* The numbers from `from` up to nums[n - 1] that are not in nums[0..n) (ascending, none below
 * from) as ranges: "2-4, 6". Never one step per number (a part's number comes from a file name);
 * a list too long for buf ends with "...". */
char *ptt_parts_missing(char *buf, size_t len, const unsigned *nums, unsigned n, unsigned from);
/* Before a session writes path: the previous run moved out of the way, as perf keeps
 * perf.data.old. Its parts FILE.N become FILE.old.N, and with rotate FILE itself becomes
 * FILE.old (without rotate, ptt_output_open does that); what held the .old names before is
 * removed, so that FILE.old names one run. force: the previous run is removed instead. Never
 * follows a symbolic link (rename and unlink do not). *moved: whether the .old names hold it now.
 * -1 with one line in err (a FILE that is not a regular file or a link, with rotate). */
int ptt_parts_aside(const char *path, int force, int rotate, int *moved, char *err, size_t errlen);
/* The previous run given its names back (the program could not be run): FILE.old.N and, with
 * rotate, FILE.old. */
void ptt_parts_restore(const char *path, int rotate);
/* Create the part path: exclusively, mode 0600, no symbolic link followed, checked to be a new
 * regular file of ours. The descriptor, or -1 with errno and one line in err. */
int ptt_part_create(const char *path, char *err, size_t errlen);

#endif
