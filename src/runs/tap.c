/* TAP, the Test Anything Protocol (versions 12 to 14; docs/runs.md, "TAP"): Perl's Test::More
 * and prove, node --test, and many others. A test line "ok 3 - name # SKIP why", its
 * diagnostics ("# ..." lines after it) and its YAML block ("  ---" ... "  ...", where
 * duration_ms is its duration) are one test; indented subtests are left to their parent's line.
 * A log without its plan (1..N), with fewer or more tests than the plan says, or with numbers
 * out of sequence, is cut short or not TAP: refused. A plan of 1..0 skips the whole log: one
 * test named after the log's file, SKIP, the plan's reason its output. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runs/runs.h"

struct tap_line {
    int ok, directive; /* 0, 'S' (SKIP) or 'T' (TODO) */
    unsigned long number;
    char desc[1024];
};

static int starts(const char *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    return len >= n && !memcmp(p, s, n);
}

static size_t skip_spaces(const char *p, size_t len, size_t i)
{
    while (i < len && (p[i] == ' ' || p[i] == '\t'))
        i++;
    return i;
}

/* The description up to an unescaped '#' (\# and \\ unescaped), trimmed; returns where it
 * stopped. */
static size_t description(const char *p, size_t len, size_t i, char *out, size_t cap)
{
    size_t n = 0;
    for (; i < len && p[i] != '#'; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < len && (p[i + 1] == '#' || p[i + 1] == '\\'))
            c = p[++i];
        if (n + 1 < cap)
            out[n++] = c;
    }
    while (n && (out[n - 1] == ' ' || out[n - 1] == '\t'))
        n--;
    out[n] = 0;
    return i;
}

/* "ok", "not ok", then an optional number, "-", description and "# SKIP|TODO reason". */
static int test_line(const char *p, size_t len, struct tap_line *t)
{
    size_t i;
    if (starts(p, len, "ok"))
        t->ok = 1, i = 2;
    else if (starts(p, len, "not ok"))
        t->ok = 0, i = 6;
    else
        return 0;
    if (i < len && p[i] != ' ' && p[i] != '\t' && p[i] != '#')
        return 0;
    i = skip_spaces(p, len, i);
    t->number = 0;
    while (i < len && isdigit((unsigned char)p[i]) && t->number < 100000000)
        t->number = t->number * 10 + (unsigned long)(p[i++] - '0');
    i = skip_spaces(p, len, i);
    if (i < len && p[i] == '-' && (i + 1 == len || p[i + 1] == ' '))
        i = skip_spaces(p, len, i + 1);
    i = description(p, len, i, t->desc, sizeof t->desc);
    t->directive = 0;
    if (i < len) { /* at '#' */
        i = skip_spaces(p, len, i + 1);
        if (len - i >= 4 && !strncasecmp(p + i, "skip", 4))
            t->directive = 'S';
        else if (len - i >= 4 && !strncasecmp(p + i, "todo", 4))
            t->directive = 'T';
    }
    return 1;
}

/* "1..N", maybe "# SKIP why" after it: N, or -1; *why: where the comment starts (len: none). */
static long plan_line(const char *p, size_t len, size_t *why)
{
    if (!starts(p, len, "1.."))
        return -1;
    size_t i = 3;
    long n = 0;
    if (i == len || !isdigit((unsigned char)p[i]))
        return -1;
    while (i < len && isdigit((unsigned char)p[i]) && n < 100000000)
        n = n * 10 + (p[i++] - '0');
    i = skip_spaces(p, len, i);
    if (why)
        *why = i;
    return i == len || p[i] == '#' ? n : -1;
}

static int indented(const char *p, size_t len, const char *what)
{
    size_t i = skip_spaces(p, len, 0);
    return i > 0 && len - i >= strlen(what) && !memcmp(p + i, what, strlen(what)) &&
           skip_spaces(p, len, i + strlen(what)) == len;
}

struct tap_state {
    struct runs_log *log;
    struct runs_test *last; /* the test the diagnostics and YAML lines are of */
    int after_test;         /* the line before was its test line: a YAML block may start */
    int yaml;               /* inside its YAML block */
    long plan;              /* -1: none yet */
    size_t tests;
    int bailed;
    char skip_why[256]; /* the comment of a plan 1..0 */
};

static void add_test(struct tap_state *s, const struct tap_line *t)
{
    int status = t->ok ? RS_PASS : RS_FAIL;
    const char *raw = t->ok ? "ok" : "not ok";
    if (t->directive == 'S')
        status = RS_SKIP, raw = t->ok ? "ok # SKIP" : "not ok # SKIP";
    else if (t->directive == 'T')
        status = t->ok ? RS_XPASS : RS_XFAIL, raw = t->ok ? "ok # TODO" : "not ok # TODO";
    char name[1100];
    s->tests++;
    if (t->desc[0])
        snprintf(name, sizeof name, "%s", t->desc);
    else
        snprintf(name, sizeof name, "test %lu", t->number ? t->number : (unsigned long)s->tests);
    s->last = runs_log_add(s->log, name, strlen(name), status, raw);
}

/* A line in a test's YAML block: its output; duration_ms is its duration. */
static void yaml_line(struct tap_state *s, const char *p, size_t len)
{
    runs_test_output(s->last, p, len);
    runs_test_output(s->last, "\n", 1);
    size_t i = skip_spaces(p, len, 0);
    if (starts(p + i, len - i, "duration_ms:")) {
        size_t v = skip_spaces(p, len, i + 12);
        double ms = runs_seconds(p + v, len - v);
        if (ms >= 0)
            s->last->duration = ms / 1000;
    }
}

/* One line; 1 at a bail out (the rest is not read), -1 on an error (err said). */
static int tap_one(struct tap_state *s, const char *p, size_t len, char *err, size_t errlen)
{
    struct tap_line t;
    long plan;
    size_t why;
    int after_test = s->after_test;
    s->after_test = 0;
    if (s->yaml) {
        s->yaml = !indented(p, len, "...");
        if (s->yaml)
            yaml_line(s, p, len);
    } else if (after_test && indented(p, len, "---"))
        s->yaml = 1;
    else if (test_line(p, len, &t)) {
        if (t.number && t.number != s->tests + 1) {
            snprintf(err, errlen, "test %lu comes where test %zu should: out of sequence", t.number,
                     s->tests + 1);
            return -1;
        }
        add_test(s, &t);
        s->after_test = 1;
    } else if ((plan = plan_line(p, len, &why)) >= 0) {
        if (s->plan >= 0) {
            snprintf(err, errlen, "two plans (1..%ld and 1..%ld)", s->plan, plan);
            return -1;
        }
        s->plan = plan;
        if (!plan) /* "1..0 # SKIP why": the comment, whatever its words */
            snprintf(s->skip_why, sizeof s->skip_why, "%.*s", (int)(len - why), p + why);
        s->last = NULL; /* what follows a plan at the end is the producer's summary */
    } else if (starts(p, len, "Bail out!")) {
        struct runs_test *b = runs_log_add(s->log, "Bail out!", 9, RS_ERROR, "Bail out!");
        runs_test_output(b, p, len);
        s->bailed = 1;
        return 1;
    } else if (s->last && starts(p, len, "#") && !starts(p, len, "# Subtest:") &&
               !starts(p, len, "# Looks like you")) {
        runs_test_output(s->last, p, len);
        runs_test_output(s->last, "\n", 1);
    } else if (!(p[0] == ' ' || p[0] == '\t' || p[0] == '#'))
        s->last = NULL; /* anything else is not TAP, and ends the test's diagnostics */
    return 0;
}

/* A plan of 1..0: the log's tests were all skipped (Test::More's skip_all), one SKIP named after
 * its file, as prove names it. */
static void skip_all(struct tap_state *s)
{
    const char *src = s->log->source ? s->log->source : "TAP log";
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    struct runs_test *t = runs_log_add(s->log, base, strlen(base), RS_SKIP, "1..0 # SKIP");
    runs_test_output(t, s->skip_why, strlen(s->skip_why));
}

static int tap_parse(const char *text, size_t len, struct runs_log *log, char *err, size_t errlen)
{
    struct tap_state s = {.log = log, .plan = -1};
    const char *p = text, *end = text + len, *next;
    for (; p < end; p = next) {
        size_t ll = runs_line(p, end, &next);
        int r = ll ? tap_one(&s, p, ll, err, errlen) : 0;
        if (r < 0)
            return -1;
        if (r > 0)
            return 0;
    }
    if (s.plan < 0 && !s.tests) {
        snprintf(err, errlen, "no TAP test line and no plan in it");
        return -1;
    }
    if (s.plan < 0) {
        snprintf(err, errlen, "no plan (1..N) after %zu tests: the log is cut short", s.tests);
        return -1;
    }
    if ((size_t)s.plan != s.tests) {
        snprintf(err, errlen, "the plan is 1..%ld but %zu tests ran: %s", s.plan, s.tests,
                 (size_t)s.plan > s.tests ? "the log is cut short" : "more than it says");
        return -1;
    }
    if (!s.tests)
        skip_all(&s);
    return 0;
}

/* The first line that is not empty nor a comment: TAP's version line, a plan or a test. */
static int tap_probe(const char *text, size_t len)
{
    const char *p = text, *end = text + len, *next;
    struct tap_line t;
    for (; p < end; p = next) {
        size_t ll = runs_line(p, end, &next);
        if (!ll || p[0] == '#')
            continue;
        return starts(p, ll, "TAP version ") || plan_line(p, ll, NULL) >= 0 || test_line(p, ll, &t);
    }
    return 0;
}

const struct runs_format runs_format_tap = {"tap", tap_probe, tap_parse};
