/* ptt export, ptt paje, ptt report: the trace in other forms (export.h). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/timeline.h"
#include "cmd/cmds.h"
#include "export/export.h"
#include "trace/filter.h"
#include "cmd/usage.h"
#include "util/progress.h"
#include "util/util.h"

static const struct {
    const char *name;
    int (*fn)(const struct ptt_export_opts *, char *, size_t);
} exporters[] = {
#define PTT_EXPORTER_ENTRY(name, fn, what) {#name, fn},
    PTT_EXPORTERS(PTT_EXPORTER_ENTRY)
#undef PTT_EXPORTER_ENTRY
};
#define NEXPORTERS (sizeof exporters / sizeof exporters[0])

/* The formats that show the events alone, not what they make of each other: they need no
 * state from before --from, which is not read. */
static int reads_window_only(const char *format)
{
    return !strcmp(format, "chrome") || !strcmp(format, "perfetto") || !strcmp(format, "ctf") ||
           !strcmp(format, "sco");
}

/* The command line of all three: format is fixed for ptt paje and ptt report. */
static int export_main(const char *cmd, const char *format, int argc, char **argv,
                       struct ptt_filter *filter)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"output", required_argument, 0, 'o'},
                                         {"names", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         PTT_FILTER_OPTIONS,
                                         PTT_FILTER_KIND_OPTION,
                                         {0, 0, 0, 0}};
    const char *out = NULL, *names_file = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, format ? "o:h" : "f:o:h", opts, NULL)) != -1) {
        int k = ptt_filter_option(filter, cmd, c, optarg);
        if (k < 0)
            return PTT_EXIT_USAGE;
        if (k)
            continue;
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': out = optarg; break;
        case 'N': names_file = optarg; break;
        case 'h': fputs(ptt_usage(cmd), stdout); return 0;
        default: ptt_bad_option(cmd, argv); return PTT_EXIT_USAGE;
        }
    }
    size_t i;
    for (i = 0; format && i < NEXPORTERS; i++)
        if (!strcmp(exporters[i].name, format))
            break;
    if (!format || i == NEXPORTERS) {
        ptt_warn(cmd, "%s%s: give --format=paje, chrome, perfetto, ctf, sco, report or tables",
                 format ? "unknown format " : "no format", format ? format : "");
        return PTT_EXIT_USAGE;
    }
    if (optind < argc - 1 || !out) {
        ptt_warn(cmd, "usage: ptt %s%s%s [FILE] -o OUT", cmd,
                 strcmp(cmd, "export") ? "" : " --format=", strcmp(cmd, "export") ? "" : format);
        return PTT_EXIT_USAGE;
    }
    const char *in = optind < argc ? argv[optind] : ptt_default_trace(cmd);
    if (!in)
        return PTT_EXIT_USAGE;
    char err[600];
    struct ptt_names *names = ptt_names_new();
    ptt_names_raw(names, 1); /* every format quotes or escapes them in its own way */
    if (names_file && ptt_names_load(names, names_file, err, sizeof err)) {
        ptt_warn(cmd, "%s", err);
        ptt_names_free(names);
        return PTT_EXIT_USAGE;
    }
    struct ptt_export_opts o = {in, out, names};
    ptt_progress_command(cmd);
    ptt_filter_names(filter, names);
    ptt_timeline_filter(filter, reads_window_only(format));
    int r = exporters[i].fn(&o, err, sizeof err);
    ptt_timeline_filter(NULL, 0);
    if (r)
        ptt_warn(cmd, "%s%s", err, ptt_default_hint(in));
    else
        ptt_filter_unmatched(filter, cmd);
    ptt_names_free(names);
    return r ? PTT_EXIT_USAGE : 0;
}

/* export_main with its filter, freed after. */
static int export_filtered(const char *cmd, const char *format, int argc, char **argv)
{
    struct ptt_filter *f = ptt_filter_new();
    int rc = export_main(cmd, format, argc, argv, f);
    ptt_filter_free(f);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    return export_filtered("export", NULL, argc, argv);
}

int cmd_paje(int argc, char **argv)
{
    return export_filtered("paje", "paje", argc, argv);
}

int cmd_report(int argc, char **argv)
{
    return export_filtered("report", "report", argc, argv);
}
