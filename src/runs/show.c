/* ptt runs list and ptt runs show: the runs of the database, a run's tests (docs/runs.md). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/view.h"
#include "util/json.h"
#include "util/util.h"

#define CMD "runs"

static char *dup_col(sqlite3_stmt *st, int i)
{
    return ptt_must(strdup(runs_col(st, i)));
}

int runs_info_load(struct runs_db *d, long long id, struct runs_info *r)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    sqlite3_stmt *st = runs_db_prepare(
        d, "SELECT name, machine, date, command, format, logs, imported FROM runs WHERE id = ?");
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return runs_db_error(d, "cannot read a run");
    }
    char **f[] = {&r->name, &r->machine, &r->date, &r->command, &r->format, &r->logs, &r->imported};
    for (int i = 0; i < 7; i++)
        *f[i] = dup_col(st, i);
    sqlite3_finalize(st);
    st = runs_db_prepare(d, "SELECT status, count(*) FROM results WHERE run = ? GROUP BY status");
    if (!st) {
        runs_info_free(r);
        return -1;
    }
    sqlite3_bind_int64(st, 1, id);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int s = runs_status_parse(runs_col(st, 0));
        size_t n = (size_t)sqlite3_column_int64(st, 1);
        r->tests += n;
        if (s < 0)
            r->other += n;
        else
            r->counts[s] += n;
        if (runs_status_failure(s))
            r->failures += n;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return 0;
    runs_info_free(r); /* nothing of it is shown */
    return runs_db_error(d, "cannot read a run");
}

void runs_info_free(struct runs_info *r)
{
    char *f[] = {r->name, r->machine, r->date, r->command, r->format, r->logs, r->imported};
    for (int i = 0; i < 7; i++)
        free(f[i]);
    memset(r, 0, sizeof *r);
}

void runs_info_json(FILE *f, const struct runs_info *r, unsigned flags)
{
    fprintf(f, "{\"id\": %lld, \"name\": ", r->id);
    ptt_json_strn(f, r->name, SIZE_MAX, flags);
    const char *keys[] = {"machine", "date", "command", "format"};
    const char *vals[] = {r->machine, r->date, r->command, r->format};
    for (int i = 0; i < 4; i++) {
        fprintf(f, ", \"%s\": ", keys[i]);
        ptt_json_strn(f, vals[i], SIZE_MAX, flags);
    }
    fputs(", \"logs\": [", f);
    for (const char *p = r->logs, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
        nl = strchr(p, '\n');
        if (p != r->logs)
            fputs(", ", f);
        ptt_json_strn(f, p, nl ? (size_t)(nl - p) : strlen(p), flags);
    }
    fputs("], \"imported\": ", f);
    ptt_json_strn(f, r->imported, SIZE_MAX, flags);
    fprintf(f, ", \"tests\": %zu, \"failures\": %zu, \"counts\": {", r->tests, r->failures);
    const char *sep = "";
    for (int s = 0; s < RS_COUNT; s++)
        if (r->counts[s]) {
            fprintf(f, "%s\"%s\": %zu", sep, runs_status_name(s), r->counts[s]);
            sep = ", ";
        }
    if (r->other)
        fprintf(f, "%s\"other\": %zu", sep, r->other);
    fputs("}}", f);
}

void runs_counts_text(FILE *f, const struct runs_info *r)
{
    const char *sep = "";
    for (int s = 0; s < RS_COUNT; s++)
        if (r->counts[s]) {
            fprintf(f, "%s%zu %s", sep, r->counts[s], runs_status_name(s));
            sep = ", ";
        }
    if (r->other)
        fprintf(f, "%s%zu of other statuses", sep, r->other);
}

const char *runs_status_color(const char *status)
{
    if (!strcmp(status, "PASS"))
        return ptt_c(PTT_C_GREEN);
    return ptt_c(runs_status_name_failure(status) ? PTT_C_RED : PTT_C_YELLOW);
}

void runs_json_seconds(FILE *f, double s)
{
    if (s < 0)
        fputs("null", f);
    else
        fprintf(f, "%.6f", s);
}

static sqlite3_stmt *findings_of(struct runs_db *d, long long run, const char *test)
{
    sqlite3_stmt *st = runs_db_prepare(
        d, "SELECT kind, what, summary, count FROM findings WHERE run = ? AND test = ? "
           "ORDER BY rowid");
    if (st) {
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_text(st, 2, test, -1, SQLITE_TRANSIENT);
    }
    return st;
}

/* , "key": "value" */
static void json_str_field(FILE *f, const char *key, const char *value)
{
    fprintf(f, ", \"%s\": ", key);
    ptt_json_str(f, value);
}

void runs_findings_json(FILE *f, struct runs_db *d, long long run, const char *test)
{
    sqlite3_stmt *st = findings_of(d, run, test);
    fputc('[', f);
    for (int i = 0; st && runs_step(d, st) > 0; i++) {
        fputs(i ? ", {\"kind\": " : "{\"kind\": ", f);
        ptt_json_str(f, runs_col(st, 0));
        json_str_field(f, "what", runs_col(st, 1));
        json_str_field(f, "summary", runs_col(st, 2));
        fprintf(f, ", \"count\": %lld}", sqlite3_column_int64(st, 3));
    }
    fputc(']', f);
    sqlite3_finalize(st);
}

void runs_findings_text(FILE *f, struct runs_db *d, long long run, const char *test,
                        const char *indent)
{
    sqlite3_stmt *st = findings_of(d, run, test);
    while (st && runs_step(d, st) > 0) {
        /* a summary names the program's threads and objects as it named them (JSON's) */
        char *summary = ptt_must(strdup(runs_col(st, 2)));
        ptt_unctrl(summary, strlen(summary), 0);
        fprintf(f, "%s%s: %s\n", indent, runs_col(st, 0), summary);
        free(summary);
    }
    sqlite3_finalize(st);
}

/* ---- list ----------------------------------------------------------------------------------- */

static void list_text(const struct runs_info *r, size_t nr)
{
    printf("%4s  %-24s  %-25s  %-12s  %-6s  %6s  %s\n", "id", "name", "date", "machine", "format",
           "tests", "results");
    for (size_t i = 0; i < nr; i++) {
        printf("%4lld  %-24s  %-25s  %-12s  %-6s  %6zu  ", r[i].id, r[i].name, r[i].date,
               r[i].machine, r[i].format, r[i].tests);
        runs_counts_text(stdout, &r[i]);
        putchar('\n');
    }
}

int runs_list(const struct runs_view_opts *o)
{
    struct runs_db d;
    if (runs_db_open(&d, o->db, 0))
        return PTT_EXIT_USAGE;
    sqlite3_stmt *st = runs_db_prepare(&d, "SELECT id FROM runs ORDER BY id");
    struct runs_info *r = NULL;
    size_t nr = 0;
    int rc = st ? 0 : PTT_EXIT_USAGE;
    while (!rc && runs_step(&d, st) > 0) { /* what a failure leaves is listed, status 2 */
        r = ptt_must(realloc(r, (nr + 1) * sizeof *r));
        if (runs_info_load(&d, sqlite3_column_int64(st, 0), &r[nr++]))
            rc = PTT_EXIT_USAGE;
    }
    sqlite3_finalize(st);
    if (!rc && ptt_term_open(CMD, &o->term))
        rc = PTT_EXIT_USAGE;
    if (!rc) {
        ptt_term_pager(&o->term);
        if (o->json) {
            fputs("{\"database\": ", stdout);
            ptt_json_str(stdout, o->db);
            fputs(", \"runs\": [", stdout);
            for (size_t i = 0; i < nr; i++) {
                fputs(i ? ",\n  " : "\n  ", stdout);
                runs_info_json(stdout, &r[i], 0);
            }
            fputs("]}\n", stdout);
        } else
            list_text(r, nr);
        rc = ptt_term_close(CMD, &o->term) ? PTT_EXIT_USAGE : 0;
    }
    for (size_t i = 0; i < nr; i++)
        runs_info_free(&r[i]);
    free(r);
    runs_db_close(&d);
    return d.failed ? PTT_EXIT_USAGE : rc;
}

/* ---- show ----------------------------------------------------------------------------------- */

static void show_head(const struct runs_info *r)
{
    printf("run %lld %s (%s), on %s, %s\n", r->id, r->name, r->format, r->machine, r->date);
    if (*r->command)
        printf("command: %s\n", r->command);
    printf("%zu test%s: ", r->tests, r->tests == 1 ? "" : "s");
    runs_counts_text(stdout, r);
    printf("\n\n");
}

/* The output, each line indented. */
static void indented(const char *text, const char *indent)
{
    for (const char *p = text, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
        nl = strchr(p, '\n');
        printf("%s%.*s\n", indent, nl ? (int)(nl - p) : (int)strlen(p), p);
    }
}

static void show_test_text(const struct runs_view_opts *o, struct runs_db *d, long long run,
                           sqlite3_stmt *st)
{
    const char *status = runs_col(st, 1);
    printf("%s%-11s%s", runs_status_color(status), status, ptt_c(PTT_C_RESET));
    if (sqlite3_column_type(st, 3) == SQLITE_NULL)
        printf("%10s  ", "-");
    else
        printf("%8.3f s  ", sqlite3_column_double(st, 3));
    printf("%s\n", runs_col(st, 0));
    if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
        int cs = sqlite3_column_int(st, 6);
        printf("%23strace: %s (ptt check: %s)\n", "", runs_col(st, 5),
               cs == 0   ? "nothing found"
               : cs == 1 ? "found"
                         : "cannot read it all");
        runs_findings_text(stdout, d, run, runs_col(st, 0), "                         ");
    }
    if (o->output && *runs_col(st, 4))
        indented(runs_col(st, 4), "                       | ");
}

static void show_test_json(struct runs_db *d, long long run, sqlite3_stmt *st, int first)
{
    fputs(first ? "\n  {\"test\": " : ",\n  {\"test\": ", stdout);
    ptt_json_str(stdout, runs_col(st, 0));
    json_str_field(stdout, "status", runs_col(st, 1));
    json_str_field(stdout, "raw_status", runs_col(st, 2));
    fputs(", \"duration\": ", stdout);
    runs_json_seconds(
        stdout, sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 3));
    fputs(", \"output\": ", stdout);
    ptt_json_strn(stdout, runs_col(st, 4), (size_t)sqlite3_column_bytes(st, 4), 0);
    fprintf(stdout, ", \"output_cut\": %lld, \"trace\": ", sqlite3_column_int64(st, 7));
    if (sqlite3_column_type(st, 5) == SQLITE_NULL)
        fputs("null, \"check_status\": null, \"findings\": null}", stdout);
    else {
        ptt_json_str(stdout, runs_col(st, 5));
        fprintf(stdout, ", \"check_status\": %d, \"findings\": ", sqlite3_column_int(st, 6));
        runs_findings_json(stdout, d, run, runs_col(st, 0));
        fputc('}', stdout);
    }
}

static int show_tests(const struct runs_view_opts *o, struct runs_db *d, long long run)
{
    sqlite3_stmt *st = runs_db_prepare(
        d, "SELECT test, status, raw_status, duration, output, trace, check_status, output_cut "
           "FROM results WHERE run = ? ORDER BY rowid");
    if (!st)
        return PTT_EXIT_USAGE;
    sqlite3_bind_int64(st, 1, run);
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->failed && !runs_status_name_failure(runs_col(st, 1)))
            continue;
        if (o->json)
            show_test_json(d, run, st, !n);
        else
            show_test_text(o, d, run, st);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : (runs_db_error(d, "cannot read the results"), PTT_EXIT_USAGE);
}

int runs_show(const struct runs_view_opts *o, const char *ref)
{
    struct runs_db d;
    struct runs_info r;
    if (runs_db_open(&d, o->db, 0))
        return PTT_EXIT_USAGE;
    long long id = runs_db_find(&d, ref);
    if (id < 0 || runs_info_load(&d, id, &r)) {
        runs_db_close(&d);
        return PTT_EXIT_USAGE;
    }
    int rc = PTT_EXIT_USAGE;
    if (!ptt_term_open(CMD, &o->term)) {
        ptt_term_pager(&o->term);
        if (o->json) {
            fputs("{\"run\": ", stdout);
            runs_info_json(stdout, &r, 0);
            fputs(", \"tests\": [", stdout);
        } else
            show_head(&r);
        rc = show_tests(o, &d, id);
        if (o->json)
            fputs("]}\n", stdout);
        if (ptt_term_close(CMD, &o->term))
            rc = PTT_EXIT_USAGE;
    }
    runs_info_free(&r);
    runs_db_close(&d);
    return d.failed ? PTT_EXIT_USAGE : rc;
}
