/* The database of ptt runs: made and checked (docs/runs.md, "The database"), runs found and
 * inserted. The file is created as ptt trace creates its trace (docs/security.md): exclusively,
 * mode 0600, and neither it nor an existing one is opened through a symbolic link. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runs/db.h"
#include "util/util.h"

#define CMD "runs"

/* Version 1 of the schema; docs/runs.md shows it. */
static const char schema[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL UNIQUE,\n"
    "  machine TEXT NOT NULL,\n"
    "  date TEXT NOT NULL,\n"
    "  command TEXT NOT NULL,\n"
    "  format TEXT NOT NULL,\n"
    "  logs TEXT NOT NULL,\n"
    "  imported TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE results (\n"
    "  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  test TEXT NOT NULL,\n"
    "  status TEXT NOT NULL,\n"
    "  raw_status TEXT NOT NULL,\n"
    "  duration REAL,\n"
    "  output TEXT NOT NULL,\n"
    "  output_cut INTEGER NOT NULL,\n"
    "  trace TEXT,\n"
    "  check_status INTEGER,\n"
    "  findings TEXT,\n"
    "  PRIMARY KEY (run, test)\n"
    ");\n"
    "CREATE TABLE findings (\n"
    "  run INTEGER NOT NULL,\n"
    "  test TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL,\n"
    "  what TEXT NOT NULL,\n"
    "  summary TEXT NOT NULL,\n"
    "  count INTEGER NOT NULL,\n"
    "  FOREIGN KEY (run, test) REFERENCES results(run, test) ON DELETE CASCADE\n"
    ");\n"
    "CREATE INDEX results_test ON results(test);\n"
    "INSERT INTO meta VALUES ('format', 'ptt runs'), ('version', '1');\n";

sqlite3_stmt *runs_db_prepare(struct runs_db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) {
        runs_db_error(d, "cannot read it");
        d->failed = 1; /* the command ends with status 2, after what it printed */
        return NULL;
    }
    return st;
}

int runs_step(struct runs_db *d, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return rc == SQLITE_ROW;
    if (!d->failed)
        runs_db_error(d, "cannot read it");
    d->failed = 1;
    return -1;
}

int runs_db_error(struct runs_db *d, const char *what)
{
    int code = sqlite3_errcode(d->db);
    if (code == SQLITE_NOTADB)
        ptt_warn(CMD, "%s is not an SQLite database", d->path);
    else
        ptt_warn(CMD, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->db));
    return -1;
}

const char *runs_col(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

/* The file: made when missing and write (1: made), 0: there; -1 said. */
static int make_file(const char *path, int write)
{
    struct stat st;
    if (!lstat(path, &st)) {
        if (S_ISLNK(st.st_mode)) {
            ptt_warn(CMD, "%s is a symbolic link: ptt runs opens no database through one", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            ptt_warn(CMD, "%s is not a regular file", path);
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT || !write) {
        ptt_warn(CMD, "%s: %s%s", path, strerror(errno),
                 errno == ENOENT ? " (ptt runs import makes it)" : "");
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        ptt_warn(CMD, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    return 1;
}

/* The meta table says ptt runs, this version; or the database is empty and write: the schema
 * made. 0, or -1 said. */
static int check_schema(struct runs_db *d, int write)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && !sqlite3_column_int(st, 0) && write) {
        sqlite3_finalize(st);
        if (sqlite3_exec(d->db, "BEGIN", 0, 0, 0) != SQLITE_OK ||
            sqlite3_exec(d->db, schema, 0, 0, 0) != SQLITE_OK ||
            sqlite3_exec(d->db, "COMMIT", 0, 0, 0) != SQLITE_OK)
            return runs_db_error(d, "cannot make its tables");
        return 0;
    }
    if (rc != SQLITE_OK || sqlite3_errcode(d->db) == SQLITE_NOTADB) {
        sqlite3_finalize(st);
        return runs_db_error(d, "cannot read it");
    }
    sqlite3_finalize(st);
    st = NULL;
    rc = sqlite3_prepare_v2(d->db,
                            "SELECT (SELECT value FROM meta WHERE key = 'format'),"
                            " (SELECT value FROM meta WHERE key = 'version')",
                            -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    const char *format = rc == SQLITE_ROW ? runs_col(st, 0) : "";
    /* No meta table is SQLITE_ERROR; another failure (out of memory, I/O) is not the file's */
    if ((rc != SQLITE_ROW && rc != SQLITE_ERROR) || sqlite3_errcode(d->db) == SQLITE_NOMEM) {
        sqlite3_finalize(st);
        return runs_db_error(d, "cannot read it");
    }
    if (rc != SQLITE_ROW || strcmp(format, "ptt runs")) {
        sqlite3_finalize(st);
        ptt_warn(CMD, "%s is an SQLite database, but not one of ptt runs (no meta table saying so)",
                 d->path);
        return -1;
    }
    int version = atoi(runs_col(st, 1));
    int nomem = sqlite3_errcode(d->db) == SQLITE_NOMEM; /* the column's text could not be had */
    sqlite3_finalize(st);
    if (nomem)
        return runs_db_error(d, "cannot read it");
    if (version != RUNS_SCHEMA_VERSION) {
        ptt_warn(CMD, "%s has version %d of the schema of ptt runs; this ptt reads version %d",
                 d->path, version, RUNS_SCHEMA_VERSION);
        return -1;
    }
    return 0;
}

struct runs_sqlite runs_sqlite;

static const char *const runs_sqlite_names[] = {RUNS_SQLITE_FUNCS(PTT_DYN_NAME)};

#ifndef PTT_SQLITE_SONAME
#define PTT_SQLITE_SONAME "libsqlite3.so.0"
#endif
static struct ptt_dynlib sqlite_lib = PTT_DYNLIB(PTT_SQLITE_SONAME, runs_sqlite, runs_sqlite_names);

int runs_db_open(struct runs_db *d, const char *path, int write)
{
    d->db = NULL;
    d->path = path;
    d->failed = 0;
    if (!ptt_dynlib_load(&sqlite_lib)) {
        ptt_warn(CMD, "cannot load SQLite, which ptt runs needs: %s", sqlite_lib.why);
        return -1;
    }
    int made = make_file(path, write);
    if (made < 0)
        return -1;
    int flags = (write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOFOLLOW;
    if (sqlite3_open_v2(path, &d->db, flags, NULL) != SQLITE_OK) {
        ptt_warn(CMD, "cannot open %s: %s", path, d->db ? sqlite3_errmsg(d->db) : "out of memory");
    } else {
        sqlite3_busy_timeout(d->db, 10000);
        sqlite3_extended_result_codes(d->db, 0);
        if (!check_schema(d, write))
            return 0;
    }
    runs_db_close(d);
    if (made)
        unlink(path);
    return -1;
}

void runs_db_close(struct runs_db *d)
{
    if (d->db)
        sqlite3_close(d->db);
    d->db = NULL;
}

long long runs_db_find(struct runs_db *d, const char *ref)
{
    sqlite3_stmt *st =
        runs_db_prepare(d, "SELECT id FROM runs WHERE name = ?1 UNION ALL "
                           "SELECT id FROM runs WHERE CAST(id AS TEXT) = ?1 AND NOT EXISTS "
                           "(SELECT 1 FROM runs WHERE name = ?1)");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    long long id = -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_DONE)
        ptt_warn(CMD, "%s: no run '%s' (ptt runs list shows them)", d->path, ref);
    else
        runs_db_error(d, "cannot read it");
    sqlite3_finalize(st);
    return id;
}

int runs_db_name_taken(struct runs_db *d, const char *name)
{
    sqlite3_stmt *st = runs_db_prepare(d, "SELECT 1 FROM runs WHERE name = ?1");
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int taken = runs_step(d, st);
    sqlite3_finalize(st);
    return taken;
}

static int insert_run(struct runs_db *d, const struct runs_meta *m)
{
    sqlite3_stmt *st = runs_db_prepare(
        d, "INSERT INTO runs (name, machine, date, command, format, logs, imported) "
           "VALUES (?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))");
    if (!st)
        return -1;
    const char *v[] = {m->name, m->machine, m->date, m->command, m->format, m->logs};
    for (int i = 0; i < 6; i++)
        sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : runs_db_error(d, "cannot add the run");
}

static int insert_test(struct runs_db *d, sqlite3_stmt *res, sqlite3_stmt *fnd, long long id,
                       const struct runs_test *t)
{
    sqlite3_reset(res);
    sqlite3_bind_int64(res, 1, id);
    sqlite3_bind_text(res, 2, t->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(res, 3, runs_status_name(t->status), -1, SQLITE_STATIC);
    sqlite3_bind_text(res, 4, t->raw, -1, SQLITE_STATIC);
    if (t->duration >= 0)
        sqlite3_bind_double(res, 5, t->duration);
    else
        sqlite3_bind_null(res, 5);
    sqlite3_bind_text(res, 6, t->output, (int)t->output_len, SQLITE_STATIC);
    sqlite3_bind_int64(res, 7, (long long)t->output_cut);
    sqlite3_bind_text(res, 8, t->trace, -1, SQLITE_STATIC); /* NULL binds NULL */
    if (t->check_status >= 0)
        sqlite3_bind_int(res, 9, t->check_status);
    else
        sqlite3_bind_null(res, 9);
    sqlite3_bind_text(res, 10, t->findings, -1, SQLITE_STATIC);
    if (sqlite3_step(res) != SQLITE_DONE)
        return runs_db_error(d, "cannot add a result");
    if (!t->findings)
        return 0;
    sqlite3_reset(fnd);
    sqlite3_bind_int64(fnd, 1, id);
    sqlite3_bind_text(fnd, 2, t->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(fnd, 3, t->findings, -1, SQLITE_STATIC);
    return sqlite3_step(fnd) == SQLITE_DONE ? 0 : runs_db_error(d, "cannot add the findings");
}

static int insert_tests(struct runs_db *d, long long id, const struct runs_log *log)
{
    sqlite3_stmt *res = runs_db_prepare(
        d, "INSERT INTO results (run, test, status, raw_status, duration, output, output_cut, "
           "trace, check_status, findings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    /* ptt check --format=json's findings, one row each (its JSON is valid: ptt writes it). */
    sqlite3_stmt *fnd = runs_db_prepare(
        d, "INSERT INTO findings (run, test, kind, what, summary, count) "
           "SELECT ?1, ?2, json_extract(value, '$.kind'), json_extract(value, '$.what'), "
           "json_extract(value, '$.summary'), json_extract(value, '$.count') "
           "FROM json_each(CASE WHEN json_valid(?3) THEN ?3 ELSE '{}' END, '$.findings')");
    int rc = res && fnd ? 0 : -1;
    for (size_t i = 0; !rc && i < log->n; i++)
        rc = insert_test(d, res, fnd, id, &log->tests[i]);
    sqlite3_finalize(res);
    sqlite3_finalize(fnd);
    return rc;
}

long long runs_db_insert(struct runs_db *d, const struct runs_meta *m, const struct runs_log *log)
{
    if (sqlite3_exec(d->db, "BEGIN IMMEDIATE", 0, 0, 0) != SQLITE_OK) {
        runs_db_error(d, "cannot write it");
        return -1;
    }
    long long id = -1;
    if (!insert_run(d, m)) {
        id = sqlite3_last_insert_rowid(d->db);
        if (insert_tests(d, id, log))
            id = -1;
    }
    if (id >= 0 && sqlite3_exec(d->db, "COMMIT", 0, 0, 0) != SQLITE_OK) {
        runs_db_error(d, "cannot write it");
        id = -1;
    }
    if (id < 0)
        sqlite3_exec(d->db, "ROLLBACK", 0, 0, 0);
    return id;
}
