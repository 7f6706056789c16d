/* ptt scal's result as text, JSON and a gnuplot picture (scal.h, docs/scal.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scal/scal.h"
#include "trace/writer.h"
#include "util/json.h"
#include "util/term.h"
#include "util/util.h"

/* ---- numbers ----------------------------------------------------------------------------- */

/* The unit a duration of about ns nanoseconds is shown in, and its size in nanoseconds. */
static const char *unit_of(double ns, double *size)
{
    double a = fabs(ns);
    *size = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
    return a >= 1e9 ? "s" : a >= 1e6 ? "ms" : a >= 1e3 ? "us" : "ns";
}

/* ns in the unit that suits ref, with digits significant digits; a negative digits keeps the
 * trailing zeros (a column of 4.200us, 12.07us), but for whole nanoseconds. */
static const char *dur(char *buf, size_t len, double ns, double ref, int digits)
{
    double size;
    char r[32];
    snprintf(r, sizeof r, "%.*e", abs(digits) - 1, ref); /* 999.99 shown as 1000: 1.00us */
    const char *u = unit_of(strtod(r, NULL), &size);
    ns = ns + 0.0; /* no -0 */
    int keep = digits < 0 && size > 1;
    if (fabs(ns / size) >= pow(10, abs(digits))) /* 175 of a unit, not 1.8e+02 */
        snprintf(buf, len, "%.0f", ns / size);
    else
        snprintf(buf, len, keep ? "%#.*g" : "%.*g", abs(digits), ns / size);
    size_t k = strlen(buf);
    if (k && buf[k - 1] == '.')
        buf[--k] = 0;
    snprintf(buf + k, len - k, "%s", u);
    return buf;
}

static const char *pct(char *buf, size_t len, double fraction)
{
    snprintf(buf, len, "%+.*f%%", fabs(fraction) < 0.1 ? 1 : 0, 100 * fraction);
    return buf;
}

/* A p-value: 0.42, 0.031, 2.1e-09. */
static const char *pval(char *buf, size_t len, double p)
{
    snprintf(buf, len, p >= 0.001 ? "%.2g" : "%.1e", p);
    return buf;
}

const char *scal_parameter(const struct scal *s)
{
    return s->probe ? s->probe->parameter : "the command's parameter ({} and $PTT_SCAL_N)";
}

void scal_equation(char *buf, size_t len, enum ptt_fit_model m, const double coef[3])
{
    static const char *const terms[] = {"", "·ln N", "·N", "·N²"};
    char a[32];
    int k = m == PTT_FIT_CONSTANT ? 1 : m == PTT_FIT_QUADRATIC ? 3 : 2;
    size_t o = (size_t)snprintf(buf, len, "y = %s", dur(a, sizeof a, coef[0], coef[0], 3));
    for (int j = 1; j < k && o < len; j++) {
        const char *term = terms[m == PTT_FIT_LOG ? 1 : j + 1];
        o += (size_t)snprintf(buf + o, len - o, " %c %s%s", coef[j] < 0 ? '-' : '+',
                              dur(a, sizeof a, fabs(coef[j]), coef[j], 3), term);
    }
}

static const char *const coef_names[] = {"a", "b", "c"};

/* ---- text -------------------------------------------------------------------------------- */

static void text_header(const struct scal *s)
{
    const struct scal_step *first = &s->steps[0], *last = &s->steps[s->nsteps - 1];
    static const char *const spacing[] = {"linear", "geometric", "as listed"};
    if (s->probe)
        printf("probe:    %s, %s\n", s->probe->name, s->probe->timed);
    else {
        printf("command: ");
        for (char **a = s->command; *a; a++)
            printf(" %s", *a);
        putchar('\n');
    }
    printf("N:        %s: %zu values from %ld to %ld (%s)\n", scal_parameter(s), s->nsteps,
           first->n, last->n, spacing[s->spacing]);
    if (s->probe)
        printf("measured: %d timed operations per step after %d warm-up", s->repeat, s->warmup);
    else
        printf("measured: %d duration%s asked per step ($PTT_SCAL_ITERATIONS), the first %d left "
               "out",
               s->repeat + s->warmup, s->repeat + s->warmup == 1 ? "" : "s", s->warmup);
    printf(", %d round%s (steps %s)\n", s->rounds, s->rounds == 1 ? "" : "s",
           s->order == SCAL_SHUFFLED ? "shuffled" : "ascending");
    printf("value:    the %s of a step's samples%s\n\n",
           s->stat == SCAL_MEDIAN ? "median" : "trimmed mean (10% off each end)",
           s->rounds > 1 ? " in each round, then the median of the rounds'" : "");
}

static void text_points(const struct scal *s)
{
    char a[32], b[32], c[32];
    int w = 10; /* N's column: as wide as its widest value */
    for (size_t i = 0; i < s->nsteps; i++) {
        int k = snprintf(a, sizeof a, "%ld", s->steps[i].n);
        w = k > w ? k : w;
    }
    printf("%s%*s %12s %12s %12s %8s%s\n", ptt_c(PTT_C_BOLD), w, "N", "value", "min", "max",
           "samples", ptt_c(PTT_C_RESET));
    for (size_t i = 0; i < s->nsteps; i++) {
        const struct scal_step *st = &s->steps[i];
        printf("%*ld %12s %12s %12s %8zu\n", w, st->n, dur(a, sizeof a, st->value, st->value, -4),
               dur(b, sizeof b, st->min, st->min, -4), dur(c, sizeof c, st->max, st->max, -4),
               st->count);
    }
}

/* "a = 2.29us ± 0.04us, b = ..." */
static void text_coefs(const struct ptt_fit_model_result *m, double alpha)
{
    char a[32], b[32];
    printf("          ");
    for (int j = 0; j < m->k; j++)
        printf("%s%s = %s ± %s", j ? ", " : "", coef_names[j],
               dur(a, sizeof a, m->coef[j], m->coef[j], 3),
               dur(b, sizeof b, m->ci[j], m->coef[j], 2));
    printf(" (%g%% confidence interval%s)\n", 100 * (1 - alpha), m->k > 1 ? "s" : "");
}

/* The first line of the verdict: the model, and how N changes the duration. */
static void text_verdict_line(const struct scal *s, const struct ptt_fit_result *r)
{
    char c[32], p[32];
    long n0 = s->steps[0].n, n1 = s->steps[s->nsteps - 1].n;
    int grows = r->verdict != PTT_FIT_CONSTANT;
    printf("\n%sverdict:%s  %s%s%s: ", ptt_c(PTT_C_BOLD), ptt_c(PTT_C_RESET),
           ptt_c(grows ? PTT_C_RED : PTT_C_GREEN), ptt_fit_name(r->verdict), ptt_c(PTT_C_RESET));
    if (grows)
        printf("%s with N, ×%.3g (%s) from N=%ld to N=%ld\n", r->change >= 0 ? "grows" : "falls",
               1 + r->change, pct(c, sizeof c, r->change), n0, n1);
    else if (r->why == PTT_FIT_NOT_SIGNIFICANT)
        printf("no significant change with N (p = %s at the %g%% level)\n", pval(p, sizeof p, r->p),
               100 * s->alpha);
    else
        printf("%s from N=%ld to N=%ld, below the %g%% threshold\n", pct(c, sizeof c, r->change),
               n0, n1, 100 * s->threshold);
}

static void text_verdict(const struct scal *s, const struct ptt_fit_result *r)
{
    char eq[160], p[32];
    const struct ptt_fit_model_result *v = &r->m[r->verdict], *sh = &r->m[r->shape];
    int shapes =
        r->m[PTT_FIT_LOG].fitted + r->m[PTT_FIT_LINEAR].fitted + r->m[PTT_FIT_QUADRATIC].fitted;
    text_verdict_line(s, r);
    scal_equation(eq, sizeof eq, r->verdict, v->coef);
    printf("          %s\n", eq);
    text_coefs(v, s->alpha);
    if (r->verdict != PTT_FIT_CONSTANT)
        printf("          R² = %.4f (adjusted %.4f)\n          significant at the %g%% level: "
               "p = %s\n",
               v->r2, v->adj_r2, 100 * s->alpha, pval(p, sizeof p, r->p));
    else if (isnan(sh->r2))
        printf("          every value is the same: no model fits better than another\n");
    else
        printf("          closest %s model: %s, R² = %.4f, p = %s%s\n",
               r->change < 0 ? "falling" : "growing", ptt_fit_name(r->shape), sh->r2,
               pval(p, sizeof p, r->p), r->why == PTT_FIT_BELOW_THRESHOLD ? " (significant)" : "");
    printf("          (p: F-test of %s against the constant, Bonferroni-adjusted for %d shape%s)\n",
           ptt_fit_name(r->shape), shapes, shapes == 1 ? "" : "s");
}

static void text_models(const struct ptt_fit_result *r)
{
    char eq[160], p[32];
    /* "R²" is 3 bytes for 2 columns: the header's widths count bytes */
    printf("\n%s%-12s %9s %9s %10s  %s%s\n", ptt_c(PTT_C_BOLD), "model", "R²", "adj. R²", "p",
           "equation", ptt_c(PTT_C_RESET));
    for (int m = 0; m < PTT_FIT_NMODELS; m++) {
        const struct ptt_fit_model_result *x = &r->m[m];
        if (!x->fitted) {
            printf("%-12s %8s %8s %10s  not fitted (%s)\n", ptt_fit_name(m), "-", "-", "-",
                   m == PTT_FIT_LOG ? "N <= 0" : "too few points");
            continue;
        }
        scal_equation(eq, sizeof eq, (enum ptt_fit_model)m, x->coef);
        char r2[16], adj[16];
        snprintf(r2, sizeof r2, isnan(x->r2) ? "-" : "%.4f", x->r2);
        snprintf(adj, sizeof adj, isnan(x->adj_r2) ? "-" : "%.4f", x->adj_r2);
        printf("%-12s %8s %8s %10s  %s", ptt_fit_name(m), r2, adj,
               m ? pval(p, sizeof p, x->p) : "-", eq);
        if (m == PTT_FIT_QUADRATIC)
            printf(" (curvature p = %s)", pval(p, sizeof p, r->curvature_p));
        putchar('\n');
    }
}

void scal_write_text(const struct scal *s, const struct ptt_fit_result *r)
{
    text_header(s);
    text_points(s);
    text_verdict(s, r);
    text_models(r);
}

/* ---- JSON -------------------------------------------------------------------------------- */

/* A number, or null when it is not finite (JSON has no NaN). */
static void jnum(double v)
{
    if (isfinite(v))
        printf("%.10g", v);
    else
        fputs("null", stdout);
}

/* ,"key":number */
static void jfield(const char *key, double v)
{
    printf(",\"%s\":", key);
    jnum(v);
}

/* n numbers, comma-separated. */
static void jnums(const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (k)
            putchar(',');
        jnum(v[k]);
    }
}

static void json_model(const struct ptt_fit_result *r, int m)
{
    const struct ptt_fit_model_result *x = &r->m[m];
    char eq[160];
    printf("%s{\"model\":\"%s\",\"fitted\":%s", m ? "," : "", ptt_fit_name(m),
           x->fitted ? "true" : "false");
    if (!x->fitted) {
        putchar('}');
        return;
    }
    scal_equation(eq, sizeof eq, (enum ptt_fit_model)m, x->coef);
    printf(",\"equation\":");
    ptt_json_str(stdout, eq);
    printf(",\"coefficients\":[");
    for (int j = 0; j < x->k; j++) {
        printf("%s{\"name\":\"%s\",\"value\":", j ? "," : "", coef_names[j]);
        jnum(x->coef[j]);
        jfield("stderr", x->se[j]);
        jfield("ci_low", x->coef[j] - x->ci[j]);
        jfield("ci_high", x->coef[j] + x->ci[j]);
        putchar('}');
    }
    putchar(']');
    jfield("rss", x->rss);
    jfield("r2", x->r2);
    jfield("adj_r2", x->adj_r2);
    jfield("aicc", x->aicc);
    jfield("f", m ? x->f : NAN);
    jfield("p_value", m ? x->p : NAN);
    putchar('}');
}

static void json_points(const struct scal *s)
{
    printf(",\"points\":[");
    for (size_t i = 0; i < s->nsteps; i++) {
        const struct scal_step *st = &s->steps[i];
        printf("%s{\"n\":%ld,\"value\":", i ? "," : "", st->n);
        jnum(st->value);
        jfield("min", st->min);
        jfield("max", st->max);
        printf(",\"rounds\":[");
        jnums(st->rounds, (size_t)s->rounds);
        printf("],\"count\":%zu,\"samples\":[", st->count);
        jnums(st->samples, st->count);
        printf("]}");
    }
    putchar(']');
}

static void json_verdict(const struct scal *s, const struct ptt_fit_result *r)
{
    static const char *const why[] = {"significant", "not significant", "below threshold"};
    char eq[160];
    scal_equation(eq, sizeof eq, r->verdict, r->m[r->verdict].coef);
    printf(",\"verdict\":{\"model\":\"%s\",\"constant\":%s,\"reason\":\"%s\",\"shape\":\"%s\","
           "\"equation\":",
           ptt_fit_name(r->verdict), r->verdict == PTT_FIT_CONSTANT ? "true" : "false", why[r->why],
           ptt_fit_name(r->shape));
    ptt_json_str(stdout, eq);
    jfield("p_value", r->p);
    jfield("curvature_p_value", r->curvature_p);
    jfield("change", r->change);
    jfield("r2", r->m[r->shape].r2);
    jfield("confidence", 1 - s->alpha);
    putchar('}');
}

void scal_write_json(const struct scal *s, const struct ptt_fit_result *r)
{
    static const char *const spacing[] = {"linear", "geometric", "list"};
    printf("{\"probe\":");
    if (s->probe)
        ptt_json_str(stdout, s->probe->name);
    else
        fputs("null", stdout);
    printf(",\"command\":");
    if (s->command) {
        putchar('[');
        for (char **a = s->command; *a; a++) {
            if (a != s->command)
                putchar(',');
            ptt_json_str(stdout, *a);
        }
        putchar(']');
    } else
        fputs("null", stdout);
    printf(",\"parameter\":");
    ptt_json_str(stdout, scal_parameter(s));
    printf(",\"timed\":");
    ptt_json_str(stdout, s->probe ? s->probe->timed : "the durations the command prints");
    printf(",\"spacing\":\"%s\",\"order\":\"%s\",\"rounds\":%d,\"repeat\":%d,\"warmup\":%d,"
           "\"statistic\":\"%s\",\"level\":",
           spacing[s->spacing], s->order == SCAL_SHUFFLED ? "shuffled" : "ascending", s->rounds,
           s->repeat, s->warmup, s->stat == SCAL_MEDIAN ? "median" : "trimmed");
    jnum(s->alpha);
    jfield("threshold", s->threshold);
    printf(",\"unit\":\"ns\"");
    json_points(s);
    printf(",\"models\":[");
    for (int m = 0; m < PTT_FIT_NMODELS; m++)
        json_model(r, m);
    putchar(']');
    json_verdict(s, r);
    printf("}\n");
}
