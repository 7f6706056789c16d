/* The built-in probes of ptt scal (docs/scal.md). Each brings a fixture to N (named semaphores
 * open, threads alive, threads waiting, keys, threads at a barrier) and times one operation on
 * it. They run in a child process of ptt scal (ptt_probe_run), read through a pipe: whatever
 * ends the child, the system takes back its threads, keys and memory, and the parent removes
 * the named semaphores it left, which carry its pid (ptt_probe_sweep). */
#ifndef PTT_PROBES_H
#define PTT_PROBES_H

#include <stddef.h>
#include <sys/types.h>

struct ptt_probe {
    const char *name;
    const char *parameter; /* what N counts */
    const char *timed;     /* the operation timed */
    long min, max;         /* the values of N it takes */
    long from, to;         /* its default range */
    /* The fixture brought to n (grown or shrunk); one operation timed; everything undone. */
    int (*size)(long n, char *err, size_t len);
    int (*measure)(double *ns, char *err, size_t len);
    void (*clean)(void);
};

/* The probe of that name, or NULL. */
const struct ptt_probe *ptt_probe_find(const char *name);
/* Every probe, *n of them. */
const struct ptt_probe *ptt_probe_list(size_t *n);

/* In the child process: for each of the n values, in that order, a line "step STEP" (step[i],
 * the value's index in the caller's table), the fixture brought to it, warmup operations
 * untimed, repeat timed, each written to fd as a line "STEP NANOSECONDS"; on failure a line
 * "error MESSAGE". Returns the exit status: 0, everything it made undone; 1 after a
 * failure, leaving the rest to the child's exit and ptt_probe_sweep. */
int ptt_probe_run(const struct ptt_probe *p, const long *values, const size_t *step, size_t n,
                  int repeat, int warmup, int fd);

/* Removes the named semaphores the probe child pid left (after it ended, whatever ended it). */
void ptt_probe_sweep(pid_t pid);

#endif
