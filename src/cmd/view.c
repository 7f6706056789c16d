/* ptt view: the trace as text, one event per line, in time order. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pool.h"
#include "cmd/cmds.h"
#include "trace/filter.h"
#include "analysis/names.h"
#include "analysis/tracker.h"
#include "trace/reader.h"
#include "export/textfmt.h"
#include "cmd/usage.h"
#include "util/progress.h"
#include "util/term.h"
#include "util/util.h"

enum { FMT_HUMAN, FMT_RAW, FMT_JSON };

static void print_summary(struct ptt_reader *r, const char *path, const uint64_t *counts,
                          uint64_t total, int64_t last_ns, int filtered)
{
    printf("trace:     %s\n", path);
    const struct ptt_reader_parts *parts = ptt_reader_parts(r);
    if (parts)
        printf("parts:     %s of set %s%s%s%s%s\n", parts->read, parts->set,
               parts->missing[0] ? " (" : "", parts->missing, parts->missing[0] ? " missing)" : "",
               parts->continued ? "; the later ones not read" : "");
    const char *keys[] = {"command", "host", "start_time", "clock"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = ptt_reader_info(r, keys[i]);
        if (!v)
            continue;
        char *shown = ptt_must(strdup(v)); /* a file not written by ptt trace may hold controls */
        ptt_unctrl(shown, strlen(shown), 0);
        printf("%-10s %s\n", keys[i], shown);
        free(shown);
    }
    printf("duration:  %.6f s\n", (double)last_ns / 1e9);
    printf("threads:   %" PRIu64 "\n", ptt_reader_nthreads(r));
    const struct ptt_rec_end *end = ptt_reader_end(r);
    if (end) {
        printf("lost:      %" PRIu64 "\n", end->lost);
        if (end->lost) { /* why, unless the file is of format 1.0: then none is recorded */
            uint64_t sum = 0;
            for (int i = 0; i < PTT_LOST_NWHY; i++)
                sum += end->lost_why[i];
            char why[512];
            printf("why:       %s\n",
                   ptt_lost_text(why, sizeof why, end->lost, sum ? end->lost_why : NULL,
                                 end->lost_unmarked));
        }
        const char *attached = ptt_reader_info(r, "attached");
        if ((attached && !strcmp(attached, "yes")) ||
            counts[PTT_EV_THREAD_ATTACHED]) /* ptt trace -p: 0 or 125, its own */
            printf("exit:      none: ptt trace attached to the process (-p); %s\n",
                   end->exit_status ? "it could not detach" : "it detached, or the process ended");
        else
            printf("exit:      %d\n", end->exit_status);
    } else if (parts && parts->continued)
        printf("end:       in a later part (not read)\n");
    else
        printf("end:       missing (ptt trace did not finish this file)\n");
    const char *dropped = ptt_reader_info(r, "older_events_dropped");
    if (dropped)
        printf("window:    flight recorder; %s older events left out\n", dropped);
    uint64_t unfinished = counts[PTT_EV_TRACE_UNFINISHED];
    if (unfinished && filtered) /* the events kept are not what ptt trace counted */
        printf("unfinished: %" PRIu64 " call%s never returned: their TRACE_UNFINISHED, below, "
               "added by the reader\n",
               unfinished, unfinished == 1 ? "" : "s");
    else if (unfinished) /* so that the count agrees with ptt trace's, which are in the file */
        printf("unfinished: %" PRIu64 " call%s never returned: %" PRIu64 " events recorded, and "
               "the TRACE_UNFINISHED below, added by the reader\n",
               unfinished, unfinished == 1 ? "" : "s", total - unfinished);
    printf("events:    %" PRIu64 "\n", total);
    unsigned n;
    const struct ptt_evinfo *all = ptt_evinfo_all(&n);
    for (unsigned i = 0; i < n; i++)
        if (counts[all[i].id])
            printf("  %-26s %" PRIu64 "\n", all[i].name, counts[all[i].id]);
}

struct view_opts {
    int fmt, summary;
    const char *names_file, *path;
    struct ptt_filter *filter;
    struct ptt_term term;
};

/* The options and the one file; returns -1 to go on, else the exit status. */
static int view_options(struct view_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"summary", no_argument, 0, 's'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         PTT_FILTER_OPTIONS,
                                         PTT_FILTER_KIND_OPTION,
                                         PTT_TERM_OPTIONS,
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "f:sho:", opts, NULL)) != -1) {
        int k = ptt_filter_option(o->filter, "view", c, optarg);
        if (k == 0)
            k = ptt_term_option("view", &o->term, c, optarg);
        if (k < 0)
            return PTT_EXIT_USAGE;
        if (k)
            continue;
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "human"))
                o->fmt = FMT_HUMAN;
            else if (!strcmp(optarg, "raw"))
                o->fmt = FMT_RAW;
            else if (!strcmp(optarg, "json"))
                o->fmt = FMT_JSON;
            else {
                ptt_warn("view", "--format=%s: use human, raw or json", optarg);
                return PTT_EXIT_USAGE;
            }
            break;
        case 's': o->summary = 1; break;
        case 'N': o->names_file = optarg; break;
        case 'h': fputs(ptt_usage("view"), stdout); return 0;
        default: ptt_bad_option("view", argv); return PTT_EXIT_USAGE;
        }
    }
    o->path = ptt_trace_arg("view", argc, argv, optind);
    return o->path ? -1 : PTT_EXIT_USAGE;
}

/* The --names file, then the trace; NULL (having said why) if either cannot be read. */
static struct ptt_reader *view_open(const struct view_opts *o, struct ptt_names *names)
{
    char err[600];
    if (o->names_file && ptt_names_load(names, o->names_file, err, sizeof err)) {
        ptt_warn("view", "%s", err);
        return NULL;
    }
    /* Nothing before --from is shown: not decoded, but what names things. */
    struct ptt_reader *r = ptt_filter_open(o->filter, o->path, 1, err, sizeof err);
    if (!r)
        ptt_warn("view", "%s%s", err, ptt_default_hint(o->path));
    return r;
}

/* The events that pass the filters, printed, or counted by id into counts if given. */
static void view_events(struct ptt_reader *r, struct ptt_names *names, const struct view_opts *o,
                        uint64_t *counts, uint64_t *total, int64_t *last_ns)
{
    const struct ptt_ev *ev;
    int filtered = ptt_filter_any(o->filter);
    /* Who holds what, in the order printed: a wait for a rwlock names its readers. */
    struct ptt_tracker *held =
        o->fmt == FMT_HUMAN && !counts ? ptt_tracker_new(PTT_TRACK_SERIAL) : NULL;
    ptt_textfmt_tracker(held);
    ptt_progress_start("view", r);
    while ((ev = ptt_reader_get(r))) {
        ptt_progress_tick();
        ptt_names_event(names, ev);
        if (held && !ev->nested)
            ptt_tracker_event(held, ev, NULL);
        if (filtered && !ptt_filter_match(o->filter, ev)) {
            if (ptt_filter_done(o->filter, ev->ns))
                break;
            continue;
        }
        (*total)++;
        *last_ns = ev->ns;
        if (counts)
            counts[ev->id & PTT_EV_ID_MASK]++;
        else if (o->fmt == FMT_RAW)
            ptt_print_raw(stdout, ev);
        else if (o->fmt == FMT_JSON)
            ptt_print_json(stdout, ev);
        else
            ptt_print_human(stdout, ev);
    }
    ptt_progress_end();
    ptt_textfmt_tracker(NULL);
    ptt_tracker_free(held);
}

/* The trace read and shown; the exit status. */
static int view_trace(struct view_opts *o, struct ptt_names *names, struct ptt_reader *r)
{
    ptt_filter_names(o->filter, names);
    if (o->fmt != FMT_RAW)
        ptt_textfmt_names(names);
    const char *v = ptt_reader_info(r, "pid"); /* one buffer for every answer: read at once */
    int32_t pid = v ? (int32_t)atoi(v) : 0;
    v = ptt_reader_info(r, "attached");
    if (pid > 0 && v && !strcmp(v, "yes")) /* ptt trace -p: its start is no start */
        ptt_textfmt_attached(pid);
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    if (!o->summary) /* the events as they come: the pager shows them while the rest is read */
        ptt_term_pager(&o->term);
    uint64_t *counts = o->summary ? ptt_must(calloc(1u << 14, sizeof *counts)) : NULL;
    if (o->summary) /* a count per event: less than copying it to another thread would cost */
        ptt_reader_set_ahead(0);
    uint64_t total = 0;
    int64_t last_ns = 0;
    view_events(r, names, o, counts, &total, &last_ns);
    if (counts) {
        ptt_term_pager(&o->term);
        print_summary(r, o->path, counts, total, last_ns, ptt_filter_any(o->filter));
    }
    free(counts);
    int rc = ptt_term_close("view", &o->term) ? PTT_EXIT_USAGE : 0;
    ptt_filter_unmatched(o->filter, "view");
    const char *e = ptt_reader_error(r);
    if (e) {
        ptt_warn("view", "%s: %s", o->path, e);
        return PTT_EXIT_USAGE;
    }
    return rc;
}

int cmd_view(int argc, char **argv)
{
    struct view_opts o = {.fmt = FMT_HUMAN, .filter = ptt_filter_new()};
    struct ptt_names *names = NULL;
    struct ptt_reader *r = NULL;
    int rc = view_options(&o, argc, argv);
    if (rc < 0) {
        names = ptt_names_new();
        ptt_names_raw(names, o.fmt == FMT_JSON); /* JSON escapes them itself */
        r = view_open(&o, names);
        rc = r && !ptt_term_open("view", &o.term) ? view_trace(&o, names, r) : PTT_EXIT_USAGE;
    }
    ptt_reader_close(r);
    ptt_filter_free(o.filter);
    ptt_names_free(names);
    return rc;
}
