/* Least squares, the distributions of its tests, and the scalability verdict (fit.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fit.h"

const char *ptt_fit_name(enum ptt_fit_model m)
{
    static const char *const names[] = {"constant", "logarithmic", "linear", "quadratic"};
    return (unsigned)m < PTT_FIT_NMODELS ? names[m] : "?";
}

double ptt_fit_eval(enum ptt_fit_model m, const double coef[3], double x)
{
    switch (m) {
    case PTT_FIT_LOG: return coef[0] + coef[1] * log(x);
    case PTT_FIT_LINEAR: return coef[0] + coef[1] * x;
    case PTT_FIT_QUADRATIC: return coef[0] + (coef[1] + coef[2] * x) * x;
    default: return coef[0];
    }
}

/* ---- distributions ------------------------------------------------------------------------ */

/* One step of the modified Lentz method: the continued fraction's d and c after a term of
 * numerator num; returns their product (the factor the fraction changes by). */
static double lentz_step(double num, double *d, double *c)
{
    const double tiny = 1e-300;
    *d = 1 + num * *d;
    if (fabs(*d) < tiny)
        *d = tiny;
    *c = 1 + num / *c;
    if (fabs(*c) < tiny)
        *c = tiny;
    *d = 1 / *d;
    return *d * *c;
}

/* The continued fraction of I_x(a, b), which converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double x, double a, double b)
{
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < 1e-300 ? 1e-300 : d);
    double h = d;
    for (int m = 1; m <= 2000; m++) {
        double m2 = 2.0 * m;
        h *= lentz_step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)), &d, &c);
        double del = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)), &d, &c);
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return h;
}

double ptt_fit_ibeta(double x, double a, double b)
{
    if (!(x > 0))
        return 0;
    if (!(x < 1))
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(x, a, b) / a;
    return 1 - front * beta_cf(1 - x, b, a) / b;
}

double ptt_fit_f_sf(double f, double d1, double d2)
{
    if (!(f > 0))
        return 1;
    if (isinf(f))
        return 0;
    return ptt_fit_ibeta(d2 / (d2 + d1 * f), d2 / 2, d1 / 2);
}

double ptt_fit_t_quantile(double p, double df)
{
    if (p == 0.5)
        return 0;
    double q = p < 0.5 ? p : 1 - p; /* the tail beyond |t| */
    /* P(T > t) = I_x(df/2, 1/2) / 2 with x = df / (df + t²), increasing in x: bisect on x. */
    double lo = 0, hi = 1;
    for (int i = 0; i < 200 && hi - lo > 0; i++) {
        double mid = (lo + hi) / 2;
        if (ptt_fit_ibeta(mid, df / 2, 0.5) / 2 < q)
            lo = mid;
        else
            hi = mid;
    }
    double x = (lo + hi) / 2, t = sqrt(df * (1 - x) / x);
    return p < 0.5 ? -t : t;
}

/* ---- robust statistics of repetitions ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ptt_fit_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ptt_fit_trimmed_mean(double *v, size_t n, double trim)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t cut = (size_t)floor(trim * (double)n), k = n - 2 * cut;
    double s = 0;
    for (size_t i = cut; i < n - cut; i++)
        s += v[i];
    return s / (double)k;
}

/* ---- least squares ----------------------------------------------------------------------- */

/* Least squares of y on the k columns a[0..k-1] (n values each; all overwritten) by Householder
 * QR: the coefficients into b, the diagonal of (AᵀA)⁻¹ into v. 0, or -1 when a column depends
 * on the others. */
static int qr_solve(double *const *a, double *y, size_t n, int k, double *b, double *v)
{
    double r[3][3] = {{0}}, ri[3][3] = {{0}}, norm0[3];
    for (int j = 0; j < k; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += a[j][i] * a[j][i];
        norm0[j] = sqrt(s);
    }
    for (int j = 0; j < k; j++) {
        double s = 0;
        for (size_t i = (size_t)j; i < n; i++)
            s += a[j][i] * a[j][i];
        double norm = sqrt(s);
        if (!(norm > 1e-10 * norm0[j])) /* what is left of it lies in the others' span */
            return -1;
        double alpha = a[j][j] > 0 ? -norm : norm;
        a[j][j] -= alpha; /* a[j][j..] is now the reflector */
        double vv = 0;
        for (size_t i = (size_t)j; i < n; i++)
            vv += a[j][i] * a[j][i];
        for (int l = j + 1; l <= k; l++) { /* the columns after j, then y */
            double *col = l < k ? a[l] : y, dot = 0;
            for (size_t i = (size_t)j; i < n; i++)
                dot += a[j][i] * col[i];
            dot = 2 * dot / vv;
            for (size_t i = (size_t)j; i < n; i++)
                col[i] -= dot * a[j][i];
        }
        r[j][j] = alpha;
        for (int l = j + 1; l < k; l++)
            r[j][l] = a[l][j];
    }
    for (int j = k - 1; j >= 0; j--) { /* R b = (Qᵀy)[0..k-1]; R⁻¹ */
        double s = y[j];
        for (int l = j + 1; l < k; l++)
            s -= r[j][l] * b[l];
        b[j] = s / r[j][j];
        ri[j][j] = 1 / r[j][j];
        for (int l = j + 1; l < k; l++) {
            double t = 0;
            for (int m = j + 1; m <= l; m++)
                t += r[j][m] * ri[m][l];
            ri[j][l] = -t / r[j][j];
        }
    }
    for (int j = 0; j < k; j++) { /* (AᵀA)⁻¹ = R⁻¹R⁻ᵀ */
        v[j] = 0;
        for (int l = j; l < k; l++)
            v[j] += ri[j][l] * ri[j][l];
    }
    return 0;
}

/* The points, and what every model's fit shares. */
struct points {
    const double *x, *y;
    size_t n;
    double scale; /* max |x|: linear and quadratic columns are x / scale, for conditioning */
    double floor; /* the smallest residual sum of squares told apart from 0 (rounding) */
    double tss;   /* total sum of squares about the mean */
    double *buf;  /* 4n doubles: three columns and y */
};

/* The value of column j of model m at x (the scaled variable for linear and quadratic). */
static double column(const struct points *p, enum ptt_fit_model m, int j, double x)
{
    if (j == 0)
        return 1;
    if (m == PTT_FIT_LOG)
        return log(x);
    double t = x / p->scale;
    return j == 1 ? t : t * t;
}

/* Model m by least squares into r, whose 'fitted' the caller set when m can be fitted. */
static void fit_model(const struct points *p, enum ptt_fit_model m, double alpha,
                      struct ptt_fit_model_result *r)
{
    static const int ncoef[] = {1, 2, 2, 3};
    int k = ncoef[m];
    size_t n = p->n;
    double *cols[3] = {p->buf, p->buf + n, p->buf + 2 * n}, *yy = p->buf + 3 * n, b[3], v[3];
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < k; j++)
            cols[j][i] = column(p, m, j, p->x[i]);
        yy[i] = p->y[i];
    }
    r->k = k;
    if (qr_solve(cols, yy, n, k, b, v)) {
        r->fitted = 0;
        return;
    }
    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double fit = 0;
        for (int j = 0; j < k; j++)
            fit += b[j] * column(p, m, j, p->x[i]);
        rss += (p->y[i] - fit) * (p->y[i] - fit);
    }
    double dn = (double)n, s2 = rss / (dn - k), tq = ptt_fit_t_quantile(1 - alpha / 2, dn - k);
    for (int j = 0; j < k; j++) {
        /* back from x / scale to x: the j-th power of the scale */
        double unit = m == PTT_FIT_LOG ? 1 : pow(p->scale, j);
        r->coef[j] = b[j] / unit;
        r->se[j] = sqrt(s2 * v[j]) / unit;
        r->ci[j] = tq * r->se[j];
    }
    r->rss = rss;
    rss = fmax(rss, p->floor);
    /* Values that do not vary leave R² undefined (0/0): every model would say 1. */
    r->r2 = p->tss <= p->floor ? NAN : fmax(0, 1 - rss / p->tss);
    if (m == PTT_FIT_CONSTANT && p->tss > p->floor)
        r->r2 = 0;
    r->adj_r2 = 1 - (1 - r->r2) * (dn - 1) / (dn - k);
    double kk = k + 1.0; /* the coefficients and the variance */
    r->aicc = dn * log(rss / dn) + 2 * kk + 2 * kk * (kk + 1) / (dn - kk - 1);
}

/* ---- the verdict ------------------------------------------------------------------------- */

/* The largest change of model m over [xmin, xmax] from its value at xmin, relative to that
 * value; when it is not positive (an intercept below 0), to the mean of the y measured at xmin,
 * else to the mean of all y. */
static double change_of(const struct ptt_fit_result *r, enum ptt_fit_model m, const double *x,
                        const double *y)
{
    const double *c = r->m[m].coef;
    double base = ptt_fit_eval(m, c, r->xmin), dev = ptt_fit_eval(m, c, r->xmax) - base;
    if (m == PTT_FIT_QUADRATIC && c[2] != 0) { /* its vertex, when inside */
        double vx = -c[1] / (2 * c[2]);
        if (vx > r->xmin && vx < r->xmax && fabs(ptt_fit_eval(m, c, vx) - base) > fabs(dev))
            dev = ptt_fit_eval(m, c, vx) - base;
    }
    double first = 0, k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (x[i] == r->xmin) {
            first += y[i];
            k++;
        }
    first /= k;
    double denom = base > 0 ? base : first > 0 ? first : fabs(r->ymean) > 0 ? fabs(r->ymean) : 1;
    return dev / denom;
}

/* The F-tests of the growth models against the constant, the shape, its adjusted p-value. */
static void compare(struct ptt_fit_result *r, double floor, double alpha)
{
    struct ptt_fit_model_result *m = r->m;
    double dn = (double)r->n, rss0 = fmax(m[PTT_FIT_CONSTANT].rss, floor);
    int shapes = 0;
    for (int g = PTT_FIT_LOG; g < PTT_FIT_NMODELS; g++) {
        if (!m[g].fitted)
            continue;
        shapes++;
        double rss = fmax(m[g].rss, floor), d1 = m[g].k - 1, d2 = dn - m[g].k;
        m[g].f = fmax(0, (rss0 - rss) / d1) / (rss / d2);
        m[g].p = ptt_fit_f_sf(m[g].f, d1, d2);
    }
    /* Of the two-coefficient shapes, the closer; the quadratic when its third coefficient
     * lowers the residuals significantly below that one's (F with 1 and n - 3 degrees). */
    r->shape = m[PTT_FIT_LOG].fitted && m[PTT_FIT_LOG].rss < m[PTT_FIT_LINEAR].rss ? PTT_FIT_LOG
                                                                                   : PTT_FIT_LINEAR;
    r->curvature_p = 1;
    if (m[PTT_FIT_QUADRATIC].fitted) {
        double rq = fmax(m[PTT_FIT_QUADRATIC].rss, floor), r2 = fmax(m[r->shape].rss, floor);
        r->curvature_p = ptt_fit_f_sf(fmax(0, r2 - rq) / (rq / (dn - 3)), 1, dn - 3);
        if (r->curvature_p < alpha)
            r->shape = PTT_FIT_QUADRATIC;
    }
    /* The shape was picked among several: its test is judged at alpha / shapes (Bonferroni),
     * which is its p-value times the shapes against alpha. */
    r->p = fmin(1, m[r->shape].p * shapes);
}

/* The points' checks: NULL, or why they cannot be judged. */
static const char *check_points(const double *x, const double *y, size_t n,
                                const struct ptt_fit_opts *o, size_t *distinct)
{
    if (!(o->alpha > 0 && o->alpha < 1) || !(o->threshold >= 0 && isfinite(o->threshold)))
        return "the significance level must be in (0, 1) and the threshold at least 0";
    if (n < PTT_FIT_MIN_POINTS)
        return "too few points: at least 5 are needed";
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return "a value is not a finite number (NaN or infinite)";
        if (fabs(x[i]) > 1e100 || fabs(y[i]) > 1e100)
            return "a value is too large (above 1e100)";
    }
    *distinct = 0;
    double seen[3];
    for (size_t i = 0; i < n && *distinct < 3; i++) {
        size_t k = 0;
        while (k < *distinct && seen[k] != x[i])
            k++;
        if (k == *distinct)
            seen[(*distinct)++] = x[i];
    }
    return *distinct < 2 ? "every point has the same parameter value" : NULL;
}

/* The points' ranges and sums of squares, and what can be fitted. */
static void prepare(struct points *p, struct ptt_fit_result *r, size_t distinct)
{
    size_t n = p->n;
    double ymax = 0, sum = 0;
    int positive = 1;
    r->n = n;
    r->xmin = r->xmax = p->x[0];
    p->scale = 0;
    for (size_t i = 0; i < n; i++) {
        r->xmin = fmin(r->xmin, p->x[i]);
        r->xmax = fmax(r->xmax, p->x[i]);
        p->scale = fmax(p->scale, fabs(p->x[i]));
        ymax = fmax(ymax, fabs(p->y[i]));
        sum += p->y[i];
        positive &= p->x[i] > 0;
    }
    r->ymean = sum / (double)n;
    p->tss = 0;
    for (size_t i = 0; i < n; i++)
        p->tss += (p->y[i] - r->ymean) * (p->y[i] - r->ymean);
    /* Residuals below a billionth of the largest value are rounding: a perfect fit. */
    p->floor = fmax((double)n * (1e-9 * ymax) * (1e-9 * ymax), DBL_MIN);
    r->m[PTT_FIT_CONSTANT].fitted = 1;
    r->m[PTT_FIT_LOG].fitted = positive;
    r->m[PTT_FIT_LINEAR].fitted = 1;
    r->m[PTT_FIT_QUADRATIC].fitted = distinct >= 3 && n >= PTT_FIT_MIN_POINTS + 1;
}

int ptt_fit(const double *x, const double *y, size_t n, const struct ptt_fit_opts *o,
            struct ptt_fit_result *r, const char **err)
{
    size_t distinct;
    memset(r, 0, sizeof *r);
    if ((*err = check_points(x, y, n, o, &distinct)))
        return -1;
    struct points p = {.x = x, .y = y, .n = n, .buf = malloc(4 * n * sizeof(double))};
    if (!p.buf) {
        *err = "out of memory";
        return -1;
    }
    prepare(&p, r, distinct);
    for (int m = 0; m < PTT_FIT_NMODELS; m++)
        if (r->m[m].fitted)
            fit_model(&p, (enum ptt_fit_model)m, o->alpha, &r->m[m]);
    free(p.buf);
    if (!r->m[PTT_FIT_CONSTANT].fitted || !r->m[PTT_FIT_LINEAR].fitted) {
        *err = "the points cannot be fitted";
        return -1;
    }
    compare(r, p.floor, o->alpha);
    r->change = change_of(r, r->shape, x, y);
    r->verdict = PTT_FIT_CONSTANT;
    if (r->p >= o->alpha)
        r->why = PTT_FIT_NOT_SIGNIFICANT;
    else if (fabs(r->change) < o->threshold)
        r->why = PTT_FIT_BELOW_THRESHOLD;
    else {
        r->why = PTT_FIT_SIGNIFICANT;
        r->verdict = r->shape;
    }
    return 0;
}
