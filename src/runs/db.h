/* The database of ptt runs (docs/runs.md, "The database"): SQLite, one file, its schema
 * versioned in its meta table. */
#ifndef PTT_RUNS_DB_H
#define PTT_RUNS_DB_H

#include <sqlite3.h>

#include "runs/runs.h"

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
