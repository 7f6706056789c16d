/* ptt stat: contention, wait and hold times per object, blocked time per thread and process.
 * One pass over the trace, in time order (the numbers: stats.h, shared with the HTML report). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "util/hmap.h"
#include "util/json.h"
#include "analysis/names.h"
#include "util/width.h"
#include "trace/reader.h"
#include "analysis/stats.h"
#include "cmd/usage.h"
#include "util/progress.h"
#include "util/term.h"
#include "trace/filter.h"
#include "util/util.h"

static struct ptt_names *names;

/* Objects of more than one process: the text says whose each is (a pid column, "(pid N)"),
 * since two processes of one program name their objects alike. */
static int several_pids;

static const char *obj_name(const struct ptt_stat_object *o, char *buf, size_t len)
{
    return ptt_stat_object_name(names, o->pid, o->addr, buf, len);
}

/* An object named in a heading: with its pid when the table has a pid column. */
static const char *obj_heading(const struct ptt_stat_object *o, char *buf, size_t len)
{
    char nb[512];
    const char *n = obj_name(o, nb, sizeof nb);
    if (several_pids)
        snprintf(buf, len, "%s (pid %d)", n, o->pid);
    else
        snprintf(buf, len, "%s", n);
    return buf;
}

static const char *thread_name(int32_t pid, int32_t tid, char *buf, size_t len)
{
    return ptt_stat_thread_name(names, pid, tid, buf, len);
}

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
    if (ns < 10000)
        snprintf(buf, len, "%" PRIu64 "ns", ns);
    else if (ns < 10000000)
        snprintf(buf, len, "%.1fus", (double)ns / 1e3);
    else if (ns < 10000000000ull)
        snprintf(buf, len, "%.1fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.2fs", (double)ns / 1e9);
}

/* A CSV field: quoted, quotes doubled, when it holds a comma, a quote or a line break. */
static void csv_str(const char *s)
{
    if (!s[strcspn(s, ",\"\n\r")]) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static const char *site_name(const struct ptt_stat_object *o, int k, char *buf, size_t len);

/* An object's call sites that waited, most first (indexes into o->sites); their number. Sites
 * are return addresses: two of one source line (the compiler duplicated the call) are merged
 * into the first. */
static int sites_by_wait(struct ptt_stat_object *o, int *idx)
{
    int n = 0;
    for (int i = 0; i < PTT_STAT_MAX_SITES; i++) {
        if (!o->sites[i].waits)
            continue;
        char a[300], b[300];
        int k;
        for (k = 0; k < n; k++)
            if (!strcmp(site_name(o, idx[k], a, sizeof a), site_name(o, i, b, sizeof b)))
                break;
        if (k < n) {
            o->sites[idx[k]].ns += o->sites[i].ns;
            o->sites[idx[k]].waits += o->sites[i].waits;
            o->sites[i].waits = o->sites[i].ns = 0;
            continue;
        }
        idx[n++] = i;
    }
    for (int i = 1; i < n; i++) /* insertion sort: a few at most */
        for (int j = i; j > 0 && o->sites[idx[j]].ns > o->sites[idx[j - 1]].ns; j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    return n;
}

static const char *site_name(const struct ptt_stat_object *o, int k, char *buf, size_t len)
{
    const char *n = ptt_names_site(names, o->pid, o->sites[k].site);
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, o->sites[k].site);
    return buf;
}

/* A call site by address: its name, else the address; "" for none (0). */
static const char *addr_site(int32_t pid, uint64_t addr, char *buf, size_t len)
{
    const char *n = addr ? ptt_names_site(names, pid, addr) : "";
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, addr);
    return buf;
}

enum { FMT_TEXT, FMT_JSON, FMT_CSV };

struct stat_opts {
    int fmt, sort_by;
    long top;
    uint64_t kinds;
    const char *names_file, *path;
    struct ptt_term term;
    struct ptt_filter *filter;
};

/* What the writers show: the trace's totals, objects and threads sorted, how many of each. */
struct stat_view {
    long top; /* --top, or -1 */
    const char *path;
    uint64_t nevents;
    int64_t end_ns;
    uint64_t bufwait_ns, bufwaits; /* for ptt's buffer: not the program's */
    uint64_t before_attach;        /* calls begun before ptt trace -p attached */
    struct ptt_stat_object **ov;
    struct ptt_stat_thread **tv;
    size_t no, nt, shown_o, shown_t;
    const struct ptt_classinfo *cls;
};

/* --format and --sort: a word each; -1 if unknown. */
static int stat_word(int c, const char *arg)
{
    int v;
    if (c == 'f') {
        v = !strcmp(arg, "text")   ? FMT_TEXT
            : !strcmp(arg, "json") ? FMT_JSON
            : !strcmp(arg, "csv")  ? FMT_CSV
                                   : -1;
        if (v < 0)
            ptt_warn("stat", "--format=%s: use text, json or csv", arg);
        return v;
    }
    v = !strcmp(arg, "wait")           ? PTT_STAT_SORT_WAIT
        : !strcmp(arg, "hold")         ? PTT_STAT_SORT_HOLD
        : !strcmp(arg, "acquisitions") ? PTT_STAT_SORT_ACQ
        : !strcmp(arg, "contended")    ? PTT_STAT_SORT_CONTENDED
        : !strcmp(arg, "name")         ? PTT_STAT_SORT_NAME
                                       : -1;
    if (v < 0)
        ptt_warn("stat", "--sort=%s: use wait, hold, acquisitions, contended or name", arg);
    return v;
}

/* The options and the one file; returns -1 to go on, else the exit status. */
static int stat_options(struct stat_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"sort", required_argument, 0, 's'},
                                         {"top", required_argument, 0, 't'},
                                         {"kind", required_argument, 0, 'k'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         PTT_FILTER_OPTIONS,
                                         PTT_TERM_OPTIONS,
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    char *end, bad[32];
    while ((c = getopt_long(argc, argv, "f:ho:", opts, NULL)) != -1) {
        int k = ptt_filter_option(o->filter, "stat", c, optarg);
        if (k == 0)
            k = ptt_term_option("stat", &o->term, c, optarg);
        if (k < 0)
            return PTT_EXIT_USAGE;
        if (k)
            continue;
        switch (c) {
        case 'f':
            if ((o->fmt = stat_word(c, optarg)) < 0)
                return PTT_EXIT_USAGE;
            break;
        case 's':
            if ((o->sort_by = stat_word(c, optarg)) < 0)
                return PTT_EXIT_USAGE;
            break;
        case 't':
            o->top = strtol(optarg, &end, 10);
            if (*end || o->top < 1) {
                ptt_warn("stat", "--top=%s: give a number of at least 1", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 'k':
            if (ptt_parse_classes(optarg, &o->kinds, bad, sizeof bad)) {
                ptt_warn("stat", "--kind: unknown kind '%s'", bad);
                return PTT_EXIT_USAGE;
            }
            break;
        case 'N': o->names_file = optarg; break;
        case 'h': fputs(ptt_usage("stat"), stdout); return 0;
        default: ptt_bad_option("stat", argv); return PTT_EXIT_USAGE;
        }
    }
    o->path = ptt_trace_arg("stat", argc, argv, optind);
    return o->path ? -1 : PTT_EXIT_USAGE;
}

/* Every event of the trace into names, those the filter selects into stats (before --from:
 * their state only); the number of events counted and the last time. */
static void stat_read(struct ptt_reader *r, struct ptt_stats *stats, struct stat_view *v,
                      const struct ptt_filter *f)
{
    const struct ptt_ev *ev;
    int filtered = ptt_filter_any(f);
    int64_t from = ptt_filter_from(f), to = ptt_filter_to(f);
    ptt_stats_window(stats, from);
    ptt_progress_start("stat", r);
    while ((ev = ptt_reader_get(r))) {
        if (to >= 0 && ev->ns > to)
            break;
        ptt_progress_tick();
        ptt_names_event(names, ev);
        if (filtered && !ptt_filter_select(f, ev))
            continue;
        ptt_stats_event(stats, ev);
        if (ev->ns < from)
            continue;
        v->nevents++;
        v->end_ns = ev->ns;
    }
    ptt_progress_end();
}

/* Who made others wait for o: the "blame" array. */
static void json_blame(struct ptt_stat_object *o, long top)
{
    char b1[300], b2[300];
    size_t n;
    struct ptt_stat_blame *bl = ptt_stats_blame(o, names, &n);
    printf(",\"blame\":[");
    for (size_t k = 0; k < n && (top < 0 || k < (size_t)top); k++) {
        const struct ptt_stat_blame *x = &bl[k];
        printf("%s{\"tid\":%d,\"holder\":", k ? "," : "", x->tid);
        ptt_json_str(stdout, x->tid ? thread_name(o->pid, x->tid, b1, sizeof b1) : "");
        printf(",\"taken_at\":");
        ptt_json_str(stdout, addr_site(o->pid, x->take, b1, sizeof b1));
        printf(",\"taken_address\":\"0x%" PRIx64 "\",\"released_at\":", x->take);
        ptt_json_str(stdout, addr_site(o->pid, x->release, b2, sizeof b2));
        printf(",\"released_address\":\"0x%" PRIx64 "\",\"held_at_end\":%s,\"waits\":%" PRIu64
               ",\"wait_ns\":%" PRIu64 "}",
               x->release, x->held_at_end ? "true" : "false", x->waits, x->ns);
    }
    putchar(']');
    free(bl);
}

static void json_object(struct ptt_stat_object *o, const struct ptt_classinfo *cls, long top,
                        int first)
{
    char b1[512], b2[64];
    printf("%s{\"kind\":\"%s\",\"name\":", first ? "" : ",", cls[o->cls].name);
    ptt_json_str(stdout, obj_name(o, b1, sizeof b1));
    printf(",\"address\":\"0x%" PRIx64 "\",\"pid\":%d,\"acquisitions\":%" PRIu64
           ",\"contended\":%" PRIu64 ",",
           o->addr, o->pid, o->acquisitions, o->contended);
    ptt_stat_hist_json(stdout, "wait_ns", &o->wait);
    putchar(',');
    ptt_stat_hist_json(stdout, "hold_ns", &o->hold);
    printf(",\"threads\":[");
    for (unsigned k = 0; k < o->nusers; k++) {
        if (k)
            putchar(',');
        ptt_json_str(stdout, thread_name(o->pid, o->users[k], b2, sizeof b2));
    }
    printf("],\"sites\":[");
    int idx[PTT_STAT_MAX_SITES], ns = sites_by_wait(o, idx);
    for (int k = 0; k < ns; k++) {
        printf("%s{\"site\":", k ? "," : "");
        ptt_json_str(stdout, site_name(o, idx[k], b2, sizeof b2));
        printf(",\"address\":\"0x%" PRIx64 "\",\"waits\":%" PRIu64 ",\"wait_ns\":%" PRIu64 "}",
               o->sites[idx[k]].site, o->sites[idx[k]].waits, o->sites[idx[k]].ns);
    }
    putchar(']');
    json_blame(o, top);
    putchar('}');
}

/* Per process: its threads and their blocked time, every thread counted (not only those shown). */
/* One process's threads, counted once (a trace may hold 250,000 processes). */
struct proc_sum {
    uint64_t blocked, n;
    int printed;
};

typedef void proc_fn(int32_t pid, const struct proc_sum *p, int first);

/* f for each process, in the order of its first thread in the threads' order (by blocked time). */
static void each_process(const struct stat_view *v, proc_fn *f)
{
    struct ptt_hmap procs = {0};
    for (size_t i = 0; i < v->nt; i++) {
        struct proc_sum *p = ptt_hmap_get(&procs, (uint32_t)v->tv[i]->pid + 1ull, sizeof *p);
        p->blocked += v->tv[i]->blocked;
        p->n++;
    }
    int first = 1;
    for (size_t i = 0; i < v->nt; i++) {
        struct proc_sum *p = ptt_hmap_get(&procs, (uint32_t)v->tv[i]->pid + 1ull, 0);
        if (!p->printed)
            f(v->tv[i]->pid, p, first);
        p->printed = 1;
        first = 0;
    }
    ptt_hmap_free(&procs, NULL);
}

/* Which process is which: its program, and the command line it was run with. */
static void text_process(int32_t pid, const struct proc_sum *p, int first)
{
    char w1[32];
    if (first)
        printf("\n%s%-8s %8s %10s  %s%s\n", ptt_c(PTT_C_BOLD), "pid", "threads", "blocked",
               "program  command line", ptt_c(PTT_C_RESET));
    fmt_ns(w1, sizeof w1, p->blocked);
    const char *prog = ptt_names_program(names, pid), *cmd = ptt_names_command(names, pid);
    printf("%-8d %8" PRIu64 " %10s  %s%s%s\n", pid, p->n, w1, prog ? prog : "-", cmd ? "  " : "",
           cmd ? cmd : "");
}

static void json_process(int32_t pid, const struct proc_sum *p, int first)
{
    const char *prog = ptt_names_program(names, pid), *cmd = ptt_names_command(names, pid);
    printf("%s{\"pid\":%d,\"threads\":%" PRIu64 ",\"blocked_ns\":%" PRIu64 ",\"program\":",
           first ? "" : ",", pid, p->n, p->blocked);
    if (prog)
        ptt_json_str(stdout, prog);
    else
        fputs("null", stdout);
    fputs(",\"command\":", stdout);
    if (cmd)
        ptt_json_str(stdout, cmd);
    else
        fputs("null", stdout);
    putchar('}');
}

static void json_thread(const struct ptt_stat_thread *t, int first)
{
    char b1[512], b2[64];
    printf("%s{\"tid\":%d,\"pid\":%d,\"name\":", first ? "" : ",", t->tid, t->pid);
    ptt_json_str(stdout, thread_name(t->pid, t->tid, b2, sizeof b2));
    printf(",\"lifetime_ns\":%" PRId64 ",\"blocked_ns\":%" PRIu64 ",\"blocked_on\":[",
           t->last - t->first, t->blocked);
    int k2 = 0;
    for (int k = 0; k < PTT_STAT_MAX_ON; k++) {
        if (!t->on[k].ns)
            continue;
        const struct ptt_evinfo *in = ptt_evinfo(t->on[k].call);
        printf("%s{\"call\":\"%s\",\"object\":", k2++ ? "," : "", in ? in->routine : "?");
        ptt_json_str(stdout, ptt_stat_on_name(names, t, k, b1, sizeof b1));
        printf(",\"ns\":%" PRIu64 "}", t->on[k].ns);
    }
    printf("]}");
}

static void write_json(const struct stat_view *v)
{
    printf("{\"trace\":");
    ptt_json_str(stdout, v->path);
    printf(",\"events\":%" PRIu64 ",\"duration_ns\":%" PRId64, v->nevents, v->end_ns);
    if (v->bufwaits)
        printf(",\"ptt_buffer_wait\":{\"waits\":%" PRIu64 ",\"wait_ns\":%" PRIu64 "}", v->bufwaits,
               v->bufwait_ns);
    if (v->before_attach)
        printf(",\"calls_before_attach\":%" PRIu64, v->before_attach);
    printf(",\"objects\":[");
    for (size_t i = 0; i < v->shown_o; i++)
        json_object(v->ov[i], v->cls, v->top, !i);
    printf("],\"threads\":[");
    for (size_t i = 0; i < v->shown_t; i++)
        json_thread(v->tv[i], !i);
    printf("],\"processes\":[");
    each_process(v, json_process);
    printf("]}\n");
}

static void write_csv(const struct stat_view *v)
{
    char b1[512], b2[64];
    printf("kind,name,address,pid,acquisitions,contended,wait_total_ns,wait_mean_ns,"
           "wait_p50_ns,wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_p50_ns,"
           "hold_p99_ns,hold_max_ns,top_site\n");
    for (size_t i = 0; i < v->shown_o; i++) {
        struct ptt_stat_object *o = v->ov[i];
        printf("%s,", v->cls[o->cls].name);
        csv_str(obj_name(o, b1, sizeof b1));
        printf(",0x%" PRIx64 ",%d,%" PRIu64 ",%" PRIu64, o->addr, o->pid, o->acquisitions,
               o->contended);
        const struct ptt_stat_hist *hs[2] = {&o->wait, &o->hold};
        for (int k = 0; k < 2; k++)
            printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, hs[k]->total,
                   hs[k]->n ? hs[k]->total / hs[k]->n : 0, ptt_stat_pct(hs[k], 0.5),
                   ptt_stat_pct(hs[k], 0.99), hs[k]->max);
        int idx[PTT_STAT_MAX_SITES];
        putchar(',');
        if (sites_by_wait(o, idx))
            csv_str(site_name(o, idx[0], b2, sizeof b2));
        putchar('\n');
    }
}

static void text_objects(const struct stat_view *v)
{
    char b1[512], b2[64], w1[32], w2[32], w3[32], w4[32], w5[32], h99[32];
    printf("%s%-8s ", ptt_c(PTT_C_BOLD), "kind");
    if (several_pids)
        printf("%-8s ", "pid");
    printf("%-24s %8s %8s %9s %9s %9s %9s %9s %9s  %s%s\n", "object", "acquired", "waited",
           "wait tot", "mean", "p99", "max", "hold tot", "hold p99", "threads", ptt_c(PTT_C_RESET));
    for (size_t i = 0; i < v->shown_o; i++) {
        struct ptt_stat_object *o = v->ov[i];
        fmt_ns(w1, sizeof w1, o->wait.total);
        fmt_ns(w2, sizeof w2, o->wait.n ? o->wait.total / o->wait.n : 0);
        fmt_ns(w3, sizeof w3, ptt_stat_pct(&o->wait, 0.99));
        fmt_ns(w4, sizeof w4, o->wait.max);
        fmt_ns(w5, sizeof w5, o->hold.total);
        fmt_ns(h99, sizeof h99, ptt_stat_pct(&o->hold, 0.99));
        printf("%-8s ", v->cls[o->cls].name);
        if (several_pids)
            printf("%-8d ", o->pid);
        ptt_put_padded(stdout, obj_name(o, b1, sizeof b1), 24); /* by width: names are UTF-8 */
        printf(" %8" PRIu64 " %8" PRIu64 " %9s %9s %9s %9s %9s %9s  ", o->acquisitions,
               o->contended, w1, w2, w3, w4, o->hold.n ? w5 : "-", o->hold.n ? h99 : "-");
        for (unsigned k = 0; k < o->nusers; k++)
            printf("%s%s", k ? "," : "", thread_name(o->pid, o->users[k], b2, sizeof b2));
        if (o->more_users)
            printf(",+%u", o->more_users);
        putchar('\n');
    }
}

/* Where the waits come from, for the objects shown. */
static void text_sites(const struct stat_view *v)
{
    char b1[512], b2[64], w1[32];
    int titled = 0;
    for (size_t i = 0; i < v->shown_o; i++) {
        struct ptt_stat_object *o = v->ov[i];
        int idx[PTT_STAT_MAX_SITES], ns = sites_by_wait(o, idx);
        if (!ns)
            continue;
        if (!titled++)
            printf("\n%scall sites that waited most:%s\n", ptt_c(PTT_C_BOLD), ptt_c(PTT_C_RESET));
        printf("  %s:", obj_heading(o, b1, sizeof b1));
        for (int k = 0; k < ns; k++) {
            fmt_ns(w1, sizeof w1, o->sites[idx[k]].ns);
            printf("%s %s (%" PRIu64 " wait%s, %s)", k ? "," : "",
                   site_name(o, idx[k], b2, sizeof b2), o->sites[idx[k]].waits,
                   o->sites[idx[k]].waits == 1 ? "" : "s", w1);
        }
        putchar('\n');
    }
}

/* One holder of o that made others wait: who, where it took and released o, how much. */
static void text_holder(const struct ptt_stat_object *o, const struct ptt_stat_blame *x)
{
    char b1[300], b2[300], w1[32];
    fmt_ns(w1, sizeof w1, x->ns);
    if (!x->tid) {
        printf("    no holder known: %" PRIu64 " wait%s, %s\n", x->waits, x->waits == 1 ? "" : "s",
               w1);
        return;
    }
    printf("    %s (tid %d) took it at %s, ", thread_name(o->pid, x->tid, b1, sizeof b1), x->tid,
           x->take ? addr_site(o->pid, x->take, b2, sizeof b2) : "?");
    if (x->held_at_end)
        printf("still held at the end");
    else
        printf("released it at %s",
               x->release ? addr_site(o->pid, x->release, b2, sizeof b2) : "?");
    printf(": %" PRIu64 " wait%s, %s\n", x->waits, x->waits == 1 ? "" : "s", w1);
}

/* Who made others wait, for the objects shown: their holders, most time first. */
static void text_blame(const struct stat_view *v)
{
    char b1[512];
    int titled = 0;
    for (size_t i = 0; i < v->shown_o; i++) {
        struct ptt_stat_object *o = v->ov[i];
        size_t n;
        struct ptt_stat_blame *bl = ptt_stats_blame(o, names, &n);
        if (n && !titled++)
            printf("\n%swho made others wait:%s\n", ptt_c(PTT_C_BOLD), ptt_c(PTT_C_RESET));
        if (n)
            printf("  %s:\n", obj_heading(o, b1, sizeof b1));
        for (size_t k = 0; k < n && (v->top < 0 || k < (size_t)v->top); k++)
            text_holder(o, &bl[k]);
        free(bl);
    }
}

static void text_threads(const struct stat_view *v)
{
    char b1[512], b2[64], w1[32], w2[32], w3[32];
    size_t width = 20; /* the thread column: as wide as the widest name shown */
    for (size_t i = 0; i < v->shown_t; i++) {
        size_t w = ptt_display_width(thread_name(v->tv[i]->pid, v->tv[i]->tid, b2, sizeof b2));
        width = w > width ? w : width;
    }
    printf("\n%s%-8s %-8s ", ptt_c(PTT_C_BOLD), "pid", "tid");
    ptt_put_padded(stdout, "thread", width);
    printf(" %10s %10s  %s%s\n", "lifetime", "blocked", "blocked most on", ptt_c(PTT_C_RESET));
    for (size_t i = 0; i < v->shown_t; i++) {
        struct ptt_stat_thread *t = v->tv[i];
        fmt_ns(w1, sizeof w1, (uint64_t)(t->last - t->first));
        fmt_ns(w2, sizeof w2, t->blocked);
        printf("%-8d %-8d ", t->pid, t->tid);
        ptt_put_padded(stdout, thread_name(t->pid, t->tid, b2, sizeof b2), width);
        printf(" %10s %10s  ", w1, w2);
        int best = -1;
        for (int k = 0; k < PTT_STAT_MAX_ON; k++)
            if (t->on[k].ns && (best < 0 || t->on[k].ns > t->on[best].ns))
                best = k;
        if (best >= 0) {
            const struct ptt_evinfo *in = ptt_evinfo(t->on[best].call);
            fmt_ns(w3, sizeof w3, t->on[best].ns);
            printf("%s %s (%s)", in ? in->routine : "?",
                   ptt_stat_on_name(names, t, best, b1, sizeof b1), w3);
        }
        putchar('\n');
    }
}

static void write_text(const struct stat_view *v)
{
    printf("%s: %" PRIu64 " events, %.6f s\n", v->path, v->nevents, (double)v->end_ns / 1e9);
    if (v->bufwaits) {
        char w[32];
        fmt_ns(w, sizeof w, v->bufwait_ns);
        printf("waited for ptt's buffer: %s in %" PRIu64 " wait%s, not counted as lock waits\n", w,
               v->bufwaits, v->bufwaits == 1 ? "" : "s");
    }
    if (v->before_attach)
        printf("%" PRIu64
               " call%s begun before ptt trace attached: waits counted from the attach\n",
               v->before_attach, v->before_attach == 1 ? "" : "s");
    putchar('\n');
    text_objects(v);
    text_sites(v);
    text_blame(v);
    text_threads(v);
    each_process(v, text_process);
}

/* The --names file, then the trace; NULL (having said why) if either cannot be read. */
static struct ptt_reader *stat_open(const struct stat_opts *o)
{
    char err[600];
    struct ptt_reader *r = NULL;
    if (o->names_file && ptt_names_load(names, o->names_file, err, sizeof err))
        ptt_warn("stat", "%s", err);
    else if (!(r = ptt_reader_open(o->path, err, sizeof err)))
        ptt_warn("stat", "%s%s", err, ptt_default_hint(o->path));
    return r;
}

int cmd_stat(int argc, char **argv)
{
    struct stat_opts o = {.fmt = FMT_TEXT, .sort_by = PTT_STAT_SORT_WAIT, .top = -1};
    o.filter = ptt_filter_new();
    int rc = stat_options(&o, argc, argv);
    if (rc >= 0) {
        ptt_filter_free(o.filter);
        return rc;
    }
    names = ptt_names_new();
    ptt_names_raw(names, o.fmt != FMT_TEXT); /* JSON and CSV escape them themselves */
    ptt_filter_names(o.filter, names);
    struct ptt_reader *r = stat_open(&o);
    if (!r || ptt_term_open("stat", &o.term)) { /* no output made for a trace unread */
        ptt_reader_close(r);
        ptt_names_free(names);
        ptt_filter_free(o.filter);
        return PTT_EXIT_USAGE;
    }
    const char *level = ptt_reader_info(r, "level");
    if (level && !strcmp(level, "light")) /* else the waits' columns would seem to say none */
        ptt_warn("stat",
                 "%s was recorded with --level=light: waits inside lock calls are not "
                 "recorded, so contention and who made others wait are incomplete",
                 o.path);
    struct ptt_stats *stats = ptt_stats_new();
    ptt_stats_names(stats, names);
    struct stat_view v = {.top = o.top, .path = o.path};
    stat_read(r, stats, &v, o.filter);
    ptt_stats_bufwait(stats, &v.bufwait_ns, &v.bufwaits);
    v.before_attach = ptt_stats_before_attach(stats);

    /* Objects, sorted, filtered by kind. */
    v.ov = ptt_stats_objects(stats, (enum ptt_stat_sort)o.sort_by, o.kinds, names, &v.no);
    v.tv = ptt_stats_threads(stats, &v.nt);
    v.shown_o = o.top > 0 && (size_t)o.top < v.no ? (size_t)o.top : v.no;
    v.shown_t = o.top > 0 && (size_t)o.top < v.nt ? (size_t)o.top : v.nt;
    for (size_t i = 1; i < v.shown_o && !several_pids; i++)
        several_pids = v.ov[i]->pid != v.ov[0]->pid;
    unsigned ncls;
    v.cls = ptt_classes(&ncls);
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    ptt_term_pager(&o.term);
    if (o.fmt == FMT_JSON)
        write_json(&v);
    else if (o.fmt == FMT_CSV)
        write_csv(&v);
    else
        write_text(&v);
    rc = ptt_term_close("stat", &o.term) ? PTT_EXIT_USAGE : 0;
    ptt_filter_unmatched(o.filter, "stat");

    const char *e = ptt_reader_error(r);
    if (e) {
        ptt_warn("stat", "%s: %s", o.path, e);
        rc = PTT_EXIT_USAGE;
    }
    ptt_reader_close(r);
    ptt_names_free(names);
    ptt_filter_free(o.filter);
    free(v.ov);
    free(v.tv);
    ptt_stats_free(stats);
    return rc;
}
