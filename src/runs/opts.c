/* The Open POSIX Test Suite's logs (docs/runs.md, "OPTS"): its bin/run-tests.sh writes
 *
 *   conformance/interfaces/sem_post/sem_post_1-1: execution: PASS
 *   conformance/interfaces/sem_wait/sem_wait_3-1: execution: FAILED: Output:
 *   <what the test printed>
 *
 * and its build "conformance/interfaces/sem_wait/3-1 compile PASSED" (or "compile FAILED;
 * SKIPPING" and the compiler's messages). make opts's runner adds "NAME: duration: SECONDS"
 * after each test. A test is named after its source file: .../sem_wait/3-1. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/runs.h"
#include "util/util.h"

enum rec_kind { REC_NONE, REC_EXEC, REC_COMPILE_PASS, REC_COMPILE_FAIL, REC_DURATION, REC_SUMMARY };

struct rec {
    enum rec_kind kind;
    const char *name; /* the test's name as the log writes it */
    size_t name_len;
    int status, output; /* REC_EXEC: the status; an output follows */
    const char *raw;
    size_t raw_len;
    double seconds; /* REC_DURATION */
    long total;     /* REC_SUMMARY: a directory's TOTAL line, else 0 */
};

/* run-tests.sh's messages, as it writes them after "execution: ". */
static const struct {
    const char *word;
    int status;
} words[] = {{"PASS", RS_PASS},
             {"FAILED", RS_FAIL},
             {"UNRESOLVED", RS_UNRESOLVED},
             {"UNSUPPORTED", RS_UNSUPPORTED},
             {"UNTESTED", RS_UNTESTED},
             {"HUNG", RS_TIMEOUT},
             {"SIGNALED", RS_CRASH},
             {"EXITED ABNORMALLY", RS_ERROR},
             {"SKIPPED (test not present)", RS_SKIP}};

static int starts(const char *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    return len >= n && !memcmp(p, s, n);
}

static int ends(const char *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    return len >= n && !memcmp(p + len - n, s, n);
}

/* "STATUS", "STATUS: Output:" (the log) or "STATUS " (run-tests.sh's standard output). */
static int exec_status(const char *p, size_t len, struct rec *r)
{
    while (len && p[len - 1] == ' ')
        len--;
    r->output = ends(p, len, ": Output:");
    if (r->output)
        len -= strlen(": Output:");
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i].word) == len && !memcmp(p, words[i].word, len)) {
            r->status = words[i].status;
            r->raw = p;
            r->raw_len = len;
            r->kind = REC_EXEC;
            return 1;
        }
    return 0;
}

/* The summary run-tests.sh prints for each directory, when its standard output is imported;
 * *total: the count of its TOTAL line, else 0. */
static int summary_line(const char *p, size_t len, long *total)
{
    *total = 0;
    size_t i = 0;
    while (i < len && p[i] == '*')
        i++;
    if (i == len && len)
        return 1;
    if (starts(p, len, "Testing ") && !memchr(p + 8, ' ', len - 8))
        return 1;
    for (const char *const *w = (const char *const[]){"PASS", "FAIL", "TOTAL", NULL}; *w; w++)
        if (starts(p, len, *w)) {
            size_t k = strlen(*w);
            while (k < len && (p[k] == '\t' || p[k] == ' '))
                k++;
            if (k > strlen(*w) && k < len && strspn(p + k, "0123456789") == len - k) {
                if (**w == 'T')
                    *total = strtol(p + k, NULL, 10); /* LONG_MAX at most */
                return 1;
            }
        }
    return 0;
}

/* The line (p, len) as a record of the log, from its first byte. */
static struct rec record(const char *p, size_t len)
{
    struct rec r = {.kind = REC_NONE};
    size_t n = 0;
    while (n < len && p[n] != ' ' && p[n] != '\t')
        n++;
    r.name = p;
    if (summary_line(p, len, &r.total)) {
        r.kind = REC_SUMMARY;
        return r;
    }
    if (n < 2 || n == len)
        return r;
    const char *rest = p + n;
    size_t rl = len - n;
    if (p[n - 1] == ':') {
        r.name_len = n - 1;
        if (starts(rest, rl, " execution: "))
            exec_status(rest + 12, rl - 12, &r);
        else if (starts(rest, rl, " duration: ") &&
                 (r.seconds = runs_seconds(rest + 11, rl - 11)) >= 0)
            r.kind = REC_DURATION;
    } else if (starts(rest, rl, " compile ")) {
        r.name_len = n;
        if (rl == 9 + 6 && ends(rest, rl, "PASSED"))
            r.kind = REC_COMPILE_PASS;
        else if (ends(rest, rl, "FAILED; SKIPPING") && rl == 9 + 16)
            r.kind = REC_COMPILE_FAIL;
    }
    return r;
}

/* The test's name from the log's: .../sem_wait/sem_wait_3-1 -> .../sem_wait/3-1 (the build's
 * name, its source); a speculative test's prefix is DIR_speculative_. */
static void test_name(const char *name, size_t len, char *out, size_t cap)
{
    const char *slash = memrchr(name, '/', len);
    snprintf(out, cap, "%.*s", (int)len, name);
    if (!slash || slash == name)
        return;
    size_t dl = (size_t)(slash - name);
    const char *d = memrchr(name, '/', dl);
    d = d ? d + 1 : name;
    char prefix[300];
    int pl = snprintf(prefix, sizeof prefix, "%.*s_", (int)(name + dl - d), d);
    if (!strcmp(prefix, "speculative_") && d > name + 1) {
        const char *pd = memrchr(name, '/', (size_t)(d - 1 - name));
        pd = pd ? pd + 1 : name;
        pl = snprintf(prefix, sizeof prefix, "%.*s_speculative_", (int)(d - 1 - pd), pd);
    }
    const char *base = slash + 1;
    size_t bl = len - dl - 1;
    if (pl > 0 && (size_t)pl < bl && !memcmp(base, prefix, (size_t)pl) && pl < (int)sizeof prefix)
        snprintf(out, cap, "%.*s%.*s", (int)(dl + 1), name, (int)(bl - (size_t)pl), base + pl);
}

struct opts_state {
    struct runs_log *log;
    struct runs_test *out; /* the test whose output the lines are, or NULL */
    char top[128];         /* the first component of the names ("conformance/") */
    long total;            /* the summaries' TOTALs */
    size_t ran;            /* the tests with a result, each once */
};

/* A record found glued to the end of an output line (a test that printed no final newline):
 * where it starts, from the names' first component. */
static const char *glued_record(const struct opts_state *s, const char *p, size_t len,
                                struct rec *r)
{
    size_t tl = strlen(s->top);
    if (!tl)
        return NULL;
    for (const char *q = p + 1; q + tl <= p + len; q++) {
        q = memmem(q, (size_t)(p + len - q), s->top, tl);
        if (!q)
            return NULL;
        *r = record(q, (size_t)(p + len - q));
        if (r->kind != REC_NONE && r->kind != REC_SUMMARY)
            return q;
    }
    return NULL;
}

static void apply(struct opts_state *s, const struct rec *r)
{
    char name[1024];
    test_name(r->name, r->name_len, name, sizeof name);
    if (!s->top[0]) {
        const char *slash = memchr(name, '/', strlen(name));
        if (slash && (size_t)(slash - name) + 1 < sizeof s->top)
            snprintf(s->top, sizeof s->top, "%.*s", (int)(slash - name + 1), name);
    }
    struct runs_test *t = runs_log_find(s->log, name, strlen(name));
    s->out = NULL;
    if (r->kind == REC_DURATION) {
        if (t)
            t->duration = r->seconds;
    } else if (r->kind == REC_COMPILE_FAIL) {
        if (!t)
            s->out = runs_log_add(s->log, name, strlen(name), RS_BUILDFAIL, "compile FAILED");
    } else if (r->kind == REC_EXEC) {
        char raw[64];
        snprintf(raw, sizeof raw, "%.*s", (int)r->raw_len, r->raw);
        if (!t) {
            t = runs_log_add(s->log, name, strlen(name), r->status, raw);
            s->ran++;
        } else { /* the build failed and a test ran all the same, or a log given twice */
            free(t->raw);
            t->raw = ptt_must(strdup(raw));
            t->status = r->status;
            t->duration = -1; /* the earlier run's is not this one's */
            t->output_len = t->output_cut = 0;
            t->output[0] = 0;
        }
        s->out = r->output ? t : NULL;
    }
}

static int opts_parse(const char *text, size_t len, struct runs_log *log, char *err, size_t errlen)
{
    struct opts_state s = {.log = log};
    const char *p = text, *end = text + len, *next;
    for (unsigned no = 1; p < end; p = next, no++) {
        size_t ll = runs_line(p, end, &next);
        struct rec r = record(p, ll);
        const char *at = p;
        if (r.kind == REC_NONE && s.out && !(at = glued_record(&s, p, ll, &r)))
            r.kind = REC_NONE;
        if (next == end && end[-1] != '\n' && !s.out) {
            snprintf(err, errlen, "line %u has no end: the log is cut short", no);
            return -1;
        }
        if (r.kind == REC_NONE || (r.kind == REC_SUMMARY && s.out)) {
            if (s.out) {
                runs_test_output(s.out, p, ll);
                runs_test_output(s.out, "\n", 1);
            } else if (ll) {
                char ex[80];
                snprintf(err, errlen, "line %u is not a line of an OPTS log: '%s'", no,
                         runs_excerpt(ex, sizeof ex, p, ll));
                return -1;
            }
            continue;
        }
        if (at > p && s.out)
            runs_test_output(s.out, p, (size_t)(at - p));
        if (r.kind != REC_SUMMARY)
            apply(&s, &r);
        if (r.kind == REC_SUMMARY && r.total <= LONG_MAX - s.total)
            s.total += r.total;
    }
    if (s.total > (long)s.ran) /* a note, not an error: what is named is imported */
        snprintf(err, errlen,
                 "its summaries count %ld tests, %zu of them named: run-tests.sh's standard "
                 "output names only those that did not pass; its log file (logfile) names "
                 "every one",
                 s.total, s.ran);
    return 0;
}

/* A result or build line among the first lines that are not empty. */
static int opts_probe(const char *text, size_t len)
{
    const char *p = text, *end = text + len, *next;
    for (int seen = 0; p < end && seen < 20; p = next) {
        size_t ll = runs_line(p, end, &next);
        if (!ll)
            continue;
        seen++;
        struct rec r = record(p, ll);
        if (r.kind == REC_EXEC || r.kind == REC_COMPILE_PASS || r.kind == REC_COMPILE_FAIL)
            return 1;
    }
    return 0;
}

const struct runs_format runs_format_opts = {"opts", opts_probe, opts_parse};
