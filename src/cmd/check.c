/* ptt check: read a trace once and print what the checker found (analysis/check.h), in sentences
 * or as JSON. Also run by ptt trace --check on the trace it has just written. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/names.h"
#include "cmd/check.h"
#include "cmd/cmds.h"
#include "trace/filter.h"
#include "cmd/usage.h"
#include "trace/reader.h"
#include "util/json.h"
#include "util/progress.h"
#include "util/term.h"
#include "util/util.h"

struct out {
    FILE *f;
    const struct ptt_names *names;
};

static const char *kind_word(int cls)
{
    switch (cls) {
    case PTT_CLASS_mutex: return "mutex";
    case PTT_CLASS_cond: return "condvar";
    case PTT_CLASS_barrier: return "barrier";
    case PTT_CLASS_rwlock: return "rwlock";
    case PTT_CLASS_spin: return "spinlock";
    case PTT_CLASS_sem: return "semaphore";
    case PTT_CLASS_thread: return "thread";
    default: return "object";
    }
}

static const char *thread_name(const struct out *o, int32_t pid, int32_t tid, char *buf, size_t len)
{
    const char *n = ptt_names_thread(o->names, pid, tid);
    if (n)
        return n;
    snprintf(buf, len, "%d", tid);
    return buf;
}

static const char *object_name(const struct out *o, const struct ptt_fobject *ob, char *buf,
                               size_t len)
{
    int32_t tid = ob->tid;
    if (ob->cls == PTT_CLASS_thread && !tid) /* joined before it started */
        tid = ptt_names_pthread(o->names, ob->pid, ob->addr);
    const char *n = ob->cls == PTT_CLASS_thread ? ptt_names_thread(o->names, ob->pid, tid)
                                                : ptt_names_object(o->names, ob->pid, ob->addr);
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, ob->addr);
    return buf;
}

/* "name (tid)", or "thread TID" for a thread without a name. */
static const char *thread_label(const struct out *o, int32_t pid, int32_t tid, char *buf,
                                size_t len)
{
    const char *n = ptt_names_thread(o->names, pid, tid);
    if (n)
        snprintf(buf, len, "%s (%d)", n, tid);
    else
        snprintf(buf, len, "thread %d", tid);
    return buf;
}

/* "file:line" of a site and the function it is in; NULL when unknown. */
static const char *site_name(const struct out *o, int32_t pid, uint64_t site, char *fn,
                             size_t fnlen)
{
    *fn = 0;
    if (!site)
        return NULL;
    const char *code = ptt_names_code(o->names, pid, site - 1);
    if (code) { /* "function (file:line)": the function, whose name may have spaces (C++) */
        size_t n = strlen(code);
        const char *open = n && code[n - 1] == ')' ? strrchr(code, '(') : NULL;
        if (open && open > code && open[-1] == ' ' && strchr(open, ':'))
            n = (size_t)(open - 1 - code);
        snprintf(fn, fnlen, "%.*s", (int)n, code);
    }
    return ptt_names_site(o->names, pid, site);
}

/* The summary with {oN} and {tN} named. */
static void fill(const struct out *o, const struct ptt_finding *f, char *buf, size_t len)
{
    size_t w = 0;
    char nb[300];
    for (const char *s = f->summary; *s && w + 1 < len; s++) {
        unsigned k;
        int used;
        if (s[0] == '{' && (s[1] == 'o' || s[1] == 't') && sscanf(s + 2, "%u}%n", &k, &used) == 1 &&
            s[2 + used - 1] == '}') {
            const char *name = "?";
            char tmp[340];
            if (s[1] == 'o' && k < f->nobjects) {
                snprintf(tmp, sizeof tmp, "%s %s", kind_word(f->objects[k].cls),
                         object_name(o, &f->objects[k], nb, sizeof nb));
                name = tmp;
            } else if (s[1] == 't' && k < f->nthreads) {
                thread_label(o, f->threads[k].pid, f->threads[k].tid, tmp, sizeof tmp);
                name = tmp;
            }
            w += (size_t)snprintf(buf + w, len - w, "%s", name);
            if (w >= len)
                w = len - 1;
            s += 2 + used - 1;
            continue;
        }
        buf[w++] = *s;
    }
    buf[w < len ? w : len - 1] = 0;
}

static void text_step(const struct out *o, const struct ptt_finding *f, const struct ptt_fstep *s)
{
    char tb[340], nb[300], fn[200];
    const struct ptt_evinfo *in = s->call ? ptt_evinfo(s->call) : NULL;
    fprintf(o->f, "    %12.6f  %s %s", (double)s->ns / 1e9,
            thread_label(o, s->pid, s->tid, tb, sizeof tb), s->action);
    if (s->object >= 0 && (unsigned)s->object < f->nobjects)
        fprintf(o->f, " %s %s", kind_word(f->objects[s->object].cls),
                object_name(o, &f->objects[s->object], nb, sizeof nb));
    if (in && in->routine[0])
        fprintf(o->f, " (%s)", in->routine);
    const char *site = site_name(o, s->pid, s->site, fn, sizeof fn);
    if (site)
        fprintf(o->f, " at %s%s%s", site, fn[0] ? " in " : "", fn);
    else if (s->site)
        fprintf(o->f, " at 0x%" PRIx64, s->site);
    fputc('\n', o->f);
}

/* A finding's kind in colour on a terminal: red for what stops a program, yellow for what may. */
static const char *kind_color(enum ptt_fkind k)
{
    if (!ptt_color_on())
        return "";
    switch (k) {
    case PTT_FK_DEADLOCK:
    case PTT_FK_HANG: return "\033[1;31m";
    case PTT_FK_MISUSE: return "\033[1;35m";
    default: return "\033[1;33m";
    }
}

static void write_text(const struct out *o, struct ptt_finding **f, size_t n)
{
    char sum[2048];
    for (size_t i = 0; i < n; i++) {
        fill(o, f[i], sum, sizeof sum);
        fprintf(o->f, "%s%s%s%s: %s", i ? "\n" : "", kind_color(f[i]->kind),
                ptt_fkind_name(f[i]->kind), ptt_c(PTT_C_RESET), sum);
        if (f[i]->count > 1)
            fprintf(o->f, " (%" PRIu64 " times)", f[i]->count);
        fprintf(o->f, "\n");
        for (unsigned k = 0; k < f[i]->nsteps; k++)
            text_step(o, f[i], &f[i]->steps[k]);
    }
}

static void json_site(const struct out *o, int32_t pid, uint64_t site)
{
    char fn[200];
    const char *s = site_name(o, pid, site, fn, sizeof fn);
    fputs(",\"site\":", o->f);
    if (s)
        ptt_json_str(o->f, s);
    else if (site)
        fprintf(o->f, "\"0x%" PRIx64 "\"", site);
    else
        fputs("null", o->f);
    fputs(",\"function\":", o->f);
    if (fn[0])
        ptt_json_str(o->f, fn);
    else
        fputs("null", o->f);
}

static void json_finding(const struct out *o, const struct ptt_finding *f)
{
    char sum[2048], nb[300], tb[32];
    fill(o, f, sum, sizeof sum);
    fprintf(o->f, "{\"kind\":\"%s\",\"what\":", ptt_fkind_name(f->kind));
    ptt_json_str(o->f, f->what);
    fputs(",\"summary\":", o->f);
    ptt_json_str(o->f, sum);
    fprintf(o->f, ",\"count\":%" PRIu64, f->count);
    if (f->err)
        fprintf(o->f, ",\"errno\":\"%s\"", strerrorname_np(f->err) ? strerrorname_np(f->err) : "?");
    fputs(",\"threads\":[", o->f);
    for (unsigned k = 0; k < f->nthreads; k++) {
        const struct ptt_fthread *t = &f->threads[k];
        fprintf(o->f, "%s{\"tid\":%d,\"pid\":%d,\"name\":", k ? "," : "", t->tid, t->pid);
        ptt_json_str(o->f, thread_name(o, t->pid, t->tid, tb, sizeof tb));
        fputc('}', o->f);
    }
    fputs("],\"objects\":[", o->f);
    for (unsigned k = 0; k < f->nobjects; k++) {
        const struct ptt_fobject *ob = &f->objects[k];
        fprintf(o->f, "%s{\"name\":", k ? "," : "");
        ptt_json_str(o->f, object_name(o, ob, nb, sizeof nb));
        unsigned n;
        fprintf(o->f, ",\"address\":\"0x%" PRIx64 "\",\"type\":\"%s\",\"pid\":%d}", ob->addr,
                ptt_classes(&n)[ob->cls].name, ob->pid);
    }
    fputs("],\"steps\":[", o->f);
    for (unsigned k = 0; k < f->nsteps; k++) {
        const struct ptt_fstep *s = &f->steps[k];
        const struct ptt_evinfo *in = s->call ? ptt_evinfo(s->call) : NULL;
        fprintf(o->f, "%s{\"tid\":%d,\"pid\":%d,\"thread\":", k ? "," : "", s->tid, s->pid);
        ptt_json_str(o->f, thread_name(o, s->pid, s->tid, tb, sizeof tb));
        fputs(",\"event\":", o->f);
        if (in && in->routine[0])
            ptt_json_str(o->f, in->routine);
        else
            fputs("null", o->f);
        fputs(",\"action\":", o->f);
        ptt_json_str(o->f, s->action);
        fputs(",\"object\":", o->f);
        if (s->object >= 0 && (unsigned)s->object < f->nobjects)
            ptt_json_str(o->f, object_name(o, &f->objects[s->object], nb, sizeof nb));
        else
            fputs("null", o->f);
        json_site(o, s->pid, s->site);
        fprintf(o->f, ",\"time\":%.9f}", (double)s->ns / 1e9);
    }
    fputs("]}", o->f);
}

static void write_json(const struct out *o, const char *path, uint64_t nevents,
                       struct ptt_finding **f, size_t n)
{
    fputs("{\"trace\":", o->f);
    ptt_json_str(o->f, path);
    fprintf(o->f, ",\"events\":%" PRIu64 ",\"findings\":[", nevents);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', o->f);
        json_finding(o, f[i]);
    }
    fputs("]}\n", o->f);
}

/* What the session recorded, from the trace's header: what the checker cannot judge without
 * (said in one line each). */
static void recorded(struct ptt_reader *r, const char *path, struct ptt_check *c)
{
    const char *dropped = ptt_reader_info(r, "older_events_dropped");
    if (dropped && strtoull(dropped, NULL, 10) > 0)
        ptt_check_partial(c); /* a flight recorder's window: lives began before it */
    const struct ptt_reader_parts *parts = ptt_reader_parts(r);
    if (parts && (parts->before || parts->gaps)) { /* parts of a rotated trace are missing */
        ptt_check_partial(c);
        ptt_warn("check",
                 "%s: without part%s %s of the trace, the rules that need every event are off "
                 "(unlocks of locks not held, uses of objects never initialised, condvar waits "
                 "without their mutex)",
                 path, parts->before + parts->gaps > 1 ? "s" : "", parts->missing);
    }
    unsigned gaps = ptt_reader_seq_gaps(r);
    if (gaps && !(parts && (parts->before || parts->gaps))) { /* a file cut short, say */
        ptt_check_partial(c);
        ptt_warn("check",
                 "%s: %u thread%s miss%s events between others the file holds: the rules that "
                 "need every event are off (unlocks of locks not held, uses of objects never "
                 "initialised, condvar waits without their mutex)",
                 path, gaps, gaps > 1 ? "s" : "", gaps > 1 ? "" : "es");
    }
    const struct ptt_rec_end *end = ptt_reader_end(r);
    if (end && end->lost) { /* known from the start: a thread may lose events before it says so */
        ptt_check_partial(c);
        ptt_warn("check",
                 "%s: %" PRIu64 " events were lost: the rules that need every event are off "
                 "(unlocks of locks not held, uses of objects never initialised or destroyed, "
                 "locks held when a thread or process ends, condvar waits without their "
                 "mutex), and a thread is taken to hold no lock from where it lost events on",
                 path, end->lost);
    }
    const char *events = ptt_reader_info(r, "events");
    uint64_t mask = 0, need = 0;
    char bad[32];
    static const int sync[] = {PTT_CLASS_thread, PTT_CLASS_mutex, PTT_CLASS_cond, PTT_CLASS_barrier,
                               PTT_CLASS_rwlock, PTT_CLASS_spin,  PTT_CLASS_sem};
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++)
        need |= 1ull << sync[i];
    if (events && strncmp(events, "all", 3) && !ptt_parse_classes(events, &mask, bad, sizeof bad) &&
        (mask & need) != need) {
        ptt_check_partial(c);
        ptt_warn("check",
                 "%s records only %s: findings that need the other classes are not "
                 "looked for",
                 path, events);
    }
    const char *level = ptt_reader_info(r, "level");
    if (level && !strcmp(level, "light"))
        ptt_warn("check",
                 "%s was recorded with --level=light: no waits are seen, so no "
                 "deadlock or hang is found",
                 path);
}

/* The events up to --to into names, those the filter selects into the checker; how many were
 * in the window; *ended: the trace ended before --to. */
static uint64_t check_read(struct ptt_reader *r, struct ptt_names *names, struct ptt_check *c,
                           const struct ptt_filter *flt, int *ended)
{
    const struct ptt_ev *ev;
    int filtered = ptt_filter_any(flt);
    int64_t from = ptt_filter_from(flt), to = ptt_filter_to(flt);
    uint64_t nevents = 0;
    *ended = 1;
    while ((ev = ptt_reader_get(r))) {
        if (to >= 0 && ev->ns > to) {
            *ended = 0;
            break;
        }
        ptt_progress_tick();
        ptt_names_event(names, ev);
        if (filtered && !ptt_filter_select(flt, ev))
            continue;
        ptt_check_event(c, ev);
        nevents += ev->ns >= from;
    }
    return nevents;
}

/* The --names file, then the trace; NULL (having said why) if either cannot be read. */
static struct ptt_reader *check_open(const char *path, const char *names_file,
                                     struct ptt_names *names)
{
    char err[600];
    struct ptt_reader *r = NULL;
    if (names_file && ptt_names_load(names, names_file, err, sizeof err))
        ptt_warn("check", "%s", err);
    else if (!(r = ptt_reader_open(path, err, sizeof err)))
        ptt_warn("check", "%s%s", err, ptt_default_hint(path));
    return r;
}

/* The trace read (the filter's events: flt may be NULL), its findings written to f (after
 * starting the pager, if any); the exit status. Closes r. */
static int check_run(struct ptt_reader *r, struct ptt_names *names, const char *path, int json,
                     FILE *f, const struct ptt_term *term, struct ptt_filter *flt)
{
    struct ptt_check *c = ptt_check_new(names);
    recorded(r, path, c);
    if (flt) {
        ptt_filter_names(flt, names);
        if (ptt_filter_selects(flt)) /* some calls of a thread are not seen */
            ptt_check_partial(c);
    }
    int ended, later = ptt_reader_parts(r) && ptt_reader_parts(r)->continued;
    ptt_check_window(c, ptt_filter_from(flt), 0);
    ptt_progress_start("check", r);
    uint64_t nevents = check_read(r, names, c, flt, &ended);
    ptt_progress_end();
    if (ptt_check_attached(c))
        ptt_warn("check",
                 "%s was recorded from an attach (ptt trace -p): what the program did before is "
                 "not in it, and the rules that need every event are off (unlocks of locks not "
                 "held, uses of objects never initialised or destroyed, locks held when a thread "
                 "or process ends, condvar waits without their mutex)",
                 path);
    /* a part that is not the last: the threads go on after it */
    ptt_check_window(c, ptt_filter_from(flt), !ended || later);
    size_t n;
    struct ptt_finding **found = ptt_check_end(c, &n);
    struct out o = {f, names};
    if (term)
        ptt_term_pager(term);
    if (json)
        write_json(&o, path, nevents, found, n);
    else if (n)
        write_text(&o, found, n);
    else
        fprintf(f, "%s: %" PRIu64 " events, %snothing found%s\n", path, nevents, ptt_c(PTT_C_GREEN),
                ptt_c(PTT_C_RESET));
    fflush(f);
    int rc = n ? 1 : 0;
    if (term && ptt_term_close("check", term))
        rc = PTT_EXIT_USAGE;
    ptt_filter_unmatched(flt, "check");
    const char *e = ptt_reader_error(r);
    if (e) {
        ptt_warn("check", "%s: %s", path, e);
        rc = PTT_EXIT_USAGE;
    } else if (!nevents && !ptt_filter_any(flt)) { /* a filter may keep none */
        ptt_warn("check", "%s: no events", path);
        rc = PTT_EXIT_USAGE;
    }
    ptt_check_free(c);
    ptt_reader_close(r);
    return rc;
}

int ptt_check_file(const char *path, int json, const char *names_file, FILE *f)
{
    struct ptt_names *names = ptt_names_new();
    ptt_names_raw(names, json); /* JSON escapes them itself */
    struct ptt_reader *r = check_open(path, names_file, names);
    int rc = r ? check_run(r, names, path, json, f, NULL, NULL) : PTT_EXIT_USAGE;
    ptt_names_free(names);
    return rc;
}

/* The options; returns -1 to go on (the file: ptt_trace_arg), else the exit status. */
static int check_options(int argc, char **argv, int *json, const char **names_file,
                         struct ptt_filter *flt, struct ptt_term *term)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         PTT_FILTER_OPTIONS,
                                         PTT_FILTER_KIND_OPTION,
                                         PTT_TERM_OPTIONS,
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:ho:", opts, NULL)) != -1) {
        int k = ptt_filter_option(flt, "check", c, optarg);
        if (k == 0)
            k = ptt_term_option("check", term, c, optarg);
        if (k < 0)
            return PTT_EXIT_USAGE;
        if (k)
            continue;
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                ptt_warn("check", "--format=%s: use text or json", optarg);
                return PTT_EXIT_USAGE;
            }
            *json = !strcmp(optarg, "json");
            break;
        case 'N': *names_file = optarg; break;
        case 'h': fputs(ptt_usage("check"), stdout); return 0;
        default: ptt_bad_option("check", argv); return PTT_EXIT_USAGE;
        }
    }
    return -1;
}

/* The trace at path checked, the findings on standard output (or -o). */
static int check_path(const char *path, int json, const char *names_file, struct ptt_filter *flt,
                      struct ptt_term *term)
{
    struct ptt_names *names = ptt_names_new();
    ptt_names_raw(names, json); /* JSON escapes them itself */
    struct ptt_reader *r = check_open(path, names_file, names);
    int rc = PTT_EXIT_USAGE;
    if (r && ptt_term_open("check", term))
        ptt_reader_close(r); /* no output made for a trace unread */
    else if (r) {
        static char obuf[1 << 16];
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
        rc = check_run(r, names, path, json, stdout, term, flt);
    }
    ptt_names_free(names);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    int json = 0;
    const char *names_file = NULL;
    struct ptt_term term = {0};
    struct ptt_filter *flt = ptt_filter_new();
    int rc = check_options(argc, argv, &json, &names_file, flt, &term);
    if (rc < 0) {
        const char *path = ptt_trace_arg("check", argc, argv, optind);
        rc = path ? check_path(path, json, names_file, flt, &term) : PTT_EXIT_USAGE;
    }
    ptt_filter_free(flt);
    return rc;
}
