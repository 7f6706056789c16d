/* Internals shared by libptt's files (not the hot path: see record.h). */
#ifndef PTT_LIBPTT_H
#define PTT_LIBPTT_H

#include <errno.h>

#include "record.h"
#include "real.h"

#define PTT_EXPORT __attribute__((visibility("default")))

extern struct ptt_pool *ptt_pool;
extern int ptt_pid;

/* Hand the calling thread's sub-buffer to the daemon (its thread ends, or the process exits). */
void ptt_thread_release(struct ptt_thread *t);
/* The same, marked PTT_DESC_BLOCKED: the thread is about to block (ptt_blocks). */
void ptt_release_blocked(struct ptt_thread *t);

/* The calling thread is about to block in a call (or may: a join, a message queue), whose IN is
 * written. While threads hold most of the pool's sub-buffers (pool->pressure), it hands its own
 * over first: a thread blocked for long then holds none that the others need, which with more
 * live threads than sub-buffers would starve them. Its next event takes a new one. Not in
 * asynchronous cancellation mode, where a cancellation inside the hand-over would leave it half
 * done. */
static inline void ptt_blocks(struct ptt_thread *t)
{
    struct ptt_pool *p = ptt_pool;
    if (__builtin_expect(p && atomic_load_explicit(&p->pressure, memory_order_relaxed), 0) &&
        !t->nest && !t->async_cancel)
        ptt_release_blocked(t);
}
#define PTT_BLOCKS() ptt_blocks(&ptt_self)

/* Record the modules mapped and not yet recorded (MODULE_LOAD). */
void ptt_record_modules(void);
/* Whether a code address is in libstdc++ (as recorded by ptt_record_modules). */
int ptt_in_libstdcxx(uint64_t addr);

/* Hand ptt trace a pidfd of this process (at start, after fork, after exec): it then records how
 * the process ends, whoever reaps it. */
void ptt_announce(uint32_t before);

/* The pool PTT_SHM-style env names, if it is this session's (NULL: refused, said on stderr). */
struct ptt_pool *ptt_pool_attach(const char *env);
/* Record into ptt_pool, just attached: PROCESS_START, the modules. */
void ptt_start(void);

/* ptt trace -p (lib/got.c): point the modules' slots of interposed routines at libptt's, and
 * put them back. */
int ptt_got_patch(void);
void ptt_got_restore(void);
/* The interposed routine whose call through a patched slot returns to ret, or NULL. */
const char *ptt_got_callee(uintptr_t ret);
/* Whether a is in libptt's code. */
int ptt_got_ours(uintptr_t a);
/* 1 while attached by ptt trace -p: modules loaded later are patched as they come. */
extern int ptt_attached;
/* The program's signal handlers back where libptt's trampoline is (lib/signal.c). */
void ptt_signals_restore(void);
/* Recording off for good: the masks read as nothing, the pool left alone. */
void ptt_masks_off(void);
/* Forget the modules recorded (a later attach records them again). */
void ptt_modules_forget(void);

/* The calling thread's tid, async-signal-safe, with no system call once ptt_tid_init found where
 * glibc keeps it (run once, at start-up). */
void ptt_tid_init(void);
int32_t ptt_gettid(void);
/* Where in a thread's descriptor (pthread_t) glibc keeps its tid, as ptt_tid_init found it; -1:
 * unknown. */
long ptt_tid_offset(void);

/* Unlink the pool's name (ptt trace is gone and cannot). */
void ptt_forget_pool(void);
/* The pool's name, for ptt_forget_pool (set once attached). */
void ptt_keep_pool_name(const char *name);

/* After an asynchronous cancellation inside an event: move back to the end of the whole events,
 * and clear what the cut event had written, so no stale word is ever read as a header. */
void ptt_discard_partial(struct ptt_thread *t);

/* Record TRACE_LOST for the events this thread dropped and has not reported yet. */
void ptt_report_lost(struct ptt_thread *t);

/* Convert a struct timespec the application passed into one argument (ns, wrapping). */
static inline uint64_t ptt_ts_arg(const struct timespec *ts)
{
    return ts ? (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec : 0;
}

/* Whether glibc would take this timeout without an error up front: only then may a timed call be
 * tried without blocking first (to see whether it has to wait) without changing its result. */
static inline int ptt_timeout_ok(clockid_t clock, const struct timespec *ts)
{
    return (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC) && ts && ts->tv_nsec >= 0 &&
           ts->tv_nsec < 1000000000;
}

/* Where the program called the interposed routine: its return address (a site field). With
 * --backtrace=N, the event is preceded by a BACKTRACE of N frames. */
static inline uint64_t ptt_site(uint64_t ret)
{
    if (__builtin_expect(ptt_backtrace_depth != 0, 0))
        ptt_record_backtrace();
    return ret;
}
#define PTT_SITE ptt_site(PTT_U(__builtin_return_address(0)))

/* errno after a routine that returned -1, for its OUT event; 0 otherwise. */
#define PTT_ERRNO(failed) ((uint64_t)((failed) ? errno : 0))

#endif
