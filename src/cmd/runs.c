/* ptt runs: test runs in an SQLite database (docs/runs.md): import, list, show, compare,
 * report. This file reads the options; src/runs/ does the work, when ptt has SQLite. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "cmd/usage.h"
#include "util/term.h"
#include "util/util.h"

#ifdef PTT_HAVE_SQLITE
#include "runs/cmd.h"
#endif

#define CMD "runs"

enum sub { S_IMPORT = 1, S_LIST = 2, S_SHOW = 4, S_COMPARE = 8, S_REPORT = 16 };
#define S_VIEW (S_LIST | S_SHOW | S_COMPARE)

static const struct {
    const char *name;
    enum sub sub;
} subs[] = {{"import", S_IMPORT},
            {"list", S_LIST},
            {"show", S_SHOW},
            {"compare", S_COMPARE},
            {"report", S_REPORT}};

enum {
    O_DB = 0x100,
    O_NAME,
    O_MACHINE,
    O_DATE,
    O_COMMAND,
    O_TRACE,
    O_TRACE_MAP,
    O_FAILED,
    O_SLOWER,
    O_ALL
};

/* The options and the subcommands that take each. */
static const struct option opts[] = {{"db", required_argument, 0, O_DB},
                                     {"name", required_argument, 0, O_NAME},
                                     {"format", required_argument, 0, 'f'},
                                     {"machine", required_argument, 0, O_MACHINE},
                                     {"date", required_argument, 0, O_DATE},
                                     {"command", required_argument, 0, O_COMMAND},
                                     {"trace", required_argument, 0, O_TRACE},
                                     {"trace-map", required_argument, 0, O_TRACE_MAP},
                                     {"failed", no_argument, 0, O_FAILED},
                                     {"verbose", no_argument, 0, 'v'},
                                     {"slower", required_argument, 0, O_SLOWER},
                                     {"all", no_argument, 0, O_ALL},
                                     {"help", no_argument, 0, 'h'},
                                     PTT_TERM_OPTIONS,
                                     {0, 0, 0, 0}};

static unsigned takes(int c)
{
    switch (c) {
    case O_DB:
    case 'h': return ~0u;
    case 'f': return S_IMPORT | S_VIEW;
    case O_NAME:
    case O_MACHINE:
    case O_DATE:
    case O_COMMAND:
    case O_TRACE:
    case O_TRACE_MAP: return S_IMPORT;
    case O_FAILED:
    case 'v': return S_SHOW;
    case O_SLOWER: return S_COMPARE | S_REPORT;
    case O_ALL: return S_COMPARE;
    case 'o': return S_VIEW | S_REPORT;
    default: return S_VIEW; /* --color, --no-pager */
    }
}

struct runs_args {
    const char *db, *name, *format, *machine, *date, *command, *trace_dir, *trace_map;
    int failed, verbose, all;
    double slower;
    struct ptt_term term;
};

static int format_option(enum sub sub, const char *v, struct runs_args *a)
{
    const char *ok = sub == S_IMPORT ? "|auto|opts|tap|junit|" : "|text|json|";
    char key[32];
    if (snprintf(key, sizeof key, "|%s|", v) >= (int)sizeof key || !strstr(ok, key)) {
        ptt_warn(CMD, "--format=%s: use %s", v,
                 sub == S_IMPORT ? "auto, opts, tap or junit" : "text or json");
        return -1;
    }
    a->format = v;
    return 0;
}

/* One option of sub into a; -1 having said why. */
static int one_option(enum sub sub, int c, const char *arg, struct runs_args *a)
{
    char *end;
    switch (c) {
    case O_DB: a->db = arg; return 0;
    case O_NAME: a->name = arg; return 0;
    case 'f': return format_option(sub, arg, a);
    case O_MACHINE: a->machine = arg; return 0;
    case O_DATE: a->date = arg; return 0;
    case O_COMMAND: a->command = arg; return 0;
    case O_TRACE: a->trace_dir = arg; return 0;
    case O_TRACE_MAP: a->trace_map = arg; return 0;
    case O_FAILED: a->failed = 1; return 0;
    case 'v': a->verbose = 1; return 0;
    case O_ALL: a->all = 1; return 0;
    case O_SLOWER:
        a->slower = strtod(arg, &end);
        if (*end || end == arg || !(a->slower >= 0 && a->slower < 1e9)) {
            ptt_warn(CMD, "--slower=%s: a percentage, 0 or more", arg);
            return -1;
        }
        return 0;
    default: return ptt_term_option(CMD, &a->term, c, arg) == 1 ? 0 : -1;
    }
}

/* The options of the subcommand (argv[0]); returns -1 to go on with the arguments from
 * optind, else the exit status. */
static int parse(int argc, char **argv, enum sub sub, struct runs_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:hvo:", opts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            ptt_bad_option(CMD, argv);
            return PTT_EXIT_USAGE;
        }
        if (c == 'h') {
            fputs(ptt_usage("runs"), stdout);
            return 0;
        }
        if (!(takes(c) & sub)) {
            ptt_warn(CMD, "%s is not an option of ptt runs %s; see 'ptt runs --help'",
                     argv[optind - 1], argv[0]);
            return PTT_EXIT_USAGE;
        }
        if (one_option(sub, c, optarg, a))
            return PTT_EXIT_USAGE;
    }
    return -1;
}

/* The database: --db, else ptt-runs.db in $PTT_DIR, else in the current directory. */
static const char *default_db(char *buf, size_t len)
{
    const char *dir = getenv("PTT_DIR");
    if (!dir || !*dir)
        return "ptt-runs.db";
    if (snprintf(buf, len, "%s/ptt-runs.db", dir) >= (int)len) {
        ptt_warn(CMD, "$PTT_DIR is too long");
        return NULL;
    }
    return buf;
}

#ifdef PTT_HAVE_SQLITE
static int run(enum sub sub, const struct runs_args *a, int n, char **args)
{
    if (sub == S_IMPORT) {
        struct runs_import_opts o = {a->db,        a->name,     a->format ? a->format : "auto",
                                     a->machine,   a->date,     a->command,
                                     a->trace_dir, a->trace_map};
        return runs_import(&o, n, args);
    }
    struct runs_view_opts v = {.db = a->db,
                               .json = a->format && !strcmp(a->format, "json"),
                               .failed = a->failed,
                               .output = a->verbose,
                               .all = a->all,
                               .slower = a->slower,
                               .term = a->term};
    switch (sub) {
    case S_LIST:
        if (n) {
            ptt_warn(CMD, "list takes no argument ('%s')", args[0]);
            return PTT_EXIT_USAGE;
        }
        return runs_list(&v);
    case S_SHOW:
        if (n != 1) {
            ptt_warn(CMD, "show: one run (ptt runs show RUN)");
            return PTT_EXIT_USAGE;
        }
        return runs_show(&v, args[0]);
    case S_COMPARE: return runs_compare(&v, n, args);
    default: return runs_report(&v, n, args);
    }
}
#endif

int cmd_runs(int argc, char **argv)
{
    if (argc < 2) {
        fputs(ptt_usage("runs"), stderr);
        return PTT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(ptt_usage("runs"), stdout);
        return 0;
    }
    enum sub sub = 0;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(subs[i].name, argv[1]))
            sub = subs[i].sub;
    if (!sub) {
        ptt_warn(CMD, "'%s' is not a subcommand: import, list, show, compare or report", argv[1]);
        return PTT_EXIT_USAGE;
    }
    struct runs_args a = {.slower = 50};
    int rc = parse(argc - 1, argv + 1, sub, &a);
    if (rc >= 0)
        return rc;
    char buf[4096];
    if (!a.db && !(a.db = default_db(buf, sizeof buf)))
        return PTT_EXIT_USAGE;
#ifdef PTT_HAVE_SQLITE
    return run(sub, &a, argc - 1 - optind, argv + 1 + optind);
#else
    ptt_warn(CMD, "ptt was built without SQLite (Debian: libsqlite3-dev), which ptt runs needs");
    return PTT_EXIT_USAGE;
#endif
}
