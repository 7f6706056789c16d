/* ptt check: deadlocks, lock-order cycles, hangs, misuse of the POSIX threads API and errors
 * nobody looked at, found in one pass over a trace in time order. Memory grows with the threads,
 * objects, lock-order edges and findings, not with the number of events.
 *
 * A finding keeps addresses and thread ids only; its summary is a template whose {oN} and {tN}
 * name its N-th object and thread, filled in when it is printed (names are known at the end). */
#ifndef PTT_CHECK_H
#define PTT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

enum ptt_fkind { PTT_FK_DEADLOCK, PTT_FK_LOCK_ORDER, PTT_FK_HANG, PTT_FK_MISUSE, PTT_FK_ERROR };

#define PTT_FIND_MAX 64 /* threads, objects, steps of one finding (a longer cycle is cut) */

struct ptt_fthread {
    int32_t pid, tid;
};

/* A thread as an object (a join's): cls is the thread class, addr its pthread_t, tid its id. */
struct ptt_fobject {
    int32_t pid;
    int cls;
    uint64_t addr;
    int32_t tid;
};

struct ptt_fstep {
    int32_t pid, tid;
    uint16_t call;      /* the IN event of the call (its routine), 0 for none */
    const char *action; /* "took", "waits for", "unlocks"...: what the step shows */
    int object;         /* index into the finding's objects, -1 for none */
    uint64_t site;      /* return address of the call, 0 if not recorded */
    int64_t ns;         /* since the trace start */
};

struct ptt_finding {
    enum ptt_fkind kind;
    const char *what;  /* the rule, short: "unlock of a mutex not held", "lost wake-up"... */
    char summary[400]; /* template: {o0} {t1} ... */
    struct ptt_fthread threads[PTT_FIND_MAX];
    struct ptt_fobject objects[PTT_FIND_MAX];
    struct ptt_fstep steps[PTT_FIND_MAX];
    unsigned nthreads, nobjects, nsteps;
    uint64_t count; /* how many times it happened (errors, repeated misuse) */
    int err;        /* the errno of an error finding */
    uint64_t key;   /* findings of one key are one finding, counted */
};

struct ptt_check;

struct ptt_names;
/* names (may be NULL; fed every event before the checker) tells the program's own call sites
 * from those in system headers. */
struct ptt_check *ptt_check_new(const struct ptt_names *names);
/* The trace does not hold every call of the threads' lives (a flight recorder's window, event
 * classes left out): the rules that need them all (an unlock of a lock not held, a use of an
 * object never initialised) are off. */
void ptt_check_partial(struct ptt_check *c);
/* Whether the trace was recorded from an attach (ptt trace -p; partial then). */
int ptt_check_attached(const struct ptt_check *c);
/* Keep only the findings of the window from ns from on (what happens before is followed, not
 * reported); with no_end, the window ends before the trace: nothing is looked for at the end
 * (deadlocks, hangs: a thread waiting then may go on after). */
void ptt_check_window(struct ptt_check *c, int64_t from, int no_end);
/* Follow one event (every event of the trace, in time order). */
void ptt_check_event(struct ptt_check *c, const struct ptt_ev *ev);
/* The trace is over: find what can only be seen at its end (deadlocks, hangs, locks held at a
 * process's exit, lock-order cycles) and return every finding, in the order of their kinds and
 * then of their first step's time. *n: how many. Valid until ptt_check_free. */
struct ptt_finding **ptt_check_end(struct ptt_check *c, size_t *n);
void ptt_check_free(struct ptt_check *c);

const char *ptt_fkind_name(enum ptt_fkind k);

#endif
