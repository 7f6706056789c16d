/* The database of ptt runs (docs/runs.md, "The database"): SQLite, one file, its schema
 * versioned in its meta table. */
#ifndef PTT_RUNS_DB_H
#define PTT_RUNS_DB_H

#include <sqlite3.h>

#include "runs/runs.h"
#include "util/dynlib.h"

/* SQLite's functions, loaded when the first database is opened (util/dynlib.h): the code that
 * calls them reads as it would linked. */
/* clang-format off */
#define RUNS_SQLITE_FUNCS(X) \
    X(sqlite3_bind_double) X(sqlite3_bind_int) X(sqlite3_bind_int64) X(sqlite3_bind_null) \
    X(sqlite3_bind_text) X(sqlite3_busy_timeout) X(sqlite3_close) X(sqlite3_column_bytes) \
    X(sqlite3_column_double) X(sqlite3_column_int) X(sqlite3_column_int64) \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_errcode) X(sqlite3_errmsg) \
    X(sqlite3_exec) X(sqlite3_extended_result_codes) X(sqlite3_finalize) \
    X(sqlite3_last_insert_rowid) X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_reset) \
    X(sqlite3_step)
/* clang-format on */
struct runs_sqlite {
    RUNS_SQLITE_FUNCS(PTT_DYN_PTR)
};
extern struct runs_sqlite runs_sqlite;
#define sqlite3_bind_double (*runs_sqlite.sqlite3_bind_double)
#define sqlite3_bind_int (*runs_sqlite.sqlite3_bind_int)
#define sqlite3_bind_int64 (*runs_sqlite.sqlite3_bind_int64)
#define sqlite3_bind_null (*runs_sqlite.sqlite3_bind_null)
#define sqlite3_bind_text (*runs_sqlite.sqlite3_bind_text)
#define sqlite3_busy_timeout (*runs_sqlite.sqlite3_busy_timeout)
#define sqlite3_close (*runs_sqlite.sqlite3_close)
#define sqlite3_column_bytes (*runs_sqlite.sqlite3_column_bytes)
#define sqlite3_column_double (*runs_sqlite.sqlite3_column_double)
#define sqlite3_column_int (*runs_sqlite.sqlite3_column_int)
#define sqlite3_column_int64 (*runs_sqlite.sqlite3_column_int64)
#define sqlite3_column_text (*runs_sqlite.sqlite3_column_text)
#define sqlite3_column_type (*runs_sqlite.sqlite3_column_type)
#define sqlite3_errcode (*runs_sqlite.sqlite3_errcode)
#define sqlite3_errmsg (*runs_sqlite.sqlite3_errmsg)
#define sqlite3_exec (*runs_sqlite.sqlite3_exec)
#define sqlite3_extended_result_codes (*runs_sqlite.sqlite3_extended_result_codes)
#define sqlite3_finalize (*runs_sqlite.sqlite3_finalize)
#define sqlite3_last_insert_rowid (*runs_sqlite.sqlite3_last_insert_rowid)
#define sqlite3_open_v2 (*runs_sqlite.sqlite3_open_v2)
#define sqlite3_prepare_v2 (*runs_sqlite.sqlite3_prepare_v2)
#define sqlite3_reset (*runs_sqlite.sqlite3_reset)
#define sqlite3_step (*runs_sqlite.sqlite3_step)

#define RUNS_SCHEMA_VERSION 1
#define RUNS_MAX_COMPARED 10

struct runs_db {
    sqlite3 *db;
    const char *path;
    int failed; /* a read failed after the output began (runs_step): said, the status is 2 */
};

/* What the import says of a run besides its tests. */
struct runs_meta {
    const char *name, *machine, *date, *command, *format, *logs;
};

/* The database at path, opened for writing (write: created if missing, 0600, exclusively, never
 * through a symbolic link) or for reading. 0, or -1 having said why on stderr: a file that is
 * no SQLite database, a database that is not ptt runs', another version of the schema. */
int runs_db_open(struct runs_db *d, const char *path, int write);
void runs_db_close(struct runs_db *d);

/* The run ref names (its id, or its name): its id, or -1 having said why. */
long long runs_db_find(struct runs_db *d, const char *ref);
/* Whether a run has that name: 1, 0, or -1 having said why it cannot tell. */
int runs_db_name_taken(struct runs_db *d, const char *name);
/* The run and its tests, in one transaction: its id, or -1 having said why. */
long long runs_db_insert(struct runs_db *d, const struct runs_meta *m, const struct runs_log *log);

/* A statement on the database, or NULL having said why (the database's error). */
sqlite3_stmt *runs_db_prepare(struct runs_db *d, const char *sql);
/* sqlite3_step of a read: 1 a row, 0 the end; -1 on a failure (a damaged page, out of memory),
 * said once in one line and kept in d->failed, so that what was printed before stays and the
 * command ends with status 2, not as if the rows had ended. */
int runs_step(struct runs_db *d, sqlite3_stmt *st);
/* After a step that failed: says why, returns -1. */
int runs_db_error(struct runs_db *d, const char *what);
/* Column i as a string ("" for NULL). */
const char *runs_col(sqlite3_stmt *st, int i);

#endif
