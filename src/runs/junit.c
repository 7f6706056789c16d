/* JUnit XML (docs/runs.md, "JUnit XML"): pytest's --junitxml, ctest's --output-junit, Maven's
 * Surefire, Gradle... <testsuites> or <testsuite>, whose <testcase classname= name= time=> hold
 * a <failure>, <error> or <skipped> when they did not pass, and their <system-out> and
 * <system-err>. Read with expat (Debian: libexpat1-dev), which refuses what is not well-formed
 * XML and bounds entity expansion. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/runs.h"
#include "util/util.h"

#ifdef PTT_HAVE_EXPAT
#include <expat.h>

#include "util/dynlib.h"

/* expat's functions, loaded at the first XML read (util/dynlib.h). */
/* clang-format off */
#define EXPAT_FUNCS(X) \
    X(XML_ErrorString) X(XML_GetCurrentLineNumber) X(XML_GetErrorCode) X(XML_Parse) \
    X(XML_ParserCreate) X(XML_ParserFree) X(XML_SetCharacterDataHandler) \
    X(XML_SetElementHandler) X(XML_SetUserData) X(XML_StopParser)
/* clang-format on */
static struct {
    EXPAT_FUNCS(PTT_DYN_PTR)
} expat;

static const char *const expat_names[] = {EXPAT_FUNCS(PTT_DYN_NAME)};

#ifndef PTT_EXPAT_SONAME
#define PTT_EXPAT_SONAME "libexpat.so.1"
#endif
static struct ptt_dynlib expat_lib = PTT_DYNLIB(PTT_EXPAT_SONAME, expat, expat_names);

#define XML_ErrorString (*expat.XML_ErrorString)
#define XML_GetCurrentLineNumber (*expat.XML_GetCurrentLineNumber)
#define XML_GetErrorCode (*expat.XML_GetErrorCode)
#define XML_Parse (*expat.XML_Parse)
#define XML_ParserCreate (*expat.XML_ParserCreate)
#define XML_ParserFree (*expat.XML_ParserFree)
#define XML_SetCharacterDataHandler (*expat.XML_SetCharacterDataHandler)
#define XML_SetElementHandler (*expat.XML_SetElementHandler)
#define XML_SetUserData (*expat.XML_SetUserData)
#define XML_StopParser (*expat.XML_StopParser)

struct junit_state {
    XML_Parser xp;
    struct runs_log *log;
    struct runs_test *test; /* inside its <testcase> */
    int case_depth;         /* the depth of its <testcase> */
    int capture;            /* depth of the element whose text is the test's output, or 0 */
    int depth, failed;
    char *err;
    size_t errlen;
};

static const char *attr(const XML_Char **a, const char *name)
{
    for (; a[0]; a += 2)
        if (!strcmp(a[0], name))
            return a[1];
    return NULL;
}

static void fail(struct junit_state *s, const char *what, const char *detail, const char *tail)
{
    if (s->failed)
        return;
    s->failed = 1;
    snprintf(s->err, s->errlen, "line %lu: %s%s%s", (unsigned long)XML_GetCurrentLineNumber(s->xp),
             what, detail, tail);
    XML_StopParser(s->xp, XML_FALSE);
}

static void start_case(struct junit_state *s, const XML_Char **a)
{
    const char *name = attr(a, "name"), *cls = attr(a, "classname"), *time = attr(a, "time");
    if (!name || !*name) {
        fail(s, "a <testcase> without a name", "", "");
        return;
    }
    char full[2048];
    if (cls && *cls && strcmp(cls, name))
        snprintf(full, sizeof full, "%s.%s", cls, name);
    else
        snprintf(full, sizeof full, "%s", name);
    /* ctest says status="disabled" or "notrun" of a test it did not run, without <skipped>. */
    const char *status = attr(a, "status");
    int skipped = status && (!strcmp(status, "disabled") || !strcmp(status, "notrun"));
    s->test = runs_log_add(s->log, full, strlen(full), skipped ? RS_SKIP : RS_PASS,
                           skipped ? status : "passed");
    s->case_depth = s->depth;
    if (time)
        s->test->duration = runs_seconds(time, strlen(time));
}

/* <failure>, <error>, <skipped> in a test case: its status (the first one), its message. */
static void start_verdict(struct junit_state *s, const char *el, const XML_Char **a)
{
    struct runs_test *t = s->test;
    const char *type = attr(a, "type"), *msg = attr(a, "message");
    if (t->status == RS_PASS) {
        int xfail = !strcmp(el, "skipped") && type && !strcmp(type, "pytest.xfail");
        t->status = !strcmp(el, "failure") ? RS_FAIL
                    : !strcmp(el, "error") ? RS_ERROR
                    : xfail                ? RS_XFAIL
                                           : RS_SKIP;
        free(t->raw);
        t->raw = ptt_must(strdup(xfail ? "skipped (pytest.xfail)" : el));
    }
    runs_test_output(t, el, strlen(el));
    if (msg && *msg) {
        runs_test_output(t, ": ", 2);
        runs_test_output(t, msg, strlen(msg));
    }
    runs_test_output(t, "\n", 1);
}

static void XMLCALL on_start(void *data, const XML_Char *el, const XML_Char **a)
{
    struct junit_state *s = data;
    s->depth++;
    if (s->depth == 1 && strcmp(el, "testsuites") && strcmp(el, "testsuite")) {
        fail(s, "not a JUnit XML report: its root element is <", el, ">");
        return;
    }
    if (!strcmp(el, "testsuite")) {
        const char *host = attr(a, "hostname"), *when = attr(a, "timestamp");
        if (host)
            runs_log_info(&s->log->machine, host, strlen(host));
        if (when)
            runs_log_info(&s->log->date, when, strlen(when));
    } else if (!strcmp(el, "testcase") && !s->test)
        start_case(s, a);
    else if (s->test && !s->capture &&
             (!strcmp(el, "failure") || !strcmp(el, "error") || !strcmp(el, "skipped"))) {
        start_verdict(s, el, a);
        s->capture = s->depth;
    } else if (s->test && !s->capture && (!strcmp(el, "system-out") || !strcmp(el, "system-err"))) {
        runs_test_output(s->test, el, strlen(el));
        runs_test_output(s->test, ":\n", 2);
        s->capture = s->depth;
    }
}

static void XMLCALL on_end(void *data, const XML_Char *el)
{
    struct junit_state *s = data;
    (void)el;
    if (s->capture == s->depth) {
        s->capture = 0;
        if (s->test->output_len && s->test->output[s->test->output_len - 1] != '\n')
            runs_test_output(s->test, "\n", 1);
    }
    if (s->test && s->depth == s->case_depth)
        s->test = NULL;
    s->depth--;
}

static void XMLCALL on_text(void *data, const XML_Char *text, int len)
{
    struct junit_state *s = data;
    if (s->capture && len > 0)
        runs_test_output(s->test, text, (size_t)len);
}

static int junit_parse(const char *text, size_t len, struct runs_log *log, char *err, size_t errlen)
{
    if (len > INT_MAX) {
        snprintf(err, errlen, "too large for an XML report (%zu bytes)", len);
        return -1;
    }
    if (!ptt_dynlib_load(&expat_lib)) {
        snprintf(err, errlen, "cannot load expat, which reads JUnit XML: %s", expat_lib.why);
        return -1;
    }
    struct junit_state s = {.log = log, .err = err, .errlen = errlen};
    s.xp = XML_ParserCreate(NULL);
    if (!s.xp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    XML_SetUserData(s.xp, &s);
    XML_SetElementHandler(s.xp, on_start, on_end);
    XML_SetCharacterDataHandler(s.xp, on_text);
    size_t before = log->n;
    if (XML_Parse(s.xp, text, (int)len, XML_TRUE) == XML_STATUS_ERROR && !s.failed) {
        s.failed = 1;
        snprintf(err, errlen, "line %lu: not well-formed XML (%s)",
                 (unsigned long)XML_GetCurrentLineNumber(s.xp),
                 XML_ErrorString(XML_GetErrorCode(s.xp)));
    }
    XML_ParserFree(s.xp);
    if (!s.failed && log->n == before) {
        snprintf(err, errlen, "no <testcase> in it");
        return -1;
    }
    return s.failed ? -1 : 0;
}
#else
static int junit_parse(const char *text, size_t len, struct runs_log *log, char *err, size_t errlen)
{
    (void)text, (void)len, (void)log;
    snprintf(err, errlen,
             "ptt was built without expat (Debian: libexpat1-dev), which reads "
             "JUnit XML");
    return -1;
}
#endif

/* XML: '<' first, after a byte order mark and white space. */
static int junit_probe(const char *text, size_t len)
{
    size_t i = len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    return i < len && text[i] == '<';
}

const struct runs_format runs_format_junit = {"junit", junit_probe, junit_parse};
