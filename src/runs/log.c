/* The results of one run as the parsers hand them over (runs.h): tests by name, their output
 * bounded; the statuses; the formats. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/runs.h"
#include "util/util.h"

static const struct {
    const char *name;
    int failure;
} statuses[] = {
#define RUNS_ST_ENTRY(name, failure) {#name, failure},
    PTT_RUNS_STATUSES(RUNS_ST_ENTRY)
#undef RUNS_ST_ENTRY
};

const char *runs_status_name(int status)
{
    return status >= 0 && status < RS_COUNT ? statuses[status].name : "?";
}

int runs_status_parse(const char *name)
{
    for (int i = 0; i < RS_COUNT; i++)
        if (!strcmp(statuses[i].name, name))
            return i;
    return -1;
}

int runs_status_failure(int status)
{
    return status >= 0 && status < RS_COUNT && statuses[status].failure;
}

int runs_status_name_failure(const char *name)
{
    return name && runs_status_failure(runs_status_parse(name));
}

static const struct runs_format *const formats[] = {&runs_format_junit, &runs_format_tap,
                                                    &runs_format_opts};

const struct runs_format *runs_format_named(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(formats[i]->name, name))
            return formats[i];
    return NULL;
}

const struct runs_format *runs_format_guess(const char *text, size_t len)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i]->probe(text, len))
            return formats[i];
    return NULL;
}

size_t runs_line(const char *p, const char *end, const char **next)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    *next = nl ? nl + 1 : end;
    if (e > p && e[-1] == '\r')
        e--;
    return (size_t)(e - p);
}

double runs_seconds(const char *s, size_t len)
{
    char buf[64], *endp;
    if (!len || len >= sizeof buf || !((*s >= '0' && *s <= '9') || *s == '.'))
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    double v = strtod(buf, &endp);
    return *endp || !(v >= 0 && v < 1e12) ? -1 : v;
}

static uint64_t hash_name(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* The slot of name in the index: the one holding it, or the empty one it would take. */
static size_t *slot_of(struct runs_log *log, const char *name, size_t len)
{
    size_t mask = log->index_cap - 1, i = (size_t)hash_name(name, len) & mask;
    for (;; i = (i + 1) & mask) {
        size_t k = log->index[i];
        if (!k)
            return &log->index[i];
        const char *n = log->tests[k - 1].name;
        if (strlen(n) == len && !memcmp(n, name, len))
            return &log->index[i];
    }
}

/* A log's names and outputs are stored with their control characters as '?' (ptt_unctrl): a
 * terminal's escape sequences would reach the terminal of whoever shows the run. */
struct runs_test *runs_log_find(struct runs_log *log, const char *name, size_t len)
{
    if (!log->index_cap)
        return NULL;
    char small[256], *cleaned = NULL; /* names are stored clean: looked up so */
    for (size_t i = 0; i < len && !cleaned; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
            cleaned = len < sizeof small ? small : ptt_must(malloc(len));
            memcpy(cleaned, name, len);
            ptt_unctrl(cleaned, len, 0);
        }
    size_t k = *slot_of(log, cleaned ? cleaned : name, len);
    if (cleaned != small)
        free(cleaned);
    return k ? &log->tests[k - 1] : NULL;
}

/* Room for one more test, the index at most half full. */
static void grow(struct runs_log *log)
{
    if (log->n == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 64;
        log->tests = ptt_must(realloc(log->tests, log->cap * sizeof *log->tests));
    }
    if (2 * (log->n + 1) <= log->index_cap)
        return;
    free(log->index);
    log->index_cap = log->index_cap ? 2 * log->index_cap : 128;
    log->index = ptt_must(calloc(log->index_cap, sizeof *log->index));
    for (size_t k = 0; k < log->n; k++)
        *slot_of(log, log->tests[k].name, strlen(log->tests[k].name)) = k + 1;
}

struct runs_test *runs_log_add(struct runs_log *log, const char *name, size_t len, int status,
                               const char *raw)
{
    char *unique = ptt_must(strndup(name, len));
    ptt_unctrl(unique, strlen(unique), 0);
    len = strlen(unique);
    char *base = unique;
    for (unsigned k = 2; runs_log_find(log, unique, strlen(unique)); k++) {
        if (unique != base)
            free(unique);
        if (asprintf(&unique, "%.*s [%u]", (int)len, base, k) < 0)
            unique = ptt_must(NULL);
    }
    if (unique != base)
        free(base);
    grow(log);
    struct runs_test *t = &log->tests[log->n];
    *t = (struct runs_test){.name = unique,
                            .status = status,
                            .raw = ptt_must(strdup(raw)),
                            .duration = -1,
                            .output = ptt_must(calloc(1, 1)),
                            .check_status = -1};
    *slot_of(log, unique, strlen(unique)) = ++log->n;
    return t;
}

void runs_test_output(struct runs_test *t, const char *text, size_t len)
{
    size_t room = RUNS_OUTPUT_MAX - t->output_len, take = len < room ? len : room;
    if (take) {
        t->output = ptt_must(realloc(t->output, t->output_len + take + 1));
        memcpy(t->output + t->output_len, text, take);
        ptt_unctrl(t->output + t->output_len, take, 1);
        t->output_len += take;
        t->output[t->output_len] = 0;
    }
    t->output_cut += len - take;
}

void runs_log_info(char **field, const char *s, size_t len)
{
    if (!*field && len) {
        *field = ptt_must(strndup(s, len));
        ptt_unctrl(*field, strlen(*field), 0);
    }
}

void runs_log_free(struct runs_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        struct runs_test *t = &log->tests[i];
        free(t->name);
        free(t->raw);
        free(t->output);
        free(t->trace);
        free(t->findings);
    }
    free(log->tests);
    free(log->index);
    free(log->machine);
    free(log->date);
    free(log->command);
    memset(log, 0, sizeof *log);
}

const char *runs_excerpt(char *dst, size_t cap, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < cap; i++)
        dst[n++] = s[i];
    ptt_unctrl(dst, n, 0);
    if (n < len && n + 4 <= cap) {
        memcpy(dst + n, "...", 3);
        n += 3;
    }
    dst[n] = 0;
    return dst;
}
