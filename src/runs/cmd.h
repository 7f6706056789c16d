/* The subcommands of ptt runs, called by src/cmd/runs.c once it has read their options. Each
 * returns the command's exit status (docs/runs.md). */
#ifndef PTT_RUNS_CMD_H
#define PTT_RUNS_CMD_H

#include "cmd/cmds.h"
#include "util/term.h"

struct runs_import_opts {
    const char *db, *name, *format; /* format: "auto", "opts", "tap", "junit" */
    const char *machine, *date, *command;
    const char *trace_dir, *trace_map;
};

struct runs_view_opts {
    const char *db;
    int json;      /* --format=json */
    int failed;    /* show: failures only */
    int output;    /* show: each test's output too */
    int all;       /* compare: the tests that did not change too */
    double slower; /* compare: the percentage above which a test is slower */
    struct ptt_term term;
};

int runs_import(const struct runs_import_opts *o, int n, char **logs);
int runs_list(const struct runs_view_opts *o);
int runs_show(const struct runs_view_opts *o, const char *ref);
/* 1 when the last run has failures the first has not. */
int runs_compare(const struct runs_view_opts *o, int n, char **refs);
int runs_report(const struct runs_view_opts *o, int n, char **refs);

#endif
