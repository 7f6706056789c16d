/* Hang detection (ptt trace --hang-timeout): ptt trace reads the sub-buffers threads are writing
 * (without taking them) to see whether any thread records events, and in which call each thread
 * is when none does. */
#ifndef PTT_HANG_H
#define PTT_HANG_H

#include <stdint.h>
#include <stdio.h>

#include "session/daemon.h"

struct ptt_hang;

struct ptt_hang *ptt_hang_new(const struct ptt_pool_geom *pool);
/* For ptt_daemon's drained hook (arg: the ptt_hang): read the rest of sub-buffer index, len bytes
 * long, before it is freed. */
void ptt_hang_drained(void *arg, uint32_t index, uint32_t len);
/* For ptt_daemon's exited hook: process pid ended and what it had not handed over was read. Its
 * threads that no longer exist are forgotten (the pid may be another process's already); those
 * kept for what they held too, once no newer process may have them (a report looks for a holder
 * in the waiter's process only). */
void ptt_hang_exited(void *arg, int32_t pid);
/* For ptt_daemon's started hook: a process pid was announced, its threads numbered after
 * `before`; threads of an earlier process that had the pid hold nothing any more. */
void ptt_hang_started(void *arg, int32_t pid, uint32_t before);
/* For ptt_daemon's execd hook: process pid runs a new program, and what its old one's threads
 * (numbered up to `before`) left in the pool was read; they are forgotten, what they held too. */
void ptt_hang_execd(void *arg, int32_t pid, uint32_t before);
/* Read what the threads wrote since the last look; 1 if any thread recorded an event. */
int ptt_hang_progress(struct ptt_hang *h);
/* Report the threads blocked in a call, on f and as HANG_* events into the trace; the number of
 * blocked threads (no report when 0). idle_ns: how long nothing was recorded. */
unsigned ptt_hang_report(struct ptt_hang *h, struct ptt_daemon *d, FILE *f, uint64_t idle_ns,
                         double ns_per_tick);
/* Report each deadlock not reported yet: threads of a process blocked for min_ns at least in
 * untimed calls, each on a lock another of them holds or joining another of them, whatever the
 * process's other threads do (a timer thread's periodic waits keep the watch's "no event" from
 * ever holding). On f, and as HANG_BLOCKED events; the number of threads reported. */
unsigned ptt_hang_deadlocks(struct ptt_hang *h, struct ptt_daemon *d, FILE *f, uint64_t min_ns,
                            double ns_per_tick);
/* The pids seen writing (for --kill-on-hang), 0-terminated, at most max. */
unsigned ptt_hang_pids(const struct ptt_hang *h, int *pids, unsigned max);
/* For --kill-on-hang, every thread of the processes pids (/proc/PID/task). With restart, take
 * their CPU times, to compare with from then on (0). Else 1 when every thread is blocked in a
 * traced call (a call open in the sub-buffers, not running, no CPU time used since the restart)
 * or stopped; 0 with the first other thread described in why. */
int ptt_hang_settled(struct ptt_hang *h, const int *pids, unsigned npids, int restart, char *why,
                     size_t len);
/* After ptt_hang_settled said 1: the first thread it found stopped (SIGSTOP, a debugger),
 * described ("pid P thread T"), or "" when none was. */
const char *ptt_hang_stopped(const struct ptt_hang *h);
void ptt_hang_free(struct ptt_hang *h);

#endif
