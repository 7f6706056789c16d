/* ptt runs import: the logs of one run read by their formats' parsers, the traces of its failed
 * tests checked (ptt check --format=json), all stored in one transaction (docs/runs.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd/check.h"
#include "runs/cmd.h"
#include "runs/db.h"
#include "util/util.h"

#define CMD "runs"
#define LOG_MAX (1024L * 1024 * 1024) /* a log larger than this is no test log */

/* The whole file (or standard input for "-"), NUL-terminated; NULL having said why. *mtime: its
 * modification time (now for a pipe). */
static char *read_log(const char *path, size_t *len, time_t *mtime)
{
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        ptt_warn(CMD, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        ptt_warn(CMD, "%s is a directory, not a log", path);
        close(fd);
        return NULL;
    }
    *mtime = S_ISREG(st.st_mode) ? st.st_mtime : time(NULL);
    size_t cap = 1 << 16, n = 0;
    char *buf = ptt_must(malloc(cap + 1));
    ssize_t r;
    while ((r = read(fd, buf + n, cap - n)) > 0 || (r < 0 && errno == EINTR)) {
        n += r > 0 ? (size_t)r : 0;
        if (n == cap && cap < (size_t)LOG_MAX)
            buf = ptt_must(realloc(buf, (cap *= 2) + 1));
        else if (n == cap)
            break;
    }
    int e = errno;
    if (fd != STDIN_FILENO)
        close(fd);
    if (r < 0 || n == cap) {
        ptt_warn(CMD, r < 0 ? "cannot read %s: %s" : "%s is too large for a log (%s)", path,
                 r < 0 ? strerror(e) : "1 GiB or more");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) { /* UTF-8's byte-order mark: no text */
        memmove(buf, buf + 3, n - 2);
        n -= 3;
    }
    *len = n;
    return buf;
}

/* One log parsed into log; -1 having said why (as "LOG: ..."). */
static int parse_log(const char *path, const char *format, struct runs_log *log, time_t *mtime,
                     const char **used)
{
    size_t len;
    char *text = read_log(path, &len, mtime);
    if (!text)
        return -1;
    const struct runs_format *f =
        strcmp(format, "auto") ? runs_format_named(format) : runs_format_guess(text, len);
    char err[512] = "";
    int rc = -1;
    const char *nul = memchr(text, 0, len);
    if (!len)
        snprintf(err, sizeof err, "empty: no test result in it");
    else if (!f)
        snprintf(err, sizeof err,
                 "not a log ptt runs reads (OPTS, TAP or JUnit XML; "
                 "--format says which)");
    else if (nul && f != &runs_format_junit)
        snprintf(err, sizeof err, "not a text file (a NUL byte at offset %zu)",
                 (size_t)(nul - text));
    else {
        log->source = path;
        rc = f->parse(text, len, log, err, sizeof err);
        log->source = NULL;
    }
    if (rc || err[0]) /* an error, or a note on what was read */
        ptt_warn(CMD, "%s: %s", path, err);
    if (!rc)
        *used = f->name;
    free(text);
    return rc;
}

/* The trace of test name under dir (DIR/NAME.ptt), if there is one: a name that would leave
 * dir (an absolute one, "..") has none. */
static char *trace_in_dir(const char *dir, const char *name)
{
    if (name[0] == '/' || !strcmp(name, "..") || !strncmp(name, "../", 3) || strstr(name, "/../") ||
        (strlen(name) >= 3 && !strcmp(name + strlen(name) - 3, "/..")))
        return NULL;
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s.ptt", dir, name) >= (int)sizeof path ||
        stat(path, &st) || !S_ISREG(st.st_mode))
        return NULL;
    return ptt_must(strdup(path));
}

/* The test's trace, its path made absolute, checked: ptt check --format=json's findings. */
static void check_trace(struct runs_test *t, char *path)
{
    char *abs = realpath(path, NULL);
    free(path);
    if (!abs)
        return;
    t->trace = abs;
    char *json = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&json, &n);
    if (!m)
        return;
    t->check_status = ptt_check_file(abs, 1, NULL, m);
    fclose(m);
    if (n)
        t->findings = json;
    else
        free(json);
}

/* --trace-map=FILE: "TEST<tab>TRACE" lines (a relative TRACE from FILE's directory). */
static int trace_map(const char *file, struct runs_log *log, int *linked)
{
    FILE *f = fopen(file, "re");
    if (!f) {
        ptt_warn(CMD, "cannot read %s: %s", file, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(file, '/');
    int dl = slash ? (int)(slash - file) : 1;
    const char *dir = slash ? file : ".";
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    for (unsigned no = 1; (len = getline(&line, &cap, f)) >= 0; no++) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        char *tab = strchr(line, '\t');
        if (!len || line[0] == '#')
            continue;
        if (!tab || !tab[1]) {
            ptt_warn(CMD, "%s:%u: not a line 'TEST<tab>TRACE'", file, no);
            free(line);
            fclose(f);
            return -1;
        }
        struct runs_test *t = runs_log_find(log, line, (size_t)(tab - line));
        if (!t || t->trace || !runs_status_failure(t->status))
            continue;
        char *full;
        if (tab[1] == '/')
            full = ptt_must(strdup(tab + 1));
        else if (asprintf(&full, "%.*s/%s", dl, dir, tab + 1) < 0)
            full = ptt_must(NULL);
        check_trace(t, full);
        *linked += t->trace != NULL;
    }
    free(line);
    fclose(f);
    return 0;
}

static int link_traces(const struct runs_import_opts *o, struct runs_log *log, int *linked)
{
    *linked = 0;
    if (o->trace_dir) {
        struct stat st;
        if (stat(o->trace_dir, &st) || !S_ISDIR(st.st_mode)) {
            ptt_warn(CMD, "--trace=%s: not a directory", o->trace_dir);
            return -1;
        }
        for (size_t i = 0; i < log->n; i++) {
            struct runs_test *t = &log->tests[i];
            char *path =
                runs_status_failure(t->status) ? trace_in_dir(o->trace_dir, t->name) : NULL;
            if (path) {
                check_trace(t, path);
                *linked += t->trace != NULL;
            }
        }
    }
    return o->trace_map ? trace_map(o->trace_map, log, linked) : 0;
}

/* Whether a name is a whole number: a run's id names it too, and a name wins over an id. */
static int numeric(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* The run's name: --name, else the first log's file name (log-N for a number, its control
 * characters as '?'), made unique with -2, -3... */
static char *run_name(struct runs_db *d, const struct runs_import_opts *o, const char *log)
{
    char *probe = o->name ? ptt_must(strdup(o->name)) : NULL;
    int control = probe && ptt_unctrl(probe, strlen(probe), 0);
    free(probe);
    if (o->name && (numeric(o->name) || control)) {
        ptt_warn(CMD,
                 "--name=%s: give a name that is not a number (runs are named by their id "
                 "too) and has no control character",
                 numeric(o->name) ? o->name : "...");
        return NULL;
    }
    if (o->name) {
        int taken = *o->name ? runs_db_name_taken(d, o->name) : 1;
        if (taken) {
            if (taken > 0)
                ptt_warn(CMD, *o->name ? "%s: a run is named '%s' already" : "%s: --name is empty",
                         d->path, o->name);
            return NULL;
        }
        return ptt_must(strdup(o->name));
    }
    const char *base = strcmp(log, "-") ? strrchr(log, '/') : NULL;
    base = !strcmp(log, "-") ? "stdin" : base ? base + 1 : log;
    char *name;
    if (asprintf(&name, "%s%s", numeric(base) ? "log-" : "", base) < 0) /* log 1: run log-1 */
        name = ptt_must(NULL);
    ptt_unctrl(name, strlen(name), 0);
    char *first = name;
    int taken;
    for (unsigned k = 2; (taken = runs_db_name_taken(d, name)) > 0; k++) {
        if (name != first)
            free(name);
        if (asprintf(&name, "%s-%u", first, k) < 0)
            name = ptt_must(NULL);
    }
    if (name != first)
        free(first);
    if (taken < 0) {
        free(name);
        return NULL;
    }
    return name;
}

/* "448 PASS, 1 FAIL, ..." in the order of the statuses. */
static void print_counts(const struct runs_log *log)
{
    size_t count[RS_COUNT] = {0};
    for (size_t i = 0; i < log->n; i++)
        count[log->tests[i].status]++;
    const char *sep = "";
    for (int s = 0; s < RS_COUNT; s++)
        if (count[s]) {
            printf("%s%zu %s", sep, count[s], runs_status_name(s));
            sep = ", ";
        }
}

/* machine, date and command: the options, else what the logs say, else this machine's name,
 * the newest log's time, nothing. */
static void run_meta(const struct runs_import_opts *o, const struct runs_log *log, time_t mtime,
                     struct runs_meta *m, char *host, size_t hostlen, char *date, size_t datelen)
{
    struct utsname u;
    snprintf(host, hostlen, "%s", uname(&u) ? "unknown" : u.nodename);
    struct tm tm;
    strftime(date, datelen, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&mtime, &tm));
    m->machine = o->machine ? o->machine : log->machine ? log->machine : host;
    m->date = o->date ? o->date : log->date ? log->date : date;
    m->command = o->command ? o->command : log->command ? log->command : "";
}

/* The logs into log, their formats ("opts,tap") and paths (one a line) listed; -1 said. */
static int parse_logs(const struct runs_import_opts *o, int n, char **logs, struct runs_log *log,
                      time_t *last_mtime, char *formats, size_t flen, char **paths)
{
    size_t pl = 0;
    FILE *pf = ptt_must(open_memstream(paths, &pl));
    int rc = 0;
    formats[0] = 0;
    for (int i = 0; i < n && !rc; i++) {
        time_t mtime;
        const char *used = NULL;
        rc = parse_log(logs[i], o->format, log, &mtime, &used);
        if (!rc && (!i || mtime > *last_mtime))
            *last_mtime = mtime;
        if (!rc && !strstr(formats, used))
            snprintf(formats + strlen(formats), flen - strlen(formats), "%s%s",
                     formats[0] ? "," : "", used);
        fprintf(pf, "%s%s", i ? "\n" : "", logs[i]);
    }
    fclose(pf);
    if (!rc && !log->n) {
        ptt_warn(CMD, "%s%s: no test result in %s", logs[0], n > 1 ? "..." : "",
                 n > 1 ? "them" : "it");
        rc = -1;
    }
    return rc;
}

int runs_import(const struct runs_import_opts *o, int n, char **logs)
{
    if (n < 1) {
        ptt_warn(CMD, "import: which logs? (ptt runs import [OPTIONS] LOG...)");
        return PTT_EXIT_USAGE;
    }
    struct runs_log log = {0};
    char formats[64], *paths = NULL, *name = NULL;
    time_t mtime = time(NULL);
    int linked = 0, rc = PTT_EXIT_USAGE;
    struct runs_db d;
    if (parse_logs(o, n, logs, &log, &mtime, formats, sizeof formats, &paths) ||
        link_traces(o, &log, &linked) || runs_db_open(&d, o->db, 1))
        goto out;
    name = run_name(&d, o, logs[0]);
    char host[256], date[64];
    struct runs_meta m = {.name = name, .format = formats, .logs = paths};
    run_meta(o, &log, mtime, &m, host, sizeof host, date, sizeof date);
    long long id = name ? runs_db_insert(&d, &m, &log) : -1;
    runs_db_close(&d);
    if (id < 0)
        goto out;
    printf("run %lld %s: %zu test%s: ", id, name, log.n, log.n == 1 ? "" : "s");
    print_counts(&log);
    if (o->trace_dir || o->trace_map)
        printf("; failed tests with a trace, checked: %d", linked);
    printf("\n");
    rc = 0;
out:
    free(paths);
    free(name);
    runs_log_free(&log);
    return rc;
}
