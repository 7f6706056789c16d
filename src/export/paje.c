/* ptt paje: the timeline (timeline.h) as a Pajé trace, for ViTE and PajeNG (docs/paje.md).
 *
 * Containers: the program, a process each, and in a process its threads and its objects (mutexes,
 * rwlocks, spinlocks, semaphores, condvars, barriers). A thread's state is "running" or what it
 * is blocked in; a lock's state is the thread holding it or "free"; waiters (and a semaphore's
 * value) are variables; links join threads (create, join, wake, handoff, release, post).
 *
 * The timeline reports a blocked span and a link when they end, so a line's time may be earlier
 * than the line before it: the file is in time order per container and entity type, which is
 * what PajeNG checks and ViTE needs. Names are final names: a thread may set its name after its
 * container was created, so the lines are first written to a temporary file with a placeholder
 * for each name, replaced when the whole trace has been read. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "trace/writer.h"
#include "util/hmap.h"
#include "util/obuf.h"
#include "util/util.h"
#include "analysis/timeline.h"

/* Placeholders: NAME_MARK, T or O, the key, NAME_MARK. The byte never appears otherwise. */
#define NAME_MARK '\001'

enum okind { O_MUTEX, O_RWLOCK, O_SPIN, O_SEM, O_COND, O_BARRIER, O_NKINDS };

/* Per kind of object: its container type, its holder state type (locks), its waiters variable. */
static const struct {
    const char *type, *type_name;
    const char *holder, *holder_name; /* NULL: no holder */
    const char *waiters, *waiters_name;
    const char *what; /* in the name of an object without one: "mutex 0x..." */
    int cls;
} kinds[O_NKINDS] = {
    {"MX", "Mutex", "MXH", "Mutex holder", "MXW", "Mutex waiters", "mutex", PTT_CLASS_mutex},
    {"RW", "Rwlock", "RWH", "Rwlock holder", "RWW", "Rwlock waiters", "rwlock", PTT_CLASS_rwlock},
    {"SP", "Spinlock", "SPH", "Spinlock holder", "SPW", "Spinlock waiters", "spinlock",
     PTT_CLASS_spin},
    {"SE", "Semaphore", NULL, NULL, "SEW", "Semaphore waiters", "semaphore", PTT_CLASS_sem},
    {"CV", "Condvar", NULL, NULL, "CVW", "Condvar waiters", "cond", PTT_CLASS_cond},
    {"BA", "Barrier", NULL, NULL, "BAW", "Barrier waiters", "barrier", PTT_CLASS_barrier},
};
#define SEM_VALUE "SEV"

struct pthr {
    int32_t pid, tid;
    int created, closed;
    unsigned number;     /* in order of appearance: its colour as a holder */
    unsigned holder_def; /* bit k: its value of kinds[k].holder is defined */
    int64_t last;        /* the latest time of its state lines */
};

struct pobj {
    int32_t pid;
    int kind;
    uint64_t addr;
    int64_t waiting; /* condvar and barrier waiters, counted here */
};

struct pproc {
    int32_t pid;
    int created, ended;
    int64_t end;
};

struct paje {
    FILE *f; /* the temporary file */
    struct ptt_names *names;
    struct ptt_hmap threads, objects, procs;
    unsigned nthreads;
    uint64_t nlinks;
    int64_t last;         /* the latest event time */
    uint64_t readers_def; /* bit n: the value "n readers" of the rwlock holder is defined */
};

#define MAX_READERS 63 /* shown as "63+ readers" beyond */

/* A time: seconds with nine decimals, 0 for a time before the start. */
static void ln_time(struct ptt_obuf *b, int64_t ns)
{
    ptt_obuf_fixed(b, ns < 0 ? 0 : ns, 9);
}

static void put_time(FILE *f, int64_t ns)
{
    char buf[32];
    struct ptt_obuf b;
    ptt_obuf_on(&b, f, buf, sizeof buf);
    ln_time(&b, ns);
    ptt_obuf_flush(&b);
}

/* "tPID.TID": a thread's container. */
static void ln_thread(struct ptt_obuf *b, int32_t pid, int32_t tid)
{
    ptt_obuf_putc(b, 't');
    ptt_obuf_i64(b, pid);
    ptt_obuf_putc(b, '.');
    ptt_obuf_i64(b, tid);
}

/* The lines most events make (a state, an owner, a counter, a link) are built in a buffer and
 * written at once, not a printf per piece: line_begin(&b, buf, x, "12 ", ns) starts
 * "12 TIME", ptt_obuf_flush ends it. */
static void line_begin(struct ptt_obuf *b, char *buf, size_t len, FILE *f, const char *code,
                       int64_t ns)
{
    ptt_obuf_on(b, f, buf, len);
    ptt_obuf_puts(b, code);
    ln_time(b, ns);
}

/* A string field: quoted, without the quotes and line ends that would end it early, nor any
 * character a terminal would act on (ptt_term_char: a '?' for each of its bytes), for whoever
 * reads the file or pj_dump's output. */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (size_t i = 0, n = strlen(s), k; i < n; i += k) {
        int unsafe;
        k = ptt_term_char(s, n, i, &unsafe);
        for (size_t j = i; j < i + k; j++)
            fputc(unsafe ? '?' : s[j] == '"' ? '\'' : s[j], f);
    }
    fputc('"', f);
}

static uint64_t okey(int32_t pid, int kind, uint64_t addr)
{
    return ptt_key2(ptt_key2((uint64_t)(uint32_t)pid, addr), (uint64_t)kind);
}

static struct pproc *proc_of(struct paje *x, int32_t pid)
{
    return ptt_hmap_get(&x->procs, (uint64_t)(uint32_t)pid, 0);
}

static struct pthr *thr_of(struct paje *x, int32_t pid, int32_t tid)
{
    return ptt_hmap_get(&x->threads, ptt_key2((uint64_t)(uint32_t)pid, (uint64_t)(uint32_t)tid), 0);
}

/* Whether something at ns in process pid can still be drawn: ns is clamped to the process end. */
static int live(struct paje *x, int32_t pid, int64_t *ns)
{
    struct pproc *p = proc_of(x, pid);
    if (!p)
        return 0;
    if (p->ended && *ns > p->end)
        *ns = p->end;
    return 1;
}

/* The events used, numbered as in the reference header of the Pajé format (lang-paje). */
static const char event_defs[] =
    "%EventDef PajeDefineContainerType 0\n"
    "%\tAlias string\n%\tType string\n%\tName string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineVariableType 1\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%\tColor color\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineStateType 2\n"
    "%\tAlias string\n%\tType string\n%\tName string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineLinkType 4\n"
    "%\tAlias string\n%\tType string\n%\tStartContainerType string\n%\tEndContainerType "
    "string\n%\tName string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineEntityValue 5\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%\tColor color\n"
    "%EndEventDef\n"
    "%EventDef PajeCreateContainer 6\n"
    "%\tTime date\n%\tAlias string\n%\tContainer string\n%\tType string\n%\tName string\n"
    "%EndEventDef\n"
    "%EventDef PajeDestroyContainer 7\n"
    "%\tTime date\n%\tType string\n%\tName string\n"
    "%EndEventDef\n"
    "%EventDef PajeSetVariable 8\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n%\tValue double\n"
    "%EndEventDef\n"
    "%EventDef PajeSetState 11\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n%\tValue string\n"
    "%EndEventDef\n"
    "%EventDef PajePushState 12\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n%\tValue string\n"
    "%EndEventDef\n"
    "%EventDef PajePopState 13\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n"
    "%EndEventDef\n"
    "%EventDef PajeStartLink 15\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n%\tStartContainer string\n%\tValue "
    "string\n%\tKey string\n"
    "%EndEventDef\n"
    "%EventDef PajeEndLink 16\n"
    "%\tTime date\n%\tContainer string\n%\tType string\n%\tEndContainer string\n%\tValue "
    "string\n%\tKey string\n"
    "%EndEventDef\n";

static void header(FILE *f)
{
    fputs(event_defs, f);
    /* The type hierarchy. */
    fputs("0 PR 0 Program\n0 PS PR Process\n0 T PS Thread\n2 TS T \"Thread state\"\n", f);
    for (int s = 0; s < PTT_TL_NSTATES; s++) { /* the colours of every picture: states.def */
        uint32_t c = ptt_tl_state_rgb(s);
        fprintf(f, "5 %s TS %s \"%.3f %.3f %.3f\"\n", ptt_tl_state_name(s), ptt_tl_state_name(s),
                (c >> 16) / 255.0, (c >> 8 & 0xff) / 255.0, (c & 0xff) / 255.0);
    }
    for (int k = 0; k < O_NKINDS; k++) {
        fprintf(f, "0 %s PS %s\n", kinds[k].type, kinds[k].type_name);
        if (kinds[k].holder) {
            fprintf(f, "2 %s %s \"%s\"\n", kinds[k].holder, kinds[k].type, kinds[k].holder_name);
            fprintf(f, "5 free %s free \"0.92 0.92 0.92\"\n", kinds[k].holder);
        }
        fprintf(f, "1 %s %s \"%s\" \"0.8 0.1 0.1\"\n", kinds[k].waiters, kinds[k].type,
                kinds[k].waiters_name);
    }
    fputs("1 " SEM_VALUE " SE \"Semaphore value\" \"0.1 0.5 0.9\"\n", f);
    /* No colours for links: ViTE takes values of state types only. */
    for (int l = 0; l < PTT_TL_NLINKS; l++)
        fprintf(f, "4 L%s PS T T %s\n", ptt_tl_link_name(l), ptt_tl_link_name(l));
}

/* A thread's colour as a holder of locks: twelve well-apart colours, in turn. */
static void put_thread_color(FILE *f, unsigned n)
{
    static const char *const palette[] = {"0.12 0.47 0.71", "1.00 0.50 0.05", "0.17 0.63 0.17",
                                          "0.84 0.15 0.16", "0.58 0.40 0.74", "0.55 0.34 0.29",
                                          "0.89 0.47 0.76", "0.50 0.50 0.50", "0.74 0.74 0.13",
                                          "0.09 0.75 0.81", "0.35 0.20 0.60", "0.90 0.70 0.20"};
    fprintf(f, "\"%s\"", palette[n % (sizeof palette / sizeof palette[0])]);
}

/* The process's container, created at its first event. */
static struct pproc *process(struct paje *x, int32_t pid, int64_t ns)
{
    struct pproc *p = ptt_hmap_get(&x->procs, (uint64_t)(uint32_t)pid, sizeof *p);
    if (!p->created) {
        p->created = 1;
        p->pid = pid;
        fputs("6 ", x->f);
        put_time(x->f, ns);
        fprintf(x->f, " p%d R PS \"process %d\"\n", pid, pid);
    }
    return p;
}

static void on_process(void *arg, int32_t pid, int64_t ns, int begin)
{
    struct paje *x = arg;
    struct pproc *p = process(x, pid, ns);
    if (begin)
        return;
    if (!p->ended) {
        p->ended = 1; /* its containers end here: see finish() */
        p->end = ns;
    }
}

static void on_thread(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name)
{
    struct paje *x = arg;
    (void)name; /* the final name replaces the placeholder */
    if (!live(x, pid, &ns))
        return;
    uint64_t key = ptt_key2((uint64_t)(uint32_t)pid, (uint64_t)(uint32_t)tid);
    struct pthr *t = ptt_hmap_get(&x->threads, key, sizeof *t);
    if (begin && !t->created) {
        t->pid = pid;
        t->tid = tid;
        t->created = 1;
        t->number = x->nthreads++;
        t->last = ns;
        fputs("6 ", x->f);
        put_time(x->f, ns);
        fprintf(x->f, " t%d.%d p%d T %cT%d.%d%c\n11 ", pid, tid, pid, NAME_MARK, pid, tid,
                NAME_MARK);
        put_time(x->f, ns);
        fprintf(x->f, " t%d.%d TS running\n", pid, tid);
    } else if (!begin && t->created && !t->closed) {
        t->closed = 1;
        if (ns < t->last)
            ns = t->last;
        fputs("7 ", x->f);
        put_time(x->f, ns);
        fprintf(x->f, " T t%d.%d\n", pid, tid);
    }
}

static int kind_of_class(int cls)
{
    for (int k = 0; k < O_NKINDS; k++)
        if (kinds[k].cls == cls)
            return k;
    return -1;
}

/* "oPID.TYPE.ADDR": an object's container. */
static void ln_obj(struct ptt_obuf *b, const struct pobj *o)
{
    ptt_obuf_putc(b, 'o');
    ptt_obuf_i64(b, o->pid);
    ptt_obuf_putc(b, '.');
    ptt_obuf_puts(b, kinds[o->kind].type);
    ptt_obuf_putc(b, '.');
    b->len += ptt_fmt_x64(ptt_obuf_room(b, 16), o->addr);
}

/* " oPID.TYPE.ADDR VARTYPE": the object a variable (8) or state (11) line sets, and which. */
static void ln_obj_type(struct ptt_obuf *b, const struct pobj *o, const char *type)
{
    ptt_obuf_putc(b, ' ');
    ln_obj(b, o);
    ptt_obuf_putc(b, ' ');
    ptt_obuf_puts(b, type);
}

static void put_obj(FILE *f, const struct pobj *o)
{
    char buf[64];
    struct ptt_obuf b;
    ptt_obuf_on(&b, f, buf, sizeof buf);
    ln_obj(&b, o);
    ptt_obuf_flush(&b);
}

static void set_variable(struct paje *x, const struct pobj *o, const char *type, int64_t ns,
                         int64_t value)
{
    char buf[256];
    struct ptt_obuf b;
    line_begin(&b, buf, sizeof buf, x->f, "8 ", ns);
    ln_obj_type(&b, o, type);
    ptt_obuf_putc(&b, ' ');
    ptt_obuf_i64(&b, value);
    ptt_obuf_putc(&b, '\n');
    ptt_obuf_flush(&b);
}

/* The object's container, created when first seen. */
static struct pobj *object(struct paje *x, int32_t pid, int kind, uint64_t addr, int64_t ns)
{
    struct pobj *o = ptt_hmap_get(&x->objects, okey(pid, kind, addr), sizeof *o);
    if (o->addr)
        return o;
    o->pid = pid;
    o->kind = kind;
    o->addr = addr;
    /* Asked now, while the modules mapped are the object's (names keeps the answer, or the name
     * the program gives it later): at the end, an exec may have replaced them. */
    ptt_names_object(x->names, pid, addr);
    fputs("6 ", x->f);
    put_time(x->f, ns);
    fputc(' ', x->f);
    put_obj(x->f, o);
    fprintf(x->f, " p%d %s %cO%d.%d.%" PRIx64 "%c\n", pid, kinds[kind].type, NAME_MARK, pid, kind,
            addr, NAME_MARK);
    if (kinds[kind].holder) {
        fputs("11 ", x->f);
        put_time(x->f, ns);
        fputc(' ', x->f);
        put_obj(x->f, o);
        fprintf(x->f, " %s free\n", kinds[kind].holder);
    }
    set_variable(x, o, kinds[kind].waiters, ns, 0);
    return o;
}

/* The kind of object a call waits on from its start (a condvar, a barrier: the timeline counts
 * the waiters of locks and semaphores), -1 if none. */
static int waits_on(const struct ptt_evinfo *in)
{
    if (!in || in->role != PTT_ROLE_WAIT || !(in->rflags & PTT_ROLEF_BLOCKS))
        return -1;
    return kind_of_class(in->okind);
}

/* The objects an event names: its fields of type obj (a cond wait's mutex is a mutex). */
static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct paje *x = arg;
    if (ev->ns > x->last)
        x->last = ev->ns;
    const struct ptt_evinfo *info = ev->info;
    int64_t ns = ev->ns;
    /* The timeline tells of a new process after this callback: its container comes first. */
    if (!info || ptt_ev_of_session(ev) || process(x, ev->pid, ns)->ended)
        return;
    int cls_kind = kind_of_class(PTT_CLASS_OF(ev->id));
    for (unsigned i = 0; i < info->nargs && i < ev->nargs; i++) {
        const struct ptt_field *fd = &info->fields[i];
        if (fd->type != PTT_F_OBJ || !ev->args[i])
            continue;
        int k = (int)i == info->rfield[PTT_RF_LOCK] ? O_MUTEX : cls_kind;
        if (k >= 0)
            object(x, ev->pid, k, ev->args[i], ns);
    }
    int k = info->kind == PTT_KIND_IN ? waits_on(info) : -1;
    uint64_t a = ptt_ev_role(ev, PTT_RF_OBJECT, 0);
    if (k >= 0 && a) {
        struct pobj *o = object(x, ev->pid, k, a, ns);
        set_variable(x, o, kinds[k].waiters, ns, ++o->waiting);
    }
}

static void on_call(void *arg, const struct ptt_ev *in, int64_t end_ns, int how)
{
    struct paje *x = arg;
    (void)how;
    int k = waits_on(in->info);
    uint64_t a;
    if (k < 0 || !ptt_ev_role_get(in, PTT_RF_OBJECT, &a))
        return;
    struct pproc *p = proc_of(x, in->pid);
    if (!p || p->ended)
        return;
    struct pobj *o = ptt_hmap_get(&x->objects, okey(in->pid, k, a), 0);
    if (o && o->waiting > 0)
        set_variable(x, o, kinds[k].waiters, end_ns, --o->waiting);
}

static void on_state(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                     int64_t to, uint64_t object, uint16_t call)
{
    struct paje *x = arg;
    (void)object;
    (void)call;
    struct pthr *t = thr_of(x, pid, tid);
    if (!t || !t->created || t->closed || state >= PTT_TL_NSTATES || !live(x, pid, &to) ||
        !live(x, pid, &from))
        return;
    /* A span nested in another (a signal handler's wait inside a wait) ends first: the outer one
     * is drawn from where the inner one ended, to keep the thread's lines in time order. */
    if (from < t->last)
        from = t->last;
    if (to < from)
        to = from;
    t->last = to;
    char buf[256];
    struct ptt_obuf b;
    line_begin(&b, buf, sizeof buf, x->f, "12 ", from);
    ptt_obuf_putc(&b, ' ');
    ln_thread(&b, pid, tid);
    ptt_obuf_puts(&b, " TS ");
    ptt_obuf_puts(&b, ptt_tl_state_name(state));
    ptt_obuf_puts(&b, "\n13 ");
    ln_time(&b, to);
    ptt_obuf_putc(&b, ' ');
    ln_thread(&b, pid, tid);
    ptt_obuf_puts(&b, " TS\n");
    ptt_obuf_flush(&b);
}

/* " pPID LKIND tPID.TID KIND KEY\n": a link's end after its time. */
static void link_rest(struct ptt_obuf *b, enum ptt_tl_link kind, int32_t pid, int32_t tid,
                      uint64_t key)
{
    const char *n = ptt_tl_link_name(kind);
    ptt_obuf_puts(b, " p");
    ptt_obuf_i64(b, pid);
    ptt_obuf_puts(b, " L");
    ptt_obuf_puts(b, n);
    ptt_obuf_putc(b, ' ');
    ln_thread(b, pid, tid);
    ptt_obuf_putc(b, ' ');
    ptt_obuf_puts(b, n);
    ptt_obuf_putc(b, ' ');
    ptt_obuf_u64(b, key);
    ptt_obuf_putc(b, '\n');
}

static void on_link(void *arg, enum ptt_tl_link kind, int32_t pid, int32_t from_tid,
                    int64_t from_ns, int32_t to_tid, int64_t to_ns, uint64_t object)
{
    struct paje *x = arg;
    (void)object;
    struct pthr *a = thr_of(x, pid, from_tid), *b = thr_of(x, pid, to_tid);
    struct pproc *p = proc_of(x, pid);
    if (!a || !b || !a->created || !b->created || b->closed || !p || p->ended ||
        kind >= PTT_TL_NLINKS)
        return;
    uint64_t key = ++x->nlinks;
    char buf[256];
    struct ptt_obuf l;
    line_begin(&l, buf, sizeof buf, x->f, "15 ", from_ns);
    link_rest(&l, kind, pid, from_tid, key);
    ptt_obuf_puts(&l, "16 ");
    ln_time(&l, to_ns);
    link_rest(&l, kind, pid, to_tid, key);
    ptt_obuf_flush(&l);
}

/* The value "n readers" of a rwlock's holder (n at most MAX_READERS), defined when first used. */
static unsigned readers_value(struct paje *x, int k, unsigned readers)
{
    unsigned n = readers < MAX_READERS ? readers : MAX_READERS;
    if (!(x->readers_def & 1ull << n)) {
        x->readers_def |= 1ull << n;
        fprintf(x->f, "5 r%u %s \"%u%s reader%s\" \"0.55 0.75 0.55\"\n", n, kinds[k].holder, n,
                n == MAX_READERS ? "+" : "", n == 1 ? "" : "s");
    }
    return n;
}

/* The thread as a value of holder type k, defined when first used; NULL for an unknown thread. */
static struct pthr *holder_value(struct paje *x, int k, int32_t pid, int32_t tid)
{
    struct pthr *t = thr_of(x, pid, tid);
    if (t && !(t->holder_def & 1u << k)) {
        t->holder_def |= 1u << k;
        fprintf(x->f, "5 h%d.%d %s %cT%d.%d%c ", pid, tid, kinds[k].holder, NAME_MARK, pid, tid,
                NAME_MARK);
        put_thread_color(x->f, t->number);
        fputc('\n', x->f);
    }
    return t;
}

/* "11 TIME oOBJ HOLDER VALUE": the holder is "rN" (N read locks of a rwlock, tid -N), "hPID.TID"
 * (a thread) or "free". */
static void on_owner(void *arg, int32_t pid, uint64_t addr, int cls, int32_t tid, int64_t ns)
{
    struct paje *x = arg;
    int k = kind_of_class(cls);
    struct pproc *p = proc_of(x, pid);
    if (k < 0 || !kinds[k].holder || !p || p->ended)
        return;
    struct pobj *o = ptt_hmap_get(&x->objects, okey(pid, k, addr), 0);
    if (!o)
        return;
    unsigned n = tid < 0 ? readers_value(x, k, (unsigned)-tid) : 0;
    struct pthr *t = tid > 0 ? holder_value(x, k, pid, tid) : NULL;
    char buf[256];
    struct ptt_obuf b;
    line_begin(&b, buf, sizeof buf, x->f, "11 ", ns);
    ln_obj_type(&b, o, kinds[k].holder);
    if (tid < 0) {
        ptt_obuf_puts(&b, " r");
        ptt_obuf_u64(&b, n);
    } else if (t) {
        ptt_obuf_puts(&b, " h");
        ptt_obuf_i64(&b, pid);
        ptt_obuf_putc(&b, '.');
        ptt_obuf_i64(&b, tid);
    } else {
        ptt_obuf_puts(&b, " free");
    }
    ptt_obuf_putc(&b, '\n');
    ptt_obuf_flush(&b);
}

static void on_counter(void *arg, int32_t pid, uint64_t addr, int cls, const char *what, int64_t ns,
                       int64_t value)
{
    struct paje *x = arg;
    int k = kind_of_class(cls);
    struct pproc *p = proc_of(x, pid);
    if (k < 0 || !p || p->ended)
        return;
    /* Only objects the events named: a counter on anything else is not an object. */
    struct pobj *o = ptt_hmap_get(&x->objects, okey(pid, k, addr), 0);
    if (!o)
        return;
    if (!strcmp(what, "waiters"))
        set_variable(x, o, kinds[k].waiters, ns, value);
    else if (!strcmp(what, "value") && k == O_SEM)
        set_variable(x, o, SEM_VALUE, ns, value);
}

/* The objects and processes end with their process (or the trace), the program with the trace. */
static void finish(struct paje *x)
{
    for (size_t i = 0; i < x->objects.cap; i++) {
        struct pobj *o = ptt_hmap_slot(&x->objects, i);
        struct pproc *p = o ? proc_of(x, o->pid) : NULL;
        if (!p)
            continue;
        fputs("7 ", x->f);
        put_time(x->f, p->ended ? p->end : x->last);
        fprintf(x->f, " %s ", kinds[o->kind].type);
        put_obj(x->f, o);
        fputc('\n', x->f);
    }
    for (size_t i = 0; i < x->procs.cap; i++) {
        struct pproc *p = ptt_hmap_slot(&x->procs, i);
        if (!p)
            continue;
        fputs("7 ", x->f);
        put_time(x->f, p->ended ? p->end : x->last);
        fprintf(x->f, " PS p%d\n", p->pid);
    }
    fputs("7 ", x->f);
    put_time(x->f, x->last);
    fputs(" PR R\n", x->f);
}

/* Copy the temporary file to out, each placeholder replaced by the name it stands for. */
static int copy_named(struct paje *x, FILE *out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    rewind(x->f);
    while ((n = getline(&line, &cap, x->f)) > 0) {
        char *p = line, *m;
        while ((m = memchr(p, NAME_MARK, (size_t)(line + n - p)))) {
            fwrite(p, 1, (size_t)(m - p), out);
            char *e = memchr(m + 1, NAME_MARK, (size_t)(line + n - m - 1));
            if (!e) {
                p = m;
                break;
            }
            *e = 0;
            int32_t pid = 0, tid = 0;
            int kind = 0;
            uint64_t addr = 0;
            char fallback[64] = "?";
            const char *name = NULL;
            if (m[1] == 'T' && sscanf(m + 2, "%" SCNd32 ".%" SCNd32, &pid, &tid) == 2) {
                name = ptt_names_thread(x->names, pid, tid);
                snprintf(fallback, sizeof fallback, "thread %d", tid);
            } else if (m[1] == 'O' &&
                       sscanf(m + 2, "%" SCNd32 ".%d.%" SCNx64, &pid, &kind, &addr) == 3 &&
                       kind >= 0 && kind < O_NKINDS) {
                name = ptt_names_object(x->names, pid, addr);
                snprintf(fallback, sizeof fallback, "%s 0x%" PRIx64, kinds[kind].what, addr);
            }
            put_str(out, name && *name ? name : fallback);
            p = e + 1;
        }
        fwrite(p, 1, (size_t)(line + n - p), out);
    }
    free(line);
    return ferror(x->f) ? -1 : 0;
}

int ptt_export_paje(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    struct paje x = {0};
    char terr[512] = "";
    x.names = o->names;
    x.f = tmpfile();
    if (!x.f) {
        snprintf(err, errlen, "cannot create a temporary file: %m");
        return -1;
    }
    header(x.f);
    /* The root: the program (its command line, without the program's directory), from the
     * start of the trace. */
    char name[1024] = "program";
    struct ptt_reader *rd = ptt_reader_open(o->in, terr, sizeof terr);
    const char *cmd = rd ? ptt_reader_info(rd, "command") : NULL;
    if (cmd && *cmd) {
        const char *sp = strchr(cmd, ' '), *base = cmd;
        for (const char *c = cmd; *c && (!sp || c < sp); c++)
            if (*c == '/')
                base = c + 1;
        snprintf(name, sizeof name, "%s", *base && base != sp ? base : cmd);
    }
    if (rd)
        ptt_reader_close(rd);
    fputs("6 0.000000000 R 0 PR ", x.f);
    put_str(x.f, name);
    fputc('\n', x.f);
    static const struct ptt_tl_callbacks cb = {
        .event = on_event,
        .process = on_process,
        .thread = on_thread,
        .call = on_call,
        .state = on_state,
        .link = on_link,
        .owner = on_owner,
        .counter = on_counter,
    };
    int r = ptt_timeline_run(o->in, o->names, &cb, &x, terr, sizeof terr);
    int seen = x.procs.n > 0;
    finish(&x);
    if (!seen && r) { /* not a trace at all: nothing to write */
        snprintf(err, errlen, "%s", terr);
        goto out;
    }
    if (fflush(x.f) || ferror(x.f)) { /* before rewind() forgets it */
        snprintf(err, errlen, "cannot write a temporary file: %m");
        r = -1;
        goto out;
    }
    FILE *out = ptt_output_fopen(o->out, err, errlen);
    if (!out) {
        r = -1;
        goto out;
    }
    int w = copy_named(&x, out);
    if ((ferror(out) | fclose(out)) || w) {
        snprintf(err, errlen, "%s: cannot write: %m", o->out);
        r = -1;
    } else if (r) {
        snprintf(err, errlen, "%s (the Pajé trace holds what could be read)", terr);
    }
out:
    fclose(x.f);
    ptt_hmap_free(&x.threads, NULL);
    ptt_hmap_free(&x.objects, NULL);
    ptt_hmap_free(&x.procs, NULL);
    return r ? -1 : 0;
}
