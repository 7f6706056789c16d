/* Whether a thread of this process sleeps in a futex wait now: the test programs ptt trace -p
 * attaches to announce that their threads are blocked only then. C and C++ (attach_cancel.cc). */
#ifndef PTT_TEST_IN_FUTEX_H
#define PTT_TEST_IN_FUTEX_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* The kernel shows the system call a thread sleeps in first in /proc/self/task/TID/syscall. */
static inline int in_futex(pid_t tid)
{
    char path[64], buf[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
    }
    return atoi(buf) == SYS_futex;
}

#endif
