/* Contention statistics, shared by ptt stat and the HTML report: per object (mutex, rwlock,
 * spinlock, semaphore, condvar, barrier) acquisitions, contended acquisitions, wait and hold
 * times; per thread the time it was blocked, and on what. Fed the events in time order; memory
 * grows with the number of objects and threads, not with the number of events: percentiles come
 * from log-linear histograms (4 buckets per power of two: within 19% of the true value), totals,
 * means and maxima are exact. */
#ifndef PTT_STATS_H
#define PTT_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/names.h"
#include "trace/reader.h"

#define PTT_STAT_NBUCKETS 256

/* Values by bucket (bucket(v): see ptt_stat_bucket). An object used a few times fills a few
 * buckets: they are kept in place, and all 256 (2 KB) are made only past PTT_STAT_INLINE (a trace
 * of 200,000 mutexes took 960 MB in ptt stat with two such arrays each). */
#define PTT_STAT_INLINE 4
struct ptt_stat_hist {
    uint64_t n, total, max;
    uint64_t *b; /* every bucket's count, or NULL: those of in_b[] in in_n[] */
    uint64_t in_n[PTT_STAT_INLINE];
    uint8_t in_b[PTT_STAT_INLINE];
    uint8_t nin;
};

#define PTT_STAT_MAX_USERS 8
#define PTT_STAT_MAX_SITES 4
struct ptt_stat_object {
    int32_t pid;
    uint64_t addr;
    int cls;
    uint64_t acquisitions, contended;
    struct ptt_stat_hist wait, hold;
    int32_t users[PTT_STAT_MAX_USERS]; /* the first threads that used it */
    unsigned nusers, more_users;       /* more_users: the other threads that used it */
    struct {
        uint64_t site, ns, waits;
    } sites[PTT_STAT_MAX_SITES]; /* the call sites that waited most (approximately) */
};

#define PTT_STAT_MAX_ON 4
struct ptt_stat_thread {
    int32_t pid, tid;
    int64_t first, last;
    uint64_t blocked;
    struct {
        uint64_t obj, ns;
        uint16_t call;     /* the IN event of the call it blocked in */
        int32_t joined;    /* a join: the thread it waited for (its pthread_t is reused) */
    } on[PTT_STAT_MAX_ON]; /* what it was blocked on most (ns 0: unused) */
};

/* Who made others wait for a lock (analysis/blame.h): a holder thread, the call sites where it
 * took the lock and released it, the waits it caused and the wait time charged to it. */
struct ptt_stat_blame {
    int32_t tid;            /* 0: no holder known */
    int held_at_end;        /* still held when the trace ended: release is 0 */
    uint64_t take, release; /* return addresses; 0: not known */
    uint64_t waits, ns;
};

enum ptt_stat_sort {
    PTT_STAT_SORT_WAIT, /* total wait, the default */
    PTT_STAT_SORT_HOLD,
    PTT_STAT_SORT_ACQ,
    PTT_STAT_SORT_CONTENDED,
    PTT_STAT_SORT_NAME
};

struct ptt_stats;

struct ptt_stats *ptt_stats_new(void);
/* The names fed the same events before s (a join's thread, by its pthread_t as it was then). */
void ptt_stats_names(struct ptt_stats *s, const struct ptt_names *names);
/* One event, in time order. */
void ptt_stats_event(struct ptt_stats *s, const struct ptt_ev *ev);
/* Count only from ns from on (--from): the events before build what each thread is inside and
 * holds; a wait or a hold begun before counts from there. */
void ptt_stats_window(struct ptt_stats *s, int64_t from);
/* The objects of the classes in kinds (a class mask; 0: all), sorted by key (names: for the
 * name sort); threads sorted by blocked time. Arrays to free(), *n long; the records live as long
 * as s. */
struct ptt_stat_object **ptt_stats_objects(const struct ptt_stats *s, enum ptt_stat_sort key,
                                           uint64_t kinds, const struct ptt_names *names,
                                           size_t *n);
struct ptt_stat_thread **ptt_stats_threads(const struct ptt_stats *s, size_t *n);
/* The time the threads waited for a free sub-buffer of ptt trace's pool (TRACE_BUFFER_WAIT,
 * --overflow=block), and how many times: ptt's cost, left out of the waits of the objects and
 * of the threads' blocked time. */
void ptt_stats_bufwait(const struct ptt_stats *s, uint64_t *ns, uint64_t *waits);
/* The calls begun before ptt trace -p attached (CALL_BEFORE_ATTACH): their waits count from the
 * attach. */
uint64_t ptt_stats_before_attach(const struct ptt_stats *s);
/* Who made others wait for o (a record of s), most time first, then most waits, then tid: the
 * holds of one thread and of the same source lines (two return addresses of a line, names as
 * names gives them) merged. An array to free(), *n long (0 for an object nobody waited for).
 * Once all events are in: holds still open are taken as held at the end. */
struct ptt_stat_blame *ptt_stats_blame(struct ptt_stat_object *o, const struct ptt_names *names,
                                       size_t *n);
void ptt_stats_free(struct ptt_stats *s);

/* One interval as the statistics count it, handed out as it ends (ptt export --format=tables
 * writes them, so that a query engine adds up to ptt stat's numbers exactly). */
#define PTT_STAT_IV_WAIT 1u        /* a wait: counts in the object's wait_ns */
#define PTT_STAT_IV_ACQUIRED 2u    /* an acquisition */
#define PTT_STAT_IV_CONTENDED 4u   /* a contended acquisition */
#define PTT_STAT_IV_BLOCKED 8u     /* the thread's blocked time (and its object's call site) */
#define PTT_STAT_IV_UNFINISHED 16u /* the trace or the thread ended inside the call */
#define PTT_STAT_IV_HOLD 32u       /* a hold: counts in the object's hold_ns */
struct ptt_stat_interval {
    unsigned what; /* PTT_STAT_IV_... */
    int32_t pid, tid;
    uint64_t object;
    int cls;               /* the object's class (a wait: its call's) */
    uint16_t call;         /* a wait: its call's IN event */
    uint64_t site;         /* a wait: its call site; a hold: where it was taken; 0: not known */
    uint64_t release_site; /* a hold: where it was released */
    int64_t begin, end;
    int has_result; /* a wait that returned: its result (0, an errno) */
    int64_t result;
    int32_t joined; /* a join: the thread it waited for (0: not known) */
};
/* Have fn called with every interval from now on (NULL: none). */
void ptt_stats_observe(struct ptt_stats *s, void (*fn)(void *arg, const struct ptt_stat_interval *),
                       void *arg);

/* The histogram bucket of a value, and the value a bucket stands for (its middle). */
unsigned ptt_stat_bucket(uint64_t v);
uint64_t ptt_stat_bucket_mid(unsigned b);
/* The p-th percentile (0..1) of h, approximately. */
uint64_t ptt_stat_pct(const struct ptt_stat_hist *h, double p);
/* The count of bucket b. */
uint64_t ptt_stat_hist_at(const struct ptt_stat_hist *h, unsigned b);
/* "KEY":{"count","total","mean","p50","p99","max"}, as ptt stat --format=json and the report
 * write a histogram (docs/stat.md). */
void ptt_stat_hist_json(FILE *f, const char *key, const struct ptt_stat_hist *h);

/* Names as ptt stat prints them: an object's or thread's name, else its address or tid; what a
 * thread was blocked on (on[k]): an object, or "thread NAME" for a join. */
const char *ptt_stat_object_name(const struct ptt_names *names, int32_t pid, uint64_t addr,
                                 char *buf, size_t len);
const char *ptt_stat_thread_name(const struct ptt_names *names, int32_t pid, int32_t tid, char *buf,
                                 size_t len);
const char *ptt_stat_on_name(const struct ptt_names *names, const struct ptt_stat_thread *t, int k,
                             char *buf, size_t len);

#endif
