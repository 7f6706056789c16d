/* ptt scal's measurements (scal.h): a child process per round runs a probe (probes.h), or the
 * user's command runs once per step and round; ptt reads their lines through a pipe, within the
 * step's time limit. An interruption ends the child (and the command's process group) and
 * removes the probe's named semaphores before ptt dies of the signal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scal/scal.h"
#include "util/util.h"

#define MAX_SAMPLES 10000000 /* per step: 80 MB of them */

static volatile sig_atomic_t interrupted;
static int progress_shown;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* In a child: the signals as they were before ptt caught them. */
static void default_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

/* On a terminal: "ptt scal: N=1200, step 3 of 10, round 1 of 2" (the k-th step run). */
static void progress(const struct scal *s, int round, size_t step, size_t k)
{
    if (!isatty(STDERR_FILENO))
        return;
    fprintf(stderr, "\rptt scal: N=%ld, step %zu of %zu", s->steps[step].n, k + 1, s->nsteps);
    if (s->rounds > 1)
        fprintf(stderr, ", round %d of %d", round + 1, s->rounds);
    fputs("\033[K", stderr);
    progress_shown = 1;
}

static void progress_end(void)
{
    if (progress_shown)
        fputs("\r\033[K", stderr);
    progress_shown = 0;
}

/* ---- a child and its lines --------------------------------------------------------------- */

struct child {
    pid_t pid;
    int fd;    /* what it writes */
    int group; /* the user's command: its own process group, killed whole */
    int eof;
    uint64_t deadline; /* the end of the step's time (ns of CLOCK_MONOTONIC); 0: none */
    size_t start, len;
    char buf[4096];
};

enum { LINE_END = 0, LINE_OK = 1, LINE_TIMEOUT = -1, LINE_INTERRUPTED = -2, LINE_LONG = -3 };

/* Waits for c's output until its deadline. */
static int wait_output(struct child *c)
{
    uint64_t deadline = c->deadline;
    for (;;) {
        if (interrupted)
            return LINE_INTERRUPTED;
        int ms = -1;
        if (deadline) {
            uint64_t now = ptt_mono_ns();
            if (now >= deadline)
                return LINE_TIMEOUT;
            ms = (int)((deadline - now) / 1000000u) + 1;
        }
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int k = poll(&p, 1, ms);
        if (k > 0)
            return LINE_OK;
        if (k < 0 && errno != EINTR)
            return LINE_END;
    }
}

/* The next line of c, without its newline, into *line. */
static int next_line(struct child *c, char **line)
{
    for (;;) {
        char *nl = memchr(c->buf + c->start, '\n', c->len - c->start);
        if (nl) {
            *nl = 0;
            *line = c->buf + c->start;
            c->start = (size_t)(nl + 1 - c->buf);
            return LINE_OK;
        }
        memmove(c->buf, c->buf + c->start, c->len - c->start);
        c->len -= c->start;
        c->start = 0;
        if (c->eof) { /* a last line without its newline */
            c->buf[c->len] = 0;
            *line = c->buf;
            int k = c->len ? LINE_OK : LINE_END;
            c->len = 0;
            return k;
        }
        if (c->len == sizeof c->buf - 1)
            return LINE_LONG;
        int k = wait_output(c);
        if (k != LINE_OK)
            return k;
        ssize_t got = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
        if (got > 0)
            c->len += (size_t)got;
        else if (got == 0 || errno != EINTR)
            c->eof = 1;
    }
}

/* The child killed (with its process group) and waited for. */
static void kill_child(struct child *c)
{
    if (c->pid > 0) {
        kill(c->group ? -c->pid : c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        c->pid = -1;
    }
}

/* The child's end, by its deadline: 0 for exit status 0, else -1 having said how it ended (as
 * who, s for its --timeout). */
static int reap(struct child *c, const char *who, const struct scal *s)
{
    int st;
    for (;;) {
        pid_t k = waitpid(c->pid, &st, c->deadline ? WNOHANG : 0);
        if (k == c->pid)
            break;
        if (interrupted || (k < 0 && errno != EINTR)) {
            kill_child(c);
            return -1;
        }
        if (c->deadline && ptt_mono_ns() >= c->deadline) {
            progress_end();
            ptt_warn("scal", "%s took longer than --timeout=%gs: stopped", who, s->timeout);
            kill_child(c);
            return -1;
        }
        if (c->deadline) {
            struct timespec t = {0, 5000000};
            nanosleep(&t, NULL);
        }
    }
    c->pid = -1;
    if (WIFEXITED(st) && !WEXITSTATUS(st))
        return 0;
    progress_end();
    if (WIFEXITED(st))
        ptt_warn("scal", "%s exited with status %d", who, WEXITSTATUS(st));
    else
        ptt_warn("scal", "%s was killed by signal %d (%s)", who, WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    return -1;
}

/* A line that could not be read: said, and the child killed. */
static int line_failed(struct child *c, int k, const char *who, const struct scal *s)
{
    progress_end();
    if (k == LINE_TIMEOUT)
        ptt_warn("scal", "%s took longer than --timeout=%gs: stopped", who, s->timeout);
    else if (k == LINE_LONG)
        ptt_warn("scal", "%s printed a line longer than %zu bytes", who, sizeof c->buf - 1);
    kill_child(c);
    return -1;
}

static uint64_t deadline_of(const struct scal *s)
{
    return s->timeout > 0 ? ptt_mono_ns() + (uint64_t)(s->timeout * 1e9) : 0;
}

static int add_sample(struct scal_step *st, double ns)
{
    if (st->count == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        double *v = cap <= MAX_SAMPLES ? realloc(st->samples, cap * sizeof *v) : NULL;
        if (!v) {
            ptt_warn("scal", "too many durations at N=%ld (at most %d)", st->n, MAX_SAMPLES);
            return -1;
        }
        st->samples = v;
        st->cap = cap;
    }
    st->samples[st->count++] = ns;
    return 0;
}

/* ---- a probe: a child process per round ------------------------------------------------- */

/* One line of the probe's child: "step I" (a step begins), "I NS" (a duration), "error ...". */
static int probe_line(struct scal *s, char *line, int round, struct child *c, size_t *k)
{
    char *end;
    if (!strncmp(line, "step ", 5)) {
        size_t i = strtoul(line + 5, NULL, 10);
        c->deadline = deadline_of(s);
        if (i < s->nsteps)
            progress(s, round, i, (*k)++);
        return 0;
    }
    if (!strncmp(line, "error ", 6)) {
        progress_end();
        ptt_warn("scal", "%s: %s", s->probe->name, line + 6);
        return -1;
    }
    size_t i = strtoul(line, &end, 10);
    double ns = strtod(end, &end);
    if (i >= s->nsteps || *end) {
        ptt_warn("scal", "%s: an unexpected line from the probe: %s", s->probe->name, line);
        return -1;
    }
    return add_sample(&s->steps[i], ns);
}

static int probe_round(struct scal *s, const size_t *order, int round)
{
    int fd[2];
    pid_t parent = getpid();
    if (pipe2(fd, O_CLOEXEC)) {
        ptt_warn("scal", "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    struct child c = {.pid = fork(), .fd = fd[0]};
    if (c.pid == 0) {
        close(fd[0]);
        default_signals();
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* ptt gone: no probe left running */
        if (getppid() != parent)
            _exit(1);
        long *values = ptt_must(malloc(s->nsteps * sizeof *values));
        for (size_t i = 0; i < s->nsteps; i++)
            values[i] = s->steps[order[i]].n;
        _exit(ptt_probe_run(s->probe, values, order, s->nsteps, s->repeat, s->warmup, fd[1]));
    }
    close(fd[1]);
    if (c.pid < 0) {
        ptt_warn("scal", "fork: %s", strerror(errno));
        close(fd[0]);
        return -1;
    }
    char *line, who[64];
    pid_t pid = c.pid;
    int k, bad = 0;
    size_t run = 0;
    c.deadline = deadline_of(s);
    snprintf(who, sizeof who, "the %s probe", s->probe->name);
    while (!bad && (k = next_line(&c, &line)) == LINE_OK)
        bad = probe_line(s, line, round, &c, &run);
    int rc = bad ? (kill_child(&c), -1) : k != LINE_END ? line_failed(&c, k, who, s) : 0;
    if (c.pid > 0 && reap(&c, who, s))
        rc = -1;
    close(fd[0]);
    ptt_probe_sweep(pid);
    return rc;
}

/* ---- the user's command: one run per step and round -------------------------------------- */

/* A line the command printed: its duration into *ns: 1; 0 for a blank or '#' line; -1 if it is
 * not a duration (a number of nanoseconds, or with a unit: ns, us, µs, ms, s). */
static int parse_duration(const char *line, double *ns)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    const char *p = line + strspn(line, " \t\r");
    if (!*p || *p == '#')
        return 0;
    char *end;
    /* A decimal number: strtod's hexadecimal (0x10), inf and nan are none */
    if (!(isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) ||
        (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
        return -1;
    double v = strtod(p, &end), scale = 1;
    if (end == p)
        return -1;
    end += strspn(end, " \t");
    for (size_t i = 0; *end && i < sizeof units / sizeof units[0]; i++) {
        size_t k = strlen(units[i].unit);
        if (!strncmp(end, units[i].unit, k) && !end[k + strspn(end + k, " \t\r")]) {
            scale = units[i].scale;
            end += k;
        }
    }
    end += strspn(end, " \t\r");
    if (*end || !isfinite(v) || v < 0 || !isfinite(v * scale))
        return -1;
    *ns = v * scale;
    return 1;
}

/* arg with every "{}" replaced by n (malloc'd). */
static char *substitute(const char *arg, long n)
{
    char num[24];
    size_t k = (size_t)snprintf(num, sizeof num, "%ld", n), len = 0;
    for (const char *p = arg; (p = strstr(p, "{}")); p += 2)
        len++;
    char *out = ptt_must(malloc(strlen(arg) + len * k + 1)), *o = out;
    for (const char *p = arg; *p;)
        if (p[0] == '{' && p[1] == '}') {
            memcpy(o, num, k);
            o += k;
            p += 2;
        } else
            *o++ = *p++;
    *o = 0;
    return out;
}

/* In the child: the command with N in its environment and its arguments; never returns. */
static void exec_command(const struct scal *s, long n, int out, int errfd)
{
    char v[24];
    size_t argc = 0;
    while (s->command[argc])
        argc++;
    char **argv = ptt_must(calloc(argc + 1, sizeof *argv));
    for (size_t i = 0; i < argc; i++)
        argv[i] = substitute(s->command[i], n);
    setpgid(0, 0);
    default_signals();
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    snprintf(v, sizeof v, "%ld", n);
    setenv("PTT_SCAL_N", v, 1);
    snprintf(v, sizeof v, "%d", s->repeat + s->warmup);
    setenv("PTT_SCAL_ITERATIONS", v, 1);
    snprintf(v, sizeof v, "%d", s->warmup);
    setenv("PTT_SCAL_WARMUP", v, 1);
    execvp(argv[0], argv);
    int e = errno;
    if (write(errfd, &e, sizeof e) < 0)
        _exit(127);
    _exit(127);
}

/* The command started for N = n, its output on c->fd; -1 (said) if it could not be run. */
static int start_command(const struct scal *s, long n, struct child *c)
{
    int out[2], err[2], e;
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        ptt_warn("scal", "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    c->pid = fork();
    if (c->pid == 0)
        exec_command(s, n, out[1], err[1]);
    close(out[1]);
    close(err[1]);
    c->fd = out[0];
    c->group = 1;
    if (c->pid > 0)
        setpgid(c->pid, c->pid); /* as the child does: whichever comes first */
    ssize_t k = c->pid > 0 ? read(err[0], &e, sizeof e) : 0;
    close(err[0]);
    if (c->pid < 0 || k == sizeof e) {
        progress_end();
        ptt_warn("scal", "cannot run '%s': %s", s->command[0], strerror(c->pid < 0 ? errno : e));
        if (c->pid > 0)
            waitpid(c->pid, NULL, 0);
        close(out[0]);
        return -1;
    }
    return 0;
}

/* The durations of one run, its warm-up left out, into the step. */
static int keep_run(const struct scal *s, struct scal_step *st, const double *v, size_t n)
{
    if (n <= (size_t)s->warmup) {
        progress_end();
        ptt_warn("scal",
                 "the command printed %zu duration%s at N=%ld: none left after the "
                 "%d of --warmup",
                 n, n == 1 ? "" : "s", st->n, s->warmup);
        return -1;
    }
    for (size_t i = (size_t)s->warmup; i < n; i++)
        if (add_sample(st, v[i]))
            return -1;
    return 0;
}

/* One more duration into v (n of them, room for cap). */
static int push(double **v, size_t *n, size_t *cap, double ns, long at)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        double *w = c <= MAX_SAMPLES ? realloc(*v, c * sizeof *w) : NULL;
        if (!w) {
            progress_end();
            ptt_warn("scal", "too many durations at N=%ld (at most %d)", at, MAX_SAMPLES);
            return -1;
        }
        *v = w;
        *cap = c;
    }
    (*v)[(*n)++] = ns;
    return 0;
}

/* The durations the command prints into *v, *n of them. 0, or -1 having said why. */
static int read_durations(struct child *c, const struct scal *s, long at, double **v, size_t *n)
{
    char *line, who[64];
    size_t cap = 0, lineno = 0;
    int k;
    double ns;
    snprintf(who, sizeof who, "the command (at N=%ld)", at);
    while ((k = next_line(c, &line)) == LINE_OK) {
        int d = parse_duration(line, &ns);
        lineno++;
        if (d < 0) {
            char shown[61];
            snprintf(shown, sizeof shown, "%s", line);
            ptt_unctrl(shown, strlen(shown), 0);
            progress_end();
            ptt_warn("scal",
                     "the command printed '%s' (line %zu at N=%ld): not a duration "
                     "(nanoseconds, or a number with ns, us, ms or s)",
                     shown, lineno, at);
            kill_child(c);
            return -1;
        }
        if (d > 0 && push(v, n, &cap, ns, at)) {
            kill_child(c);
            return -1;
        }
    }
    return k == LINE_END ? 0 : line_failed(c, k, who, s);
}

static int command_run(struct scal *s, size_t step, int round, size_t k)
{
    struct scal_step *st = &s->steps[step];
    struct child c = {0};
    char who[64];
    double *v = NULL;
    size_t n = 0;
    progress(s, round, step, k);
    if (start_command(s, st->n, &c))
        return -1;
    c.deadline = deadline_of(s);
    snprintf(who, sizeof who, "the command (at N=%ld)", st->n);
    int rc = read_durations(&c, s, st->n, &v, &n);
    if (c.pid > 0 && reap(&c, who, s))
        rc = -1;
    close(c.fd);
    if (!rc)
        rc = keep_run(s, st, v, n);
    free(v);
    return rc;
}

/* ---- every step ------------------------------------------------------------------------- */

/* A round's statistic of the samples it added to each step. */
static void end_round(struct scal *s, int round)
{
    for (size_t i = 0; i < s->nsteps; i++) {
        struct scal_step *st = &s->steps[i];
        size_t n = st->count - st->mark;
        double *v = ptt_must(malloc(n * sizeof *v));
        memcpy(v, st->samples + st->mark, n * sizeof *v);
        if (!st->rounds)
            st->rounds = ptt_must(calloc((size_t)s->rounds, sizeof *st->rounds));
        st->rounds[round] =
            s->stat == SCAL_TRIMMED ? ptt_fit_trimmed_mean(v, n, SCAL_TRIM) : ptt_fit_median(v, n);
        st->mark = st->count;
        free(v);
    }
}

/* Each step's value: the median of its rounds' statistics; its extremes. */
static void summarize(struct scal *s)
{
    double *v = ptt_must(malloc((size_t)s->rounds * sizeof *v));
    for (size_t i = 0; i < s->nsteps; i++) {
        struct scal_step *st = &s->steps[i];
        memcpy(v, st->rounds, (size_t)s->rounds * sizeof *v);
        st->value = ptt_fit_median(v, (size_t)s->rounds);
        st->min = st->max = st->samples[0];
        for (size_t k = 1; k < st->count; k++) {
            st->min = fmin(st->min, st->samples[k]);
            st->max = fmax(st->max, st->samples[k]);
        }
    }
    free(v);
}

/* The steps of a round in the order they run: ascending, or shuffled (Fisher-Yates with a
 * xorshift generator seeded by the round: the same orders every run). */
static void round_order(const struct scal *s, int round, size_t *order)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(round + 1);
    for (size_t i = 0; i < s->nsteps; i++)
        order[i] = i;
    for (size_t i = s->nsteps; s->order == SCAL_SHUFFLED && i > 1; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

int scal_measure(struct scal *s)
{
    size_t *order = ptt_must(malloc(s->nsteps * sizeof *order));
    int rc = 0;
    catch_signals();
    for (int round = 0; !rc && round < s->rounds; round++) {
        round_order(s, round, order);
        if (s->probe)
            rc = probe_round(s, order, round);
        else
            for (size_t i = 0; !rc && i < s->nsteps; i++)
                rc = command_run(s, order[i], round, i);
        if (interrupted)
            break;
        if (!rc)
            end_round(s, round);
    }
    free(order);
    progress_end();
    if (interrupted) { /* everything undone: die of it, as if not caught */
        signal(interrupted, SIG_DFL);
        raise(interrupted);
        return -1;
    }
    if (!rc)
        summarize(s);
    return rc;
}
