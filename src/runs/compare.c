/* ptt runs compare: up to ten runs side by side, what changed from the first to the last: new
 * failures, fixes, flaky tests (their status differs across the runs), tests missing from some,
 * and tests slower by more than --slower percent (docs/runs.md, "Comparing runs"). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/view.h"
#include "util/json.h"
#include "util/util.h"

#define CMD "runs"
/* A test is slower only by this much at least: shorter differences are the machine's noise. */
#define SLOWER_MIN 0.01

static const char *const change_names[RC_COUNT] = {"same", "new-failure", "fixed", "flaky",
                                                   "missing"};

const char *runs_change_name(enum runs_change c)
{
    return change_names[c];
}

static void judge(struct runs_row *r, int n, double pct)
{
    const char *first = r->status[0], *last = r->status[n - 1];
    int ff = runs_status_name_failure(first), fl = runs_status_name_failure(last);
    int differ = 0, absent = 0;
    const char *seen = NULL;
    for (int i = 0; i < n; i++) {
        absent |= !r->status[i];
        if (r->status[i] && seen && strcmp(seen, r->status[i]))
            differ = 1;
        if (r->status[i])
            seen = r->status[i];
    }
    r->change = fl && !ff           ? RC_NEW_FAILURE
                : ff && last && !fl ? RC_FIXED
                : differ            ? RC_FLAKY
                : absent            ? RC_MISSING
                                    : RC_SAME;
    double a = r->duration[0], b = r->duration[n - 1];
    r->slower = a >= 0 && b >= 0 && b > a * (1 + pct / 100) && b - a >= SLOWER_MIN;
}

static int add_rows(struct runs_db *d, struct runs_table *t, const long long *ids)
{
    char sql[512];
    int len = snprintf(sql, sizeof sql,
                       "SELECT test, run, status, duration, trace FROM results "
                       "WHERE run IN (");
    for (int i = 0; i < t->n; i++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, "%s%lld", i ? "," : "", ids[i]);
    snprintf(sql + len, sizeof sql - (size_t)len, ") ORDER BY test, run");
    sqlite3_stmt *st = runs_db_prepare(d, sql);
    if (!st)
        return -1;
    size_t cap = 0;
    struct runs_row *r = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *test = runs_col(st, 0);
        if (!r || strcmp(r->test, test)) {
            if (t->nrows == cap)
                t->rows = ptt_must(realloc(t->rows, (cap = cap ? 2 * cap : 256) * sizeof *r));
            r = &t->rows[t->nrows++];
            memset(r, 0, sizeof *r);
            r->test = ptt_must(strdup(test));
            for (int i = 0; i < RUNS_MAX_COMPARED; i++)
                r->duration[i] = -1;
        }
        long long run = sqlite3_column_int64(st, 1);
        for (int i = 0; i < t->n; i++) /* a run given twice has its column twice */
            if (ids[i] == run) {
                r->status[i] = ptt_must(strdup(runs_col(st, 2)));
                if (sqlite3_column_type(st, 3) != SQLITE_NULL)
                    r->duration[i] = sqlite3_column_double(st, 3);
                if (sqlite3_column_type(st, 4) != SQLITE_NULL)
                    r->trace[i] = ptt_must(strdup(runs_col(st, 4)));
            }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : runs_db_error(d, "cannot read the results");
}

int runs_table_load(struct runs_db *d, int n, char **refs, double slower, struct runs_table *t)
{
    memset(t, 0, sizeof *t);
    t->slower = slower;
    if (n > RUNS_MAX_COMPARED) {
        ptt_warn(CMD, "%d runs: at most %d are compared", n, RUNS_MAX_COMPARED);
        return -1;
    }
    long long ids[RUNS_MAX_COMPARED];
    for (int i = 0; i < n; i++) {
        ids[i] = runs_db_find(d, refs[i]);
        if (ids[i] < 0 || runs_info_load(d, ids[i], &t->run[i]))
            return -1;
        t->n = i + 1;
    }
    if (add_rows(d, t, ids))
        return -1;
    for (size_t i = 0; i < t->nrows; i++)
        judge(&t->rows[i], t->n, slower);
    return 0;
}

void runs_table_free(struct runs_table *t)
{
    for (size_t i = 0; i < t->nrows; i++) {
        free(t->rows[i].test);
        for (int k = 0; k < RUNS_MAX_COMPARED; k++) {
            free(t->rows[i].status[k]);
            free(t->rows[i].trace[k]);
        }
    }
    free(t->rows);
    for (int i = 0; i < t->n; i++)
        runs_info_free(&t->run[i]);
    memset(t, 0, sizeof *t);
}

/* ---- text ----------------------------------------------------------------------------------- */

static void statuses_text(const struct runs_table *t, const struct runs_row *r)
{
    for (int i = 0; i < t->n; i++) {
        const char *s = r->status[i] ? r->status[i] : "-";
        printf("%s%s%s%s", i ? " -> " : "", runs_status_color(s), s, ptt_c(PTT_C_RESET));
    }
}

/* The traces of the test, with ptt check's findings: where a failure leads. */
static void traces_text(struct runs_db *d, const struct runs_table *t, const struct runs_row *r)
{
    for (int i = 0; i < t->n; i++)
        if (r->trace[i]) {
            printf("      trace (run %s): %s\n", t->run[i].name, r->trace[i]);
            runs_findings_text(stdout, d, t->run[i].id, r->test, "        ");
        }
}

static void section_text(struct runs_db *d, const struct runs_table *t, enum runs_change c,
                         const char *title, size_t count)
{
    if (!count)
        return;
    printf("\n%s (%zu):\n", title, count);
    for (size_t i = 0; i < t->nrows; i++) {
        const struct runs_row *r = &t->rows[i];
        if (r->change != c)
            continue;
        printf("  %s  ", r->test);
        statuses_text(t, r);
        putchar('\n');
        if (c != RC_SAME)
            traces_text(d, t, r);
    }
}

static void slower_text(const struct runs_table *t, size_t count)
{
    if (!count)
        return;
    printf("\nslower by more than %g%% (%zu):\n", t->slower, count);
    for (size_t i = 0; i < t->nrows; i++) {
        const struct runs_row *r = &t->rows[i];
        double a = r->duration[0], b = r->duration[t->n - 1];
        if (r->slower)
            printf("  %s  %.3f s -> %.3f s (+%.0f%%)\n", r->test, a, b,
                   a > 0 ? (b - a) / a * 100 : 100.0);
    }
}

static void compare_text(const struct runs_view_opts *o, struct runs_db *d,
                         const struct runs_table *t, const size_t *count, size_t slower)
{
    printf("runs:");
    for (int i = 0; i < t->n; i++)
        printf("%s %lld %s (%s, %s)", i ? "," : "", t->run[i].id, t->run[i].name, t->run[i].machine,
               t->run[i].date);
    putchar('\n');
    char title[256];
    snprintf(title, sizeof title, "new failures: failing in %s, not in %s", t->run[t->n - 1].name,
             t->run[0].name);
    section_text(d, t, RC_NEW_FAILURE, title, count[RC_NEW_FAILURE]);
    snprintf(title, sizeof title, "fixed: failing in %s, not in %s", t->run[0].name,
             t->run[t->n - 1].name);
    section_text(d, t, RC_FIXED, title, count[RC_FIXED]);
    section_text(d, t, RC_FLAKY, "flaky: the status differs across the runs", count[RC_FLAKY]);
    section_text(d, t, RC_MISSING, "missing: not in every run", count[RC_MISSING]);
    slower_text(t, slower);
    if (o->all)
        section_text(d, t, RC_SAME, "unchanged", count[RC_SAME]);
    printf("\n%zu test%s: new failures %zu, fixed %zu, flaky %zu, missing %zu, unchanged %zu; "
           "slower %zu\n",
           t->nrows, t->nrows == 1 ? "" : "s", count[RC_NEW_FAILURE], count[RC_FIXED],
           count[RC_FLAKY], count[RC_MISSING], count[RC_SAME], slower);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* The n strings of one test's runs, comma-separated: null where a run has none. */
static void json_strs(char *const *v, int n)
{
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", stdout);
        if (v[i])
            ptt_json_str(stdout, v[i]);
        else
            fputs("null", stdout);
    }
}

static void row_json(const struct runs_table *t, const struct runs_row *r, int first)
{
    fputs(first ? "\n  {\"test\": " : ",\n  {\"test\": ", stdout);
    ptt_json_str(stdout, r->test);
    printf(", \"change\": \"%s\", \"slower\": %s, \"statuses\": [", runs_change_name(r->change),
           r->slower ? "true" : "false");
    json_strs(r->status, t->n);
    fputs("], \"durations\": [", stdout);
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ", " : "", stdout);
        runs_json_seconds(stdout, r->duration[i]);
    }
    fputs("], \"traces\": [", stdout);
    json_strs(r->trace, t->n);
    fputs("]}", stdout);
}

static void compare_json(const struct runs_view_opts *o, const struct runs_table *t,
                         const size_t *count, size_t slower)
{
    fputs("{\"runs\": [", stdout);
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ",\n  " : "\n  ", stdout);
        runs_info_json(stdout, &t->run[i], 0);
    }
    printf("],\n \"slower_percent\": %g, \"slower_min\": %g,\n \"summary\": {\"tests\": %zu, "
           "\"new_failures\": %zu, \"fixed\": %zu, \"flaky\": %zu, \"missing\": %zu, "
           "\"slower\": %zu, \"unchanged\": %zu},\n \"tests\": [",
           t->slower, SLOWER_MIN, t->nrows, count[RC_NEW_FAILURE], count[RC_FIXED], count[RC_FLAKY],
           count[RC_MISSING], slower, count[RC_SAME]);
    int first = 1;
    for (size_t i = 0; i < t->nrows; i++)
        if (o->all || t->rows[i].change != RC_SAME || t->rows[i].slower) {
            row_json(t, &t->rows[i], first);
            first = 0;
        }
    fputs("]}\n", stdout);
}

int runs_compare(const struct runs_view_opts *o, int n, char **refs)
{
    if (n < 2) {
        ptt_warn(CMD, "compare: two runs at least (ptt runs compare RUN RUN...)");
        return PTT_EXIT_USAGE;
    }
    struct runs_db d;
    struct runs_table t;
    if (runs_db_open(&d, o->db, 0))
        return PTT_EXIT_USAGE;
    int rc = PTT_EXIT_USAGE;
    if (!runs_table_load(&d, n, refs, o->slower, &t) && !ptt_term_open(CMD, &o->term)) {
        size_t count[RC_COUNT] = {0}, slower = 0;
        for (size_t i = 0; i < t.nrows; i++) {
            count[t.rows[i].change]++;
            slower += (size_t)t.rows[i].slower;
        }
        ptt_term_pager(&o->term);
        if (o->json)
            compare_json(o, &t, count, slower);
        else
            compare_text(o, &d, &t, count, slower);
        rc = count[RC_NEW_FAILURE] ? 1 : 0;
        if (ptt_term_close(CMD, &o->term))
            rc = PTT_EXIT_USAGE;
    }
    runs_table_free(&t);
    runs_db_close(&d);
    return d.failed ? PTT_EXIT_USAGE : rc;
}
