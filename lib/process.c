/* Processes: how the children of a traced process end, when it reaps them itself (ptt trace
 * reaps only its own children and the orphans it inherits; for the reaps no interposer sees,
 * each process hands it a pidfd of itself: ptt_announce in init.c). */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/wait.h>

#include "libptt.h"

static void reaped(pid_t pid, int status)
{
    if (pid > 0 && (WIFEXITED(status) || WIFSIGNALED(status)))
        PTT_REC(CHILD_EXIT, PTT_I(pid), (uint64_t)(uint32_t)status);
}

PTT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    if (!ptt_on())
        return REAL(waitpid)(pid, status, options);
    int st = 0;
    pid_t r = REAL(waitpid)(pid, status ? status : &st, options);
    reaped(r, status ? *status : st);
    return r;
}

PTT_EXPORT pid_t wait(int *status)
{
    return waitpid(-1, status, 0);
}

PTT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    if (!ptt_on())
        return REAL(wait4)(pid, status, options, ru);
    int st = 0;
    pid_t r = REAL(wait4)(pid, status ? status : &st, options, ru);
    reaped(r, status ? *status : st);
    return r;
}

/* dash, Debian's /bin/sh, reaps its children with it: glibc's calls __wait4, past wait4. */
PTT_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
    return wait4(-1, status, options, ru);
}

PTT_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    if (!ptt_on())
        return REAL(waitid)(type, id, info, options);
    int r = REAL(waitid)(type, id, info, options);
    if (r == 0 && info && info->si_pid > 0 && !(options & WNOWAIT) &&
        (info->si_code == CLD_EXITED || info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED))
        reaped(info->si_pid,
               info->si_code == CLD_EXITED
                   ? (info->si_status & 0xff) << 8
                   : (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0));
    return r;
}
