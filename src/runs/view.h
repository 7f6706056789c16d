/* What ptt runs list, show, compare and report read of a run, and how they write it. */
#ifndef PTT_RUNS_VIEW_H
#define PTT_RUNS_VIEW_H

#include <stdio.h>

#include "runs/cmd.h"
#include "runs/db.h"

struct runs_info {
    long long id;
    char *name, *machine, *date, *command, *format, *logs, *imported;
    size_t tests, failures;
    size_t counts[RS_COUNT];
    size_t other; /* tests of a status this ptt does not know (a database written by another) */
};

/* The run of that id; -1 having said why. */
int runs_info_load(struct runs_db *d, long long id, struct runs_info *r);
void runs_info_free(struct runs_info *r);
/* {"id", "name", "machine", "date", "command", "format", "logs": [...], "imported", "tests",
 * "failures", "counts": {"PASS": N, ...}}; flags: ptt_json_strn's (PTT_JSON_HTML). */
void runs_info_json(FILE *f, const struct runs_info *r, unsigned flags);
/* "448 PASS, 1 FAIL, 5 UNSUPPORTED" */
void runs_counts_text(FILE *f, const struct runs_info *r);
/* The colour of a status: red for a failure, green for PASS, yellow for others. */
const char *runs_status_color(const char *status);

/* The findings ptt check made of a test's trace, from the findings table: one JSON array, or
 * one text line each (indented by indent). */
void runs_findings_json(FILE *f, struct runs_db *d, long long run, const char *test);
void runs_findings_text(FILE *f, struct runs_db *d, long long run, const char *test,
                        const char *indent);

/* A duration in seconds for a JSON document (null when unknown: < 0). */
void runs_json_seconds(FILE *f, double s);

/* The tests of up to RUNS_MAX_COMPARED runs side by side, and what changed from the first run
 * to the last (docs/runs.md, "Comparing runs"). */
enum runs_change { RC_SAME, RC_NEW_FAILURE, RC_FIXED, RC_FLAKY, RC_MISSING, RC_COUNT };

struct runs_row {
    char *test;
    char *status[RUNS_MAX_COMPARED]; /* NULL: not in that run */
    double duration[RUNS_MAX_COMPARED];
    char *trace[RUNS_MAX_COMPARED];
    enum runs_change change;
    int slower;
};

struct runs_table {
    struct runs_info run[RUNS_MAX_COMPARED];
    int n;
    struct runs_row *rows;
    size_t nrows;
    double slower; /* percent */
};

/* The runs refs name (ids or names, 1 to RUNS_MAX_COMPARED), their tests by name: 0, or -1
 * having said why. */
int runs_table_load(struct runs_db *d, int n, char **refs, double slower, struct runs_table *t);
void runs_table_free(struct runs_table *t);
const char *runs_change_name(enum runs_change c);

#endif
