/* ptt report: one self-contained HTML page (docs/report.md). One pass over the trace through the
 * timeline (timeline.h) and the contention statistics (stats.h); what the page draws is
 * pre-aggregated here, so that its size does not grow with the number of events:
 * - per thread, a fixed number of time bins (CELL_BUDGET / threads) holding the time the thread
 *   was alive and its two main blocked states. The trace's length is not known until its end:
 *   bins start narrow and, when an event falls past the last one, pairs of bins merge (their
 *   width doubles). The page gets, per thread and per level of a pyramid (each level half the
 *   bins of the one below), the dominant state of each bin, run-length encoded;
 * - the longest blocked spans (MAX_SPANS of them), exact, for the most zoomed-in views;
 * - ptt stat's numbers for the top objects and the threads.
 * Memory: threads x bins, objects, MAX_SPANS. The script and style sheet (report.js,
 * report.css) are embedded at build time (report_embed.cmake). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "trace/writer.h"
#include "util/hmap.h"
#include "util/json.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"

extern const unsigned char ptt_report_js[], ptt_report_css[];

#define CELL_BUDGET (1u << 21) /* threads x bins at the finest level */
#define MIN_BINS 64
#define MAX_BINS 8192
#define COARSEST 64     /* the pyramid stops at this many bins */
#define MAX_SPANS 12000 /* exact blocked spans kept: the longest */
#define TOP_OBJECTS 25  /* objects in the table */
#define MAX_THREAD_ROWS 1000
#define TOP_BLAME 50 /* rows of "who made others wait" */

/* One bin of one thread: how long it was alive in it, and its two longest blocked states there
 * (a third state, rare, takes the place of the shorter one if it is longer). */
struct bin {
    float alive;
    float t[2];
    uint8_t s[2]; /* state + 1; 0: free slot */
};

struct row {
    int32_t pid, tid;
    int64_t begin, end;
    int ended;
    uint64_t blocked[PTT_TL_NSTATES]; /* ns per state, exact */
    struct bin *bins;
};

struct span {
    int64_t from, dur;
    uint64_t obj;
    int32_t joined; /* a join: the thread it waited for, as its pthread_t named it then */
    uint32_t row;
    uint16_t call;
    uint8_t state;
};

struct rep {
    struct ptt_names *names;
    struct ptt_stats *stats;
    struct row *rows;
    size_t nrows, caprows;
    struct ptt_hmap rowmap; /* (pid, tid) -> row index + 1 */
    unsigned nbins;         /* bins per thread */
    int64_t width;          /* ns per bin */
    struct span *spans;     /* a min-heap on dur */
    size_t nspans;
    uint64_t allspans;
    uint64_t events;
    int64_t last_ns;
    int oom;
};

static void *xcalloc(struct rep *R, size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        R->oom = 1;
    return p;
}

/* Bins */

static void slot_add(struct bin *b, unsigned state, float t)
{
    uint8_t s = (uint8_t)(state + 1);
    for (int i = 0; i < 2; i++)
        if (b->s[i] == s || !b->s[i]) {
            b->s[i] = s;
            b->t[i] += t;
            return;
        }
    int weak = b->t[0] <= b->t[1] ? 0 : 1;
    if (t > b->t[weak]) {
        b->s[weak] = s;
        b->t[weak] = t;
    }
}

/* Double the width of the bins: pairs merge. */
static void widen(struct rep *R)
{
    unsigned half = R->nbins / 2;
    for (size_t r = 0; r < R->nrows; r++) {
        struct bin *b = R->rows[r].bins;
        if (!b)
            continue;
        for (unsigned i = 0; i < half; i++) {
            struct bin x = b[2 * i], y = b[2 * i + 1];
            b[i] = x;
            b[i].alive += y.alive;
            for (int k = 0; k < 2; k++)
                if (y.s[k])
                    slot_add(&b[i], y.s[k] - 1u, y.t[k]);
        }
        memset(b + half, 0, (R->nbins - half) * sizeof *b);
    }
    R->width *= 2;
}

static void reach(struct rep *R, int64_t ns)
{
    if (ns > (int64_t)1 << 52) /* a corrupt time: at most 52 days, bins stay finite */
        ns = (int64_t)1 << 52;
    while (ns >= (int64_t)R->nbins * R->width)
        widen(R);
}

/* Add [from, to) in state (PTT_TL_RUNNING: alive) to a thread's bins. */
static void bins_add(struct rep *R, struct row *w, int64_t from, int64_t to, unsigned state)
{
    if (!w->bins || to <= from)
        return;
    if (from < 0)
        from = 0;
    reach(R, to - 1);
    int64_t i = from / R->width;
    while (from < to && i < R->nbins) {
        int64_t end = (i + 1) * R->width, seg = (to < end ? to : end) - from;
        if (state == PTT_TL_RUNNING)
            w->bins[i].alive += (float)seg;
        else
            slot_add(&w->bins[i], state, (float)seg);
        from = end;
        i++;
    }
}

/* The timeline's callbacks */

static struct row *row_of(struct rep *R, int32_t pid, int32_t tid, int create)
{
    size_t *ix = ptt_hmap_get(&R->rowmap, ptt_key2((uint64_t)pid, (uint64_t)(uint32_t)tid),
                              create ? sizeof *ix : 0);
    if (!ix)
        return NULL;
    if (!*ix) {
        if (R->nrows == R->caprows) {
            size_t cap = R->caprows ? R->caprows * 2 : 64;
            struct row *v = realloc(R->rows, cap * sizeof *v);
            if (!v) {
                R->oom = 1;
                return NULL;
            }
            R->rows = v;
            R->caprows = cap;
        }
        struct row *w = &R->rows[R->nrows];
        memset(w, 0, sizeof *w);
        w->pid = pid;
        w->tid = tid;
        w->bins = xcalloc(R, R->nbins, sizeof *w->bins);
        *ix = ++R->nrows;
    }
    return &R->rows[*ix - 1];
}

static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct rep *R = arg;
    ptt_stats_event(R->stats, ev);
    R->events++;
    if (ev->ns > R->last_ns)
        R->last_ns = ev->ns;
}

/* Before the window (--from): what each thread is inside and holds, for the statistics. */
static void on_before(void *arg, const struct ptt_ev *ev)
{
    struct rep *R = arg;
    ptt_stats_event(R->stats, ev);
}

static void on_thread(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name)
{
    struct rep *R = arg;
    (void)name; /* names can change later (pthread_setname_np): asked for at the end */
    struct row *w = row_of(R, pid, tid, 1);
    if (!w)
        return;
    if (begin) {
        w->begin = ns;
        return;
    }
    w->end = ns;
    w->ended = 1;
    /* A thread seen once still shows: 1 ns alive. */
    bins_add(R, w, w->begin, ns > w->begin ? ns : w->begin + 1, PTT_TL_RUNNING);
}

static void span_sift_down(struct span *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && h[l].dur < h[m].dur)
            m = l;
        if (l + 1 < n && h[l + 1].dur < h[m].dur)
            m = l + 1;
        if (m == i)
            return;
        struct span t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void span_keep(struct rep *R, const struct span *s)
{
    R->allspans++;
    if (!R->spans)
        return;
    if (R->nspans < MAX_SPANS) {
        size_t i = R->nspans++;
        R->spans[i] = *s;
        while (i && R->spans[(i - 1) / 2].dur > R->spans[i].dur) {
            struct span t = R->spans[i];
            R->spans[i] = R->spans[(i - 1) / 2];
            R->spans[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (s->dur > R->spans[0].dur) {
        R->spans[0] = *s;
        span_sift_down(R->spans, R->nspans, 0);
    }
}

static void on_state(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                     int64_t to, uint64_t object, uint16_t call)
{
    struct rep *R = arg;
    struct row *w = row_of(R, pid, tid, 1);
    if (!w || state <= PTT_TL_RUNNING || state >= PTT_TL_NSTATES || to < from)
        return;
    w->blocked[state] += (uint64_t)(to - from);
    bins_add(R, w, from, to, state);
    int32_t joined = state == PTT_TL_JOIN ? ptt_names_pthread(R->names, pid, object) : 0;
    struct span s = {from, to - from,     object, joined, (uint32_t)(w - R->rows),
                     call, (uint8_t)state};
    span_keep(R, &s);
}

/* Output */

/* A JSON string, safe inside a <script> element: no '<', '>' or '&' appear raw. */
static void json_str(FILE *f, const char *s)
{
    ptt_json_strn(f, s, SIZE_MAX, PTT_JSON_HTML);
}

static void html_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* The dominant state of a bin with these times (alive, and per state), or -1: not alive.
 * *mixed: it had less than 2/3 of the time. */
static int dominant(double alive, const double *t, int *mixed)
{
    double blocked = 0, best = -1;
    int s = -1;
    for (int k = 1; k < PTT_TL_NSTATES; k++) {
        blocked += t[k];
        if (t[k] > best && t[k] > 0)
            best = t[k], s = k;
    }
    if (alive <= 0 && blocked <= 0)
        return -1;
    double run = alive - blocked, all = alive > blocked ? alive : blocked;
    if (run >= best)
        best = run, s = PTT_TL_RUNNING;
    *mixed = best < all * (2.0 / 3);
    return s;
}

/* One level of a thread's pyramid, run-length encoded: a letter per bin's dominant state ('a'
 * running, 'b' the next state...; upper case: mixed, the state had less than 2/3 of the time;
 * '.' not alive), followed by the run's length when it is more than 1. */
static void put_run(FILE *f, int code, unsigned run)
{
    if (!run)
        return;
    fputc(code, f);
    if (run > 1)
        fprintf(f, "%u", run);
}

static void write_level(FILE *f, const struct bin *b, unsigned nb, unsigned group)
{
    fputc('"', f);
    int prev = 0;
    unsigned run = 0;
    for (unsigned i = 0; i < nb; i += group) {
        double alive = 0, t[PTT_TL_NSTATES] = {0};
        for (unsigned j = i; j < i + group && j < nb; j++) {
            alive += b[j].alive;
            for (int k = 0; k < 2; k++)
                if (b[j].s[k] && b[j].s[k] <= PTT_TL_NSTATES)
                    t[b[j].s[k] - 1] += b[j].t[k];
        }
        int mixed = 0, s = dominant(alive, t, &mixed);
        int code = s < 0 ? '.' : (mixed ? 'A' : 'a') + s;
        if (code == prev) {
            run++;
            continue;
        }
        put_run(f, prev, run);
        prev = code;
        run = 1;
    }
    put_run(f, prev, run);
    fputc('"', f);
}

/* The state a call blocks in, by its class (for ptt stat's "blocked on"). */
static int state_of_call(uint16_t call)
{
    return (int)ptt_tl_state_of_class(PTT_CLASS_OF(call));
}

static const char *routine(uint16_t call)
{
    const struct ptt_evinfo *in = ptt_evinfo(call);
    return in && in->routine ? in->routine : "?";
}

/* A histogram by powers of two: [first exponent, count, count...] (values 0 and 1 count as 2^0). */
static void json_hist_log2(FILE *f, const struct ptt_stat_hist *h)
{
    uint64_t c[64] = {0};
    int lo = 64, hi = -1;
    for (unsigned b = 0; b < PTT_STAT_NBUCKETS; b++) {
        uint64_t n = ptt_stat_hist_at(h, b);
        if (!n)
            continue;
        int lg = b < 4 ? (b < 2 ? 0 : 1) : (int)(b / 4);
        if (lg > 63)
            lg = 63;
        c[lg] += n;
        lo = lg < lo ? lg : lo;
        hi = lg > hi ? lg : hi;
    }
    fputs("\"h\":[", f);
    if (hi >= 0) {
        fprintf(f, "%d", lo);
        for (int k = lo; k <= hi; k++)
            fprintf(f, ",%" PRIu64, c[k]);
    }
    fputc(']', f);
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return (x->from > y->from) - (x->from < y->from);
}

/* Rows in the order the page shows them: by process (in the order processes appeared), then by
 * the time the thread appeared. */
struct row_order {
    const struct row *rows;
    const size_t *pidrank; /* per row: the index of the first row of its process */
};

static int cmp_row(const void *a, const void *b, void *arg)
{
    const struct row_order *c = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct row *x = &c->rows[i], *y = &c->rows[j];
    if (c->pidrank[i] != c->pidrank[j])
        return c->pidrank[i] < c->pidrank[j] ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* A dictionary of strings for the spans' objects: index by (pid, object, join), a join's by the
 * thread it waited for when known (joined: glibc reuses a joined thread's pthread_t). */
struct dict {
    struct ptt_hmap map; /* key -> index + 1 */
    const char **s;
    size_t n;
};

static size_t dict_index(struct rep *R, struct dict *d, int32_t pid, uint64_t obj, int join,
                         int32_t joined)
{
    uint64_t what = joined ? (uint64_t)(uint32_t)joined : obj;
    size_t *ix =
        ptt_hmap_get(&d->map, ptt_key2(ptt_key2((uint64_t)pid, what), join + !!joined), sizeof *ix);
    if (*ix)
        return *ix - 1;
    char buf[128];
    const char *name = NULL;
    if (join) {
        int32_t tid = joined ? joined : ptt_names_pthread(R->names, pid, obj);
        if (tid) {
            char b[64];
            snprintf(buf, sizeof buf, "thread %s",
                     ptt_stat_thread_name(R->names, pid, tid, b, sizeof b));
            name = buf;
        }
    }
    if (!name)
        name = ptt_stat_object_name(R->names, pid, obj, buf, sizeof buf);
    const char **v = realloc(d->s, (d->n + 1) * sizeof *v);
    char *copy = strdup(name);
    if (!v || !copy) {
        free(copy);
        if (v)
            d->s = v;
        R->oom = 1;
        return 0;
    }
    d->s = v;
    d->s[d->n] = copy;
    *ix = ++d->n;
    return d->n - 1;
}

static void write_info(FILE *f, const char *key, const char *val, int *first)
{
    if (!val)
        return;
    fprintf(f, "%s\"%s\":", *first ? "" : ",", key);
    json_str(f, val);
    *first = 0;
}

struct header {
    char command[1024], host[256], start[128], version[64], clock[32];
    int has_end;
    uint64_t lost;
    int32_t exit_status;
};

/* The data's header: the trace's information and totals, the states' names. */
static void data_info(struct rep *R, FILE *f, const char *path, const struct header *H,
                      const char *error)
{
    fputs("{\"v\":1,\"info\":{", f);
    int first = 1;
    write_info(f, "trace", path, &first);
    write_info(f, "command", H->command[0] ? H->command : NULL, &first);
    write_info(f, "host", H->host[0] ? H->host : NULL, &first);
    write_info(f, "start_time", H->start[0] ? H->start : NULL, &first);
    write_info(f, "ptt_version", H->version[0] ? H->version : NULL, &first);
    write_info(f, "clock", H->clock[0] ? H->clock : NULL, &first);
    write_info(f, "error", error, &first);
    fprintf(f, ",\"duration_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"threads\":%zu", R->last_ns,
            R->events, R->nrows);
    if (H->has_end)
        fprintf(f, ",\"lost\":%" PRIu64 ",\"exit\":%d", H->lost, H->exit_status);
    if (ptt_stats_before_attach(R->stats))
        fprintf(f, ",\"calls_before_attach\":%" PRIu64, ptt_stats_before_attach(R->stats));
    fputs("},\"states\":[", f);
    for (int s = 0; s < PTT_TL_NSTATES; s++)
        fprintf(f, "%s\"%s\"", s ? "," : "", ptt_tl_state_name((enum ptt_tl_state)s));
    /* What the page shows: ptt knows a thread is in no blocking pthread call, not that it runs
     * on a CPU (it may sleep in read(2)); ptt's own wait for its buffer is not the program's. */
    fputs("],\"state_labels\":[", f);
    for (int s = 0; s < PTT_TL_NSTATES; s++) {
        fputs(s ? "," : "", f);
        json_str(f, ptt_tl_state_label((enum ptt_tl_state)s));
    }
}

/* The rows' order on the page (order[i]: the row shown i-th) and its inverse (rank). */
static void row_ranks(struct rep *R, uint32_t *order, uint32_t *rank)
{
    size_t *pidrank = malloc((R->nrows + 1) * sizeof *pidrank);
    struct ptt_hmap firsts = {0}; /* pid -> its first row + 1 */
    for (uint32_t i = 0; i < R->nrows; i++) {
        order[i] = i;
        size_t *p = ptt_hmap_get(&firsts, (uint64_t)(uint32_t)R->rows[i].pid, sizeof *p);
        if (!*p)
            *p = i + 1;
        if (pidrank)
            pidrank[i] = *p;
    }
    ptt_hmap_free(&firsts, NULL);
    if (pidrank) {
        struct row_order c = {R->rows, pidrank};
        qsort_r(order, R->nrows, sizeof *order, cmp_row, &c);
    }
    free(pidrank);
    for (uint32_t i = 0; i < R->nrows; i++)
        rank[order[i]] = i;
}

/* Timeline: the rows, in order, each with its blocked times and its pyramid of nlevels. */
static void data_rows(struct rep *R, FILE *f, const uint32_t *order, unsigned nb, unsigned nlevels)
{
    for (size_t i = 0; i < R->nrows; i++) {
        struct row *w = &R->rows[order[i]];
        char b[64];
        fprintf(f, "%s{\"n\":", i ? ",\n" : "\n");
        json_str(f, ptt_stat_thread_name(R->names, w->pid, w->tid, b, sizeof b));
        fprintf(f, ",\"p\":%d,\"t\":%d,\"b\":%" PRId64 ",\"e\":%" PRId64 ",\"bl\":[", w->pid,
                w->tid, w->begin, w->ended ? w->end : R->last_ns);
        for (int s = 0; s < PTT_TL_NSTATES; s++)
            fprintf(f, "%s%" PRIu64, s ? "," : "", w->blocked[s]);
        fputs("],\"l\":[", f);
        for (unsigned k = 0; k < nlevels; k++) {
            if (k)
                fputc(',', f);
            if (w->bins)
                write_level(f, w->bins, nb, 1u << k);
            else
                fputs("\"\"", f);
        }
        fputs("]}", f);
    }
}

/* The longest blocked spans, by row and time; the objects they name; the routines they name
 * (their IN event ids). */
static void data_spans(struct rep *R, FILE *f, const uint32_t *rank)
{
    struct dict objs = {0};
    qsort(R->spans, R->nspans, sizeof *R->spans, cmp_span);
    fprintf(f, "],\"spans_total\":%" PRIu64 ",\"spans\":[", R->allspans);
    for (size_t i = 0; i < R->nspans; i++) {
        const struct span *s = &R->spans[i];
        const struct row *w = &R->rows[s->row];
        size_t o = dict_index(R, &objs, w->pid, s->obj, s->state == PTT_TL_JOIN, s->joined);
        fprintf(f, "%s[%u,%u,%" PRId64 ",%" PRId64 ",%zu,%u]", i ? "," : "", rank[s->row], s->state,
                s->from, s->dur, o, s->call);
    }
    fputs("],\"span_objects\":[", f);
    for (size_t i = 0; i < objs.n; i++) {
        if (i)
            fputc(',', f);
        json_str(f, objs.s[i]);
        free((void *)objs.s[i]);
    }
    free(objs.s);
    ptt_hmap_free(&objs.map, NULL);
    fputs("],\"calls\":{", f);
    unsigned nev;
    const struct ptt_evinfo *all = ptt_evinfo_all(&nev);
    int first = 1;
    for (unsigned i = 0; i < nev; i++)
        if (all[i].kind == PTT_KIND_IN && state_of_call(all[i].id)) {
            fprintf(f, "%s\"%u\":", first ? "" : ",", all[i].id);
            json_str(f, all[i].routine);
            first = 0;
        }
}

/* Objects, as ptt stat sorts them (total wait) */
static void data_objects(struct rep *R, FILE *f)
{
    unsigned ncls;
    const struct ptt_classinfo *cls = ptt_classes(&ncls);
    size_t no;
    struct ptt_stat_object **ov = ptt_stats_objects(R->stats, PTT_STAT_SORT_WAIT, 0, R->names, &no);
    fprintf(f, "},\"nobjects\":%zu,\"objects\":[", no);
    for (size_t i = 0; i < no && i < TOP_OBJECTS; i++) {
        const struct ptt_stat_object *o = ov[i];
        char b[512];
        fprintf(f, "%s\n{\"kind\":", i ? "," : "");
        json_str(f, (unsigned)o->cls < ncls ? cls[o->cls].name : "?");
        fputs(",\"name\":", f);
        json_str(f, ptt_stat_object_name(R->names, o->pid, o->addr, b, sizeof b));
        fprintf(f,
                ",\"address\":\"0x%" PRIx64 "\",\"pid\":%d,\"acquisitions\":%" PRIu64
                ",\"contended\":%" PRIu64 ",",
                o->addr, o->pid, o->acquisitions, o->contended);
        ptt_stat_hist_json(f, "wait_ns", &o->wait);
        fputc(',', f);
        ptt_stat_hist_json(f, "hold_ns", &o->hold);
        fputc(',', f);
        json_hist_log2(f, &o->wait);
        fputs(",\"threads\":[", f);
        for (unsigned k = 0; k < o->nusers; k++) {
            if (k)
                fputc(',', f);
            json_str(f, ptt_stat_thread_name(R->names, o->pid, o->users[k], b, sizeof b));
        }
        fprintf(f, "],\"more_threads\":%u}", o->more_users);
    }
    free(ov);
}

/* Threads, by blocked time */
static void data_threads(struct rep *R, FILE *f)
{
    size_t nt;
    struct ptt_stat_thread **tv = ptt_stats_threads(R->stats, &nt);
    fprintf(f, "],\"nthreads\":%zu,\"thread_stats\":[", nt);
    for (size_t i = 0; i < nt && i < MAX_THREAD_ROWS; i++) {
        const struct ptt_stat_thread *t = tv[i];
        char b[512];
        fprintf(f, "%s\n{\"name\":", i ? "," : "");
        json_str(f, ptt_stat_thread_name(R->names, t->pid, t->tid, b, sizeof b));
        fprintf(f,
                ",\"pid\":%d,\"tid\":%d,\"lifetime_ns\":%" PRId64 ",\"blocked_ns\":%" PRIu64
                ",\"blocked_on\":[",
                t->pid, t->tid, t->last - t->first, t->blocked);
        int n = 0;
        for (int k = 0; k < PTT_STAT_MAX_ON; k++) {
            if (!t->on[k].ns)
                continue;
            fprintf(f, "%s{\"call\":", n++ ? "," : "");
            json_str(f, routine(t->on[k].call));
            fputs(",\"object\":", f);
            json_str(f, ptt_stat_on_name(R->names, t, k, b, sizeof b));
            fprintf(f, ",\"ns\":%" PRIu64 ",\"state\":%d}", t->on[k].ns,
                    state_of_call(t->on[k].call));
        }
        fputs("]}", f);
    }
    free(tv);
    fputc(']', f);
}

/* One holder that made others wait for an object: a row of "who made others wait". */
struct blame_row {
    const struct ptt_stat_object *o;
    struct ptt_stat_blame b;
};

static int cmp_blame_row(const void *a, const void *b)
{
    const struct blame_row *x = a, *y = b;
    if (x->b.ns != y->b.ns)
        return x->b.ns < y->b.ns ? 1 : -1;
    return (x->b.waits < y->b.waits) - (x->b.waits > y->b.waits);
}

/* A call site by address: its name, else the address; "" for none. */
static const char *site_str(struct rep *R, int32_t pid, uint64_t addr, char *buf, size_t len)
{
    const char *n = addr ? ptt_names_site(R->names, pid, addr) : "";
    if (n)
        return n;
    snprintf(buf, len, "0x%" PRIx64, addr);
    return buf;
}

static void json_blame_row(struct rep *R, FILE *f, const struct blame_row *r, const char *kind)
{
    char b[512];
    const struct ptt_stat_blame *x = &r->b;
    fputs("{\"object\":", f);
    json_str(f, ptt_stat_object_name(R->names, r->o->pid, r->o->addr, b, sizeof b));
    fputs(",\"kind\":", f);
    json_str(f, kind);
    fprintf(f, ",\"pid\":%d,\"tid\":%d,\"holder\":", r->o->pid, x->tid);
    json_str(f, x->tid ? ptt_stat_thread_name(R->names, r->o->pid, x->tid, b, sizeof b) : "");
    fputs(",\"taken_at\":", f);
    json_str(f, site_str(R, r->o->pid, x->take, b, sizeof b));
    fputs(",\"released_at\":", f);
    json_str(f, site_str(R, r->o->pid, x->release, b, sizeof b));
    fprintf(f, ",\"held_at_end\":%s,\"waits\":%" PRIu64 ",\"wait_ns\":%" PRIu64 "}",
            x->held_at_end ? "true" : "false", x->waits, x->ns);
}

/* Who made others wait for the objects of the table: the holders charged most, all objects
 * together. */
static void data_blame(struct rep *R, FILE *f)
{
    unsigned ncls;
    const struct ptt_classinfo *cls = ptt_classes(&ncls);
    size_t no, nr = 0, cap = 0;
    struct ptt_stat_object **ov = ptt_stats_objects(R->stats, PTT_STAT_SORT_WAIT, 0, R->names, &no);
    struct blame_row *rows = NULL;
    for (size_t i = 0; i < no && i < TOP_OBJECTS; i++) {
        size_t n;
        struct ptt_stat_blame *bl = ptt_stats_blame(ov[i], R->names, &n);
        if (nr + n > cap) {
            struct blame_row *p = realloc(rows, (cap = 2 * (nr + n)) * sizeof *rows);
            if (!p) {
                R->oom = 1;
                free(bl);
                break;
            }
            rows = p;
        }
        for (size_t k = 0; k < n; k++)
            rows[nr++] = (struct blame_row){ov[i], bl[k]};
        free(bl);
    }
    if (nr)
        qsort(rows, nr, sizeof *rows, cmp_blame_row);
    fprintf(f, ",\"nblame\":%zu,\"blame\":[", nr);
    for (size_t i = 0; i < nr && i < TOP_BLAME; i++) {
        fputs(i ? ",\n" : "\n", f);
        unsigned c = (unsigned)rows[i].o->cls;
        json_blame_row(R, f, &rows[i], c < ncls ? cls[c].name : "?");
    }
    fputs("]}", f);
    free(rows);
    free(ov);
}

/* The data the page's script draws from, as one JSON object. */
static void write_data(struct rep *R, FILE *f, const char *path, const struct header *H,
                       const char *error)
{
    data_info(R, f, path, H, error);
    unsigned nb = (unsigned)(R->last_ns / R->width) + 1;
    if (nb > R->nbins)
        nb = R->nbins;
    unsigned nlevels = 1;
    while ((nb + (1u << (nlevels - 1)) - 1) >> (nlevels - 1) > COARSEST)
        nlevels++;
    fprintf(f, "],\"bin_ns\":%" PRId64 ",\"nbins\":%u,\"levels\":%u,\"rows\":[", R->width, nb,
            nlevels);
    uint32_t *order = malloc((R->nrows + 1) * sizeof *order);
    uint32_t *rank = malloc((R->nrows + 1) * sizeof *rank);
    if (!order || !rank) {
        R->oom = 1;
        free(order);
        free(rank);
        fputs("],\"spans_total\":0,\"spans\":[],\"span_objects\":[],\"calls\":{},\"nobjects\":0,"
              "\"objects\":[],\"nthreads\":0,\"thread_stats\":[],\"nblame\":0,\"blame\":[]}",
              f);
        return;
    }
    row_ranks(R, order, rank);
    data_rows(R, f, order, nb, nlevels);
    data_spans(R, f, rank);
    free(order);
    free(rank);
    data_objects(R, f);
    data_threads(R, f);
    data_blame(R, f);
}

/* The static part of the header, readable without the script. */
static void write_header_html(FILE *f, const char *path, const struct header *H,
                              const struct rep *R, const char *error)
{
    fputs("<header><h1>ptt report</h1><table class=\"info\" id=\"info\">", f);
    struct {
        const char *k, *v;
    } rows[] = {{"command", H->command}, {"host", H->host},   {"start time", H->start},
                {"trace", path},         {"clock", H->clock}, {"ptt", H->version}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!rows[i].v || !rows[i].v[0])
            continue;
        fprintf(f, "<tr><th>%s</th><td>", rows[i].k);
        html_str(f, rows[i].v);
        fputs("</td></tr>", f);
    }
    fprintf(f,
            "<tr><th>duration</th><td id=\"duration\">%.6f s</td></tr>"
            "<tr><th>events</th><td id=\"events\">%" PRIu64 "</td></tr>"
            "<tr><th>threads</th><td id=\"nthreads\">%zu</td></tr>",
            (double)R->last_ns / 1e9, R->events, R->nrows);
    uint64_t before = ptt_stats_before_attach(R->stats);
    if (before) /* ptt trace -p: their waits are drawn from the attach */
        fprintf(f,
                "<tr><th>calls begun before the attach</th><td id=\"before_attach\">%" PRIu64
                "</td></tr>",
                before);
    if (H->has_end)
        fprintf(f, "<tr><th>lost events</th><td>%" PRIu64 "</td></tr>", H->lost);
    else
        fputs("<tr><th>end</th><td>the trace was not finished (ptt trace was killed)</td></tr>", f);
    fputs("</table>", f);
    if (error) {
        fputs("<p class=\"error\" id=\"error\">This trace is damaged; the report shows what could "
              "be read: ",
              f);
        html_str(f, error);
        fputs("</p>", f);
    }
    fputs("</header>\n", f);
}

static void copy_info(struct ptt_reader *r, const char *key, char *dst, size_t len)
{
    const char *v = ptt_reader_info(r, key);
    snprintf(dst, len, "%s", v ? v : "");
}

/* The states' classes (s0 running, s1 mutex...: the script's STATES index) in the colours of
 * every picture (states.def): the style sheet has no list of its own. */
static void write_state_css(FILE *f)
{
    for (int s = 0; s < PTT_TL_NSTATES; s++) {
        uint32_t c = ptt_tl_state_rgb((enum ptt_tl_state)s);
        fprintf(f, ".s%d { fill: #%06" PRIx32 "; background: #%06" PRIx32 "; }\n", s, c, c);
    }
}

/* The header, and the number of threads (which sets the bins per thread), from the index;
 * -1 if the file cannot be opened. */
static int64_t read_header(const char *in, struct header *H, char *err, size_t errlen)
{
    struct ptt_reader *r = ptt_reader_open(in, err, errlen);
    if (!r)
        return -1;
    copy_info(r, "command", H->command, sizeof H->command);
    copy_info(r, "host", H->host, sizeof H->host);
    copy_info(r, "start_time", H->start, sizeof H->start);
    copy_info(r, "ptt_version", H->version, sizeof H->version);
    copy_info(r, "clock", H->clock, sizeof H->clock);
    const struct ptt_rec_end *e = ptt_reader_end(r);
    if (e) {
        H->has_end = 1;
        H->lost = e->lost;
        H->exit_status = e->exit_status;
    }
    uint64_t nthreads = ptt_reader_nthreads(r);
    ptt_reader_close(r);
    return (int64_t)nthreads;
}

/* The page: style, static header, the data for the script, the script. */
static void write_page(FILE *f, struct rep *R, const struct header *H, const char *base,
                       const char *error)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>ptt report: ",
          f);
    html_str(f, H->command[0] ? H->command : base);
    fprintf(f, "</title>\n<style>\n%s", (const char *)ptt_report_css);
    write_state_css(f);
    fputs("</style>\n</head>\n<body>\n", f);
    write_header_html(f, base, H, R, error);
    fputs("<main id=\"main\"><noscript><p>The timeline and the tables are drawn by the page's "
          "script: allow JavaScript for this file.</p></noscript></main>\n"
          "<script type=\"application/json\" id=\"ptt-data\">",
          f);
    write_data(R, f, base, H, error);
    fprintf(f, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", (const char *)ptt_report_js);
}

/* The report written to o->out; how it went, in err when not well. */
static int write_report(const struct ptt_export_opts *o, struct rep *R, const struct header *H,
                        int damaged, const char *terr, char *err, size_t errlen)
{
    FILE *f = ptt_output_fopen(o->out, err, errlen);
    if (!f)
        return -1;
    static char obuf[1 << 16];
    setvbuf(f, obuf, _IOFBF, sizeof obuf);
    const char *base = strrchr(o->in, '/') ? strrchr(o->in, '/') + 1 : o->in;
    write_page(f, R, H, base, damaged ? terr : NULL);
    int werr = ferror(f);
    if (fclose(f) || werr) {
        snprintf(err, errlen, "%s: write error", o->out);
        return -1;
    } else if (R->oom) {
        snprintf(err, errlen, "out of memory: the report is incomplete");
        return -1;
    } else if (damaged) {
        snprintf(err, errlen, "%s (the report shows what could be read)", terr);
        return -1;
    }
    return 0;
}

int ptt_export_report(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    struct header H = {0};
    int64_t nthreads = read_header(o->in, &H, err, errlen);
    if (nthreads < 0)
        return -1;

    struct rep R = {0};
    R.names = o->names;
    R.stats = ptt_stats_new();
    ptt_stats_names(R.stats, o->names);
    R.nbins = MAX_BINS;
    while (R.nbins > MIN_BINS && (uint64_t)R.nbins * (uint64_t)nthreads > CELL_BUDGET)
        R.nbins /= 2;
    R.width = 16;
    R.spans = xcalloc(&R, MAX_SPANS, sizeof *R.spans);

    ptt_stats_window(R.stats, ptt_timeline_from());
    struct ptt_tl_callbacks cb = {
        .event = on_event, .before = on_before, .thread = on_thread, .state = on_state};
    char terr[600] = "";
    int damaged = ptt_timeline_run(o->in, o->names, &cb, &R, terr, sizeof terr);
    int rc;
    if (damaged && !R.events) { /* nothing could be read */
        snprintf(err, errlen, "%s", terr);
        rc = -1;
    } else
        rc = write_report(o, &R, &H, damaged, terr, err, errlen);

    for (size_t i = 0; i < R.nrows; i++)
        free(R.rows[i].bins);
    free(R.rows);
    free(R.spans);
    ptt_hmap_free(&R.rowmap, NULL);
    ptt_stats_free(R.stats);
    return rc;
}
