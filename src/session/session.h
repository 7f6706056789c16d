/* A tracing session, as ptt trace runs it once the program has started: drain the pool, reap
 * the session's processes, answer ptt ctl, watch for hangs, then save everything. */
#ifndef PTT_SESSION_H
#define PTT_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "session/daemon.h"
#include "session/flight.h"
#include "session/procs.h"
#include "session/witness.h"
#include "trace/writer.h"

/* ptt trace's exit status for its own failures (docs/trace.md): bad usage, the pool or the
 * output cannot be made, the trace is incomplete. */
#define PTT_TRACE_FAILED 125

struct ptt_session {
    struct ptt_daemon d;
    struct ptt_writer w;       /* the trace file (without a flight recorder) */
    struct ptt_output out;     /* how it was opened */
    struct ptt_rotate *rot;    /* --max-size: the parts w writes into */
    int parts_moved;           /* a previous run's parts were kept as FILE.old.N */
    struct ptt_flight *flight; /* the window (with --flight-recorder) */
    const char *output;
    const char *name;               /* the session: ptt-UID-PID */
    char *info;                     /* the INFO text, written again by the flight recorder */
    struct ptt_rec_clock clocks[2]; /* the first and the latest clock records */
    unsigned nclocks;
    double ns_per_tick;
    pid_t child;
    int follow;
    int quiet;
    int overflow; /* enum ptt_overflow */
    int child_done;
    int child_status;
    int exec_errno;
    int ctl_fd; /* -1: no live control */
    char ctl_path[128];
    struct ptt_procs *procs; /* NULL: only the ends ptt trace reaps are known */
    uint64_t class_mask;     /* what ptt ctl events set; recording on or off, level */
    int light;
    int stopped;
    uint64_t hang_ns; /* --hang-timeout; 0: off */
    int kill_on_hang;
    int hangs; /* hangs reported */
    /* ptt trace -p: the process attached (NULL: a program ptt trace started) */
    struct ptt_attach *attach;
    int target_fd;        /* a pidfd of it: readable once it has ended */
    int detach_asked;     /* a signal or ptt ctl stop: detach */
    uint64_t deadline_ns; /* --duration: detach then (monotonic; 0: none) */
    int detach_failed;
    /* Attached to another user's process (as root): its signals to us are refused, so its
     * writers cannot wake the drain nor the guardian (lib/buffer.c): the pool is reserved whole
     * at the start, and the drain never sleeps longer than when busy. */
    int unwakeable;
    struct ptt_witness witness; /* tells a signal to the whole group from one to ptt trace */
    pid_t guardian_pid;         /* our child, as the witness, when we are a namespace's init */
};

/* Record a clock calibration point (file or window). */
void ptt_session_clock(struct ptt_session *s);
/* One event id (THREAD_ATTACHED, THREAD_RUNNING) in process pid's stream for each thread it has
 * now, with its name; pidfd, a pidfd of the process, tells that pid was still the process after
 * the reading (-1: ptt trace's own child, not reaped yet, whose pid cannot change). */
void ptt_session_threads(struct ptt_session *s, pid_t pid, int pidfd, uint16_t id);
/* Run until the session ends; returns ptt trace's exit status, after the summary line. */
int ptt_session_run(struct ptt_session *s);

#endif
