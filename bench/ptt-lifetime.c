/* ptt-lifetime: the fixed costs of a session (docs/performance.md, "Session lifetime").
 *
 *   start    wall time of `ptt trace -q -o F -- /bin/true` minus that of /bin/true
 *   create   CPU time of the program per pthread_create + pthread_join of a thread that returns at
 *            once: native, with libptt preloaded outside any session, traced, and traced with
 *            --start-stopped
 *   lock     CPU time per pthread_mutex_lock + unlock of one mutex: native, preloaded, stopped
 *
 * Every figure of every build given (ptt binaries: each with ../lib/libptt.so) is taken in each
 * round, in turn, so that the load of a shared machine falls on all alike; a round's figure is
 * the median of its samples, and the summary gives the median of the rounds and their spread. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_BUILDS 4
#define MAX_ROUNDS 64

enum metric {
    START,
    CREATE_NATIVE,
    CREATE_PRELOAD,
    CREATE_TRACED,
    CREATE_STOPPED,
    LOCK_NATIVE,
    LOCK_PRELOAD,
    LOCK_STOPPED,
    NMETRICS
};
static const char *const names[NMETRICS] = {
    "start (ms)",          "create native (us)", "create preload (us)", "create traced (us)",
    "create stopped (us)", "lock native (ns)",   "lock preload (ns)",   "lock stopped (ns)"};

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* CPU time of the whole process, all its threads: on a loaded machine, the wall time of a
 * create+join is mostly the wait for a core. */
static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- Child: the loops, timed inside the program ---- */

static void *nothing(void *arg)
{
    return arg;
}

/* CPU ns per create+join, the median of 9 batches of n. */
static double child_create(long n)
{
    double b[9];
    for (int k = 0; k < 9; k++) {
        double t0 = cpu_ns();
        for (long i = 0; i < n; i++) {
            pthread_t th;
            if (pthread_create(&th, NULL, nothing, NULL) || pthread_join(th, NULL))
                return -1;
        }
        b[k] = (cpu_ns() - t0) / (double)n;
    }
    return median(b, 9);
}

/* CPU ns per lock+unlock pair, the median of 9 batches of n. */
static double child_lock(long n)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    double b[9];
    for (int k = 0; k < 9; k++) {
        double t0 = cpu_ns();
        for (long i = 0; i < n; i++) {
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
        }
        b[k] = (cpu_ns() - t0) / (double)n;
    }
    return median(b, 9);
}

static int child_main(char **argv)
{
    int fd = atoi(argv[0]);
    long n = atol(argv[2]);
    double v = !strcmp(argv[1], "create") ? child_create(n) : child_lock(n);
    char line[64];
    int len = snprintf(line, sizeof line, "%.3f\n", v);
    return write(fd, line, (size_t)len) == len && v >= 0 ? 0 : 1;
}

/* ---- Parent ---- */

static char self[PATH_MAX];
static const char *ptt[MAX_BUILDS];
static char lib[MAX_BUILDS][PATH_MAX];
static char trace_file[PATH_MAX];

enum how { NATIVE, PRELOAD, TRACED, STOPPED, TRUE_NATIVE, TRUE_TRACED };

/* Run one child; its figure (from the pipe), or the wall time in ns for the /bin/true runs. */
static double run(int b, enum how how, const char *what, long n)
{
    int p[2];
    if (pipe(p))
        return -1;
    double t0 = now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        unsetenv("PTT_SHM");
        if (how == PRELOAD)
            setenv("LD_PRELOAD", lib[b], 1);
        else
            unsetenv("LD_PRELOAD");
        char sfd[16], sn[32];
        snprintf(sfd, sizeof sfd, "%d", p[1]);
        snprintf(sn, sizeof sn, "%ld", n);
        char *args[16];
        int k = 0;
        if (how == TRACED || how == STOPPED || how == TRUE_TRACED) {
            args[k++] = (char *)ptt[b];
            args[k++] = "trace";
            args[k++] = "-q";
            args[k++] = "-o";
            args[k++] = trace_file;
            args[k++] = "--force";
            if (how == STOPPED)
                args[k++] = "--start-stopped";
            args[k++] = "--";
        }
        if (how == TRUE_NATIVE || how == TRUE_TRACED) {
            args[k++] = "/bin/true";
        } else {
            args[k++] = self;
            args[k++] = "--child";
            args[k++] = sfd;
            args[k++] = (char *)what;
            args[k++] = sn;
        }
        args[k] = NULL;
        if (how == TRACED || how == STOPPED || how == TRUE_TRACED)
            if (!freopen("/dev/null", "w", stderr)) /* ptt trace's summary line */
                _exit(126);
        execv(args[0], args);
        _exit(127);
    }
    close(p[1]);
    char buf[64] = "";
    ssize_t got = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    double wall = now_ns() - t0;
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "ptt-lifetime: a run failed (build %d, mode %d, %s)\n", b, how, what);
        exit(1);
    }
    if (how == TRUE_NATIVE || how == TRUE_TRACED)
        return wall;
    buf[got > 0 ? got : 0] = 0;
    return atof(buf);
}

/* Session start: the median difference of `ptt trace -- /bin/true` and /bin/true, in ms. */
static double start_ms(int b, int runs)
{
    double d[256];
    for (int i = 0; i < runs; i++) {
        double t = run(b, TRUE_TRACED, "", 0), n = run(b, TRUE_NATIVE, "", 0);
        d[i] = (t - n) / 1e6;
    }
    return median(d, runs);
}

static void one_round(int b, int runs, long creates, long pairs, double *out)
{
    out[START] = start_ms(b, runs);
    out[CREATE_NATIVE] = run(b, NATIVE, "create", creates) / 1e3;
    out[CREATE_PRELOAD] = run(b, PRELOAD, "create", creates) / 1e3;
    out[CREATE_TRACED] = run(b, TRACED, "create", creates) / 1e3;
    out[CREATE_STOPPED] = run(b, STOPPED, "create", creates) / 1e3;
    out[LOCK_NATIVE] = run(b, NATIVE, "lock", pairs);
    out[LOCK_PRELOAD] = run(b, PRELOAD, "lock", pairs);
    out[LOCK_STOPPED] = run(b, STOPPED, "lock", pairs);
}

static void summary(int nb, int rounds, double v[][MAX_ROUNDS][NMETRICS])
{
    for (int b = 0; b < nb; b++)
        printf("build %d: %s\n", b + 1, ptt[b]);
    printf("%-22s", "median [min-max]");
    for (int b = 0; b < nb; b++)
        printf("  build %-22d", b + 1);
    printf("\n");
    for (int m = 0; m < NMETRICS; m++) {
        printf("%-22s", names[m]);
        for (int b = 0; b < nb; b++) {
            double x[MAX_ROUNDS];
            for (int r = 0; r < rounds; r++)
                x[r] = v[b][r][m];
            double med = median(x, rounds);
            char cell[64];
            snprintf(cell, sizeof cell, "%.2f [%.2f-%.2f]", med, x[0], x[rounds - 1]);
            printf("  %-28s", cell);
        }
        printf("\n");
    }
}

static const char usage[] =
    "usage: ptt-lifetime [--rounds=N] [--runs=N] [--creates=N] [--pairs=N] PTT [PTT...]\n"
    "  PTT: a ptt binary (its libptt.so at ../lib); several builds are measured in turn\n";

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--child"))
        return child_main(argv + 2);
    int rounds = 3, runs = 21, nb = 0;
    long creates = 2000, pairs = 2000000;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else if (!strncmp(argv[i], "--runs=", 7))
            runs = atoi(argv[i] + 7);
        else if (!strncmp(argv[i], "--creates=", 10))
            creates = atol(argv[i] + 10);
        else if (!strncmp(argv[i], "--pairs=", 8))
            pairs = atol(argv[i] + 8);
        else if (argv[i][0] != '-' && nb < MAX_BUILDS)
            ptt[nb++] = argv[i];
        else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!nb || rounds < 1 || rounds > MAX_ROUNDS || runs < 1 || runs > 256 || creates < 1 ||
        pairs < 1) {
        fputs(usage, stderr);
        return 2;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    for (int b = 0; b < nb; b++) {
        const char *slash = strrchr(ptt[b], '/');
        int dl = slash ? (int)(slash - ptt[b]) : 1;
        if (snprintf(lib[b], sizeof lib[b], "%.*s/../lib/libptt.so", dl, slash ? ptt[b] : ".") >=
            (int)sizeof lib[b])
            return 1;
        if (access(ptt[b], X_OK) || access(lib[b], R_OK)) {
            fprintf(stderr, "ptt-lifetime: no %s or no %s\n", ptt[b], lib[b]);
            return 1;
        }
    }
    snprintf(trace_file, sizeof trace_file, "/tmp/ptt-lifetime-%d.ptt", (int)getpid());
    char load[128] = "";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fgets(load, sizeof load, f))
        load[strcspn(load, "\n")] = 0;
    if (f)
        fclose(f);
    printf("ptt-lifetime: %d rounds, %d start runs, %ld creates, %ld pairs; loadavg %s\n", rounds,
           runs, creates, pairs, load);
    static double v[MAX_BUILDS][MAX_ROUNDS][NMETRICS];
    for (int r = 0; r < rounds; r++)
        for (int b = 0; b < nb; b++)
            one_round(b, runs, creates, pairs, v[b][r]);
    unlink(trace_file);
    summary(nb, rounds, v);
    return 0;
}
