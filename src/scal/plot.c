/* ptt scal --plot=FILE.svg: a gnuplot script with the points and the models (FILE.gp), and the
 * SVG gnuplot makes of it (scal.h). Both files are made as ptt trace makes its file (mode 0600,
 * no link followed but the user's own: docs/security.md), overwriting an existing one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scal/scal.h"
#include "trace/writer.h"
#include "util/util.h"

/* s as a gnuplot single-quoted string: a quote doubled, control characters made spaces. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("''", f);
        else
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
    fputc('\'', f);
}

/* The y unit of the picture, from the largest value, and its size in nanoseconds. */
static const char *y_unit(const struct scal *s, double *size)
{
    double top = 0;
    for (size_t i = 0; i < s->nsteps; i++)
        top = fmax(top, s->steps[i].value);
    *size = top >= 1e9 ? 1e9 : top >= 1e6 ? 1e6 : top >= 1e3 ? 1e3 : 1;
    return top >= 1e9 ? "s" : top >= 1e6 ? "ms" : top >= 1e3 ? "µs" : "ns";
}

/* Model m as a gnuplot function named name, in the picture's unit. */
static void gp_function(FILE *f, const char *name, enum ptt_fit_model m, const double *c,
                        double size)
{
    fprintf(f, "%s(x) = %.10g", name, c[0] / size);
    if (m == PTT_FIT_LOG)
        fprintf(f, " + %.10g * log(x)", c[1] / size);
    if (m == PTT_FIT_LINEAR || m == PTT_FIT_QUADRATIC)
        fprintf(f, " + %.10g * x", c[1] / size);
    if (m == PTT_FIT_QUADRATIC)
        fprintf(f, " + %.10g * x**2", c[2] / size);
    fputc('\n', f);
}

static void gp_labels(FILE *f, const struct scal *s, const struct ptt_fit_result *r,
                      const char *unit)
{
    char buf[512];
    const char *what = s->probe ? s->probe->name : s->command[0];
    if (r->verdict == PTT_FIT_CONSTANT)
        snprintf(buf, sizeof buf, "%s: constant (%s: %+.1f%% over the range, p = %.2g)", what,
                 ptt_fit_name(r->shape), 100 * r->change, r->p);
    else
        snprintf(buf, sizeof buf, "%s: %s, ×%.3g (%+.0f%%) from N=%ld to N=%ld (R² = %.4f)", what,
                 ptt_fit_name(r->verdict), 1 + r->change, 100 * r->change, s->steps[0].n,
                 s->steps[s->nsteps - 1].n, r->m[r->verdict].r2);
    fputs("set title ", f);
    gp_str(f, buf);
    snprintf(buf, sizeof buf, "N: %s", scal_parameter(s));
    fputs("\nset xlabel ", f);
    gp_str(f, buf);
    snprintf(buf, sizeof buf, "%s (%s)",
             s->probe ? s->probe->timed : "the durations the command printed", unit);
    fputs("\nset ylabel ", f);
    gp_str(f, buf);
    fputc('\n', f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The top of the y axis (ns): the points, the models at both ends and 90% of the samples, with
 * room; the samples above are not drawn (a preempted operation can last 1000 times longer)
 * but counted in a label. */
static void gp_range(FILE *f, const struct scal *s, const struct ptt_fit_result *r, double size)
{
    size_t n = 0, above = 0;
    for (size_t i = 0; i < s->nsteps; i++)
        n += s->steps[i].count;
    double *all = ptt_must(malloc(n * sizeof *all)), top = 0;
    n = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        memcpy(all + n, s->steps[i].samples, s->steps[i].count * sizeof *all);
        n += s->steps[i].count;
        top = fmax(top, s->steps[i].value);
    }
    qsort(all, n, sizeof *all, cmp_double);
    top = fmax(top, all[(size_t)(0.9 * (double)(n - 1))]);
    for (int m = 0; m < PTT_FIT_NMODELS; m++)
        if (m == (int)r->verdict || m == (int)r->shape)
            top = fmax(top, fmax(ptt_fit_eval(m, r->m[m].coef, (double)s->steps[0].n),
                                 ptt_fit_eval(m, r->m[m].coef, (double)s->steps[s->nsteps - 1].n)));
    top *= 1.25;
    for (size_t i = 0; i < n; i++)
        above += all[i] > top;
    free(all);
    fprintf(f, "set yrange [0:%.10g]\n", top / size);
    if (above)
        fprintf(f,
                "set label '%zu of %zu samples above the top, not drawn' at graph 0.02, "
                "graph 0.95 left tc rgb '#707070'\n",
                above, n);
}

static void gp_data(FILE *f, const struct scal *s, double size)
{
    fputs("$samples << EOD\n", f);
    for (size_t i = 0; i < s->nsteps; i++)
        for (size_t k = 0; k < s->steps[i].count; k++)
            fprintf(f, "%ld %.10g\n", s->steps[i].n, s->steps[i].samples[k] / size);
    fputs("EOD\n$steps << EOD\n", f);
    for (size_t i = 0; i < s->nsteps; i++)
        fprintf(f, "%ld %.10g\n", s->steps[i].n, s->steps[i].value / size);
    fputs("EOD\n", f);
}

/* The verdict's model drawn, and the other candidate dashed: the shape when the verdict is
 * constant, the constant when it grows. */
static void gp_plot(FILE *f, const struct scal *s, const struct ptt_fit_result *r, double size)
{
    char eq[160];
    enum ptt_fit_model other = r->verdict == PTT_FIT_CONSTANT ? r->shape : PTT_FIT_CONSTANT;
    gp_function(f, "verdict", r->verdict, r->m[r->verdict].coef, size);
    gp_function(f, "other", other, r->m[other].coef, size);
    fprintf(f,
            "plot $samples using 1:2 with points pt 7 ps 0.45 lc rgb '#b0b0b0' "
            "title 'samples', \\\n     $steps using 1:2 with points pt 7 ps 1 "
            "lc rgb '#1f5fa8' title %s, \\\n     verdict(x) with lines lw 2 lc rgb '#c0282d' "
            "title ",
            s->rounds > 1            ? "'value (median of the rounds)'"
            : s->stat == SCAL_MEDIAN ? "'median'"
                                     : "'trimmed mean'");
    scal_equation(eq, sizeof eq, r->verdict, r->m[r->verdict].coef);
    char title[200];
    snprintf(title, sizeof title, "%s: %s", ptt_fit_name(r->verdict), eq);
    gp_str(f, title);
    scal_equation(eq, sizeof eq, other, r->m[other].coef);
    snprintf(title, sizeof title, "%s: %s", ptt_fit_name(other), eq);
    fputs(", \\\n     other(x) with lines dt 2 lw 1 lc rgb '#3a8f3a' title ", f);
    gp_str(f, title);
    fputc('\n', f);
}

static int write_script(const char *gp, const char *svg, const struct scal *s,
                        const struct ptt_fit_result *r)
{
    struct ptt_output o;
    char err[600];
    double size;
    const char *unit = y_unit(s, &size);
    if (ptt_output_open(gp, 1, 1, &o, err, sizeof err)) {
        ptt_warn("scal", "%s", err);
        return -1;
    }
    FILE *f = fdopen(o.fd, "w");
    if (!f) {
        ptt_warn("scal", "cannot write %s: %s", gp, strerror(errno));
        close(o.fd);
        return -1;
    }
    fputs("# Made by ptt scal (docs/scal.md); 'gnuplot THIS_FILE' makes the picture again.\n"
          "set encoding utf8\nset terminal svg size 800,500 dynamic noenhanced "
          "font 'sans,11' background rgb 'white'\nif (!exists('ptt_stdout')) set output ",
          f);
    gp_str(f, svg);
    fputs("\nset key bottom right box opaque reverse Left\nset grid\nset samples 400\n", f);
    if (s->spacing == SCAL_GEOMETRIC)
        fputs("set logscale x\n", f);
    gp_labels(f, s, r, unit);
    gp_range(f, s, r, size);
    gp_data(f, s, size);
    gp_plot(f, s, r, size);
    if (fclose(f)) {
        ptt_warn("scal", "cannot write %s: %s", gp, strerror(errno));
        return -1;
    }
    return 0;
}

/* gnuplot run on the script, its output (standard output) into svg. */
static int run_gnuplot(const char *gp, const char *svg)
{
    struct ptt_output o;
    char err[600];
    int ep[2], e, st;
    const char *prog = getenv("PTT_GNUPLOT");
    if (!prog || !*prog)
        prog = "gnuplot";
    if (ptt_output_open(svg, 1, 1, &o, err, sizeof err)) {
        ptt_warn("scal", "%s", err);
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC)) {
        ptt_warn("scal", "pipe: %s", strerror(errno));
        close(o.fd);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        dup2(o.fd, STDOUT_FILENO);
        execlp(prog, prog, "-e", "ptt_stdout = 1", gp, (char *)NULL);
        e = errno;
        if (write(ep[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(ep[1]);
    close(o.fd);
    ssize_t k = pid > 0 ? read(ep[0], &e, sizeof e) : 0;
    close(ep[0]);
    if (pid < 0 || k == sizeof e) {
        ptt_warn("scal", "cannot run %s: %s (Debian: gnuplot-nox); 'gnuplot %s' makes %s", prog,
                 strerror(pid < 0 ? errno : e), gp, svg);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        ptt_output_undo(svg, &o);
        return -1;
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        ptt_warn("scal", "%s failed on %s (%s %d)", prog, gp,
                 WIFEXITED(st) ? "exit status" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        ptt_output_undo(svg, &o); /* no picture rather than an empty or partial one */
        return -1;
    }
    return 0;
}

int scal_plot(const struct scal *s, const struct ptt_fit_result *r, const char *svg)
{
    size_t len = strlen(svg);
    char *gp = ptt_must(malloc(len + 4));
    if (len > 4 && !strcmp(svg + len - 4, ".svg"))
        len -= 4;
    memcpy(gp, svg, len);
    strcpy(gp + len, ".gp");
    int rc = write_script(gp, svg, s, r);
    if (!rc)
        rc = run_gnuplot(gp, svg);
    free(gp);
    return rc;
}
