/* Least-squares models of a duration against a growing parameter, and the scalability verdict
 * chosen from them (ptt scal, docs/scal.md). Pure functions: no I/O, no global state.
 *
 * Four models, y the duration, x the parameter:
 *   constant     y = a
 *   logarithmic  y = a + b·ln x      (only when every x > 0)
 *   linear       y = a + b·x
 *   quadratic    y = a + b·x + c·x²
 * each fitted by least squares (Householder QR on scaled columns), with the standard errors of
 * its coefficients, their confidence intervals, R², adjusted R² and AICc.
 *
 * The shape: the closer (smaller residuals) of the logarithmic and linear models, or the
 * quadratic when its curvature is significant at the level alpha (an F-test of its residuals
 * against that model's). The verdict is the shape when its F-test against the constant model is
 * significant at the level alpha, Bonferroni-adjusted for the shapes it was picked among, and its
 * largest change over the range of x, relative to its value at the smallest x, is at least the
 * threshold; otherwise the verdict is constant. */
#ifndef PTT_FIT_H
#define PTT_FIT_H

#include <stddef.h>

enum ptt_fit_model { PTT_FIT_CONSTANT, PTT_FIT_LOG, PTT_FIT_LINEAR, PTT_FIT_QUADRATIC };
#define PTT_FIT_NMODELS 4

/* Fewer points cannot be judged: a two-coefficient model needs 5 for its AICc (n > k + 2,
 * counting the variance), the quadratic 6 (it is left out below that). */
#define PTT_FIT_MIN_POINTS 5

struct ptt_fit_model_result {
    int fitted;     /* 0: too few points or distinct x for it, or an x <= 0 for the logarithm */
    int k;          /* its coefficients: 1, 2 or 3 */
    double coef[3]; /* a, b, c as above (unused ones 0) */
    double se[3];   /* their standard errors */
    double ci[3];   /* half-widths of their (1 - alpha) confidence intervals (Student's t) */
    double rss;     /* residual sum of squares */
    double r2, adj_r2;
    double aicc; /* n ln(rss/n) + 2K + 2K(K+1)/(n-K-1), K = k + 1 (the variance) */
    double f, p; /* growth models: the F-test against the constant model, its p-value */
};

struct ptt_fit_opts {
    double alpha;     /* significance level, 0 < alpha < 1 (0.05) */
    double threshold; /* the smallest relative change over the range called growth, >= 0 (0.1) */
};

enum ptt_fit_why {
    PTT_FIT_SIGNIFICANT,     /* the shape is the verdict */
    PTT_FIT_NOT_SIGNIFICANT, /* constant: the shape's F-test gave p >= alpha */
    PTT_FIT_BELOW_THRESHOLD  /* constant: significant, but |change| < threshold */
};

struct ptt_fit_result {
    size_t n;
    double xmin, xmax, ymean;
    struct ptt_fit_model_result m[PTT_FIT_NMODELS];
    enum ptt_fit_model shape;   /* the growth model that fits best (above) */
    enum ptt_fit_model verdict; /* PTT_FIT_CONSTANT or shape */
    enum ptt_fit_why why;
    double p;           /* the shape's F-test p-value, times the shapes fitted (at most 1) */
    double curvature_p; /* the quadratic's F-test against the better two-coefficient model */
    double change;      /* the shape's largest change over [xmin, xmax] relative to its value at
                           xmin (signed: negative when it falls); when that value is not positive,
                           relative to the y measured at xmin (their mean), else to the mean y */
};

/* Fits the models to the n points (x[i], y[i]) and decides. 0, or -1 with *err set to a
 * sentence (static): fewer than PTT_FIT_MIN_POINTS points, a NaN or infinite value, a single
 * distinct x, bad options, no memory. */
int ptt_fit(const double *x, const double *y, size_t n, const struct ptt_fit_opts *o,
            struct ptt_fit_result *r, const char **err);
/* The model m with coefficients coef at x. */
double ptt_fit_eval(enum ptt_fit_model m, const double coef[3], double x);
/* "constant", "logarithmic", "linear", "quadratic". */
const char *ptt_fit_name(enum ptt_fit_model m);

/* P(F > f) for Fisher's F with d1 and d2 degrees of freedom. */
double ptt_fit_f_sf(double f, double d1, double d2);
/* The p-quantile of Student's t with df degrees of freedom (0 < p < 1). */
double ptt_fit_t_quantile(double p, double df);
/* The regularized incomplete beta function I_x(a, b). */
double ptt_fit_ibeta(double x, double a, double b);

/* The median of v[0..n-1] (n >= 1); v is sorted. */
double ptt_fit_median(double *v, size_t n);
/* The mean of v[0..n-1] (n >= 1) without its floor(trim·n) smallest and largest values
 * (0 <= trim < 0.5); v is sorted. */
double ptt_fit_trimmed_mean(double *v, size_t n, double trim);

#endif
