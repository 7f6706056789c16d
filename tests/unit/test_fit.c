/* The least-squares models and the scalability verdict of ptt scal (src/analysis/fit.c): data
 * made from known models with Gaussian noise of a fixed seed, the verdicts exact and the
 * coefficients within stated tolerances; the distributions against published values; bad
 * input refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analysis/fit.h"

#define N 12

static const struct ptt_fit_opts opts = {.alpha = 0.05, .threshold = 0.10};

/* xorshift64*: the same numbers everywhere, whatever the C library's rand(). */
static uint64_t seed;

static double uniform(void)
{
    seed ^= seed >> 12;
    seed ^= seed << 25;
    seed ^= seed >> 27;
    return ((seed * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

/* Box-Muller: a standard normal value. */
static double normal(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* n values from 'from' to 'to', evenly spaced or geometric. */
static void range(double *x, int n, double from, double to, int geometric)
{
    for (int i = 0; i < n; i++)
        x[i] = geometric ? from * pow(to / from, (double)i / (n - 1))
                         : from + (to - from) * i / (n - 1);
}

/* y = model(x) + sigma·N(0,1), with seed s. */
static void make(double *y, const double *x, int n, enum ptt_fit_model m, const double c[3],
                 double sigma, uint64_t s)
{
    seed = s;
    for (int i = 0; i < n; i++)
        y[i] = ptt_fit_eval(m, c, x[i]) + sigma * normal();
}

static void fit_ok(const double *x, const double *y, size_t n, const struct ptt_fit_opts *o,
                   struct ptt_fit_result *r)
{
    const char *err = NULL;
    assert_int_equal(ptt_fit(x, y, n, o, r, &err), 0);
    assert_null(err);
}

/* A series of N points: x from 'from' to 'to', y = model(x) + noise. The tests write
 * {model, coefficients, from, to, .sigma = ..., .seed = ...}. */
struct series {
    enum ptt_fit_model model;
    double c[3]; /* the model's coefficients */
    double from, to;
    double sigma; /* the noise's standard deviation */
    uint64_t seed;
    int geometric; /* x spaced geometrically, else evenly */
};

/* The series made in x and y (kept for another fit) and fitted with o. */
static void fit_series(const struct series *s, double x[N], double y[N],
                       const struct ptt_fit_opts *o, struct ptt_fit_result *r)
{
    range(x, N, s->from, s->to, s->geometric);
    make(y, x, N, s->model, s->c, s->sigma, s->seed);
    fit_ok(x, y, N, o, r);
}

/* The true coefficient lies within the fit's tolerance and its 95% interval is sensible. */
static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("%g is not within %g of %g", got, tol, want);
}

static void constant_noise(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_CONSTANT, {1000}, 100, 5600, .sigma = 20, .seed = 1};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_CONSTANT);
    assert_int_equal(r.why, PTT_FIT_NOT_SIGNIFICANT);
    assert_true(r.p >= 0.05);
    near(r.m[PTT_FIT_CONSTANT].coef[0], 1000, 15);      /* 2.6 standard errors */
    near(r.m[PTT_FIT_CONSTANT].se[0], 20 / sqrt(N), 3); /* sigma/sqrt(n) */
    assert_true(r.m[PTT_FIT_LOG].fitted && r.m[PTT_FIT_QUADRATIC].fitted);
}

static void logarithmic(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_LOG, {500, 200}, 2, 4096, .sigma = 10, .seed = 2, .geometric = 1};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_LOG);
    assert_int_equal(r.why, PTT_FIT_SIGNIFICANT);
    assert_true(r.p < 1e-6);
    near(r.m[PTT_FIT_LOG].coef[0], 500, 20);
    near(r.m[PTT_FIT_LOG].coef[1], 200, 5);
    assert_true(r.m[PTT_FIT_LOG].r2 > 0.99);
    assert_true(r.curvature_p >= 0.05);
    near(r.change, 200 * log(2048) / (500 + 200 * log(2)), 0.15);
}

static void linear(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_LINEAR, {1000, 2}, 100, 5000, .sigma = 20, .seed = 3};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_LINEAR);
    assert_int_equal(r.why, PTT_FIT_SIGNIFICANT);
    near(r.m[PTT_FIT_LINEAR].coef[0], 1000, 30);
    near(r.m[PTT_FIT_LINEAR].coef[1], 2, 0.02);
    /* the true slope within its 95% interval */
    near(r.m[PTT_FIT_LINEAR].coef[1], 2, r.m[PTT_FIT_LINEAR].ci[1]);
    assert_true(r.m[PTT_FIT_LINEAR].r2 > 0.999);
    near(r.change, 2 * 4900 / 1200.0, 0.1); /* +817% */
}

static void quadratic(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_QUADRATIC, {1000, 0.5, 0.001}, 100, 5000, .sigma = 50, .seed = 4};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_QUADRATIC);
    near(r.m[PTT_FIT_QUADRATIC].coef[0], 1000, 100);
    near(r.m[PTT_FIT_QUADRATIC].coef[1], 0.5, 0.1);
    near(r.m[PTT_FIT_QUADRATIC].coef[2], 0.001, 2e-5);
    assert_true(r.m[PTT_FIT_QUADRATIC].r2 > 0.999);
}

/* A linear fall is a dependence too: the change is negative. */
static void falling(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_LINEAR, {5000, -0.5}, 100, 5000, .sigma = 10, .seed = 5};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_LINEAR);
    assert_true(r.change < -0.4 && r.change > -0.6);
}

/* Significant but small: constant under the 10% threshold, linear under a 1% one. */
static void threshold(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct ptt_fit_opts o = opts;
    /* +4.9% over the range */
    struct series s = {PTT_FIT_LINEAR, {1000, 0.01}, 100, 5000, .sigma = 1, .seed = 12};
    fit_series(&s, x, y, &o, &r);
    assert_int_equal(r.verdict, PTT_FIT_CONSTANT);
    assert_int_equal(r.why, PTT_FIT_BELOW_THRESHOLD);
    assert_int_equal(r.shape, PTT_FIT_LINEAR);
    assert_true(r.p < 0.05);
    near(r.change, 0.049, 0.005);
    o.threshold = 0.01;
    fit_ok(x, y, N, &o, &r);
    assert_int_equal(r.verdict, PTT_FIT_LINEAR);
}

/* A stricter level turns a weak dependence into 'constant'. */
static void level(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct ptt_fit_opts o = {.alpha = 0.05, .threshold = 0};
    struct series s = {PTT_FIT_LINEAR, {1000, 0.05}, 100, 5000, .sigma = 70, .seed = 7};
    fit_series(&s, x, y, &o, &r);
    double p = r.p;
    assert_true(p > 1e-6 && p < 0.05);
    o.alpha = p / 2;
    fit_ok(x, y, N, &o, &r);
    assert_int_equal(r.verdict, PTT_FIT_CONSTANT);
    assert_int_equal(r.why, PTT_FIT_NOT_SIGNIFICANT);
}

/* Without noise: the exact coefficients, the fewest that fit (AICc), p = 1 for a constant. */
static void exact(void **state)
{
    (void)state;
    double x[N], y[N], k[3] = {777};
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_LINEAR, {1500, 3}, 10, 1000, .sigma = 0, .seed = 8};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_LINEAR);
    near(r.m[PTT_FIT_LINEAR].coef[0], 1500, 1e-6);
    near(r.m[PTT_FIT_LINEAR].coef[1], 3, 1e-9);
    assert_true(r.m[PTT_FIT_LINEAR].r2 == 1);
    make(y, x, N, PTT_FIT_CONSTANT, k, 0, 8);
    fit_ok(x, y, N, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_CONSTANT);
    assert_true(r.p == 1);
    near(r.m[PTT_FIT_CONSTANT].coef[0], 777, 1e-9);
    /* values that do not vary: no R² (0/0), for any model */
    assert_true(isnan(r.m[PTT_FIT_CONSTANT].r2) && isnan(r.m[PTT_FIT_LINEAR].r2));
}

/* Large parameter values (a million): the scaled columns keep the quadratic accurate. */
static void large_x(void **state)
{
    (void)state;
    double x[N], y[N];
    struct ptt_fit_result r;
    struct series s = {PTT_FIT_QUADRATIC, {2e4, 0.01, 2e-8}, 1e4, 1e6, .sigma = 0, .seed = 9};
    fit_series(&s, x, y, &opts, &r);
    assert_int_equal(r.verdict, PTT_FIT_QUADRATIC);
    near(r.m[PTT_FIT_QUADRATIC].coef[2], 2e-8, 1e-14);
    near(r.m[PTT_FIT_QUADRATIC].coef[1], 0.01, 1e-8);
}

static void refused(const double *x, const double *y, size_t n, const struct ptt_fit_opts *o)
{
    struct ptt_fit_result r;
    const char *err = NULL;
    assert_int_equal(ptt_fit(x, y, n, o, &r, &err), -1);
    assert_non_null(err);
}

static void bad_input(void **state)
{
    (void)state;
    double x[N], y[N], same[N];
    range(x, N, 1, 12, 0);
    range(y, N, 10, 20, 0);
    for (int i = 0; i < N; i++)
        same[i] = 5;
    refused(x, y, 4, &opts); /* too few points */
    refused(x, y, 0, &opts);
    refused(same, y, N, &opts); /* every x equal */
    double keep = y[3];
    y[3] = NAN;
    refused(x, y, N, &opts);
    y[3] = INFINITY;
    refused(x, y, N, &opts);
    y[3] = keep;
    x[2] = -INFINITY;
    refused(x, y, N, &opts);
    x[2] = 3;
    struct ptt_fit_opts o = {.alpha = 0, .threshold = 0.1};
    refused(x, y, N, &o);
    o.alpha = 1;
    refused(x, y, N, &o);
    o = (struct ptt_fit_opts){.alpha = 0.05, .threshold = -1};
    refused(x, y, N, &o);
    o.threshold = NAN;
    refused(x, y, N, &o);
}

/* The models that cannot be fitted are left out: the quadratic with 5 points or two distinct
 * x, the logarithm with an x <= 0. */
static void left_out(void **state)
{
    (void)state;
    double x[N], y[N], c[3] = {100, 10};
    struct ptt_fit_result r;
    range(x, N, 0, 11, 0);
    make(y, x, N, PTT_FIT_LINEAR, c, 0.1, 10);
    fit_ok(x, y, 5, &opts, &r);
    assert_int_equal(r.n, 5);
    assert_false(r.m[PTT_FIT_QUADRATIC].fitted);
    assert_false(r.m[PTT_FIT_LOG].fitted);
    assert_int_equal(r.verdict, PTT_FIT_LINEAR);
    double two[6] = {1, 2, 1, 2, 1, 2}, v[6] = {10, 20, 10, 20, 11, 21};
    fit_ok(two, v, 6, &opts, &r);
    assert_false(r.m[PTT_FIT_QUADRATIC].fitted);
    assert_true(r.m[PTT_FIT_LOG].fitted);
}

/* Published values: I_0.5(2,3) = 11/16; F(1,10) 0.95 quantile 4.9646, F(2,40) 3.2317; t(10) 0.975
 * quantile 2.2281, t(1) 12.7062, t(30) 0.995 quantile 2.7500. */
static void distributions(void **state)
{
    (void)state;
    near(ptt_fit_ibeta(0.5, 2, 3), 11.0 / 16, 1e-12);
    near(ptt_fit_ibeta(0.2, 1, 1), 0.2, 1e-12);
    near(ptt_fit_f_sf(4.9646, 1, 10), 0.05, 1e-4);
    near(ptt_fit_f_sf(3.2317, 2, 40), 0.05, 1e-4);
    assert_true(ptt_fit_f_sf(0, 1, 10) == 1);
    assert_true(ptt_fit_f_sf(INFINITY, 1, 10) == 0);
    near(ptt_fit_t_quantile(0.975, 10), 2.2281, 1e-4);
    near(ptt_fit_t_quantile(0.975, 1), 12.7062, 1e-3);
    near(ptt_fit_t_quantile(0.995, 30), 2.7500, 1e-4);
    near(ptt_fit_t_quantile(0.025, 10), -2.2281, 1e-4);
}

/* The verdict's error rates on 500 series of 10 points each (fixed seed, noise 5%): pure
 * noise is called growth at most at the level (5%, here with no threshold), a linear growth is
 * found linear at least 90% of the time. */
static void calibration(void **state)
{
    (void)state;
    double x[10], y[10], flat[3] = {1000}, slope[3] = {1000, 0.2};
    struct ptt_fit_opts o = {.alpha = 0.05, .threshold = 0};
    struct ptt_fit_result r;
    int grows = 0, linear = 0;
    range(x, 10, 100, 5000, 0);
    for (int i = 0; i < 500; i++) {
        make(y, x, 10, PTT_FIT_CONSTANT, flat, 50, 1000 + i);
        fit_ok(x, y, 10, &o, &r);
        grows += r.verdict != PTT_FIT_CONSTANT;
        make(y, x, 10, PTT_FIT_LINEAR, slope, 50, 5000 + i);
        fit_ok(x, y, 10, &o, &r);
        linear += r.verdict == PTT_FIT_LINEAR;
    }
    assert_in_range(grows, 0, 25);
    assert_in_range(linear, 450, 500);
}

static void robust_stats(void **state)
{
    (void)state;
    double a[] = {5, 1, 4, 2, 3}, b[] = {4, 1, 3, 2}, c[] = {100, 1, 2, 3, 4, 5, 6, 7, 8, -50};
    near(ptt_fit_median(a, 5), 3, 0);
    near(ptt_fit_median(b, 4), 2.5, 0);
    near(ptt_fit_trimmed_mean(c, 10, 0.1), 4.5, 1e-12); /* 1..8 */
    near(ptt_fit_trimmed_mean(c, 10, 0), 8.6, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constant_noise), cmocka_unit_test(logarithmic),
        cmocka_unit_test(linear),         cmocka_unit_test(quadratic),
        cmocka_unit_test(falling),        cmocka_unit_test(threshold),
        cmocka_unit_test(level),          cmocka_unit_test(exact),
        cmocka_unit_test(large_x),        cmocka_unit_test(bad_input),
        cmocka_unit_test(left_out),       cmocka_unit_test(distributions),
        cmocka_unit_test(calibration),    cmocka_unit_test(robust_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
