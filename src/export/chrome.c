/* Exporter: Chrome Trace Event JSON, for Perfetto's UI and chrome://tracing.
 *
 * One track per thread (pid, tid): an X slice per call (named by its routine, its IN event's fields
 * as args), an X slice per blocked span (category "blocked"), nested in its call; the interactions
 * of the timeline (create, join, wake, handoff, release, post) as flows between two thread-scoped
 * instants, one where the acting thread acted and one where the other thread saw it; C counters
 * for the value of every semaphore and the waiters of the most contended locks; M events naming
 * processes and threads. Timestamps are microseconds with three decimals: exact nanoseconds.
 *
 * Streaming: the events are written as the timeline delivers them (slices when they end), so
 * they are not in time order in the file, which the format allows: viewers sort them. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "trace/writer.h"
#include "util/hmap.h"
#include "util/json.h"
#include "util/obuf.h"
#include "export/textfmt.h"
#include "analysis/timeline.h"

/* Waiters counters for this many locks at most, the most contended (the most waits). */
#define TOP_LOCKS 8

struct proc {
    int fresh;     /* started or exec'd: its next MODULE_LOAD is its program */
    char name[64]; /* the program's file name */
};

struct lockstat {
    int32_t pid;
    int cls;
    uint64_t obj;
    int64_t waits, last;
    int top;
};

struct ctr {
    char *name; /* the counter's name, fixed at its first value (a name learned later would make
                   a second track) */
};

struct chrome {
    FILE *f;
    struct ptt_obuf o; /* in front of f: a few hundred pieces per call */
    struct ptt_names *names;
    int nevents;
    uint64_t flow_id;
    struct ptt_hmap procs, locks, ctrs;
    /* The OUT event being handled: the call callback that follows it adds its fields. */
    struct ptt_ev out;
    int has_out;
    /* A blocked span waits for its call, to be written after it: at the same start time, the
     * first in the file is the parent. */
    struct {
        int set;
        int32_t pid, tid;
        enum ptt_tl_state state;
        int64_t from, to;
        uint64_t object;
        uint16_t call;
    } blocked;
};

static void put(struct chrome *c, const char *s)
{
    ptt_obuf_puts(&c->o, s);
}

static void put_json(struct chrome *c, const char *s)
{
    ptt_json_put(&c->o, s, SIZE_MAX, 0);
}

/* Microseconds with three decimals: the nanoseconds exactly. */
static void jtime(struct chrome *c, int64_t ns)
{
    ptt_obuf_fixed(&c->o, ns, 3);
}

/* ",\"key\":" then v. */
static void put_int(struct chrome *c, const char *key, int64_t v)
{
    put(c, key);
    ptt_obuf_i64(&c->o, v);
}

/* ",\"key\":\"0x...\"" */
static void put_hex(struct chrome *c, const char *key, uint64_t v)
{
    put(c, key);
    ptt_obuf_putc(&c->o, '"');
    ptt_obuf_x64(&c->o, v);
    ptt_obuf_putc(&c->o, '"');
}

/* The start of one event object: the separator, its phase, name and category. */
static void begin_event(struct chrome *c, char ph, const char *name, const char *cat)
{
    put(c, c->nevents++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
    ptt_obuf_putc(&c->o, ph);
    put(c, "\",\"name\":");
    put_json(c, name);
    if (cat) {
        put(c, ",\"cat\":");
        put_json(c, cat);
    }
}

static void where(struct chrome *c, int32_t pid, int32_t tid, int64_t ns)
{
    put_int(c, ",\"pid\":", pid);
    put_int(c, ",\"tid\":", tid);
    put(c, ",\"ts\":");
    jtime(c, ns);
}

/* "name": of a field, after sep. */
static void field_key(struct chrome *c, const char *sep, const struct ptt_field *fd)
{
    put(c, sep);
    ptt_obuf_putc(&c->o, '"');
    ptt_obuf_write(&c->o, fd->name, (size_t)fd->name_len);
    put(c, "\":");
}

/* The name of an address or thread id field, or NULL. */
static const char *field_name(struct chrome *c, const struct ptt_ev *ev, unsigned i)
{
    uint64_t v = ev->args[i];
    if (i >= ev->info->nargs || !v)
        return NULL;
    switch (ev->info->fields[i].type) {
    case PTT_F_OBJ: return ptt_names_object(c->names, ev->pid, v);
    case PTT_F_SYM: return ptt_names_code(c->names, ev->pid, v);
    case PTT_F_TID: return ptt_names_thread(c->names, ev->pid, (int32_t)v);
    case PTT_F_SITE: return ptt_names_site(c->names, ev->pid, v);
    case PTT_F_PTHREAD: {
        int32_t tid = ptt_names_pthread(c->names, ev->pid, v);
        return tid ? ptt_names_thread(c->names, ev->pid, tid) : NULL;
    }
    default: return NULL;
    }
}

/* "name":value for each field of ev, as ptt view --format=raw writes them (but strings: as they
 * are, not quoted and escaped), then "names":{...} for those that have one. */
static void fields(struct chrome *c, const struct ptt_ev *ev, int with_names)
{
    char vb[1200];
    int n = 0;
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++) {
        const struct ptt_field *fd = &ev->info->fields[i];
        field_key(c, n++ ? "," : "", fd);
        if (fd->type == PTT_F_STR) { /* in the words from its own on */
            ptt_json_put(&c->o, (const char *)&ev->args[i], i < ev->nargs ? (ev->nargs - i) * 8 : 0,
                         0);
            continue;
        }
        if (ptt_ftype_raw_hex(fd->type)) { /* most: an address, written here */
            ptt_obuf_putc(&c->o, '"');
            ptt_obuf_x64(&c->o, ev->args[i]);
            ptt_obuf_putc(&c->o, '"');
            continue;
        }
        const char *v = ptt_fmt_ev_field(vb, sizeof vb, ev, i, 0);
        if (ptt_ftype_json_number(fd->type))
            put(c, v);
        else
            put_json(c, v);
    }
    if (!with_names)
        return;
    int named = 0;
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++) {
        const char *name = field_name(c, ev, i);
        if (!name)
            continue;
        field_key(c, named++ ? "," : n ? ",\"names\":{" : "\"names\":{", &ev->info->fields[i]);
        put_json(c, name);
    }
    if (named)
        ptt_obuf_putc(&c->o, '}');
}

static void write_blocked(struct chrome *c)
{
    if (!c->blocked.set)
        return;
    c->blocked.set = 0;
    char name[64];
    enum ptt_tl_state st = c->blocked.state;
    if (st == PTT_TL_PTT_BUFFER) /* ptt's own wait, not the program's */
        snprintf(name, sizeof name, "%s", ptt_tl_state_label(st));
    else
        snprintf(name, sizeof name, "blocked on %s", ptt_tl_state_name(st));
    begin_event(c, 'X', name, "blocked");
    /* The state's colour in every picture (states.def), as chrome://tracing names colours. */
    put(c, ",\"cname\":\"");
    put(c, ptt_tl_state_cname(c->blocked.state));
    ptt_obuf_putc(&c->o, '"');
    where(c, c->blocked.pid, c->blocked.tid, c->blocked.from);
    put(c, ",\"dur\":");
    jtime(c, c->blocked.to > c->blocked.from ? c->blocked.to - c->blocked.from : 0);
    const struct ptt_evinfo *call = ptt_evinfo(c->blocked.call);
    put(c, ",\"args\":{\"state\":\"");
    put(c, ptt_tl_state_name(c->blocked.state));
    if (st == PTT_TL_PTT_BUFFER) { /* in no call of the program's, on no object */
        put(c, "\"}}");
        return;
    }
    put(c, "\",\"call\":");
    put_json(c, call ? call->routine : "?");
    const char *oname = NULL;
    if (c->blocked.state == PTT_TL_JOIN) {
        int32_t tid = ptt_names_pthread(c->names, c->blocked.pid, c->blocked.object);
        put_hex(c, ",\"thread\":", c->blocked.object);
        if (tid)
            put_int(c, ",\"tid\":", tid);
        oname = tid ? ptt_names_thread(c->names, c->blocked.pid, tid) : NULL;
    } else if (c->blocked.state != PTT_TL_SIGNAL && c->blocked.state != PTT_TL_MQ) {
        put_hex(c, ",\"object\":", c->blocked.object);
        oname = ptt_names_object(c->names, c->blocked.pid, c->blocked.object);
    }
    if (oname) {
        put(c, ",\"name\":");
        put_json(c, oname);
    }
    put(c, "}}");
}

static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct chrome *c = arg;
    c->has_out = ev->info && ev->info->kind == PTT_KIND_OUT;
    if (c->has_out) /* its recorded arguments: not the whole array */
        memcpy(&c->out, ev, offsetof(struct ptt_ev, args) + ev->nargs * sizeof ev->args[0]);
    int start = ev->info && ev->info->role == PTT_ROLE_PROCESS_START;
    if (!start && ev->id != PTT_EV_MODULE_LOAD)
        return;
    struct proc *p = ptt_hmap_get(&c->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
    uint64_t ppid;
    if (start) {
        p->fresh = 1;
        /* A forked child runs its parent's program (until it maps one of its own). */
        struct proc *parent = ptt_ev_role_get(ev, PTT_RF_BY, &ppid)
                                  ? ptt_hmap_get(&c->procs, (uint64_t)(uint32_t)ppid, 0)
                                  : NULL;
        if (parent && parent != p)
            memcpy(p->name, parent->name, sizeof p->name);
    } else if (p->fresh && ev->info && ev->nargs > ev->info->nargs) {
        /* The first module of a (new) program is the program: its file name names it. */
        char path[PTT_EVENT_MAX_ARGS * 8 + 1];
        size_t max = (ev->nargs - ev->info->nargs) * 8;
        memcpy(path, &ev->args[ev->info->nargs], max);
        path[max] = 0;
        const char *base = strrchr(path, '/');
        snprintf(p->name, sizeof p->name, "%.*s", (int)sizeof p->name - 1, base ? base + 1 : path);
        p->fresh = 0;
    }
}

static void on_process(void *arg, int32_t pid, int64_t ns, int begin)
{
    struct chrome *c = arg;
    (void)ns;
    if (begin)
        return;
    struct proc *p = ptt_hmap_get(&c->procs, (uint64_t)(uint32_t)pid, sizeof *p);
    char name[80];
    if (p->name[0])
        snprintf(name, sizeof name, "%s", p->name);
    else
        snprintf(name, sizeof name, "process %d", pid);
    begin_event(c, 'M', "process_name", NULL);
    put_int(c, ",\"pid\":", pid);
    put(c, ",\"args\":{\"name\":");
    put_json(c, name);
    put(c, "}}");
}

static void on_thread(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name)
{
    struct chrome *c = arg;
    (void)ns;
    if (begin)
        return;
    /* Named at its end: by then it has the name it set last. */
    name = ptt_names_thread(c->names, pid, tid);
    char fallback[32];
    snprintf(fallback, sizeof fallback, "thread %d", tid);
    begin_event(c, 'M', "thread_name", NULL);
    put_int(c, ",\"pid\":", pid);
    put_int(c, ",\"tid\":", tid);
    put(c, ",\"args\":{\"name\":");
    put_json(c, name ? name : fallback);
    put(c, "}}");
}

static void on_call(void *arg, const struct ptt_ev *in, int64_t end_ns, int how)
{
    int unfinished = how & PTT_TL_UNFINISHED;
    struct chrome *c = arg;
    begin_event(c, 'X', in->info->routine, in->info->cls);
    where(c, in->pid, in->tid, in->ns);
    put(c, ",\"dur\":");
    jtime(c, end_ns > in->ns ? end_ns - in->ns : 0);
    put(c, ",\"args\":{");
    fields(c, in, 1);
    int sep = ptt_ev_has_field(in, 0);
    const struct ptt_ev *out = &c->out;
    if (!unfinished && c->has_out && out->pid == in->pid && out->tid == in->tid &&
        out->ns == end_ns && !strcmp(out->info->routine, in->info->routine) &&
        ptt_ev_has_field(out, 0)) {
        put(c, sep ? ",\"returned\":{" : "\"returned\":{");
        fields(c, out, 0);
        ptt_obuf_putc(&c->o, '}');
        sep = 1;
    }
    if (unfinished)
        put(c, sep ? ",\"unfinished\":true" : "\"unfinished\":true");
    if (how & PTT_TL_BEFORE_ATTACH) /* its start is the attach's */
        put(c, sep || unfinished ? ",\"before_attach\":true" : "\"before_attach\":true");
    put(c, "}}");
    if (c->blocked.set && c->blocked.pid == in->pid && c->blocked.tid == in->tid)
        write_blocked(c);
}

static void on_state(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                     int64_t to, uint64_t object, uint16_t call)
{
    struct chrome *c = arg;
    write_blocked(c); /* one without its call: never, but write it all the same */
    c->blocked.set = 1;
    c->blocked.pid = pid;
    c->blocked.tid = tid;
    c->blocked.state = state;
    c->blocked.from = from;
    c->blocked.to = to;
    c->blocked.object = object;
    c->blocked.call = call;
}

/* One end of a link: an instant on the thread, and the flow event bound to it (written right after
 * it, at the same time: it is the innermost slice there whatever else the thread did). */
static void link_end(struct chrome *c, enum ptt_tl_link kind, int32_t pid, int32_t tid, int64_t ns,
                     int32_t other, uint64_t object, int source)
{
    const char *name = ptt_tl_link_name(kind);
    begin_event(c, 'i', name, "link");
    where(c, pid, tid, ns);
    put_int(c,
            source ? ",\"s\":\"t\",\"args\":{\"to\":" : ",\"s\":\"t\",\"args\":{\"from\":", other);
    if (kind == PTT_TL_CREATE || kind == PTT_TL_JOIN_LINK) {
        put_hex(c, ",\"thread\":", object);
    } else {
        const char *oname = ptt_names_object(c->names, pid, object);
        put_hex(c, ",\"object\":", object);
        if (oname) {
            put(c, ",\"name\":");
            put_json(c, oname);
        }
    }
    put(c, "}}");
    begin_event(c, source ? 's' : 'f', name, "link");
    where(c, pid, tid, ns);
    put(c, ",\"id\":");
    ptt_obuf_u64(&c->o, c->flow_id);
    put(c, source ? "}" : ",\"bp\":\"e\"}");
}

static void on_link(void *arg, enum ptt_tl_link kind, int32_t pid, int32_t from_tid,
                    int64_t from_ns, int32_t to_tid, int64_t to_ns, uint64_t object)
{
    struct chrome *c = arg;
    c->flow_id++;
    link_end(c, kind, pid, from_tid, from_ns, to_tid, object, 1);
    link_end(c, kind, pid, to_tid, to_ns, from_tid, object, 0);
}

static void on_counter(void *arg, int32_t pid, uint64_t object, int cls, const char *what,
                       int64_t ns, int64_t value)
{
    struct chrome *c = arg;
    int is_value = !strcmp(what, "value");
    if (!is_value) {
        struct lockstat *l = ptt_hmap_get(&c->locks, ptt_key2((uint64_t)pid, object), 0);
        if (!l || !l->top)
            return;
    } else if (cls != PTT_CLASS_sem) {
        return;
    }
    struct ctr *k = ptt_hmap_get(&c->ctrs, ptt_key2((uint64_t)pid, object), sizeof *k);
    if (!k->name) {
        const struct ptt_classinfo *classes;
        unsigned ncls;
        classes = ptt_classes(&ncls);
        const char *cname = "object";
        for (unsigned i = 0; i < ncls; i++)
            if ((int)classes[i].number == cls)
                cname = classes[i].name;
        const char *oname = ptt_names_object(c->names, pid, object);
        char buf[300];
        if (oname)
            snprintf(buf, sizeof buf, "%s %s", cname, oname);
        else
            snprintf(buf, sizeof buf, "%s 0x%" PRIx64, cname, object);
        k->name = strdup(buf);
        if (!k->name)
            return;
    }
    begin_event(c, 'C', k->name, is_value ? "sem" : "contention");
    put_int(c, ",\"pid\":", pid);
    put(c, ",\"ts\":");
    jtime(c, ns);
    put_int(c, is_value ? ",\"args\":{\"value\":" : ",\"args\":{\"waiters\":", value);
    put(c, "}}");
}

/* The first pass: how many times a thread had to wait for each lock. */
static void count_waits(void *arg, int32_t pid, uint64_t object, int cls, const char *what,
                        int64_t ns, int64_t value)
{
    struct chrome *c = arg;
    (void)ns;
    if (strcmp(what, "waiters") ||
        (cls != PTT_CLASS_mutex && cls != PTT_CLASS_rwlock && cls != PTT_CLASS_spin))
        return;
    struct lockstat *l = ptt_hmap_get(&c->locks, ptt_key2((uint64_t)pid, object), sizeof *l);
    l->pid = pid;
    l->cls = cls;
    l->obj = object;
    if (value > l->last)
        l->waits += value - l->last;
    l->last = value;
}

/* Whether a is more contended than b (then the lower pid and address, for a stable choice). */
static int more_contended(const struct lockstat *a, const struct lockstat *b)
{
    if (a->waits != b->waits)
        return a->waits > b->waits;
    if (a->pid != b->pid)
        return a->pid < b->pid;
    return a->obj < b->obj;
}

static void pick_top_locks(struct chrome *c)
{
    struct lockstat *top[TOP_LOCKS];
    int n = 0;
    for (size_t i = 0; i < c->locks.cap; i++) {
        struct lockstat *l = ptt_hmap_slot(&c->locks, i);
        if (!l || l->waits <= 0)
            continue;
        int j = n < TOP_LOCKS ? n++ : TOP_LOCKS;
        if (j == TOP_LOCKS && !more_contended(l, top[TOP_LOCKS - 1]))
            continue;
        if (j == TOP_LOCKS)
            j = TOP_LOCKS - 1;
        while (j > 0 && more_contended(l, top[j - 1])) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = l;
    }
    for (int i = 0; i < n; i++)
        top[i]->top = 1;
}

static void free_ctr(void *p)
{
    free(((struct ctr *)p)->name);
}

/* "otherData": what the trace's INFO records say about it. */
static void write_header(struct chrome *c, const struct ptt_reader *r)
{
    static const char *keys[] = {"command", "host", "start_time", "clock", "ptt_version", "pid"};
    put(c, "{\"otherData\":{\"tool\":\"ptt export\"");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = ptt_reader_info(r, keys[i]);
        if (!v)
            continue;
        put(c, ",\"");
        put(c, keys[i]);
        put(c, "\":");
        put_json(c, v);
    }
    put(c, "},\n\"traceEvents\":[");
}

int ptt_export_chrome(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    struct chrome c = {0};
    c.names = o->names;
    struct ptt_reader *info = ptt_reader_open(o->in, err, errlen);
    if (!info)
        return -1; /* not a trace: no output */
    /* First pass: which locks are worth a counter. A damaged file is reported by the second. */
    struct ptt_names *scratch = ptt_names_new();
    const struct ptt_tl_callbacks count = {.counter = count_waits};
    char ignored[600];
    if (scratch)
        ptt_timeline_run(o->in, scratch, &count, &c, ignored, sizeof ignored);
    ptt_names_free(scratch);
    pick_top_locks(&c);

    int r = 0;
    c.f = ptt_output_fopen(o->out, err, errlen);
    if (!c.f) {
        r = -1;
        goto out;
    }
    ptt_obuf_open(&c.o, c.f, 1 << 20);
    write_header(&c, info);
    const struct ptt_tl_callbacks cb = {
        .event = on_event,
        .process = on_process,
        .thread = on_thread,
        .call = on_call,
        .state = on_state,
        .link = on_link,
        .counter = on_counter,
    };
    r = ptt_timeline_run(o->in, o->names, &cb, &c, err, errlen);
    write_blocked(&c);
    put(&c, "\n]}\n"); /* closed whatever happened: what could be read is valid JSON */
    ptt_obuf_close(&c.o);
    if (ferror(c.f) && !r) {
        snprintf(err, errlen, "%s: write error", o->out);
        r = -1;
    }
    if (fclose(c.f) && !r) {
        snprintf(err, errlen, "%s: %m", o->out);
        r = -1;
    }
out:
    ptt_reader_close(info);
    ptt_hmap_free(&c.procs, NULL);
    ptt_hmap_free(&c.locks, NULL);
    ptt_hmap_free(&c.ctrs, free_ctr);
    return r;
}
