/* The decoder's view of the event table (common/events.def). */
#ifndef PTT_EVENTS_H
#define PTT_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/event.h"

enum ptt_kind { PTT_KIND_IN, PTT_KIND_OUT, PTT_KIND_STATE, PTT_KIND_META };

enum ptt_ftype {
    PTT_F_OBJ,         /* address of a POSIX threads object */
    PTT_F_PTR,         /* any other address */
    PTT_F_SYM,         /* address of a function */
    PTT_F_INT,         /* signed integer */
    PTT_F_UINT,        /* unsigned integer */
    PTT_F_COUNT,       /* a number of things */
    PTT_F_RET,         /* return value: 0 or an errno number */
    PTT_F_TID,         /* kernel thread id */
    PTT_F_PTHREAD,     /* pthread_t value */
    PTT_F_ABSTIME,     /* absolute timeout, nanoseconds */
    PTT_F_WSTATUS,     /* wait status of a process */
    PTT_F_EVID,        /* an event id */
    PTT_F_ENDHOW,      /* how a thread ended: 0 return, 1 pthread_exit, 2 cancelled */
    PTT_F_STR,         /* a NUL-terminated string in the words after the fixed arguments (last) */
    PTT_F_BOOL,        /* 0 or 1 */
    PTT_F_HEX,         /* flags, ids: hexadecimal */
    PTT_F_OCT,         /* file modes: octal */
    PTT_F_ERRNO,       /* errno after a routine that returned -1, else 0 */
    PTT_F_NS,          /* a duration in nanoseconds */
    PTT_F_CLOCKID,     /* a clockid_t */
    PTT_F_POLICY,      /* a scheduling policy */
    PTT_F_MTYPE,       /* a mutex type */
    PTT_F_MPROTO,      /* a mutex protocol */
    PTT_F_RWMODE,      /* 0 read, 1 write */
    PTT_F_ONCESTATE,   /* pthread_once state on entry: 0 not run, 1 running, 2 done */
    PTT_F_CANCELSTATE, /* PTHREAD_CANCEL_ENABLE or _DISABLE */
    PTT_F_CANCELTYPE,  /* PTHREAD_CANCEL_DEFERRED or _ASYNCHRONOUS */
    PTT_F_SIGNO,       /* a signal number */
    PTT_F_SIGHOW,      /* SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK */
    PTT_F_SIGSET,      /* signals 1..64 as a bit mask (bit n-1: signal n) */
    PTT_F_SIGEV,       /* sigev_notify: SIGEV_SIGNAL, _NONE, _THREAD, _THREAD_ID */
    PTT_F_CPUSET,      /* CPUs 0..63 as a bit mask */
    PTT_F_SITE,        /* a return address: where the program called the routine */
    PTT_F_FRAMES,      /* return addresses, innermost first, after the fixed arguments (last) */
    PTT_F_CLASSES,     /* event classes as a bit mask (bit n: class n) */
    PTT_F_DUMPWHY,     /* why the flight recorder wrote its window: 0 end, 1 ptt ctl dump, 2 hang */
};

/* What an event means to the analyses: see PTT_ROLE in common/events.def. */
enum ptt_role {
    PTT_ROLE_NONE,
    PTT_ROLE_USE,
    PTT_ROLE_CREATE,
    PTT_ROLE_DESTROY,
    PTT_ROLE_ACQUIRE,
    PTT_ROLE_CONTENDED,
    PTT_ROLE_ACQUIRED,
    PTT_ROLE_RELEASE,
    PTT_ROLE_WAIT,
    PTT_ROLE_WOKEN,
    PTT_ROLE_SIGNAL,
    PTT_ROLE_THREAD_START,
    PTT_ROLE_THREAD_END,
    PTT_ROLE_PROCESS_START,
    PTT_ROLE_PROCESS_END,
    PTT_ROLE_FRAME_BEGIN,
    PTT_ROLE_FRAME_END,
};

/* The flags of a role (its SPEC's words). */
#define PTT_ROLEF_BLOCKS 1u  /* may block: an ACQUIRE once CONTENDED, a WAIT from its start */
#define PTT_ROLEF_SHARED 2u  /* a read lock, or a release that may end one */
#define PTT_ROLEF_COUNTED 4u /* takes a unit of a count: nobody owns it */
#define PTT_ROLEF_WAKES 8u   /* a WAIT whose arrival may end the others' */

/* The fields a role names (its SPEC's key=field words). */
enum ptt_rfield {
    PTT_RF_OBJECT, /* the object it is about */
    PTT_RF_LOCK,   /* the mutex a condvar wait releases and takes again */
    PTT_RF_OWNER,  /* the thread holding the object */
    PTT_RF_BY,     /* the thread or process that acted */
    PTT_RF_VALUE,  /* a semaphore's value */
    PTT_RF_COUNT,  /* a number of things */
    PTT_RF_STATUS, /* the result, 0 for success (an OUT event: its ret field) */
    PTT_RF_BUSY,   /* a WAIT call waits only when it is 1 */
    PTT_RF_N
};

struct ptt_field {
    const char *name;
    int name_len;
    enum ptt_ftype type;
};

struct ptt_evinfo {
    uint16_t id;
    const char *name;
    const char *cls;
    enum ptt_kind kind;
    const char *routine;
    unsigned nargs; /* fixed 64-bit arguments; a str field comes after them */
    unsigned nfields;
    const char *fields_spec;
    const char *human;
    struct ptt_field fields[PTT_EVENT_MAX_ARGS];
    int noreturn; /* an IN event whose routine has no OUT event (pthread_exit) */
    enum ptt_role role;
    unsigned rflags;              /* PTT_ROLEF_... */
    int okind;                    /* the class of the object it is about */
    signed char rfield[PTT_RF_N]; /* index of the field playing each part, -1: none */
    const char *role_spec;
    signed char site;  /* index of its site field (where the program called), -1: none */
    uint16_t call_out; /* an IN whose call has a one-record form (PTT_CALL): its OUT's id, else 0 */
};

struct ptt_classinfo {
    const char *name;
    unsigned number;
    const char *description;
};

/* The value of the field that plays part f in an event whose fixed arguments are args[0..n-1];
 * def when the event has no such field or it was not recorded. */
static inline uint64_t ptt_role_arg(const struct ptt_evinfo *e, const uint64_t *args, unsigned n,
                                    enum ptt_rfield f, uint64_t def)
{
    int i = e ? e->rfield[f] : -1;
    return i >= 0 && (unsigned)i < n ? args[i] : def;
}
/* Whether the field that plays part f was recorded (args[0..n-1]), and its value into *v. */
static inline int ptt_role_get(const struct ptt_evinfo *e, const uint64_t *args, unsigned n,
                               enum ptt_rfield f, uint64_t *v)
{
    int i = e ? e->rfield[f] : -1;
    if (i < 0 || (unsigned)i >= n)
        return 0;
    *v = args[i];
    return 1;
}
static inline int ptt_role_has(const struct ptt_evinfo *e, enum ptt_rfield f)
{
    return e && e->rfield[f] >= 0;
}
const char *ptt_role_name(enum ptt_role r);

/* NULL for an id not in the table. */
const struct ptt_evinfo *ptt_evinfo(uint16_t id);
/* The table and its index by id, for a loop over every event of a trace: ptt_evindex_get(x, id)
 * is ptt_evinfo(id) without a call. */
struct ptt_evindex {
    const struct ptt_evinfo *table;
    const uint8_t *ord; /* by id: index + 1 in table, 0 for none */
};
struct ptt_evindex ptt_evindex(void);
static inline const struct ptt_evinfo *ptt_evindex_get(struct ptt_evindex x, uint16_t id)
{
    unsigned i = id <= PTT_EV_ID_MASK ? x.ord[id] : 0;
    return i ? &x.table[i - 1] : NULL;
}
/* All events in table order; *n receives their number. */
const struct ptt_evinfo *ptt_evinfo_all(unsigned *n);
const struct ptt_classinfo *ptt_classes(unsigned *n);
/* Class number by name, -1 if unknown. */
int ptt_class_number(const char *name);
const char *ptt_kind_name(enum ptt_kind k);
/* Whether the values of a field type are named (SCHED_FIFO, read, ...: the human format, CTF
 * enumerations); raw formats print their numbers. */
int ptt_ftype_is_enum(enum ptt_ftype t);
/* Whether a field type is a number in JSON: integers that say a quantity or a code. Addresses,
 * masks, flags, times of day (which a double would round) and names are strings. */
int ptt_ftype_json_number(enum ptt_ftype t);
/* The mask of every class of the table. */
uint64_t ptt_all_classes(void);
/* "mutex,cond" for a class mask ("none" for 0, "all" when every class is in). */
const char *ptt_class_list(char *buf, size_t len, uint64_t mask);
/* A class list ("all", "mutex,cond", ...) as a mask; -1 and *bad set to the unknown name. */
int ptt_parse_classes(const char *list, uint64_t *mask, char *bad, size_t badlen);
const char *ptt_ftype_name(enum ptt_ftype t);

#endif
