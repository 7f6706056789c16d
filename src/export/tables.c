/* ptt export --format=tables: the trace as relational tables for query engines (DuckDB, Spark),
 * docs/export.md. In DIR, a CSV file per table (tables.h), gzip-compressed when ptt was built
 * with zlib, with a header line; and schema.sql, which declares them to DuckDB with their types.
 * The waits and holds are the intervals ptt stat adds up (stats.h hands them out), so that SQL
 * sums give its numbers exactly. Events and intervals are written as they are read; threads,
 * processes, objects and call sites at the end, with the names known then. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PTT_HAVE_ZLIB
#include <zlib.h>

#include "util/dynlib.h"
#define EXT ".csv.gz"
/* zlib loaded by the export of tables, its one user, not linked by every start of ptt
 * (util/dynlib.h). */
#define ZLIB_FUNCS(X) X(gzclose) X(gzdopen) X(gzwrite)
static struct {
    ZLIB_FUNCS(PTT_DYN_PTR)
} zlib;
static const char *const zlib_names[] = {ZLIB_FUNCS(PTT_DYN_NAME)};
#ifndef PTT_ZLIB_SONAME
#define PTT_ZLIB_SONAME "libz.so.1"
#endif
static struct ptt_dynlib zlib_lib = PTT_DYNLIB(PTT_ZLIB_SONAME, zlib, zlib_names);
#define gzclose (*zlib.gzclose)
#define gzdopen (*zlib.gzdopen)
#define gzwrite (*zlib.gzwrite)
#else
#define EXT ".csv"
#endif

#include "analysis/stats.h"
#include "analysis/timeline.h"
#include "export/export.h"
#include "export/tables.h"
#include "util/obuf.h"
#include "export/textfmt.h"
#include "util/hmap.h"
#include "util/json.h"
#include "util/outdir.h"
#include "util/util.h"

enum table {
#define TABLE_ENUM(name, what) TB_##name,
#define NO_COLUMN(name, type)
    PTT_TABLES(TABLE_ENUM, NO_COLUMN) NTABLES
};

/* The tables and their columns, flat: a table's entry (name set) then its columns (column set). */
static const struct {
    const char *name, *what, *column, *type;
} layout[] = {
#define TABLE_ENTRY(name, what) {#name, what, NULL, NULL},
#define COLUMN_ENTRY(name, type) {NULL, NULL, #name, type},
    PTT_TABLES(TABLE_ENTRY, COLUMN_ENTRY)};
#define NLAYOUT (sizeof layout / sizeof layout[0])

#define BUF_SIZE (1 << 16)

/* A table's file, written through a buffer. */
struct tfile {
#ifdef PTT_HAVE_ZLIB
    gzFile gz;
#else
    FILE *f;
#endif
    int open;
    unsigned col; /* columns written in this row */
    size_t n;
    char buf[BUF_SIZE];
};

struct object {
    int32_t pid;
    int cls;
    uint64_t addr;
};

struct site {
    int32_t pid;
    uint64_t addr;
};

struct proc {
    int32_t pid, ppid;
    int has_ppid, has_status;
    int64_t start, end;
    uint64_t status;
};

struct thread {
    int32_t creator;
    int has_creator, has_self;
    uint64_t self;
};

struct tables {
    const char *dir;
    struct ptt_names *names;
    struct ptt_stats *stats;
    struct tfile *t[NTABLES];
    struct ptt_hmap objects, sites, procs, threads;
    uint64_t events;
    int dir_ok;
    int failed; /* errno of the first failure */
    char failed_path[600];
};

static void fail(struct tables *s, int err, const char *path)
{
    if (s->failed)
        return;
    s->failed = err ? err : EIO;
    snprintf(s->failed_path, sizeof s->failed_path, "%s", path);
}

/* The layout entry of table k. */
static size_t table_entry(int k)
{
    size_t i = 0;
    for (int seen = -1; i < NLAYOUT; i++)
        if (layout[i].name && ++seen == k)
            break;
    return i;
}

static void table_path(const struct tables *s, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s" EXT, s->dir, layout[table_entry(k)].name);
}

static void flush(struct tables *s, int k)
{
    struct tfile *t = s->t[k];
    if (s->failed) /* said once, at the end */
        t->n = 0;
    if (!t->n)
        return;
    errno = 0;
#ifdef PTT_HAVE_ZLIB
    int ok = gzwrite(t->gz, t->buf, (unsigned)t->n) == (int)t->n;
#else
    int ok = fwrite(t->buf, 1, t->n, t->f) == t->n;
#endif
    t->n = 0;
    if (!ok) {
        char path[600];
        table_path(s, k, path, sizeof path);
        fail(s, errno, path);
    }
}

static inline void put(struct tables *s, int k, const char *p, size_t n)
{
    struct tfile *t = s->t[k];
    if (t->n + n > BUF_SIZE)
        flush(s, k);
    if (n > BUF_SIZE) /* never: values are short */
        n = BUF_SIZE;
    memcpy(t->buf + t->n, p, n);
    t->n += n;
}

/* The separator before a value. */
static void sep(struct tables *s, int k)
{
    if (s->t[k]->col++)
        put(s, k, ",", 1);
}

static void end_row(struct tables *s, int k)
{
    put(s, k, "\n", 1);
    s->t[k]->col = 0;
}

static void put_null(struct tables *s, int k)
{
    sep(s, k);
}

static void put_u64(struct tables *s, int k, uint64_t v)
{
    char b[24];
    sep(s, k);
    put(s, k, b, ptt_fmt_u64(b, v)); /* two digits a step: a time has 10 to 13 */
}

static void put_i64(struct tables *s, int k, int64_t v)
{
    char b[24];
    sep(s, k);
    put(s, k, b, ptt_fmt_i64(b, v));
}

static void put_bool(struct tables *s, int k, int v)
{
    sep(s, k);
    put(s, k, v ? "true" : "false", v ? 4 : 5);
}

/* A string, always quoted (an empty one is then not a NULL), quotes doubled, valid UTF-8: each
 * ill-formed part as U+FFFD, as JSON outputs write names. NULL: a NULL. */
static void put_str(struct tables *s, int k, const char *v)
{
    sep(s, k);
    if (!v)
        return;
    put(s, k, "\"", 1);
    const unsigned char *p = (const unsigned char *)v;
    size_t n = strlen(v);
    for (size_t i = 0; i < n;) {
        size_t run = i; /* ASCII but quotes, as is: most strings whole */
        while (run < n && p[run] < 0x80 && p[run] != '"')
            run++;
        if (run > i) {
            put(s, k, (const char *)p + i, run - i);
            i = run;
            continue;
        }
        size_t bad, len = ptt_utf8_seq(p + i, n - i, &bad);
        if (!len) {
            put(s, k, "\xef\xbf\xbd", 3);
            i += bad;
            continue;
        }
        if (p[i] == '"')
            put(s, k, "\"", 1);
        put(s, k, (const char *)p + i, len);
        i += len;
    }
    put(s, k, "\"", 1);
}

/* DIR and the files with their header lines, at the first event: a file that is not a trace
 * makes nothing. */
static int open_tables(struct tables *s)
{
    if (s->dir_ok || s->failed)
        return s->failed ? -1 : 0;
    if (ptt_outdir_make(s->dir)) {
        fail(s, errno, s->dir);
        return -1;
    }
    s->dir_ok = 1;
    for (int k = 0; k < NTABLES; k++) {
        char path[600];
        table_path(s, k, path, sizeof path);
        s->t[k] = ptt_must(calloc(1, sizeof *s->t[k]));
        /* Level 1: most of gzip's gain at a fraction of its time, on traces of millions of
         * events. */
        int fd = ptt_outdir_create(path);
#ifdef PTT_HAVE_ZLIB
        s->t[k]->gz = fd < 0 ? NULL : gzdopen(fd, "wb1");
        s->t[k]->open = s->t[k]->gz != NULL;
#else
        s->t[k]->f = fd < 0 ? NULL : fdopen(fd, "w");
        s->t[k]->open = s->t[k]->f != NULL;
#endif
        if (!s->t[k]->open) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            fail(s, e, path);
            return -1;
        }
        for (size_t i = table_entry(k) + 1; i < NLAYOUT && !layout[i].name; i++) {
            sep(s, k);
            put(s, k, layout[i].column, strlen(layout[i].column));
        }
        end_row(s, k);
    }
    return 0;
}

static void close_tables(struct tables *s)
{
    for (int k = 0; k < NTABLES; k++) {
        if (!s->t[k])
            continue;
        if (s->t[k]->open) {
            flush(s, k);
            char path[600];
            table_path(s, k, path, sizeof path);
            errno = 0;
#ifdef PTT_HAVE_ZLIB
            if (gzclose(s->t[k]->gz) != Z_OK)
#else
            if (fclose(s->t[k]->f))
#endif
                fail(s, errno, path);
        }
        free(s->t[k]);
        s->t[k] = NULL;
    }
}

/* What the end tables need to know, from one event. */

static void note_object(struct tables *s, int32_t pid, uint64_t addr, int cls)
{
    if (!addr || cls == PTT_CLASS_thread || cls == PTT_CLASS_meta)
        return;
    struct object *o = ptt_hmap_get(&s->objects, ptt_key2((uint64_t)pid, addr), sizeof *o);
    if (!o->addr) {
        o->pid = pid;
        o->addr = addr;
        o->cls = cls;
    }
}

static void note_site(struct tables *s, int32_t pid, uint64_t addr)
{
    if (!addr)
        return;
    struct site *x = ptt_hmap_get(&s->sites, ptt_key2((uint64_t)pid, addr), sizeof *x);
    x->pid = pid;
    x->addr = addr;
}

static void note_process(struct tables *s, const struct ptt_ev *ev)
{
    struct proc *p = ptt_hmap_get(&s->procs, (uint64_t)(uint32_t)ev->pid, sizeof *p);
    if (!p->pid) {
        p->pid = ev->pid;
        p->start = ev->ns;
    }
    p->end = ev->ns;
    uint64_t v;
    if (!ev->info)
        return;
    if (ev->info->role == PTT_ROLE_PROCESS_START && ptt_ev_role_get(ev, PTT_RF_BY, &v)) {
        p->ppid = (int32_t)v;
        p->has_ppid = 1;
        p->start = ev->ns;
    } else if (ev->info->role == PTT_ROLE_PROCESS_END && ptt_ev_role_get(ev, PTT_RF_STATUS, &v)) {
        p->status = v;
        p->has_status = 1;
    }
}

static void note_thread(struct tables *s, const struct ptt_ev *ev)
{
    uint64_t v;
    struct thread *t =
        ptt_hmap_get(&s->threads, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), sizeof *t);
    if (ptt_ev_role_get(ev, PTT_RF_BY, &v)) {
        t->creator = (int32_t)v;
        t->has_creator = 1;
    }
    if (ptt_ev_role_get(ev, PTT_RF_OBJECT, &v)) {
        t->self = v;
        t->has_self = 1;
    }
}

/* The index of ev's field named name (of one of the types a and b), or -1. */
static int field_named(const struct ptt_ev *ev, const char *name, enum ptt_ftype a,
                       enum ptt_ftype b)
{
    size_t len = strlen(name);
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++) {
        const struct ptt_field *f = &ev->info->fields[i];
        if ((size_t)f->name_len == len && !memcmp(f->name, name, len) &&
            (f->type == a || f->type == b))
            return (int)i;
    }
    return -1;
}

static int field_of_type(const struct ptt_ev *ev, enum ptt_ftype type)
{
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++)
        if (ev->info->fields[i].type == type)
            return (int)i;
    return -1;
}

/* A field's value as a column: NULL when the event has no such field. */
static void put_field_i64(struct tables *s, const struct ptt_ev *ev, int i)
{
    if (i < 0)
        put_null(s, TB_events);
    else
        put_i64(s, TB_events, (int64_t)ev->args[i]);
}

static void write_fields(struct tables *s, const struct ptt_ev *ev, uint64_t id)
{
    char buf[1100], name[40];
    if (!ev->info) { /* an event this ptt does not know: its words */
        for (unsigned i = 0; i < ev->nargs; i++) {
            snprintf(name, sizeof name, "word%u", i);
            put_u64(s, TB_fields, id);
            put_u64(s, TB_fields, i);
            put_str(s, TB_fields, name);
            put_str(s, TB_fields, ptt_ftype_name(PTT_F_HEX));
            put_str(s, TB_fields, ptt_fmt_field(buf, sizeof buf, PTT_F_HEX, ev->args[i], 0));
            end_row(s, TB_fields);
        }
        return;
    }
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++) {
        const struct ptt_field *f = &ev->info->fields[i];
        snprintf(name, sizeof name, "%.*s", f->name_len, f->name);
        put_u64(s, TB_fields, id);
        put_u64(s, TB_fields, i);
        put_str(s, TB_fields, name);
        put_str(s, TB_fields, ptt_ftype_name(f->type));
        put_str(s, TB_fields, ptt_fmt_ev_field(buf, sizeof buf, ev, i, 0));
        end_row(s, TB_fields);
    }
}

static void write_event(struct tables *s, const struct ptt_ev *ev, uint64_t id)
{
    const struct ptt_evinfo *e = ev->info;
    char nb[32];
    uint64_t obj = 0;
    int has_obj = e && ptt_ev_role_get(ev, PTT_RF_OBJECT, &obj);
    int site = e ? field_of_type(ev, PTT_F_SITE) : -1;
    put_u64(s, TB_events, id);
    put_i64(s, TB_events, ev->ns);
    put_i64(s, TB_events, ev->pid);
    put_i64(s, TB_events, ev->tid);
    put_u64(s, TB_events, ev->serial);
    put_str(s, TB_events, ptt_ev_name(ev, nb, sizeof nb));
    put_str(s, TB_events, e ? e->cls : NULL);
    put_str(s, TB_events, e ? ptt_kind_name(e->kind) : NULL);
    put_str(s, TB_events, e && e->routine[0] ? e->routine : NULL);
    if (has_obj)
        put_u64(s, TB_events, obj);
    else
        put_null(s, TB_events);
    if (site >= 0)
        put_u64(s, TB_events, ev->args[site]);
    else
        put_null(s, TB_events);
    put_field_i64(s, ev, e ? field_named(ev, "ret", PTT_F_RET, PTT_F_INT) : -1);
    put_field_i64(s, ev, e ? field_named(ev, "errno", PTT_F_ERRNO, PTT_F_ERRNO) : -1);
    put_bool(s, TB_events, ev->nested);
    end_row(s, TB_events);
    if (has_obj)
        note_object(s, ev->pid, obj, e->okind);
    if (e && ptt_ev_role_get(ev, PTT_RF_LOCK, &obj))
        note_object(s, ev->pid, obj, PTT_CLASS_mutex);
    if (site >= 0)
        note_site(s, ev->pid, ev->args[site]);
}

static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct tables *s = arg;
    uint64_t id = s->events++;
    if (open_tables(s))
        return; /* said at the end */
    note_process(s, ev);
    if (ev->info && ev->info->role == PTT_ROLE_THREAD_START)
        note_thread(s, ev);
    write_event(s, ev, id);
    write_fields(s, ev, id);
    ptt_stats_event(s->stats, ev); /* after: its intervals end with this event */
}

/* An event before --from: the waits and holds it begins go on into the window, where they count
 * from --from, as ptt stat counts them; it is no row. */
static void on_before(void *arg, const struct ptt_ev *ev)
{
    struct tables *s = arg;
    ptt_stats_event(s->stats, ev);
}

static void put_site(struct tables *s, int k, uint64_t site)
{
    if (site)
        put_u64(s, k, site);
    else
        put_null(s, k);
}

static const char *class_name(int cls)
{
    unsigned n;
    const struct ptt_classinfo *c = ptt_classes(&n);
    return cls >= 0 && (unsigned)cls < n ? c[cls].name : NULL;
}

static void on_interval(void *arg, const struct ptt_stat_interval *iv)
{
    struct tables *s = arg;
    int k = iv->what & PTT_STAT_IV_HOLD ? TB_holds : TB_waits;
    note_object(s, iv->pid, iv->object, iv->cls);
    put_i64(s, k, iv->pid);
    put_i64(s, k, iv->tid);
    put_u64(s, k, iv->object);
    put_str(s, k, class_name(iv->cls));
    if (k == TB_waits) {
        const struct ptt_evinfo *in = ptt_evinfo(iv->call);
        put_str(s, k, in ? in->routine : NULL);
        put_site(s, k, iv->site);
    }
    put_i64(s, k, iv->begin);
    put_i64(s, k, iv->end);
    if (k == TB_holds) {
        put_site(s, k, iv->site);
        put_site(s, k, iv->release_site);
    } else {
        static const unsigned flags[] = {PTT_STAT_IV_WAIT, PTT_STAT_IV_ACQUIRED,
                                         PTT_STAT_IV_CONTENDED, PTT_STAT_IV_BLOCKED,
                                         PTT_STAT_IV_UNFINISHED};
        for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
            put_bool(s, k, (iv->what & flags[i]) != 0);
        if (iv->has_result)
            put_i64(s, k, iv->result);
        else
            put_null(s, k);
    }
    end_row(s, k);
}

/* The tables written at the end: the records of a map, by pid then address (or tid). */

static int by_pid_addr(const void *a, const void *b)
{
    const struct object *x = *(const struct object *const *)a,
                        *y = *(const struct object *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int by_site(const void *a, const void *b)
{
    const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int by_pid(const void *a, const void *b)
{
    const struct proc *x = *(const struct proc *const *)a, *y = *(const struct proc *const *)b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int by_thread(const void *a, const void *b)
{
    const struct ptt_stat_thread *x = *(const struct ptt_stat_thread *const *)a,
                                 *y = *(const struct ptt_stat_thread *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The records of m, sorted: an array to free(), *n long. */
static void **sorted(const struct ptt_hmap *m, int (*cmp)(const void *, const void *), size_t *n)
{
    void **v = ptt_must(malloc((m->n + 1) * sizeof *v));
    size_t k = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (ptt_hmap_slot(m, i))
            v[k++] = ptt_hmap_slot(m, i);
    qsort(v, k, sizeof *v, cmp);
    *n = k;
    return v;
}

static void write_threads(struct tables *s)
{
    char buf[64];
    size_t n;
    struct ptt_stat_thread **v = ptt_stats_threads(s->stats, &n);
    qsort(v, n, sizeof *v, by_thread);
    for (size_t i = 0; i < n; i++) {
        const struct ptt_stat_thread *t = v[i];
        const struct thread *x =
            ptt_hmap_get(&s->threads, ptt_key2((uint64_t)t->pid, (uint64_t)t->tid), 0);
        put_i64(s, TB_threads, t->pid);
        put_i64(s, TB_threads, t->tid);
        put_str(s, TB_threads, ptt_stat_thread_name(s->names, t->pid, t->tid, buf, sizeof buf));
        put_i64(s, TB_threads, t->first);
        put_i64(s, TB_threads, t->last);
        if (x && x->has_creator)
            put_i64(s, TB_threads, x->creator);
        else
            put_null(s, TB_threads);
        if (x && x->has_self)
            put_u64(s, TB_threads, x->self);
        else
            put_null(s, TB_threads);
        end_row(s, TB_threads);
    }
    free(v);
}

static void write_processes(struct tables *s)
{
    size_t n;
    struct proc **v = (struct proc **)sorted(&s->procs, by_pid, &n);
    for (size_t i = 0; i < n; i++) {
        const struct proc *p = v[i];
        int st = (int)p->status;
        put_i64(s, TB_processes, p->pid);
        if (p->has_ppid)
            put_i64(s, TB_processes, p->ppid);
        else
            put_null(s, TB_processes);
        put_i64(s, TB_processes, p->start);
        put_i64(s, TB_processes, p->end);
        if (p->has_status)
            put_i64(s, TB_processes, st);
        else
            put_null(s, TB_processes);
        if (p->has_status && WIFEXITED(st))
            put_i64(s, TB_processes, WEXITSTATUS(st));
        else
            put_null(s, TB_processes);
        if (p->has_status && WIFSIGNALED(st))
            put_i64(s, TB_processes, WTERMSIG(st));
        else
            put_null(s, TB_processes);
        end_row(s, TB_processes);
    }
    free(v);
}

static void write_objects(struct tables *s)
{
    char buf[64];
    size_t n;
    struct object **v = (struct object **)sorted(&s->objects, by_pid_addr, &n);
    for (size_t i = 0; i < n; i++) {
        put_i64(s, TB_objects, v[i]->pid);
        put_u64(s, TB_objects, v[i]->addr);
        put_str(s, TB_objects, class_name(v[i]->cls));
        put_str(s, TB_objects,
                ptt_stat_object_name(s->names, v[i]->pid, v[i]->addr, buf, sizeof buf));
        end_row(s, TB_objects);
    }
    free(v);
}

/* A call site's function (ptt_names_code gives "function (file:line)"), file and line ("file:line"
 * from ptt_names_site; a site without a line is named by its function). */
static void write_site(struct tables *s, const struct site *x)
{
    char buf[64], func[512], file[512];
    const char *name = ptt_names_site(s->names, x->pid, x->addr);
    const char *code = ptt_names_code(s->names, x->pid, x->addr - 1);
    const char *colon = name ? strrchr(name, ':') : NULL;
    char *end = NULL;
    long line = colon ? strtol(colon + 1, &end, 10) : 0;
    int has_line = colon && end && end != colon + 1 && !*end;
    if (code) { /* a C++ name may hold spaces: the line is the last parenthesis */
        const char *paren = has_line ? strrchr(code, '(') : NULL;
        size_t n =
            paren && paren > code && paren[-1] == ' ' ? (size_t)(paren - 1 - code) : strlen(code);
        snprintf(func, sizeof func, "%.*s", (int)n, code);
    }
    if (has_line)
        snprintf(file, sizeof file, "%.*s", (int)(colon - name), name);
    put_i64(s, TB_sites, x->pid);
    put_u64(s, TB_sites, x->addr);
    if (!name)
        snprintf(buf, sizeof buf, "0x%" PRIx64, x->addr);
    put_str(s, TB_sites, name ? name : buf);
    put_str(s, TB_sites, code ? func : NULL);
    put_str(s, TB_sites, has_line ? file : NULL);
    if (has_line)
        put_i64(s, TB_sites, line);
    else
        put_null(s, TB_sites);
    end_row(s, TB_sites);
}

static void write_sites(struct tables *s)
{
    size_t n;
    struct site **v = (struct site **)sorted(&s->sites, by_site, &n);
    for (size_t i = 0; i < n; i++)
        write_site(s, v[i]);
    free(v);
}

/* DIR/schema.sql: a view per table, reading its file with its types (DuckDB's read_csv). Paths
 * are relative to DIR: the directory can be moved; run it there. */
static void write_schema(struct tables *s)
{
    char path[600];
    snprintf(path, sizeof path, "%s/schema.sql", s->dir);
    FILE *f = ptt_outdir_fopen(path, 0);
    if (!f) {
        fail(s, errno, path);
        return;
    }
    fprintf(f, "-- The tables of ptt export --format=tables (docs/export.md), for DuckDB.\n"
               "-- In this directory: duckdb -init schema.sql, or duckdb FILE.duckdb < "
               "schema.sql\n");
    for (size_t i = 0; i < NLAYOUT; i++) {
        if (layout[i].name) {
            fprintf(f,
                    "%s\n-- %s\nCREATE OR REPLACE VIEW %s AS SELECT * FROM read_csv('%s" EXT "',\n"
                    "    header = true, auto_detect = false, delim = ',', quote = '\"', "
                    "escape = '\"',\n    nullstr = '', allow_quoted_nulls = false, columns = {",
                    i ? ");\n" : "", layout[i].what, layout[i].name, layout[i].name);
            continue;
        }
        fprintf(f, "%s\n        '%s': '%s'", layout[i - 1].name ? "" : ",", layout[i].column,
                layout[i].type);
        if (i + 1 == NLAYOUT || layout[i + 1].name)
            fputs("}", f);
    }
    fputs(");\n", f);
    errno = 0;
    if (ferror(f) | fclose(f))
        fail(s, errno, path);
}

int ptt_export_tables(const struct ptt_export_opts *o, char *err, size_t errlen)
{
#ifdef PTT_HAVE_ZLIB
    if (!ptt_dynlib_load(&zlib_lib)) {
        snprintf(err, errlen, "cannot load zlib, which the tables' compression needs: %s",
                 zlib_lib.why);
        return -1;
    }
#endif
    struct tables s = {.dir = o->out, .names = o->names, .stats = ptt_stats_new()};
    ptt_stats_observe(s.stats, on_interval, &s);
    ptt_stats_window(s.stats, ptt_timeline_from());
    static const struct ptt_tl_callbacks cb = {.event = on_event, .before = on_before};
    char terr[512] = "";
    int r = ptt_timeline_run(o->in, o->names, &cb, &s, terr, sizeof terr);
    if (s.events && !s.failed) {
        write_threads(&s);
        write_processes(&s);
        write_objects(&s);
        write_sites(&s);
    }
    close_tables(&s);
    if (s.dir_ok && !s.failed)
        write_schema(&s);
    ptt_stats_free(s.stats);
    ptt_hmap_free(&s.objects, NULL);
    ptt_hmap_free(&s.sites, NULL);
    ptt_hmap_free(&s.procs, NULL);
    ptt_hmap_free(&s.threads, NULL);
    if (s.failed)
        snprintf(err, errlen, "%s: %s", s.failed_path, ptt_outdir_strerror(s.failed));
    else if (r && !s.events) /* not a trace: nothing written, not even DIR */
        snprintf(err, errlen, "%s", terr);
    else if (r)
        snprintf(err, errlen, "%s (the tables hold what could be read)", terr);
    return s.failed || r ? -1 : 0;
}
