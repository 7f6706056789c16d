/* ptt scal: does an operation's duration grow with a parameter N? A probe (or the user's
 * command) measured at each N, the models fitted by least squares, the verdict (docs/scal.md).
 * Exit status 0: constant; 1: it depends on N; 2: bad usage or a measurement that failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/fit.h"
#include "cmd/cmds.h"
#include "cmd/usage.h"
#include "scal/scal.h"
#include "util/term.h"
#include "util/util.h"

#define COMMAND_MAX_N 1000000000000000L /* 1e15: any count a command may take */

enum { FMT_TEXT, FMT_JSON };

struct scal_opts {
    long from, to, steps; /* -1: not given */
    const char *values, *plot;
    int fmt;
    struct ptt_term term;
};

/* ---- option values ----------------------------------------------------------------------- */

static int parse_long(const char *opt, const char *arg, long min, long max, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (end == arg || *end || errno || x < min || x > max) {
        ptt_warn("scal", "--%s=%s: give a whole number from %ld to %ld", opt, arg, min, max);
        return -1;
    }
    *v = x;
    return 0;
}

/* A fraction: "0.05" or "5%". */
static int parse_fraction(const char *opt, const char *arg, double min, double max, int open_min,
                          double *v)
{
    char *end;
    double x = strtod(arg, &end);
    if (end != arg && *end == '%' && !end[1]) {
        x /= 100;
        end++;
    }
    if (end == arg || *end || !isfinite(x) || x > max || x < min || (open_min && x == min)) {
        ptt_warn("scal", "--%s=%s: give a fraction %s %g and at most %g (or a percentage: 5%%)",
                 opt, arg, open_min ? "above" : "from", min, max);
        return -1;
    }
    *v = x;
    return 0;
}

/* --timeout: seconds, above 0, at most a million (11 days). */
static int parse_seconds(const char *arg, double *v)
{
    char *end;
    double x = strtod(arg, &end);
    if (end == arg || *end || !(x > 0 && x <= 1e6)) {
        ptt_warn("scal", "--timeout=%s: give seconds, above 0 and at most 1000000", arg);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_word(const char *opt, const char *arg, const char *const *words, int *v)
{
    for (int i = 0; words[i]; i++)
        if (!strcmp(arg, words[i])) {
            *v = i;
            return 0;
        }
    char all[128] = "";
    for (int i = 0; words[i]; i++)
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", words[i]);
    ptt_warn("scal", "--%s=%s: use %s", opt, arg, all);
    return -1;
}

static void list_probes(void)
{
    size_t n;
    const struct ptt_probe *p = ptt_probe_list(&n);
    printf("%-15s %-16s %s\n", "probe", "default N", "N; the operation timed");
    for (size_t i = 0; i < n; i++)
        printf("%-15s %6ld to %-6ld %s; %s\n", p[i].name, p[i].from, p[i].to, p[i].parameter,
               p[i].timed);
}

/* --plot: refused before measuring when its name cannot be a gnuplot string or its directory
 * cannot be written. */
static int check_plot(const char *path)
{
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c < 0x20) {
            ptt_warn("scal", "--plot: a file name without control characters");
            return -1;
        }
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 4, ".svg")) { /* gnuplot makes an SVG, whatever the name */
        ptt_warn("scal", "--plot=%s: give a name ending in .svg (the picture is SVG)", path);
        return -1;
    }
    char *dir = ptt_must(strdup(path)), *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".";
    int ok = !access(d, W_OK | X_OK);
    if (!ok)
        ptt_warn("scal", "--plot=%s: cannot write into %s: %s", path, d, strerror(errno));
    free(dir);
    return ok ? 0 : -1;
}

/* ---- options ----------------------------------------------------------------------------- */

enum {
    OPT_FROM = 0x100,
    OPT_TO,
    OPT_STEPS,
    OPT_SPACING,
    OPT_VALUES,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_ROUNDS,
    OPT_STATISTIC,
    OPT_LEVEL,
    OPT_THRESHOLD,
    OPT_TIMEOUT,
    OPT_PLOT,
    OPT_LIST,
    OPT_ORDER
};

/* One option (not -h, --list, the terminal's); 0, or -1 having said why. */
static int scal_option(struct scal_opts *o, struct scal *s, int c, const char *arg)
{
    static const char *const fmts[] = {"text", "json", NULL};
    static const char *const spacings[] = {"linear", "geometric", NULL};
    static const char *const stats[] = {"median", "trimmed", NULL};
    static const char *const orders[] = {"shuffled", "ascending", NULL};
    long v;
    int w;
    switch (c) {
    case 'p':
        if (!(s->probe = ptt_probe_find(arg))) {
            ptt_warn("scal", "--probe=%s: no such probe; 'ptt scal --list' lists them", arg);
            return -1;
        }
        return 0;
    case OPT_FROM: return parse_long("from", arg, 0, COMMAND_MAX_N, &o->from);
    case OPT_TO: return parse_long("to", arg, 0, COMMAND_MAX_N, &o->to);
    case OPT_STEPS: return parse_long("steps", arg, PTT_FIT_MIN_POINTS, 1000, &o->steps);
    case OPT_SPACING: return parse_word("spacing", arg, spacings, &w) ? -1 : (s->spacing = w, 0);
    case OPT_VALUES: o->values = arg; return 0;
    case OPT_REPEAT: return parse_long("repeat", arg, 1, 1000000, &v) ? -1 : (s->repeat = v, 0);
    case OPT_WARMUP: return parse_long("warmup", arg, 0, 1000000, &v) ? -1 : (s->warmup = v, 0);
    case OPT_ROUNDS: return parse_long("rounds", arg, 1, 1000, &v) ? -1 : (s->rounds = v, 0);
    case OPT_STATISTIC: return parse_word("statistic", arg, stats, &w) ? -1 : (s->stat = w, 0);
    case OPT_ORDER: return parse_word("order", arg, orders, &w) ? -1 : (s->order = w, 0);
    case OPT_LEVEL: return parse_fraction("level", arg, 0, 0.5, 1, &s->alpha);
    case OPT_THRESHOLD: return parse_fraction("threshold", arg, 0, 100, 0, &s->threshold);
    case OPT_TIMEOUT: return parse_seconds(arg, &s->timeout);
    case 'f': return parse_word("format", arg, fmts, &o->fmt);
    case OPT_PLOT: o->plot = arg; return check_plot(arg);
    default: return -1;
    }
}

/* The options and the command; -1 to go on, else the exit status. */
static int scal_options(struct scal_opts *o, struct scal *s, int argc, char **argv)
{
    static const struct option opts[] = {{"probe", required_argument, 0, 'p'},
                                         {"list", no_argument, 0, OPT_LIST},
                                         {"from", required_argument, 0, OPT_FROM},
                                         {"to", required_argument, 0, OPT_TO},
                                         {"steps", required_argument, 0, OPT_STEPS},
                                         {"spacing", required_argument, 0, OPT_SPACING},
                                         {"values", required_argument, 0, OPT_VALUES},
                                         {"repeat", required_argument, 0, OPT_REPEAT},
                                         {"warmup", required_argument, 0, OPT_WARMUP},
                                         {"rounds", required_argument, 0, OPT_ROUNDS},
                                         {"order", required_argument, 0, OPT_ORDER},
                                         {"statistic", required_argument, 0, OPT_STATISTIC},
                                         {"level", required_argument, 0, OPT_LEVEL},
                                         {"threshold", required_argument, 0, OPT_THRESHOLD},
                                         {"timeout", required_argument, 0, OPT_TIMEOUT},
                                         {"format", required_argument, 0, 'f'},
                                         {"plot", required_argument, 0, OPT_PLOT},
                                         {"help", no_argument, 0, 'h'},
                                         PTT_TERM_OPTIONS,
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+p:f:o:h", opts, NULL)) != -1) {
        int k = ptt_term_option("scal", &o->term, c, optarg);
        if (k < 0)
            return PTT_EXIT_USAGE;
        if (k)
            continue;
        if (c == 'h') {
            fputs(ptt_usage("scal"), stdout);
            return 0;
        }
        if (c == OPT_LIST) {
            list_probes();
            return 0;
        }
        if (c == '?' || c == ':') {
            ptt_bad_option("scal", argv);
            return PTT_EXIT_USAGE;
        }
        if (scal_option(o, s, c, optarg))
            return PTT_EXIT_USAGE;
    }
    if (optind < argc)
        s->command = argv + optind;
    if (!s->probe == !s->command) {
        ptt_warn("scal", s->probe ? "give --probe=NAME or a COMMAND, not both"
                                  : "give --probe=NAME or -- COMMAND; 'ptt scal --list' lists "
                                    "the probes");
        return PTT_EXIT_USAGE;
    }
    return -1;
}

/* ---- the values of N --------------------------------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* --values=N,N,...: *n of them into v (room for 1000). */
static int list_values(const char *list, long min, long max, long *v, size_t *n)
{
    char *copy = ptt_must(strdup(list)), *rest = copy, *tok;
    int rc = 0;
    *n = 0;
    while (!rc && (tok = strsep(&rest, ","))) /* an empty value too: 1,2,,3 is a slip */
        if (!*tok) {
            ptt_warn("scal", "--values=%s: a value is empty", list);
            rc = -1;
        } else if (*n == 1000) {
            ptt_warn("scal", "--values: at most 1000 values");
            rc = -1;
        } else
            rc = parse_long("values", tok, min, max, &v[(*n)++]);
    free(copy);
    return rc;
}

/* --from, --to, --steps, --spacing: *n values into v (room for 1000). */
static int range_values(const struct scal_opts *o, const struct scal *s, long min, long *v,
                        size_t *n)
{
    long from = o->from, to = o->to, steps = o->steps > 0 ? o->steps : 10;
    if (to < 0 && !s->probe) {
        ptt_warn("scal", "a COMMAND needs --to=N (and --from=N, 1 by default) or --values");
        return -1;
    }
    if (to < 0)
        to = s->probe->to;
    if (from < 0) /* the probe's, or its smallest when --to is below that (1 at least) */
        from = s->probe && s->probe->from < to ? s->probe->from : min > 1 ? min : 1;
    if (from < min || from >= to || (s->spacing == SCAL_GEOMETRIC && from < 1)) {
        ptt_warn("scal", "--from=%ld --to=%ld: give %ld <= FROM < TO%s", from, to, min,
                 s->spacing == SCAL_GEOMETRIC ? " and FROM >= 1 (geometric)" : "");
        return -1;
    }
    for (long i = 0; i < steps; i++) {
        double f = (double)i / (double)(steps - 1);
        double x = s->spacing == SCAL_GEOMETRIC ? from * pow((double)to / from, f)
                                                : from + (double)(to - from) * f;
        v[i] = i == steps - 1 ? to : (long)llround(x);
    }
    *n = (size_t)steps;
    return 0;
}

/* The steps: the values of N, ascending, each once. 0, or -1 having said why. */
static int make_steps(const struct scal_opts *o, struct scal *s)
{
    long v[1000], min = s->probe ? s->probe->min : 0;
    long max = s->probe ? s->probe->max : COMMAND_MAX_N;
    size_t n = 0, k = 0;
    if (o->values && (o->from >= 0 || o->to >= 0 || o->steps > 0 || s->spacing != SCAL_LINEAR)) {
        ptt_warn("scal", "--values excludes --from, --to, --steps and --spacing");
        return -1;
    }
    if (o->values ? list_values(o->values, min, max, v, &n) : range_values(o, s, min, v, &n))
        return -1;
    qsort(v, n, sizeof *v, cmp_long);
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1])
            v[k++] = v[i];
    if (k < PTT_FIT_MIN_POINTS) {
        ptt_warn("scal", "%zu distinct values of N: at least %d are needed", k, PTT_FIT_MIN_POINTS);
        return -1;
    }
    if (v[k - 1] > max) {
        ptt_warn("scal", "--to=%ld: the %s probe takes N up to %ld", v[k - 1], s->probe->name, max);
        return -1;
    }
    if (o->values)
        s->spacing = SCAL_LIST;
    s->steps = ptt_must(calloc(k, sizeof *s->steps));
    s->nsteps = k;
    for (size_t i = 0; i < k; i++)
        s->steps[i].n = v[i];
    return 0;
}

/* ---- the verdict ------------------------------------------------------------------------- */

static int judge(const struct scal *s, struct ptt_fit_result *r)
{
    double *x = ptt_must(malloc(s->nsteps * sizeof *x)),
           *y = ptt_must(malloc(s->nsteps * sizeof *y));
    const char *err;
    struct ptt_fit_opts fo = {.alpha = s->alpha, .threshold = s->threshold};
    for (size_t i = 0; i < s->nsteps; i++) {
        x[i] = (double)s->steps[i].n;
        y[i] = s->steps[i].value;
    }
    int rc = ptt_fit(x, y, s->nsteps, &fo, r, &err);
    if (rc)
        ptt_warn("scal", "the durations cannot be judged: %s", err);
    free(x);
    free(y);
    return rc;
}

static void free_steps(struct scal *s)
{
    for (size_t i = 0; i < s->nsteps; i++) {
        free(s->steps[i].samples);
        free(s->steps[i].rounds);
    }
    free(s->steps);
}

int cmd_scal(int argc, char **argv)
{
    struct scal s = {.rounds = 1, .repeat = 31, .warmup = 5, .alpha = 0.05, .threshold = 0.10};
    struct scal_opts o = {.from = -1, .to = -1, .steps = -1};
    struct ptt_fit_result r;
    int rc = scal_options(&o, &s, argc, argv);
    if (rc >= 0)
        return rc;
    if (make_steps(&o, &s) || ptt_term_open("scal", &o.term) || scal_measure(&s) || judge(&s, &r)) {
        free_steps(&s);
        return PTT_EXIT_USAGE;
    }
    ptt_term_pager(&o.term);
    if (o.fmt == FMT_JSON)
        scal_write_json(&s, &r);
    else
        scal_write_text(&s, &r);
    rc = r.verdict == PTT_FIT_CONSTANT ? 0 : 1;
    if (ptt_term_close("scal", &o.term))
        rc = PTT_EXIT_USAGE;
    if (o.plot && scal_plot(&s, &r, o.plot))
        rc = PTT_EXIT_USAGE;
    free_steps(&s);
    return rc;
}
