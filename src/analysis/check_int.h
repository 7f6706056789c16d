/* The checker's state, shared by its parts: check.c (threads, objects, the pass), check_misuse.c
 * (misuse and errors, as they happen), check_order.c (the lock-order graph), check_block.c (what
 * the threads wait for at the end: deadlocks, hangs). */
#ifndef PTT_CHECK_INT_H
#define PTT_CHECK_INT_H

#include "analysis/check.h"
#include "analysis/names.h"
#include "analysis/tracker.h"
#include "util/hmap.h"

struct cproc;

struct cthread {
    int32_t pid, tid;
    struct cproc *proc;
    struct cthread *next; /* in its process's list */
    uint64_t handle;      /* its pthread_t (THREAD_START), 0 for a main thread */
    int detached;         /* created detached, or pthread_detach'ed */
    int joined;           /* a join of it returned */
    int ended;            /* THREAD_END seen */
    int complete;         /* every event of it since its start is in the trace */
    uint64_t stacksize;   /* asked for at its creation, 0 for the default */
    int64_t start_ns;     /* its THREAD_START */
    struct ptt_tthread *tt;
    /* Its state when the trace or its process ended while it was inside a call. */
    int final;
    struct ptt_open fcall;
    struct ptt_held *fheld;
    unsigned nfheld;
    /* An EOWNERDEAD lock not yet made consistent: an error if it is unlocked so. */
    uint64_t dead_obj, dead_site;
    int64_t dead_ns;
    uint16_t dead_call;
    uint64_t foreign; /* the lock it is unlocking for another thread */
    int explained;    /* the error of its innermost call is a misuse's, already reported */
};

/* A pthread_t, mapped to the thread that last had it (glibc hands handles out again). */
struct chandle {
    struct cthread *th; /* NULL while created but not started */
    int detached;       /* asked at the creation, for a thread not started yet */
    int64_t created_ns;
};

struct cobj {
    uint64_t key; /* in the objects' table */
    int32_t pid;
    int cls;
    uint64_t addr;
    /* shared: a semaphore of sem_open, or of sem_init with pshared */
    unsigned inited : 1, destroyed : 1, robust : 1, seen : 1, reported : 1, shared : 1;
    int mtype;          /* mutex type: 0 normal, 1 recursive, 2 error-checking, 3 adaptive */
    int32_t owner;      /* the thread holding it exclusively, 0 if none */
    int64_t destroy_ns; /* its last successful destroy */
    uint64_t destroy_site;
    int32_t destroy_tid;
    unsigned waiters;    /* threads inside a wait on it (condvar, barrier, semaphore) */
    uint64_t wait_mutex; /* a condvar's mutex while it has waiters */
    uint64_t bcount;     /* a barrier's count */
    uint64_t signals;    /* signals and broadcasts of a condvar, posts of a semaphore */
    int64_t signal_ns;   /* the last one */
    int signal_unheard;  /* no thread was waiting on it then */
    uint64_t signal_site;
    int32_t signal_tid;
    uint16_t signal_call;
    unsigned readers; /* read locks held */
    int32_t wait_tid; /* a thread waiting on it (wait_mutex's waiter) */
    uint64_t wait_site;
    int64_t wait_ns;
    int32_t last_unlock_tid; /* its last unlock */
    uint64_t last_unlock_site;
    int64_t last_unlock_ns;
    /* A semaphore used as a lock (CPython's locks are): made with the value 1, never seen above
     * it, every post by the thread whose wait took it last. 0: not known yet (no sem_init seen,
     * no post yet), 1: so far, -1: not. Its taker is then the thread a waiter waits for. */
    int sem_lock;
    int32_t taker;    /* the thread whose wait took it last, 0 once posted */
    int taker_posted; /* a taker posted it once: used as a lock, not only made as one */
    unsigned opens;   /* sem_open's of it not closed (glibc maps a name once per process) */
    uint64_t taker_site;
    int64_t taker_ns;
};

#define PTT_CHECK_OCACHE 256
#define PTT_CHECK_TCACHE 64

struct cmodule {
    uint64_t lo, hi;
};

/* A process: its threads and binaries, and how it ended. */
struct cproc {
    int32_t pid;
    unsigned gen; /* its execs: the generation of its objects */
    int started, hung, exited;
    /* hung_ns: the hang report that said so (HANG_BLOCKED): an event after it undoes it */
    int64_t hung_ns;
    int crashed;   /* ended by a signal of its own fault (SIGSEGV...): it died, it did not hang */
    int32_t ppid;  /* the traced process it was forked from, 0 if none */
    unsigned pgen; /* that process's generation at the fork: the objects the child inherits */
    int cxx; /* maps libstdc++: its std::mutex and std::condition_variable need no init call */
    struct cthread *threads; /* every thread met, newest first */
    struct cmodule *mods;
    size_t nmods, modcap;
    uint64_t top; /* the end of its highest binary: the main thread's stack is above */
};

struct ptt_check {
    struct ptt_tracker *tracker;
    struct ptt_hmap threads; /* (pid, tid) -> cthread */
    struct ptt_hmap handles; /* (pid, pthread_t) -> chandle */
    struct ptt_hmap objects; /* (pid, address) -> cobj */
    struct ptt_hmap dedup;   /* finding key -> finding */
    struct cthread *last;    /* the last event's thread: most events follow their thread's */
    struct ptt_finding **f;
    size_t nf, fcap;
    struct ptt_hmap procs; /* pid -> cproc */
    struct check_order *order;
    int64_t end_ns;
    int64_t from;                /* ptt_check_window: findings before are not kept */
    int no_end;                  /* nor those of the end (the window ends before the trace) */
    struct ptt_finding *scratch; /* a finding before the window, filled and forgotten */
    int partial;  /* events were lost, or recording switched: "not held" cannot be told */
    int attached; /* ptt trace -p: what the threads did before the attach is not in the trace */
    const struct ptt_names *names;
    struct cproc *last_proc; /* the last process looked up */
    struct cobj *ocache[PTT_CHECK_OCACHE];
    struct cobj *lobj;                        /* the object looked up last (check_obj), or NULL */
    struct cthread *tcache[PTT_CHECK_TCACHE]; /* by tid: threads take turns, event by event */
};

/* The threads met last, by tid: threads take turns, event by event. */
static inline struct cthread **check_tcache(struct ptt_check *c, int32_t tid)
{
    return &c->tcache[(uint32_t)tid % PTT_CHECK_TCACHE];
}
struct cthread *check_thread_table(struct ptt_check *c, int32_t pid, int32_t tid);
/* A thread, made if new. In line: every event looks its thread up. */
static inline struct cthread *check_thread(struct ptt_check *c, int32_t pid, int32_t tid)
{
    if (c->last && c->last->tid == tid && c->last->pid == pid)
        return c->last;
    struct cthread *th = *check_tcache(c, tid);
    if (th && th->tid == tid && th->pid == pid)
        return c->last = th;
    return check_thread_table(c, pid, tid);
}
struct cproc *check_proc(struct ptt_check *c, int32_t pid);
struct cthread *check_thread_of(struct ptt_check *c, int32_t pid, uint64_t handle);

/* The objects met last, by address and pid (of the process's current program: an exec empties
 * it): a lock and its unlock look the same object up 6 times, and the table's key costs two
 * multiplications in a row. */
static inline struct cobj **check_ocache(struct ptt_check *c, int32_t pid, uint64_t addr)
{
    return &c->ocache[(addr >> 3 ^ addr >> 11 ^ (uint32_t)pid) % PTT_CHECK_OCACHE];
}
struct cobj *check_obj_table(struct ptt_check *c, int32_t pid, uint64_t addr, int cls, int make);
/* An object of the process's current program, made (of class cls) if new. The last one first:
 * an event's rules look its object up again and again. */
static inline struct cobj *check_obj(struct ptt_check *c, int32_t pid, uint64_t addr, int cls)
{
    struct cobj *o = c->lobj;
    if (o && o->addr == addr && o->pid == pid)
        return o;
    o = *check_ocache(c, pid, addr);
    return c->lobj =
               o && o->addr == addr && o->pid == pid ? o : check_obj_table(c, pid, addr, cls, 1);
}
/* The same, or NULL if not met. */
static inline struct cobj *check_obj_find(struct ptt_check *c, int32_t pid, uint64_t addr)
{
    struct cobj *o = c->lobj;
    if (o && o->addr == addr && o->pid == pid)
        return o;
    o = *check_ocache(c, pid, addr);
    o = o && o->addr == addr && o->pid == pid ? o : check_obj_table(c, pid, addr, 0, 0);
    if (o)
        c->lobj = o;
    return o;
}

/* A new finding (count 1), or the one of the same key, counted once more. */
struct ptt_finding *check_add(struct ptt_check *c, enum ptt_fkind kind, const char *what,
                              uint64_t key, const char *summary);
int check_fthread(struct ptt_finding *f, int32_t pid, int32_t tid);
int check_fobject(struct ptt_finding *f, int32_t pid, int cls, uint64_t addr);
int check_fthread_obj(struct ptt_check *c, struct ptt_finding *f, struct cthread *th);
void check_fstep(struct ptt_finding *f, int32_t pid, int32_t tid, uint16_t call, const char *action,
                 int object, uint64_t site, int64_t ns);
uint64_t check_site_of(const struct ptt_ev *ev);

/* check.c, for the pass (ptt_check_event, in check_misuse.c): a thread starts (its handle mapped
 * to it); pthread_create returned a handle; an event about the trace or a process rather than a
 * thread's calls (1: nothing more to do with it); what a thread left inside a call was doing. */
void check_thread_start(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev);
void check_thread_created(struct ptt_check *c, const struct ptt_ev *ev, const struct ptt_open *in);
int check_meta_event(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev);
void check_snapshot(struct cthread *th);

/* check_misuse.c: ptt_check_event, which runs its rules before (IN events and MUTEX_INIT) and
 * after the tracker has seen an event. */
void check_thread_end(struct ptt_check *c, struct cthread *th, const struct ptt_ev *ev);
void check_process_end(struct ptt_check *c, int32_t pid, int64_t ns);

/* check_order.c */
struct check_order *check_order_new(void);
void check_order_acquire(struct check_order *o, struct cthread *th, const struct ptt_ev *ev,
                         uint64_t lock, int shared);
void check_order_end(struct ptt_check *c, struct check_order *o);
void check_order_free(struct check_order *o);

/* check_block.c */
void check_block_end(struct ptt_check *c);

#endif
