/* What the pictures of a trace are made of (Pajé, Perfetto, the HTML report), derived once from
 * the events as they are read in time order:
 * - calls: every routine a thread was inside, from its _IN to its _OUT;
 * - states: the spans a thread was blocked (in a lock, a condvar, a barrier, a join...);
 * - links: one thread acting on another (create, join, signal/broadcast waking a waiter,
 *   unlock handing a mutex to the next owner, a barrier's last arrival releasing the others,
 *   sem_post waking sem_wait);
 * - owners: who holds a mutex, rwlock or spinlock (a rwlock's readers: how many);
 * - counters: a semaphore's value, the waiters of a lock.
 * Streaming: memory per thread and object. */
#ifndef PTT_TIMELINE_H
#define PTT_TIMELINE_H

#include <stdint.h>

#include "analysis/names.h"
#include "trace/reader.h"

/* The states, their names and colours: states.def. */
enum ptt_tl_state {
#define PTT_STATE(id, name, rgb, cname) PTT_TL_##id,
#include "analysis/states.def"
    PTT_TL_NSTATES
};

enum ptt_tl_link {
    PTT_TL_CREATE,    /* creator -> the new thread's start */
    PTT_TL_JOIN_LINK, /* the thread's end -> its joiner's return */
    PTT_TL_WAKE,      /* pthread_cond_signal/broadcast -> a woken waiter */
    PTT_TL_HANDOFF,   /* an unlock -> the next owner of the mutex (or rwlock, spinlock) */
    PTT_TL_RELEASE,   /* the last thread arriving at a barrier -> each thread it releases */
    PTT_TL_POST,      /* sem_post -> the sem_wait it ends */
    PTT_TL_NLINKS
};

/* How a call ended, for the call callback (flags). */
#define PTT_TL_UNFINISHED 1
#define PTT_TL_BEFORE_ATTACH 2

struct ptt_tl_callbacks {
    /* Every event, first (CTF, SCO: all of them). */
    void (*event)(void *arg, const struct ptt_ev *ev);
    /* An event before the window of ptt_timeline_filter's --from, when the timeline follows
     * them (not skip): the state it builds, not to be shown. */
    void (*before)(void *arg, const struct ptt_ev *ev);
    /* A process or thread is first or last seen. name: its name, or NULL. */
    void (*process)(void *arg, int32_t pid, int64_t ns, int begin);
    void (*thread)(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name);
    /* A call, when it returns (or when the trace or the thread ends inside it: how has
     * PTT_TL_UNFINISHED; begun before ptt trace -p attached: PTT_TL_BEFORE_ATTACH, its IN as of
     * the attach). in: its IN event. */
    void (*call)(void *arg, const struct ptt_ev *in, int64_t end_ns, int how);
    /* A blocked span of a thread, when it ends; object: what it waited for (a pthread_t for a
     * join), call: the IN event's id. */
    void (*state)(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                  int64_t to, uint64_t object, uint16_t call);
    void (*link)(void *arg, enum ptt_tl_link kind, int32_t pid, int32_t from_tid, int64_t from_ns,
                 int32_t to_tid, int64_t to_ns, uint64_t object);
    /* An object's holder changes (tid 0: free; tid < 0: -tid read locks of a rwlock are held).
     * cls: its class. */
    void (*owner)(void *arg, int32_t pid, uint64_t object, int cls, int32_t tid, int64_t ns);
    /* A counter of an object: a semaphore's value ("value"), waiters of a lock ("waiters"). */
    void (*counter)(void *arg, int32_t pid, uint64_t object, int cls, const char *what, int64_t ns,
                    int64_t value);
};

const char *ptt_tl_state_name(enum ptt_tl_state s);
/* What a person reads for a state: running is "outside pthread calls" (ptt does not know whether
 * the thread ran on a CPU), ptt_buffer "waiting for ptt's buffer", the others their names. */
const char *ptt_tl_state_label(enum ptt_tl_state s);
/* A state's colour (0xRRGGBB) and the Chrome trace viewer's reserved colour name nearest to it:
 * every picture colours a state with these. */
uint32_t ptt_tl_state_rgb(enum ptt_tl_state s);
const char *ptt_tl_state_cname(enum ptt_tl_state s);
/* The state of a thread blocked on an object of class cls (PTT_TL_RUNNING: it never blocks). */
enum ptt_tl_state ptt_tl_state_of_class(int cls);
const char *ptt_tl_link_name(enum ptt_tl_link k);

struct ptt_filter;
/* The filter (the options --pid, --tid, --object, --event, --kind, --from, --to) every later
 * ptt_timeline_run applies: only the events it selects are followed; with skip, the events
 * before --from are not read (calls, states begun before are not seen); else they are followed
 * and what goes on into the window is shown from its start. Reading stops after --to; what is
 * still going on then ends at the last event read. NULL: none. */
void ptt_timeline_filter(const struct ptt_filter *f, int skip);
/* The start of that window when the events before it are followed (not skip), else 0. */
int64_t ptt_timeline_from(void);

/* Read the trace at path and call cb (any callback may be NULL). names is fed every event
 * (ptt_names_event) before the callbacks see it. 0; or -1 with a message in err: the file could
 * not be read, or it was damaged (the callbacks saw what could be read). */
int ptt_timeline_run(const char *path, struct ptt_names *names, const struct ptt_tl_callbacks *cb,
                     void *arg, char *err, size_t errlen);

#endif
