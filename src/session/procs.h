/* How every process of a session ends, whoever reaps it.
 *
 * ptt trace reaps its own child and the orphans it inherits; a traced parent's waitpid() is
 * interposed. glibc's system() and popen() reap their children where no interposer sees, so each
 * traced process hands ptt trace a pidfd of itself when it starts (libptt, lib/process.c), over
 * a socket in the session's private directory. Once the process has ended and been reaped, the
 * kernel (Linux 6.15 and later: PIDFD_INFO_EXIT) tells its wait status through that pidfd.
 * Without that support nothing is announced and only the reaps ptt trace sees are recorded. */
#ifndef PTT_PROCS_H
#define PTT_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ptt_procs;

/* Whether this kernel tells a reaped process's wait status through its pidfd. */
int ptt_procs_supported(void);
/* The same, told by pidfd, a pidfd of a child of ours that was reaped: no process of its own
 * (ptt trace probes on the guardian's first child). */
int ptt_procs_supported_by(int pidfd);
/* The wait status of the ended process pidfd is of, once its parent has reaped it: 0 and
 * *status, or -1 (not reaped yet, or a kernel that does not tell). */
int ptt_procs_exit_status(int pidfd, int *status);
/* Whether the end of the process pidfd is of was recorded (ptt_procs_step: it announced itself,
 * and was reaped). */
int ptt_procs_recorded(const struct ptt_procs *p, int pidfd);
/* Listen at path; NULL (and a reason in err) when it cannot. */
struct ptt_procs *ptt_procs_open(const char *path, char *err, size_t errlen);
/* A descriptor that polls readable when there is work for ptt_procs_step. */
int ptt_procs_fd(const struct ptt_procs *p);
/* What ptt_procs_step tells, with arg: ended(arg, pid, status, at) for each ended process whose
 * status is known (it has been reaped), at: the trace clock's time (clock_tsc as ptt_ticks) when
 * its pidfd first said it had ended, 0 if it had when announced; execd(arg, pid, before) for a
 * process announced again, which runs a new program now, whose threads are numbered after
 * `before` (its old program's, up to it); started(arg, pid, before) for a process announced
 * first, whose threads are numbered after `before` (those of an earlier process of its pid, up
 * to it). */
struct ptt_procs_hooks {
    void (*ended)(void *arg, pid_t pid, int status, uint64_t at);
    void (*execd)(void *arg, pid_t pid, uint32_t before);
    void (*started)(void *arg, pid_t pid, uint32_t before); /* a new process announced */
    void *arg;
    int clock_tsc;
};
/* Take the announcements waiting and note the processes that ended, telling h. */
void ptt_procs_step(struct ptt_procs *p, const struct ptt_procs_hooks *h);
/* fn(arg, pid, pidfd) for each process announced that has not ended (as far as the last
 * ptt_procs_step knows). */
void ptt_procs_each_live(const struct ptt_procs *p, void (*fn)(void *arg, pid_t pid, int pidfd),
                         void *arg);
/* Reap an ended child of ptt trace's, as waitpid(-1, status, WNOHANG) does (p may be NULL),
 * whose end ptt trace then records: not again, when its announcement comes. */
pid_t ptt_procs_reap(struct ptt_procs *p, int *status);
/* Stop listening, unlink the socket, close every pidfd. */
void ptt_procs_close(struct ptt_procs *p);

#endif
