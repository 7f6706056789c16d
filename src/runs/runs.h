/* ptt runs: test runs read from their logs (the Open POSIX Test Suite's, TAP, JUnit XML) into an
 * SQLite database, listed, shown, compared and put into an HTML page (docs/runs.md). */
#ifndef PTT_RUNS_H
#define PTT_RUNS_H

#include <stddef.h>

/* The statuses a test can have in the database, whatever the log's format: X(NAME, failure).
 * A failure is what a comparison calls a new failure or a fix (docs/runs.md, "Statuses"). */
#define PTT_RUNS_STATUSES(X) \
    X(PASS, 0)               \
    X(FAIL, 1)               \
    X(ERROR, 1)              \
    X(UNRESOLVED, 1)         \
    X(TIMEOUT, 1)            \
    X(CRASH, 1)              \
    X(BUILDFAIL, 1)          \
    X(UNSUPPORTED, 0)        \
    X(UNTESTED, 0)           \
    X(SKIP, 0)               \
    X(XFAIL, 0)              \
    X(XPASS, 0)

enum runs_status {
#define RUNS_ST_ENUM(name, failure) RS_##name,
    PTT_RUNS_STATUSES(RUNS_ST_ENUM)
#undef RUNS_ST_ENUM
        RS_COUNT
};

const char *runs_status_name(int status);
/* The status of that name, or -1. */
int runs_status_parse(const char *name);
int runs_status_failure(int status);
/* The same for a name from the database (an unknown one is no failure). */
int runs_status_name_failure(const char *name);

/* The longest output kept for one test: the rest is counted, not stored. */
#define RUNS_OUTPUT_MAX (64 * 1024)

/* One test's result, as a parser found it. */
struct runs_test {
    char *name;
    int status;        /* RS_* */
    char *raw;         /* the status as the log wrote it */
    double duration;   /* seconds; < 0: the log does not say */
    char *output;      /* what the log holds of its output, NUL-terminated */
    size_t output_len; /* bytes kept */
    size_t output_cut; /* bytes left out beyond RUNS_OUTPUT_MAX */
    /* Filled by the import from --trace: the test's trace and ptt check's verdict on it. */
    char *trace;
    int check_status; /* ptt check's exit status; -1: not checked */
    char *findings;   /* ptt check --format=json */
};

/* The results of one run, read from its logs. */
struct runs_log {
    struct runs_test *tests;
    size_t n, cap;
    /* What the logs say of the run (NULL: they do not): the options and defaults of the
     * import fill the rest. */
    char *machine, *date, *command;
    const char *source; /* the file of the log being parsed: a test may be named after it */
    /* Names to tests: an open-addressing table of indexes + 1 (0: empty). */
    size_t *index, index_cap;
};

/* The test called name (len bytes), or NULL. */
struct runs_test *runs_log_find(struct runs_log *log, const char *name, size_t len);
/* A new test; a name already taken gets " [2]", " [3]"... (TAP and JUnit may repeat one). */
struct runs_test *runs_log_add(struct runs_log *log, const char *name, size_t len, int status,
                               const char *raw);
/* Append len bytes to the test's output (kept up to RUNS_OUTPUT_MAX, the rest counted). */
void runs_test_output(struct runs_test *t, const char *text, size_t len);
/* Set *field (machine, date, command) to a copy of len bytes of s, unless it is set already. */
void runs_log_info(char **field, const char *s, size_t len);
void runs_log_free(struct runs_log *log);

/* A log's format: its parser. The text is the whole file, NUL-terminated (len bytes without
 * the NUL). parse adds the tests to log and returns 0, or -1 with one line in err (no
 * "path:" prefix: the caller adds it). probe says whether the text looks like the format. */
struct runs_format {
    const char *name;
    int (*probe)(const char *text, size_t len);
    int (*parse)(const char *text, size_t len, struct runs_log *log, char *err, size_t errlen);
};

extern const struct runs_format runs_format_opts, runs_format_tap, runs_format_junit;

/* The format of that name ("opts", "tap", "junit"), or NULL. */
const struct runs_format *runs_format_named(const char *name);
/* The format the text looks like, or NULL. */
const struct runs_format *runs_format_guess(const char *text, size_t len);

/* Helpers of the parsers: the line at p (up to end): its length without the newline, and
 * where the next line starts. */
size_t runs_line(const char *p, const char *end, const char **next);
/* s (len bytes) for an error message, at most cap - 1 bytes: control bytes as '?', and "..."
 * when cut. */
const char *runs_excerpt(char *dst, size_t cap, const char *s, size_t len);
/* A number of seconds ("0.25", "12"), >= 0; -1 when s (len bytes) is not one. */
double runs_seconds(const char *s, size_t len);

#endif
