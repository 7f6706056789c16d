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
#include "util/json.h"
#include "analysis/names.h"
#include "trace/reader.h"
#include "analysis/stats.h"
#include "cmd/usage.h"
#include "util/util.h"

static struct ptt_names *names;

static const char *obj_name(const struct ptt_stat_object *o, char *buf, size_t len)
{
    return ptt_stat_object_name(names, o->pid, o->addr, buf, len);
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

int cmd_stat(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"sort", required_argument, 0, 's'},
                                         {"top", required_argument, 0, 't'},
                                         {"kind", required_argument, 0, 'k'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int fmt = 0, c, sort_by = PTT_STAT_SORT_WAIT;
    long top = -1;
    uint64_t kinds = 0;
    const char *names_file = NULL;
    char err[600];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            fmt = !strcmp(optarg, "text")   ? 0
                  : !strcmp(optarg, "json") ? 1
                  : !strcmp(optarg, "csv")  ? 2
                                            : -1;
            if (fmt < 0) {
                ptt_warn("stat", "--format=%s: use text, json or csv", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 's':
            sort_by = !strcmp(optarg, "wait")           ? PTT_STAT_SORT_WAIT
                      : !strcmp(optarg, "hold")         ? PTT_STAT_SORT_HOLD
                      : !strcmp(optarg, "acquisitions") ? PTT_STAT_SORT_ACQ
                      : !strcmp(optarg, "contended")    ? PTT_STAT_SORT_CONTENDED
                      : !strcmp(optarg, "name")         ? PTT_STAT_SORT_NAME
                                                        : -1;
            if (sort_by < 0) {
                ptt_warn("stat", "--sort=%s: use wait, hold, acquisitions, contended or name",
                         optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 't': {
            char *end;
            top = strtol(optarg, &end, 10);
            if (*end || top < 1) {
                ptt_warn("stat", "--top=%s: give a number of at least 1", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        }
        case 'k': {
            char bad[32];
            if (ptt_parse_classes(optarg, &kinds, bad, sizeof bad)) {
                ptt_warn("stat", "--kind: unknown kind '%s'", bad);
                return PTT_EXIT_USAGE;
            }
            break;
        }
        case 'N': names_file = optarg; break;
        case 'h': fputs(ptt_usage("stat"), stdout); return 0;
        default: ptt_bad_option("stat", argv); return PTT_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        ptt_warn("stat", optind >= argc ? "no trace file given; usage: ptt stat [OPTIONS] FILE"
                                        : "one trace file at a time");
        return PTT_EXIT_USAGE;
    }
    const char *path = argv[optind];
    names = ptt_names_new();
    struct ptt_reader *r = NULL;
    if (names_file && ptt_names_load(names, names_file, err, sizeof err))
        ptt_warn("stat", "%s", err);
    else if (!(r = ptt_reader_open(path, err, sizeof err)))
        ptt_warn("stat", "%s", err);
    if (!r) {
        ptt_names_free(names);
        return PTT_EXIT_USAGE;
    }
    struct ptt_stats *stats = ptt_stats_new();
    struct ptt_ev ev;
    uint64_t nevents = 0;
    int64_t end_ns = 0;
    while (ptt_reader_next(r, &ev)) {
        ptt_names_event(names, &ev);
        ptt_stats_event(stats, &ev);
        nevents++;
        end_ns = ev.ns;
    }

    /* Objects, sorted, filtered by kind. */
    size_t no, nt;
    struct ptt_stat_object **ov =
        ptt_stats_objects(stats, (enum ptt_stat_sort)sort_by, kinds, names, &no);
    struct ptt_stat_thread **tv = ptt_stats_threads(stats, &nt);
    size_t shown_o = top > 0 && (size_t)top < no ? (size_t)top : no;
    size_t shown_t = top > 0 && (size_t)top < nt ? (size_t)top : nt;
    unsigned ncls;
    const struct ptt_classinfo *cls = ptt_classes(&ncls);
    char b1[512], b2[64], w1[32], w2[32], w3[32], w4[32], w5[32];
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);

    if (fmt == 1) {
        printf("{\"trace\":");
        ptt_json_str(stdout, path);
        printf(",\"events\":%" PRIu64 ",\"duration_ns\":%" PRId64 ",\"objects\":[", nevents,
               end_ns);
        for (size_t i = 0; i < shown_o; i++) {
            struct ptt_stat_object *o = ov[i];
            printf("%s{\"kind\":\"%s\",\"name\":", i ? "," : "", cls[o->cls].name);
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
                printf(",\"address\":\"0x%" PRIx64 "\",\"waits\":%" PRIu64 ",\"wait_ns\":%" PRIu64
                       "}",
                       o->sites[idx[k]].site, o->sites[idx[k]].waits, o->sites[idx[k]].ns);
            }
            printf("]}");
        }
        printf("],\"threads\":[");
        for (size_t i = 0; i < shown_t; i++) {
            struct ptt_stat_thread *t = tv[i];
            printf("%s{\"tid\":%d,\"pid\":%d,\"name\":", i ? "," : "", t->tid, t->pid);
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
        printf("]}\n");
    } else if (fmt == 2) {
        printf("kind,name,address,pid,acquisitions,contended,wait_total_ns,wait_mean_ns,"
               "wait_p50_ns,wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_p50_ns,"
               "hold_p99_ns,hold_max_ns,top_site\n");
        for (size_t i = 0; i < shown_o; i++) {
            struct ptt_stat_object *o = ov[i];
            printf("%s,", cls[o->cls].name);
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
    } else {
        printf("%s: %" PRIu64 " events, %.6f s\n\n", path, nevents, (double)end_ns / 1e9);
        printf("%-8s %-24s %8s %8s %9s %9s %9s %9s %9s %9s  %s\n", "kind", "object", "acquired",
               "waited", "wait tot", "mean", "p99", "max", "hold tot", "hold p99", "threads");
        for (size_t i = 0; i < shown_o; i++) {
            struct ptt_stat_object *o = ov[i];
            fmt_ns(w1, sizeof w1, o->wait.total);
            fmt_ns(w2, sizeof w2, o->wait.n ? o->wait.total / o->wait.n : 0);
            fmt_ns(w3, sizeof w3, ptt_stat_pct(&o->wait, 0.99));
            fmt_ns(w4, sizeof w4, o->wait.max);
            fmt_ns(w5, sizeof w5, o->hold.total);
            char h99[32];
            fmt_ns(h99, sizeof h99, ptt_stat_pct(&o->hold, 0.99));
            printf("%-8s %-24s %8" PRIu64 " %8" PRIu64 " %9s %9s %9s %9s %9s %9s  ",
                   cls[o->cls].name, obj_name(o, b1, sizeof b1), o->acquisitions, o->contended, w1,
                   w2, w3, w4, o->hold.n ? w5 : "-", o->hold.n ? h99 : "-");
            for (unsigned k = 0; k < o->nusers; k++)
                printf("%s%s", k ? "," : "", thread_name(o->pid, o->users[k], b2, sizeof b2));
            if (o->more_users)
                printf(",+%u", o->more_users);
            putchar('\n');
        }
        int titled = 0; /* where the waits come from, for the objects shown */
        for (size_t i = 0; i < shown_o; i++) {
            struct ptt_stat_object *o = ov[i];
            int idx[PTT_STAT_MAX_SITES], ns = sites_by_wait(o, idx);
            if (!ns)
                continue;
            if (!titled++)
                printf("\ncall sites that waited most:\n");
            printf("  %s:", obj_name(o, b1, sizeof b1));
            for (int k = 0; k < ns; k++) {
                fmt_ns(w1, sizeof w1, o->sites[idx[k]].ns);
                printf("%s %s (%" PRIu64 " waits, %s)", k ? "," : "",
                       site_name(o, idx[k], b2, sizeof b2), o->sites[idx[k]].waits, w1);
            }
            putchar('\n');
        }
        printf("\n%-8s %-20s %10s %10s  %s\n", "pid", "thread", "lifetime", "blocked",
               "blocked most on");
        for (size_t i = 0; i < shown_t; i++) {
            struct ptt_stat_thread *t = tv[i];
            fmt_ns(w1, sizeof w1, (uint64_t)(t->last - t->first));
            fmt_ns(w2, sizeof w2, t->blocked);
            printf("%-8d %-20s %10s %10s  ", t->pid, thread_name(t->pid, t->tid, b2, sizeof b2), w1,
                   w2);
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
        /* per process */
        printf("\n%-8s %8s %10s\n", "pid", "threads", "blocked");
        for (size_t i = 0; i < nt; i++) {
            int32_t pid = tv[i]->pid;
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++)
                seen = tv[k]->pid == pid;
            if (seen)
                continue;
            uint64_t blocked = 0, n = 0;
            for (size_t k = 0; k < nt; k++)
                if (tv[k]->pid == pid)
                    blocked += tv[k]->blocked, n++;
            fmt_ns(w1, sizeof w1, blocked);
            printf("%-8d %8" PRIu64 " %10s\n", pid, n, w1);
        }
    }
    fflush(stdout);
    const char *e = ptt_reader_error(r);
    int rc = 0;
    if (e) {
        ptt_warn("stat", "%s: %s", path, e);
        rc = PTT_EXIT_USAGE;
    }
    ptt_reader_close(r);
    ptt_names_free(names);
    free(ov);
    free(tv);
    ptt_stats_free(stats);
    return rc;
}
