/* The witness of ptt trace's process group: tells a signal sent to the whole group (timeout(1),
 * kill -- -PGID, a shell's kill %1, the program's own kill(0, ...), a terminal's Ctrl-C) or to
 * every process (systemd's stop, kill -1) from one sent to ptt trace alone. The program, in the
 * same group, got the first kind already: ptt trace passes on only the second.
 *
 * The witness is a process of the group that blocks the signals ptt trace passes on and takes
 * one only when ptt trace asks: a signal that reached it is pending there (/proc/PID/status,
 * ShdPnd). It is not ptt trace's child (made before ptt trace is a subreaper, by a fork that
 * ends at once), so the session's end, which waits for every child, does not wait for it; but
 * for a pid namespace's init, whose child every orphan is (session.c: only_helpers_left). It
 * ends when ptt trace's end of its socket closes, however ptt trace ended, and ptt trace kills
 * it at the end (one stopped would not see that end). */
#ifndef PTT_WITNESS_H
#define PTT_WITNESS_H

#include <sys/types.h>

struct ptt_witness {
    pid_t pid; /* 0: none (the signals are passed on as before) */
    int sock;  /* ours; the witness ends when it closes */
    int pidfd; /* readable once the witness has ended: its pid may be another's then */
};

/* Start it; with none, w->pid is 0 and every signal is passed on. */
void ptt_witness_start(struct ptt_witness *w);
/* Whether signal sig reached the witness since the last call (1), not (0), or unknown (-1: no
 * witness). A 1 is consumed: the witness takes its pending signals before this returns. */
int ptt_witness_got(struct ptt_witness *w, int sig);
void ptt_witness_stop(struct ptt_witness *w);

#endif
