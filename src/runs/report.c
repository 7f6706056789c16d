/* ptt runs report: one self-contained HTML page of up to ten runs (docs/runs.md, "The page"):
 * the runs, filters (status, name, runs shown, only the tests whose status differs) and the
 * comparison table, drawn by the embedded script (runs_report.js) from the data written here.
 * Nothing is loaded from elsewhere. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/view.h"
#include "util/json.h"
#include "util/util.h"

#define CMD "runs"
#define CELL_OUTPUT_MAX 8192 /* of a test's output in the page; the database has more */

extern const unsigned char ptt_runs_js[], ptt_runs_css[];

static void jstr(FILE *f, const char *s, size_t n)
{
    ptt_json_strn(f, s, n, PTT_JSON_HTML);
}

/* {"status", "output", "trace", "findings": [...]} of a test that did not pass in a run. */
static void cell_json(FILE *f, struct runs_db *d, sqlite3_stmt *st, long long run, const char *test)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_text(st, 2, test, -1, SQLITE_STATIC);
    if (runs_step(d, st) <= 0) { /* no such cell (a failure is said) */
        fputs("null", f);
        return;
    }
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    fputs("{\"output\": ", f);
    jstr(f, runs_col(st, 0), n < CELL_OUTPUT_MAX ? n : CELL_OUTPUT_MAX);
    fprintf(f, ", \"cut\": %s, \"raw\": ",
            n > CELL_OUTPUT_MAX || sqlite3_column_int64(st, 3) ? "true" : "false");
    jstr(f, runs_col(st, 2), SIZE_MAX);
    fputs(", \"trace\": ", f);
    if (sqlite3_column_type(st, 1) == SQLITE_NULL)
        fputs("null, \"findings\": []}", f);
    else {
        jstr(f, runs_col(st, 1), SIZE_MAX);
        fputs(", \"findings\": [", f);
        sqlite3_stmt *fs = runs_db_prepare(
            d, "SELECT kind, summary FROM findings WHERE run = ? AND test = ? ORDER BY rowid");
        if (fs) {
            sqlite3_bind_int64(fs, 1, run);
            sqlite3_bind_text(fs, 2, test, -1, SQLITE_STATIC);
        }
        for (int i = 0; fs && runs_step(d, fs) > 0; i++) {
            fputs(i ? ", [" : "[", f);
            jstr(f, runs_col(fs, 0), SIZE_MAX);
            fputs(", ", f);
            jstr(f, runs_col(fs, 1), SIZE_MAX);
            fputc(']', f);
        }
        sqlite3_finalize(fs);
        fputs("]}", f);
    }
}

static void row_json(FILE *f, struct runs_db *d, sqlite3_stmt *st, const struct runs_table *t,
                     const struct runs_row *r)
{
    fputs("{\"test\": ", f);
    jstr(f, r->test, SIZE_MAX);
    fprintf(f, ", \"change\": \"%s\", \"slower\": %s, \"statuses\": [", runs_change_name(r->change),
            r->slower ? "true" : "false");
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ", " : "", f);
        if (r->status[i])
            jstr(f, r->status[i], SIZE_MAX);
        else
            fputs("null", f);
    }
    fputs("], \"durations\": [", f);
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ", " : "", f);
        runs_json_seconds(f, r->duration[i]);
    }
    fputs("], \"cells\": [", f);
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ", " : "", f);
        if (r->status[i] && strcmp(r->status[i], "PASS"))
            cell_json(f, d, st, t->run[i].id, r->test);
        else
            fputs("null", f);
    }
    fputs("]}", f);
}

static int write_data(FILE *f, struct runs_db *d, const struct runs_table *t)
{
    sqlite3_stmt *st = runs_db_prepare(
        d, "SELECT output, trace, raw_status, output_cut FROM results WHERE run = ? AND test = ?");
    if (!st)
        return -1;
    fputs("{\"database\": ", f);
    jstr(f, d->path, SIZE_MAX);
    fprintf(f, ", \"slower_percent\": %g, \"failures\": [", t->slower);
    for (int s = 0, k = 0; s < RS_COUNT; s++)
        if (runs_status_failure(s))
            fprintf(f, "%s\"%s\"", k++ ? ", " : "", runs_status_name(s));
    fputs("], \"runs\": [", f);
    for (int i = 0; i < t->n; i++) {
        fputs(i ? ",\n" : "\n", f);
        runs_info_json(f, &t->run[i], PTT_JSON_HTML);
    }
    fputs("],\n\"tests\": [", f);
    for (size_t i = 0; i < t->nrows; i++) {
        fputs(i ? ",\n" : "\n", f);
        row_json(f, d, st, t, &t->rows[i]);
    }
    fputs("]}", f);
    sqlite3_finalize(st);
    return 0;
}

static int write_page(FILE *f, struct runs_db *d, const struct runs_table *t)
{
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>ptt runs: %d runs, %zu tests</title>\n<style>\n%s</style>\n</head>\n<body>\n"
            "<main id=\"main\"><noscript><p>The table is drawn by the page's script: allow "
            "JavaScript for this file.</p></noscript></main>\n"
            "<script type=\"application/json\" id=\"runs-data\">",
            t->n, t->nrows, (const char *)ptt_runs_css);
    if (write_data(f, d, t))
        return -1;
    fprintf(f, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", (const char *)ptt_runs_js);
    return 0;
}

/* The ids of the last ten runs, oldest first, as refs. */
static int last_runs(struct runs_db *d, char refs[][24])
{
    sqlite3_stmt *st = runs_db_prepare(
        d, "SELECT id FROM (SELECT id FROM runs ORDER BY id DESC LIMIT ?) ORDER BY id");
    if (!st)
        return -1;
    sqlite3_bind_int(st, 1, RUNS_MAX_COMPARED);
    int n = 0;
    int k;
    while ((k = runs_step(d, st)) > 0)
        snprintf(refs[n++], 24, "%lld", sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    if (k < 0)
        return -1;
    if (!n)
        ptt_warn(CMD, "%s has no run (ptt runs import adds them)", d->path);
    return n ? n : -1;
}

int runs_report(const struct runs_view_opts *o, int n, char **refs)
{
    if (!o->term.output) {
        ptt_warn(CMD, "report: -o FILE.html says where the page goes");
        return PTT_EXIT_USAGE;
    }
    struct runs_db d;
    struct runs_table t = {0};
    if (runs_db_open(&d, o->db, 0))
        return PTT_EXIT_USAGE;
    char last[RUNS_MAX_COMPARED][24], *lastp[RUNS_MAX_COMPARED];
    if (!n) {
        n = last_runs(&d, last);
        for (int i = 0; i < n; i++)
            lastp[i] = last[i];
        refs = lastp;
    }
    int rc = PTT_EXIT_USAGE;
    struct ptt_term term = o->term;
    term.no_pager = 1;
    if (n > 0 && !runs_table_load(&d, n, refs, o->slower, &t) && !ptt_term_open(CMD, &term)) {
        rc = write_page(stdout, &d, &t) ? PTT_EXIT_USAGE : 0;
        if (ptt_term_close(CMD, &term))
            rc = PTT_EXIT_USAGE;
    }
    runs_table_free(&t);
    runs_db_close(&d);
    return d.failed ? PTT_EXIT_USAGE : rc;
}
