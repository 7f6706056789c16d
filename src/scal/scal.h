/* ptt scal (docs/scal.md): what is asked, the points measured, and the writers of the result.
 * src/cmd/scal.c parses the options and decides; measure.c runs a probe (probes.h) or the
 * user's command for each value of N; output.c writes the text, the JSON and the plot. */
#ifndef PTT_SCAL_H
#define PTT_SCAL_H

#include <stddef.h>

#include "analysis/fit.h"
#include "scal/probes.h"

enum scal_spacing { SCAL_LINEAR, SCAL_GEOMETRIC, SCAL_LIST };
enum scal_stat { SCAL_MEDIAN, SCAL_TRIMMED };
enum scal_order { SCAL_SHUFFLED, SCAL_ASCENDING };

/* The statistic "trimmed": the mean without the 10% smallest and 10% largest samples. */
#define SCAL_TRIM 0.10

struct scal_step {
    long n;
    double *samples; /* nanoseconds, in the order measured, rounds one after the other */
    size_t count, cap;
    double *rounds;  /* each round's statistic of its samples */
    size_t mark;     /* where this round's samples begin */
    double value;    /* the median of the rounds' statistics: a round that a burst of the
                        machine's load slowed is outvoted by the others */
    double min, max; /* of all the samples */
};

struct scal {
    const struct ptt_probe *probe; /* NULL: the user's command */
    char **command;                /* NULL-terminated */
    enum scal_spacing spacing;
    enum scal_stat stat;
    enum scal_order order; /* of the steps in a round: shuffled (the same every run), ascending */
    int rounds, repeat, warmup;
    double alpha, threshold;
    double timeout; /* seconds a step may take; 0: no limit */
    struct scal_step *steps;
    size_t nsteps;
};

/* The probe's or the command's durations for every step, every round. 0, or -1 having said why
 * on standard error. Interrupted (SIGINT, SIGTERM, SIGHUP): the child ended, the probe's named
 * semaphores removed, then ptt dies of the signal. */
int scal_measure(struct scal *s);

/* "N" as the text names the parameter: the probe's, or the command's. */
const char *scal_parameter(const struct scal *s);
/* The model's equation ("y = 2.29us + 9.53ns·N"). */
void scal_equation(char *buf, size_t len, enum ptt_fit_model m, const double coef[3]);

void scal_write_text(const struct scal *s, const struct ptt_fit_result *r);
void scal_write_json(const struct scal *s, const struct ptt_fit_result *r);
/* The gnuplot script next to svg (FILE.gp for FILE.svg), then svg made by gnuplot ($PTT_GNUPLOT,
 * else gnuplot). 0, or -1 having said why. */
int scal_plot(const struct scal *s, const struct ptt_fit_result *r, const char *svg);

#endif
