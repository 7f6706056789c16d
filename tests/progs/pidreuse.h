/* The pid the next process gets (root): the hang_pidreuse* programs give their second child
 * the first one's pid. */
#ifndef PTT_TEST_PIDREUSE_H
#define PTT_TEST_PIDREUSE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The next pid is v + 1 (ns_last_pid); exits 2 if it cannot be set. */
static inline void set_last_pid(int v)
{
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
    char s[32];
    int n = snprintf(s, sizeof s, "%d", v);
    if (fd < 0 || write(fd, s, (size_t)n) != n)
        exit(2);
    close(fd);
}

#endif
