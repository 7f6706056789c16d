/* ptt-bench: what recording costs, as a ratio to the floor of recording one event on this
 * machine (an rdtsc plus a 16-byte store: ../shared/bench/floor.c), measured in the same run.
 *
 * The parent measures the floor, then runs the lock/unlock loop in child processes: plain,
 * with libptt preloaded but not recording, and under `ptt trace` for real (re-executing itself
 * with --child). Children report their timings through a pipe. Every figure is a median.
 * It reports, it asserts nothing: timings vary with the machine and its load. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define MAX_REPS 99
#define MAX_ROUNDS 99
#define MAX_THREADS 64

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, sizeof *v * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- The floor: floor.c's loops, same struct and shape ---- */

struct ev {
    uint16_t id, len;
    uint32_t dts;
    uint64_t obj;
};

static __attribute__((noinline)) double floor_event_ns(struct ev *buf, size_t cap, long n)
{
    double t0 = now();
    uint64_t last = __rdtsc();
    for (long i = 0; i < n; i++) {
        uint64_t t = __rdtsc();
        struct ev *e = &buf[i & (cap - 1)];
        e->id = 3;
        e->len = 16;
        e->dts = (uint32_t)(t - last);
        last = t;
        e->obj = (uint64_t)i;
    }
    return (now() - t0) / n;
}

static __attribute__((noinline)) double floor_pair_ns(long n)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    return (now() - t0) / n;
}

/* ---- Child mode: the lock/unlock loop, each thread on its own mutex ---- */

struct worker {
    _Alignas(64) pthread_mutex_t m; /* a line of its own: no false sharing between threads */
    long pairs;
    double t0, t1;
};

static atomic_int go;

static __attribute__((noinline)) void lock_loop(pthread_mutex_t *m, long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    while (!atomic_load_explicit(&go, memory_order_acquire))
        sched_yield(); /* more threads than cores: let the others reach the start */
    w->t0 = now();
    lock_loop(&w->m, w->pairs);
    w->t1 = now();
    return NULL;
}

/* One repetition: wall time from the first thread's start to the last thread's end. */
static double child_rep(int nthreads, long pairs)
{
    static struct worker w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    atomic_store(&go, 0);
    for (int i = 0; i < nthreads; i++) {
        pthread_mutex_init(&w[i].m, NULL);
        w[i].pairs = pairs;
        if (pthread_create(&th[i], NULL, worker_main, &w[i])) {
            perror("ptt-bench: pthread_create");
            exit(1);
        }
    }
    atomic_store_explicit(&go, 1, memory_order_release);
    double first = 0, last = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        if (!i || w[i].t0 < first)
            first = w[i].t0;
        if (!i || w[i].t1 > last)
            last = w[i].t1;
        pthread_mutex_destroy(&w[i].m);
    }
    return last - first;
}

/* --child FD THREADS PAIRS REPS: one warm-up repetition (first sub-buffers, page faults,
 * caches), then REPS timed ones, each written to FD as one line of wall nanoseconds, then the
 * process's CPU time. */
static int child_main(char **argv)
{
    int fd = atoi(argv[0]), nthreads = atoi(argv[1]), reps = atoi(argv[3]);
    long pairs = atol(argv[2]);
    FILE *out = fdopen(fd, "w");
    if (!out || nthreads < 1 || nthreads > MAX_THREADS || pairs < 1 || reps < 1) {
        fprintf(stderr, "ptt-bench: bad --child arguments\n");
        return 2;
    }
    child_rep(nthreads, pairs);
    for (int r = 0; r < reps; r++)
        fprintf(out, "%.0f\n", child_rep(nthreads, pairs));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(out, "cpu %.0f\n",
            (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3);
    return fclose(out) ? 1 : 0;
}

/* ---- Parent: run the children ---- */

enum mode { PLAIN, PRELOAD, TRACED };

/* One child process: its repetitions, and for a traced one what ptt trace said. */
struct session {
    double wall[MAX_REPS]; /* ns per repetition */
    double child_cpu;      /* ns of CPU the child used (as it reports) */
    double total_cpu;      /* ns of CPU of the whole session: ptt trace and the child */
    unsigned long long events, bytes, lost; /* ptt trace's last line */
    double wait_ms;                         /* time the threads waited for a free sub-buffer */
    int have_end;
};

static char self[PATH_MAX], ptt_path[PATH_MAX], lib_path[PATH_MAX];
static const char *buffer_opt; /* --buffer for ptt trace, or NULL for its default */

static void parse_ptt_stderr(char *text, struct session *s)
{
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "ptt: wrote ", 11)) {
            char *comma = strrchr(line, ',');
            if (sscanf(line, "ptt: wrote %llu events (%llu bytes)", &s->events, &s->bytes) == 2 &&
                comma && sscanf(comma, ", %llu lost", &s->lost) == 1)
                s->have_end = 1;
        } else if (!strncmp(line, "ptt: warning: threads waited ", 29)) {
            sscanf(line + 29, "%lf", &s->wait_ms);
        } else {
            fprintf(stderr, "  | %s\n", line); /* anything unexpected, shown as is */
        }
    }
}

static void read_all(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap &&
           ((n = read(fd, buf + len, cap - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            len += (size_t)n;
    buf[len] = 0;
}

static void exec_child(enum mode mode, int fd, int nthreads, long pairs, int reps,
                       const char *trace)
{
    unsetenv("PTT_SHM");
    if (mode == PRELOAD)
        setenv("LD_PRELOAD", lib_path, 1);
    else
        unsetenv("LD_PRELOAD");
    char sfd[16], nt[16], np[32], nr[16], buf[64];
    snprintf(sfd, sizeof sfd, "%d", fd);
    snprintf(nt, sizeof nt, "%d", nthreads);
    snprintf(np, sizeof np, "%ld", pairs);
    snprintf(nr, sizeof nr, "%d", reps);
    char *args[16];
    int n = 0;
    if (mode == TRACED) {
        args[n++] = ptt_path;
        args[n++] = "trace";
        args[n++] = "-q";
        args[n++] = "-o";
        args[n++] = (char *)trace;
        if (buffer_opt) {
            snprintf(buf, sizeof buf, "--buffer=%s", buffer_opt);
            args[n++] = buf;
        }
        args[n++] = "--";
    }
    args[n++] = self;
    args[n++] = "--child";
    args[n++] = sfd;
    args[n++] = nt;
    args[n++] = np;
    args[n++] = nr;
    args[n] = NULL;
    execv(args[0], args);
    fprintf(stderr, "ptt-bench: cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
}

static double tv_ns(struct timeval tv)
{
    return tv.tv_sec * 1e9 + tv.tv_usec * 1e3;
}

/* Run one child (under ptt trace if TRACED) and collect its figures. */
static int run_child(enum mode mode, int nthreads, long pairs, int reps, const char *trace,
                     struct session *s)
{
    memset(s, 0, sizeof *s);
    int rp[2], ep[2];
    if (pipe(rp) || pipe(ep)) {
        perror("ptt-bench: pipe");
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("ptt-bench: fork");
        return -1;
    }
    if (pid == 0) {
        close(rp[0]);
        close(ep[0]);
        if (mode == TRACED)
            dup2(ep[1], 2); /* ptt trace's summary line */
        close(ep[1]);
        exec_child(mode, rp[1], nthreads, pairs, reps, trace);
    }
    close(rp[1]);
    close(ep[1]);
    char out[64 * MAX_REPS], err[8192];
    read_all(rp[0], out, sizeof out); /* EOF once the child and ptt trace have both ended */
    read_all(ep[0], err, sizeof err);
    close(rp[0]);
    close(ep[0]);
    int st;
    struct rusage ru; /* the session's, its reaped descendants included */
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    s->total_cpu = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
    int got = 0;
    for (char *p = out, *line; (line = strtok(p, "\n")); p = NULL) {
        if (!strncmp(line, "cpu ", 4))
            s->child_cpu = atof(line + 4);
        else if (got < reps)
            s->wall[got++] = atof(line);
    }
    if (mode == TRACED)
        parse_ptt_stderr(err, s);
    if (!WIFEXITED(st) || WEXITSTATUS(st) || got != reps || (mode == TRACED && !s->have_end)) {
        fprintf(stderr,
                "ptt-bench: a %s child (%d threads) failed (status 0x%x, %d of %d "
                "repetitions)\n",
                mode == TRACED ? "traced" : "untraced", nthreads, st, got, reps);
        return -1;
    }
    return 0;
}

static void cpu_model(char *model, size_t len, int *vm)
{
    snprintf(model, len, "unknown CPU");
    *vm = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    int got_model = 0, got_flags = 0;
    while ((!got_model || !got_flags) && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        if (!got_model && !strncmp(line, "model name", 10)) {
            snprintf(model, len, "%s", colon + 2);
            model[strcspn(model, "\n")] = 0;
            got_model = 1;
        } else if (!got_flags && !strncmp(line, "flags", 5)) {
            *vm = strstr(line, " hypervisor") != NULL;
            got_flags = 1;
        }
    }
    fclose(f);
}

static int locate(void)
{
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self);
    *strrchr(dir, '/') = 0;
    const char *env = getenv("PTT");
    if (env && *env)
        snprintf(ptt_path, sizeof ptt_path, "%s", env);
    else if (snprintf(ptt_path, sizeof ptt_path, "%s/../bin/ptt", dir) >= (int)sizeof ptt_path)
        return -1;
    if (snprintf(lib_path, sizeof lib_path, "%s/../lib/libptt.so", dir) >= (int)sizeof lib_path)
        return -1;
    if (access(ptt_path, X_OK)) {
        fprintf(stderr, "ptt-bench: no ptt at %s (build it, or set PTT)\n", ptt_path);
        return -1;
    }
    if (access(lib_path, R_OK)) {
        fprintf(stderr, "ptt-bench: no libptt.so at %s\n", lib_path);
        return -1;
    }
    return 0;
}

/* A figure over the rounds: its median, and the spread. */
static void line(const char *what, const double *v, int n, const char *unit)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    printf("  %-48s %8.2f %-9s (%.2f .. %.2f)\n", what, median(v, n), unit, lo, hi);
}

/* Other work on the machine disturbs the figures: show it. */
static const char *loadavg(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) {
        if (fgets(buf, (int)len, f))
            buf[strcspn(buf, "\n")] = 0;
        fclose(f);
    }
    return buf;
}

static const char usage_text[] =
    "usage: ptt-bench [--rounds=N] [--reps=N] [--pairs=N] [--floor-events=N]\n"
    "                 [--threads=N,...] [--buffer=SIZE] [--keep]\n"
    "Measure the cost of recording with ptt against the floor of recording one event.\n"
    "\n"
    "  --rounds=N        rounds, each measuring every figure once; medians over them\n"
    "                    are reported (default 7)\n"
    "  --reps=N          timed repetitions of a lock loop in each process (default 3)\n"
    "  --pairs=N         lock/unlock pairs per thread per repetition (default 100000)\n"
    "  --floor-events=N  events per round of the floor loop (default 10000000)\n"
    "  --threads=LIST    thread counts of the throughput runs (default 1,2,4)\n"
    "  --buffer=SIZE     pool size passed to ptt trace (default: ptt trace's own)\n"
    "  --keep            keep the last round's trace files (in $TMPDIR, else /tmp)\n";

#define MAX_TC 8 /* thread counts */

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "--child"))
        return child_main(argv + 2);
    int rounds = 7, reps = 3, keep = 0, ntc = 0, threads[MAX_TC];
    long pairs = 100000, floor_n = 10000000;
    const char *tlist = "1,2,4";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--rounds=", 9))
            rounds = atoi(a + 9);
        else if (!strncmp(a, "--reps=", 7))
            reps = atoi(a + 7);
        else if (!strncmp(a, "--pairs=", 8))
            pairs = atol(a + 8);
        else if (!strncmp(a, "--floor-events=", 15))
            floor_n = atol(a + 15);
        else if (!strncmp(a, "--threads=", 10))
            tlist = a + 10;
        else if (!strncmp(a, "--buffer=", 9))
            buffer_opt = a + 9;
        else if (!strcmp(a, "--keep"))
            keep = 1;
        else {
            int help = !strcmp(a, "--help");
            fputs(usage_text, help ? stdout : stderr);
            return help ? 0 : 2;
        }
    }
    for (const char *p = tlist; *p; p += strspn(p, ",")) {
        char *end;
        long t = strtol(p, &end, 10);
        if (end == p || t < 1 || t > MAX_THREADS || ntc == MAX_TC || (!ntc && t != 1)) {
            fprintf(stderr,
                    "ptt-bench: --threads=%s: up to %d counts from 1 to %d, the first 1 "
                    "(the per-event cost)\n",
                    tlist, MAX_TC, MAX_THREADS);
            return 2;
        }
        threads[ntc++] = (int)t;
        p = end;
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || reps < 1 || reps > MAX_REPS || pairs < 1 ||
        floor_n < 1 || !ntc) {
        fputs(usage_text, stderr);
        return 2;
    }
    if (locate())
        return 2;

    char model[256], load[128];
    int vm;
    cpu_model(model, sizeof model, &vm);
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    printf("ptt-bench: the cost of recording with ptt, against the floor of recording one event\n");
    printf("machine:  %ld cores online, %s%s\n", sysconf(_SC_NPROCESSORS_ONLN), model,
           vm ? " (virtual machine: hypervisor flag set)" : "");
    printf("method:   %d rounds; each round measures every figure once, a lock loop figure\n"
           "          being the median of %d timed repetitions in a fresh process (after 1\n"
           "          warm-up repetition). Shown: the median over the rounds (min .. max).\n",
           rounds, reps);
    printf("traced:   %s trace -q -o %s/ptt-bench-%d-Nt.ptt%s%s -- ptt-bench --child ...\n",
           ptt_path, tmp, (int)getpid(), buffer_opt ? " --buffer=" : "",
           buffer_opt ? buffer_opt : "");
    printf("load average at the start: %s\n\n", loadavg(load, sizeof load));
    fflush(stdout);

    size_t cap = 1 << 20;
    struct ev *buf = aligned_alloc(64, cap * sizeof(struct ev));
    for (size_t i = 0; i < cap; i++)
        buf[i].obj = 0;
    floor_event_ns(buf, cap, floor_n / 10); /* warm the buffer */

    static double fe[MAX_ROUNDS], fp[MAX_ROUNDS], pre[MAX_ROUNDS], added[MAX_ROUNDS],
        ratio[MAX_ROUNDS];
    static double plain[MAX_TC][MAX_ROUNDS], traced[MAX_TC][MAX_ROUNDS]; /* ns per rep */
    static double prate[MAX_TC][MAX_ROUNDS], trate[MAX_TC][MAX_ROUNDS];  /* Mpairs/s */
    unsigned long long events[MAX_TC] = {0}, lost[MAX_TC] = {0}, fbytes = 0, fevents = 0;
    double wait_ms[MAX_TC] = {0}, drain_cpu[MAX_TC] = {0}, fixed[MAX_ROUNDS];
    struct session s;
    char trace[PATH_MAX];
    for (int r = 0; r < rounds; r++) {
        fe[r] = floor_event_ns(buf, cap, floor_n);
        fp[r] = floor_pair_ns(floor_n);
        if (run_child(PRELOAD, 1, pairs, reps, NULL, &s))
            return 1;
        pre[r] = median(s.wall, reps) / pairs;
        /* ptt trace's CPU time with next to nothing to drain: creating the pool and so on. */
        snprintf(trace, sizeof trace, "%s/ptt-bench-%d-empty.ptt", tmp, (int)getpid());
        int failed = run_child(TRACED, 1, 1, 1, trace, &s);
        unlink(trace);
        if (failed)
            return 1;
        fixed[r] = s.total_cpu - s.child_cpu;
        for (int i = 0; i < ntc; i++) {
            double all = (double)pairs * threads[i];
            if (run_child(PLAIN, threads[i], pairs, reps, NULL, &s))
                return 1;
            plain[i][r] = median(s.wall, reps) / pairs;
            prate[i][r] = all / median(s.wall, reps) * 1e3;
            snprintf(trace, sizeof trace, "%s/ptt-bench-%d-%dt.ptt", tmp, (int)getpid(),
                     threads[i]);
            if (run_child(TRACED, threads[i], pairs, reps, trace, &s)) {
                unlink(trace);
                return 1;
            }
            traced[i][r] = median(s.wall, reps) / pairs;
            trate[i][r] = all / median(s.wall, reps) * 1e3;
            events[i] += s.events;
            lost[i] += s.lost;
            wait_ms[i] += s.wait_ms;
            drain_cpu[i] += s.total_cpu - s.child_cpu;
            struct stat st;
            if (!stat(trace, &st)) {
                fbytes += (unsigned long long)st.st_size;
                fevents += s.events;
            }
            if (!keep || r < rounds - 1)
                unlink(trace);
        }
        added[r] = (traced[0][r] - plain[0][r]) / 4;
        ratio[r] = added[r] / fe[r];
    }
    int buf_ok = buf[5].id == 3;
    free(buf);
    if (!buf_ok)
        return 1;

    printf("Floor: floor.c's loops, %ld iterations per round\n", floor_n);
    line("rdtsc + 16-byte store into a private buffer", fe, rounds, "ns/event");
    line("uncontended lock+unlock pair, in-line", fp, rounds, "ns/pair");
    printf("\nUncontended lock/unlock loop, 1 thread, %ld pairs per repetition\n", pairs);
    line("untraced", plain[0], rounds, "ns/pair");
    line("libptt preloaded, not recording", pre, rounds, "ns/pair");
    line("traced (ptt trace; 4 events per pair)", traced[0], rounds, "ns/pair");
    line("added cost per event = (traced - untraced) / 4", added, rounds, "ns/event");
    line("ratio to the floor (target: within 2x)", ratio, rounds, "x");

    printf("\nThroughput: each thread runs the loop on its own mutex; events = 4 x pairs\n");
    printf("  %7s %9s %9s %9s %7s %11s %11s %4s %7s %7s\n", "threads", "untraced", "traced",
           "traced", "scaling", "events", "lock/unlock", "lost", "waited", "drain");
    printf("  %7s %9s %9s %9s %7s %11s %11s %4s %7s %7s\n", "", "Mpairs/s", "Mpairs/s", "Mevents/s",
           "", "written", "events", "", "ms", "ns/ev");
    double base = median(trate[0], rounds), fixed_ns = median(fixed, rounds);
    for (int i = 0; i < ntc; i++) {
        double tr = median(trate[i], rounds);
        unsigned long long expect = 4ull * (unsigned long long)pairs * (unsigned)threads[i] *
                                    (unsigned)(reps + 1) * (unsigned)rounds;
        /* Too few events to stand out from the fixed cost's noise: no figure. */
        double drain = events[i] ? (drain_cpu[i] - fixed_ns * rounds) / (double)events[i] : -1;
        char dbuf[16] = "-";
        if (drain >= 0)
            snprintf(dbuf, sizeof dbuf, "%.2f", drain);
        printf("  %7d %9.1f %9.2f %9.1f %6.2fx %11llu %11llu %4llu %7.1f %7s\n", threads[i],
               median(prate[i], rounds), tr, 4 * tr, tr / base, events[i], expect, lost[i],
               wait_ms[i], dbuf);
    }
    printf("  Rates: all threads' pairs over the wall time from the first thread's start to\n"
           "  the last one's end. 'events written': ptt trace's count over all rounds, warm-ups\n"
           "  included like 'lock/unlock events', plus the threads' and the process's own.\n"
           "  'waited': threads waiting for a free sub-buffer (the pool was full). 'drain':\n"
           "  CPU time of ptt trace itself per event written (reading the pool, writing the\n"
           "  file), which competes with the traced threads for the cores; less the %.1f ms\n"
           "  it costs with nothing to record (median; creating the pool and so on).\n",
           fixed_ns / 1e6);
    double per_event = fevents ? (double)fbytes / (double)fevents : 0.0;
    printf("\nTrace files: %llu bytes for %llu events: %.2f bytes/event, %.1f a lock+unlock pair\n",
           fbytes, fevents, per_event, 4 * per_event);
    if (keep)
        printf("kept: %s/ptt-bench-%d-*t.ptt (the last round's)\n", tmp, (int)getpid());
    printf("load average at the end: %s\n", loadavg(load, sizeof load));
    return 0;
}
