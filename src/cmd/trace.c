/* ptt trace: create the pool, run the program with libptt preloaded, drain the pool into the
 * trace file until every process of the session has ended, and exit with the program's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "cmd/check.h"
#include "cmd/cmds.h"
#include "session/attach.h"
#include "session/control.h"
#include "session/daemon.h"
#include "session/guardian.h"
#include "session/session.h"
#include "trace/events.h"
#include "trace/parts.h"
#include "cmd/usage.h"
#include "util/util.h"

/* ptt trace's own failures, told apart from the program's statuses as timeout(1) and env(1)
 * do; 126 and 127: the program cannot run. */
#define TRACE_FAILED PTT_TRACE_FAILED

#ifndef PTT_LIBDIR
#define PTT_LIBDIR "/usr/local/lib"
#endif

static int tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[8192];
    int ok = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    fclose(f);
    return ok;
#else
    return 0;
#endif
}

static uint64_t default_pool_size(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t s = pages > 0 && psz > 0 && cpus > 0
                     ? (uint64_t)pages * (uint64_t)psz / 128 * (uint64_t)cpus
                     : 0;
    if (s < (8u << 20))
        s = 8u << 20;
    if (s > (64u << 20))
        s = 64u << 20;
    return s;
}

/* libptt.so: $PTT_LIB, else next to this program (../lib), else the install directory. */
static int find_lib(char *out, size_t len)
{
    const char *env = getenv("PTT_LIB");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            if (snprintf(out, len, "%s/../lib/libptt.so", exe) < (int)len && !access(out, R_OK))
                return 0;
        }
    }
    snprintf(out, len, "%s/libptt.so", PTT_LIBDIR);
    return access(out, R_OK);
}

static int parse_classes(const char *list, uint64_t *mask)
{
    char bad[32];
    if (ptt_parse_classes(list, mask, bad, sizeof bad) == 0)
        return 0;
    ptt_warn("trace", "unknown event class '%s'; 'ptt trace --list' lists them", bad);
    return -1;
}

/* One argument of the command line as a shell reads it back: as it is, in '...', or, when it holds
 * a control character or bytes that are not UTF-8 (ptt_term_char), in $'...' with \xNN for each
 * of their bytes, so that the INFO block keeps one line per key and no reader prints an escape
 * sequence of it. */
static void append_quoted(char *buf, size_t len, const char *arg)
{
    size_t l = strlen(buf), n = strlen(arg);
    int plain = *arg && !arg[strcspn(arg, " \t\n'\"\\$`*?;&|<>()[]{}!#~")], ansi = 0;
    for (size_t i = 0, k; i < n; i += k) {
        int unsafe;
        k = ptt_term_char(arg, n, i, &unsafe);
        ansi |= unsafe;
    }
    if (plain && !ansi) {
        snprintf(buf + l, len - l, "%s%s", l ? " " : "", arg);
        return;
    }
    snprintf(buf + l, len - l, "%s%s'", l ? " " : "", ansi ? "$" : "");
    for (size_t i = 0, k; i < n; i += k) {
        int unsafe;
        k = ptt_term_char(arg, n, i, &unsafe);
        for (size_t j = i; j < i + k; j++) {
            unsigned char c = (unsigned char)arg[j];
            l = strlen(buf);
            if (unsafe)
                snprintf(buf + l, len - l, "\\x%02x", c);
            else if (ansi && (c == '\'' || c == '\\'))
                snprintf(buf + l, len - l, "\\%c", c);
            else
                snprintf(buf + l, len - l, c == '\'' ? "'\\''" : "%c", c);
        }
    }
    l = strlen(buf);
    snprintf(buf + l, len - l, "'");
}

static char *make_info(char **argv, int tsc, double hz, const struct ptt_pool_geom *pool,
                       int overflow, const char *events, int light)
{
    char cmd[8192] = "";
    for (char **a = argv; *a; a++)
        append_quoted(cmd, sizeof cmd, *a);
    struct utsname u;
    uname(&u);
    char when[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&now, &tm));
    char *text = NULL;
    size_t tl = 0;
    FILE *f = ptt_must(open_memstream(&text, &tl));
    fprintf(f, "ptt_version=%s\nhost=%s\nkernel=%s %s %s\ncommand=%s\nstart_time=%s\n", PTT_VERSION,
            u.nodename, u.sysname, u.release, u.machine, cmd, when);
    fprintf(f, "clock=%s\nticks_per_second=%.0f\n", tsc ? "tsc" : "monotonic", hz);
    fprintf(f, "pool_size=%llu\nsubbuffer_size=%u\nsubbuffers=%u\noverflow=%s\nevents=%s\n",
            (unsigned long long)pool->total_size, pool->buf_size, pool->nbufs,
            overflow ? "discard" : "block", events);
    fprintf(f, "level=%s\n", light ? "light" : "full");
    if (fclose(f) || !text) /* the stream's buffer could not grow */
        ptt_out_of_memory();
    return text;
}

/* One reading of the trace clock and CLOCK_MONOTONIC at the same instant: the monotonic time
 * read between two TSC readings close together (a preemption in between is read again). */
static void clock_pair(uint64_t *t, uint64_t *m)
{
    for (int i = 0; i < 8; i++) {
        uint64_t a = ptt_ticks(1);
        *m = ptt_mono_ns();
        uint64_t b = ptt_ticks(1);
        *t = a + (b - a) / 2;
        if (b - a < 20000)
            return;
    }
}

/* Ticks per second of the trace clock, measured against CLOCK_MONOTONIC from the start of the
 * session's set-up (t0, m0) to its end, 2 ms at least: the reader prefers the slope between the
 * first and last clock records of the file, this is for a file with one only and for the hang
 * reports. No sleep of its own: the set-up (pool, guardian, output) takes most of it. */
static void calibrate_start(int tsc, uint64_t *t0, uint64_t *m0)
{
    if (tsc)
        clock_pair(t0, m0);
}

static double calibrate_end(int tsc, uint64_t t0, uint64_t m0)
{
    if (!tsc)
        return 1e9;
    uint64_t t1, m1;
    clock_pair(&t1, &m1);
    if (m1 - m0 < 2000000) {
        struct timespec d = {0, (long)(2000000 - (m1 - m0))};
        nanosleep(&d, NULL);
        clock_pair(&t1, &m1);
    }
    return (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
}

/* An error once the pool exists: nothing of the session is left behind. */
static int undo(struct ptt_session *s)
{
    if (s->ctl_fd >= 0) {
        close(s->ctl_fd);
        unlink(s->ctl_path);
        s->ctl_fd = -1;
    }
    ptt_procs_close(s->procs);
    s->procs = NULL;
    ptt_daemon_destroy(&s->d);
    return TRACE_FAILED;
}

/* Whether a reaped process's pidfd tells its status (ptt_procs_supported), probed when the
 * guardian starts; -1: not known. */
static int procs_ok = -1;
static pid_t guardian_pid;

/* The session's guardian: whatever ends ptt trace, nothing of the session outlives it. */
static int guardian(void)
{
    int ok;
    int fd = ptt_guardian_start(&ok, &guardian_pid);
    if (fd >= 0)
        procs_ok = ok;
    if (fd < 0)
        ptt_warn("trace", "no guardian (%s): if ptt trace is killed, its pool stays in /dev/shm",
                 strerror(errno));
    return fd;
}

/* What the command line and the environment ask of ptt trace. */
struct trace_opts {
    const char *output, *events;
    struct ptt_pool_config cfg;
    int follow, quiet, kill_on_hang, force, check;
    uint64_t hang_ns, flight_size;
    uint64_t max_size; /* --max-size: rotation into parts */
    unsigned max_files;
    const char *max_size_arg;
    char **prog;
    pid_t pid;         /* -p: attach to it */
    double duration_s; /* --duration (with -p) */
};

/* What ptt trace changed in its own process, given back to the program before exec. */
struct saved_sigs {
    struct sigaction xfsz, pipe;
    sigset_t mask;
};

/* An option with a size: --buffer, --subbuffer, --flight-recorder, --max-size. */
static int size_option(struct trace_opts *o, int c, const char *arg)
{
    int64_t v = ptt_parse_size(arg);
    switch (c) {
    case 'b':
        if (v < (1 << 20) || v > (1ll << 40)) {
            ptt_warn("trace", "--buffer=%s: give a size from 1M to 1T, e.g. 64M", arg);
            return -1;
        }
        o->cfg.size = (uint64_t)v;
        break;
    case 's':
        if (v < 4096 || v > (16 << 20) || v % 4096) {
            ptt_warn("trace", "--subbuffer=%s: give a multiple of 4K from 4K to 16M", arg);
            return -1;
        }
        o->cfg.buf_size = (uint32_t)v;
        break;
    case 'M': /* checked against the sub-buffer size once every option is read */
        if (v <= 0) {
            ptt_warn("trace", "--max-size=%s: give a size, e.g. 64M", arg);
            return -1;
        }
        o->max_size = (uint64_t)v;
        o->max_size_arg = arg;
        break;
    default: /* 'F' */
        if (v < 65536) {
            ptt_warn("trace", "--flight-recorder=%s: give a size of at least 64K, e.g. 16M", arg);
            return -1;
        }
        o->flight_size = (uint64_t)v;
        break;
    }
    return 0;
}

/* An option that takes one of a few words: --overflow, --clock, --level. */
static int word_option(struct trace_opts *o, int c, const char *arg)
{
    if (c == 'O') {
        if (!strcmp(arg, "block"))
            o->cfg.overflow = PTT_OVERFLOW_BLOCK;
        else if (!strcmp(arg, "discard"))
            o->cfg.overflow = PTT_OVERFLOW_DISCARD;
        else {
            ptt_warn("trace", "--overflow=%s: use block or discard", arg);
            return -1;
        }
    } else if (c == 'c') {
        if (!strcmp(arg, "tsc")) {
            if (!tsc_invariant()) {
                ptt_warn("trace", "--clock=tsc: this CPU has no invariant TSC");
                return -1;
            }
            o->cfg.clock_tsc = 1;
        } else if (!strcmp(arg, "monotonic"))
            o->cfg.clock_tsc = 0;
        else {
            ptt_warn("trace", "--clock=%s: use tsc or monotonic", arg);
            return -1;
        }
    } else { /* 'L' */
        if (strcmp(arg, "light") && strcmp(arg, "full")) {
            ptt_warn("trace", "--level=%s: use light or full", arg);
            return -1;
        }
        o->cfg.light = arg[0] == 'l';
    }
    return 0;
}

/* An option that takes a number: --hang-timeout, --backtrace, --max-files. */
static int number_option(struct trace_opts *o, int c, const char *arg)
{
    char *end;
    if (c == 'H') {
        double sec = strtod(arg, &end);
        if (*end || !(sec > 0) || sec > 1e6) {
            ptt_warn("trace", "--hang-timeout=%s: give seconds, e.g. 5 or 0.5", arg);
            return -1;
        }
        o->hang_ns = (uint64_t)(sec * 1e9);
    } else if (c == 'p') {
        long n = strtol(arg, &end, 10);
        if (*end || n < 1 || n > INT_MAX) {
            ptt_warn("trace", "-p %s: give the process id of a running program", arg);
            return -1;
        }
        o->pid = (pid_t)n;
    } else if (c == 'D') {
        double sec = strtod(arg, &end);
        if (*end || !(sec > 0) || sec > 1e7) {
            ptt_warn("trace", "--duration=%s: give seconds, e.g. 10 or 0.5", arg);
            return -1;
        }
        o->duration_s = sec;
    } else if (c == 'N') {
        long n = strtol(arg, &end, 10);
        if (*end || n < 1 || n > 1000000) {
            ptt_warn("trace", "--max-files=%s: give a number of parts from 1 to 1000000", arg);
            return -1;
        }
        o->max_files = (unsigned)n;
    } else { /* 'B' */
        long n = strtol(arg, &end, 10);
        if (*end || n < 0 || n > 32) {
            ptt_warn("trace", "--backtrace=%s: give a number of frames from 0 to 32", arg);
            return -1;
        }
        o->cfg.backtrace = (unsigned)n;
    }
    return 0;
}

static void list_classes(void)
{
    unsigned n;
    const struct ptt_classinfo *cl = ptt_classes(&n);
    for (unsigned i = 0; i < n; i++)
        printf("%-8s %s\n", cl[i].name, cl[i].description);
}

/* The defaults, then $PTT_BUFFER and $PTT_CLOCK; options override them. */
static int trace_defaults(struct trace_opts *o)
{
    *o = (struct trace_opts){.events = getenv("PTT_EVENTS"), .follow = 1};
    /* Default: every class but key (getspecific and setspecific are hot in real programs). */
    o->cfg = (struct ptt_pool_config){0,
                                      32u << 10,
                                      tsc_invariant(),
                                      PTT_OVERFLOW_BLOCK,
                                      ptt_all_classes() & ~(1ull << PTT_CLASS_key),
                                      0,
                                      0,
                                      0,
                                      1};
    const char *bufenv = getenv("PTT_BUFFER");
    int64_t v;
    if (bufenv && *bufenv) {
        if ((v = ptt_parse_size(bufenv)) < (1 << 20)) {
            ptt_warn("trace", "PTT_BUFFER='%s' is not a size of at least 1M", bufenv);
            return -1;
        }
        o->cfg.size = (uint64_t)v;
    }
    const char *clk = getenv("PTT_CLOCK");
    if (clk && !strcmp(clk, "monotonic"))
        o->cfg.clock_tsc = 0;
    return 0;
}

/* --max-size and --max-files, with what they need and exclude. */
static int rotation_options(const struct trace_opts *o)
{
    uint64_t min = (uint64_t)PTT_ROTATE_MIN_SUBBUFFERS * o->cfg.buf_size;
    if (o->max_files && !o->max_size) {
        ptt_warn("trace", "--max-files=%u needs --max-size=SIZE", o->max_files);
        return -1;
    }
    if (o->max_size && o->output && !strcmp(o->output, "-")) {
        ptt_warn("trace", "--max-size writes the parts FILE.1, FILE.2, ...: give -o FILE");
        return -1;
    }
    if (o->max_size && o->flight_size) {
        ptt_warn("trace", "--max-size and --flight-recorder exclude each other: keep the newest "
                          "events on disk with --max-size=SIZE --max-files=N");
        return -1;
    }
    if (o->max_size && o->max_size < min) {
        ptt_warn("trace",
                 "--max-size=%s: give at least %u sub-buffers (%u x %u = %llu bytes), e.g. 64M",
                 o->max_size_arg, PTT_ROTATE_MIN_SUBBUFFERS, PTT_ROTATE_MIN_SUBBUFFERS,
                 o->cfg.buf_size, (unsigned long long)min);
        return -1;
    }
    return 0;
}

/* The options and what they imply together; returns -1 to go on, else the exit status. */
static int trace_options(struct trace_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"events", required_argument, 0, 'e'},
                                         {"buffer", required_argument, 0, 'b'},
                                         {"subbuffer", required_argument, 0, 's'},
                                         {"overflow", required_argument, 0, 'O'},
                                         {"clock", required_argument, 0, 'c'},
                                         {"no-follow", no_argument, 0, 'n'},
                                         {"list", no_argument, 0, 'l'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"hang-timeout", required_argument, 0, 'H'},
                                         {"kill-on-hang", no_argument, 0, 'K'},
                                         {"flight-recorder", required_argument, 0, 'F'},
                                         {"start-stopped", no_argument, 0, 'S'},
                                         {"level", required_argument, 0, 'L'},
                                         {"backtrace", required_argument, 0, 'B'},
                                         {"force", no_argument, 0, 'f'},
                                         {"check", no_argument, 0, 'C'},
                                         {"max-size", required_argument, 0, 'M'},
                                         {"max-files", required_argument, 0, 'N'},
                                         {"pid", required_argument, 0, 'p'},
                                         {"duration", required_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "+o:p:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'e': o->events = optarg; break;
        case 'b':
        case 's':
        case 'M':
        case 'F': bad = size_option(o, c, optarg); break;
        case 'O':
        case 'c':
        case 'L': bad = word_option(o, c, optarg); break;
        case 'H':
        case 'p':
        case 'D':
        case 'N':
        case 'B': bad = number_option(o, c, optarg); break;
        case 'n': o->follow = 0; break;
        case 'l': list_classes(); return 0;
        case 'q': o->quiet = 1; break;
        case 'K': o->kill_on_hang = 1; break;
        case 'f': o->force = 1; break;
        case 'C': o->check = 1; break;
        case 'S': o->cfg.stopped = 1; break;
        case 'h': fputs(ptt_usage("trace"), stdout); return 0;
        default: ptt_bad_option("trace", argv); return TRACE_FAILED;
        }
    }
    if (bad || rotation_options(o))
        return TRACE_FAILED;
    if (o->kill_on_hang && !o->hang_ns) {
        ptt_warn("trace", "--kill-on-hang needs --hang-timeout=SECONDS");
        return TRACE_FAILED;
    }
    if (o->duration_s && !o->pid) {
        ptt_warn("trace",
                 "--duration needs -p PID (a program started by ptt trace runs to its end)");
        return TRACE_FAILED;
    }
    if (o->pid && optind < argc) {
        ptt_warn("trace", "-p %d attaches to a running program: give no PROGRAM", (int)o->pid);
        return TRACE_FAILED;
    }
    if (o->pid && (o->flight_size || o->hang_ns || o->max_size || o->cfg.backtrace)) {
        ptt_warn("trace", "-p: --flight-recorder, --hang-timeout, --max-size and --backtrace are "
                          "not supported yet when attaching");
        return TRACE_FAILED;
    }
    if (!o->pid && optind >= argc) {
        ptt_warn("trace", "no program to run; usage: ptt trace [-o FILE] -- PROGRAM [ARGS...]");
        return TRACE_FAILED;
    }
    if (o->events && parse_classes(o->events, &o->cfg.class_mask))
        return TRACE_FAILED;
    o->cfg.class_mask &= ptt_all_classes();
    if (!o->cfg.size)
        o->cfg.size = default_pool_size();
    o->prog = argv + optind;
    return -1;
}

/* The file to write: -o, else ptt.data, in $PTT_DIR if set (the previous one kept as .old). */
static int choose_output(struct trace_opts *o)
{
    if (!o->output)
        o->output = ptt_default_trace("trace");
    return o->output ? 0 : -1;
}

/* The pool, under a guardian that is told of the control paths before they exist (a kill may
 * come in between). Returns the trace clock's ticks per second. */
static int create_pool(struct ptt_session *s, const struct trace_opts *o, double *hz)
{
    s->output = o->output;
    s->follow = o->follow;
    s->quiet = o->quiet;
    s->overflow = o->cfg.overflow;
    s->class_mask = o->cfg.class_mask;
    s->light = o->cfg.light;
    s->stopped = o->cfg.stopped;
    s->hang_ns = o->hang_ns;
    s->kill_on_hang = o->kill_on_hang;
    s->ctl_fd = -1;
    uint64_t t0 = 0, m0 = 0;
    calibrate_start(o->cfg.clock_tsc, &t0, &m0);
    char err[512], ctl_dir[200];
    int have_dir = !ptt_ctl_dir(ctl_dir, sizeof ctl_dir, err, sizeof err);
    ptt_daemon_sweep(have_dir ? ctl_dir : NULL);
    if (ptt_daemon_create_guarded(&s->d, &o->cfg, guardian(), err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        return -1;
    }
    s->name = s->d.name;
    for (int i = 0; i < 2 && have_dir; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s.%s", ctl_dir, s->name, i ? "proc" : "sock");
        ptt_guardian_watch(s->d.guardian, path);
    }
    *hz = calibrate_end(o->cfg.clock_tsc, t0, m0);
    s->ns_per_tick = 1e9 / *hz;
    return 0;
}

/* The parts FILE.1, FILE.2, ... (--max-size), the first one created with its header. */
static int open_parts(struct ptt_session *s, const struct trace_opts *o, char *err, size_t len)
{
    struct ptt_rotate_config rc = {o->output, o->max_size, o->max_files, o->force,
                                   o->cfg.clock_tsc};
    s->rot = ptt_rotate_start(&rc, &s->w, &s->info, &s->clocks[0], err, len);
    s->d.rot = s->rot;
    return s->rot ? 0 : -1;
}

/* The output as before the session: what it wrote removed, the previous run's parts back. */
static void undo_output(struct ptt_session *s, const char *output)
{
    if (s->rot)
        ptt_rotate_undo(s->rot);
    else
        ptt_output_undo(output, &s->out);
    if (s->parts_moved)
        ptt_parts_restore(output, 0);
}

/* The one file (none yet for the flight recorder, which writes it at the end), the previous
 * run's moved aside. */
static int open_file(struct ptt_session *s, const struct trace_opts *o, char *err, size_t len)
{
    if (ptt_parts_aside(o->output, o->force, 0, &s->parts_moved, err, len))
        return -1;
    if (ptt_output_open(o->output, o->force, !s->flight, &s->out, err, len)) {
        if (s->parts_moved)
            ptt_parts_restore(o->output, 0);
        return -1;
    }
    if (!s->flight && ptt_writer_start(&s->w, s->out.fd, o->output)) {
        snprintf(err, len, "cannot write %s: %s", o->output, strerror(errno));
        close(s->out.fd);
        undo_output(s, o->output);
        return -1;
    }
    return 0;
}

/* The trace file, its parts, or the flight recorder's memory, and the header. */
static int open_output(struct ptt_session *s, const struct trace_opts *o, double hz)
{
    char err[PATH_MAX + 512];
    if (o->flight_size) {
        s->flight = ptt_flight_new(o->flight_size);
        s->d.sink = ptt_flight_add;
        s->d.sink_arg = s->flight;
    }
    if (o->max_size ? open_parts(s, o, err, sizeof err) : open_file(s, o, err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        return -1;
    }
    s->d.out = &s->w;
    s->info = make_info(o->prog, o->cfg.clock_tsc, hz, &s->d.geom, o->cfg.overflow,
                        o->events ? o->events : "all but key", o->cfg.light);
    if (!s->flight)
        ptt_writer_info(&s->w, s->info);
    ptt_session_clock(s);
    return 0;
}

/* The control socket, and next to it the one where each traced process hands over a pidfd of
 * itself; without either, the session goes on with less. */
static void open_control(struct ptt_session *s)
{
    char err[512];
    if ((s->ctl_fd = ptt_ctl_listen(s->name, s->ctl_path, sizeof s->ctl_path, err, sizeof err)) < 0)
        ptt_warn("trace", "no live control: %s", err);
    else
        ptt_guardian_watch(s->d.guardian, s->ctl_path);
    size_t cl = strlen(s->ctl_path);
    if (s->ctl_fd >= 0 && cl > 5 && (procs_ok >= 0 ? procs_ok : ptt_procs_supported())) {
        char path[sizeof s->ctl_path];
        snprintf(path, sizeof path, "%.*s.proc", (int)(cl - 5), s->ctl_path);
        if ((s->procs = ptt_procs_open(path, err, sizeof err)))
            ptt_guardian_watch(s->d.guardian, path);
        if (s->procs && strlen(path) < sizeof s->d.pool->proc_socket)
            memcpy(s->d.pool->proc_socket, path, strlen(path) + 1);
        else if (!s->procs)
            ptt_warn("trace", "the ends of processes reaped by others are not recorded: %s", err);
    }
}

/* The environment the program and its descendants inherit. */
static int child_env(const struct ptt_session *s, const char *lib)
{
    const char *pre = getenv("LD_PRELOAD");
    char *preload = NULL;
    /* Either failing (out of memory) would run the program untraced, or say nothing */
    if (asprintf(&preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "") < 0 ||
        setenv("LD_PRELOAD", preload, 1) || setenv(PTT_ENV_SHM, s->d.env, 1)) {
        ptt_warn("trace", "cannot set the program's environment: %s", strerror(errno));
        free(preload);
        return -1;
    }
    free(preload);
    return 0;
}

/* The signals the session loop waits for, blocked here and unblocked in the child. */
static void block_signals(sigset_t *old)
{
    sigset_t wanted;
    sigemptyset(&wanted);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGURG};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&wanted, sigs[i]);
    sigprocmask(SIG_BLOCK, &wanted, old);
}

/* Fork and exec the program with what ptt trace changed given back; an exec failure comes back
 * through a close-on-exec pipe into s->exec_errno. vfork: the child shares our memory until its
 * exec, so ptt trace's pages are neither copied for it nor write-protected after (a session of
 * /bin/true 1.4 ms of CPU less, docs/performance.md). The child only makes system calls, on its
 * own stack, on state the kernel keeps per task (signal mask and dispositions, descriptors), and
 * execvp, which searches PATH on the stack; no handler of ptt trace's can run there (it installs
 * none before: the pool's SIGBUS guard is ptt trace -p's). */
static int start_program(struct ptt_session *s, char **prog, const struct saved_sigs *saved)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC)) {
        ptt_warn("trace", "pipe: %s", strerror(errno));
        return -1;
    }
    if (!s->quiet) {
        char parts[PATH_MAX + 128];
        if (s->rot)
            ptt_rotate_target(s->rot, parts, sizeof parts);
        fprintf(stderr, "ptt: session %s records into %s\n", s->name, s->rot ? parts : s->output);
    }
    fflush(NULL);
    s->child = vfork();
    if (s->child < 0) {
        ptt_warn("trace", "vfork: %s", strerror(errno));
        return -1;
    }
    if (s->child == 0) {
        sigprocmask(SIG_SETMASK, &saved->mask, NULL);
        sigaction(SIGXFSZ, &saved->xfsz, NULL);
        sigaction(SIGPIPE, &saved->pipe, NULL);
        close(pipefd[0]);
        execvp(prog[0], prog);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(pipefd[1]);
    if (read(pipefd[0], &s->exec_errno, sizeof s->exec_errno) != sizeof s->exec_errno)
        s->exec_errno = 0;
    close(pipefd[0]);
    return 0;
}

/* The program's pid, known only now, added to the header's information; attached=yes for ptt
 * trace -p (the process ran before: readers do not call its start one). */
static void add_pid_info(struct ptt_session *s)
{
    char pidinfo[64];
    snprintf(pidinfo, sizeof pidinfo, "pid=%d\n%s", (int)s->child,
             s->attach ? "attached=yes\n" : "");
    size_t il = strlen(s->info);
    s->info = ptt_must(realloc(s->info, il + sizeof pidinfo));
    memcpy(s->info + il, pidinfo, strlen(pidinfo) + 1);
    if (!s->flight)
        ptt_writer_info(&s->w, pidinfo);
}

static int check_after(const struct trace_opts *o, int code);

/* The command line of process pid, as an argv (its name alone if unreadable). */
static char **proc_argv(pid_t pid)
{
    static char buf[8192], *argv[512];
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    unsigned k = 0;
    for (size_t i = 0; i < n && k < 511; i += strlen(buf + i) + 1)
        argv[k++] = buf + i;
    if (!k) {
        snprintf(buf, sizeof buf, "pid %d", (int)pid);
        argv[k++] = buf;
    }
    argv[k] = NULL;
    return argv;
}

/* ptt_attach's: libptt started, the threads still stopped (before the calls in progress are
 * followed: those name their threads). */
static void threads_attached(void *arg)
{
    struct ptt_session *s = arg;
    ptt_session_threads(s, s->child, s->target_fd, PTT_EV_THREAD_ATTACHED);
}

/* As root, attached to another user's process: the pool is that user's (libptt takes only a
 * pool of its own user, docs/security.md), still closed to everyone else. */
static int give_pool(struct ptt_session *s, pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    if (geteuid() != 0 || stat(path, &st) || st.st_uid == 0)
        return 0;
    ptt_pool_guard(s->d.pool, s->d.size); /* its new owner can shrink it, from the fchown on */
    int fd = shm_open(s->d.shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0 || fchown(fd, st.st_uid, st.st_gid)) {
        ptt_warn("trace", "cannot give the pool to uid %u: %s", (unsigned)st.st_uid,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* ptt trace -p: the session's pool and file, then libptt loaded into the running process. */
static int attach_session(struct trace_opts *o, const char *lib)
{
    static struct ptt_session s;
    static struct ptt_attach a;
    char err[1024];
    double hz;
    if (ptt_attach_check(o->pid, err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        return TRACE_FAILED;
    }
    o->prog = proc_argv(o->pid);
    struct stat st;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%d", (int)o->pid);
    if (!stat(proc, &st) && st.st_uid != geteuid()) { /* see ptt_session.unwakeable */
        s.unwakeable = 1;
        o->cfg.reserve_later = 0;
    }
    if (create_pool(&s, o, &hz))
        return TRACE_FAILED;
    if (give_pool(&s, o->pid))
        return undo(&s);
    if (open_output(&s, o, hz))
        return undo(&s);
    open_control(&s);
    sigset_t old;
    block_signals(&old);
    s.child = o->pid;
    s.target_fd = (int)syscall(SYS_pidfd_open, o->pid, 0);
    if (s.target_fd < 0) {
        ptt_warn("trace", "cannot watch process %d: %s", (int)o->pid, strerror(errno));
        return undo(&s);
    }
    if (ptt_attach(&a, o->pid, lib, s.d.env, threads_attached, &s, err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        close(s.target_fd);
        undo_output(&s, o->output);
        return undo(&s);
    }
    s.attach = &a;
    if (o->duration_s)
        s.deadline_ns = ptt_mono_ns() + (uint64_t)(o->duration_s * 1e9);
    add_pid_info(&s);
    if (!s.quiet)
        fprintf(stderr, "ptt: session %s attached to process %d, records into %s\n", s.name,
                (int)o->pid, s.output);
    int code = ptt_session_run(&s);
    close(s.target_fd);
    free(s.info);
    return check_after(o, code);
}

/* --check: the trace just written, checked; its findings on stderr after the summary. The
 * program's exit status stays, but a success becomes 1 when something was found. */
static int check_after(const struct trace_opts *o, int code)
{
    struct stat st;
    if (!o->check)
        return code;
    /* a rotated trace is read as its parts */
    if (!o->max_size && (!strcmp(o->output, "-") || stat(o->output, &st) || !S_ISREG(st.st_mode))) {
        ptt_warn("trace", "--check: %s is not a file that can be read again", o->output);
        return code;
    }
    int rc = ptt_check_file(o->output, 0, NULL, stderr);
    return code == 0 && rc == 1 ? 1 : code;
}

/* Starts the session (pool, output, control), the program under it, and runs the session. */
static int trace_session(struct trace_opts *o, const char *lib, struct saved_sigs *saved)
{
    static struct ptt_session s;
    double hz;
    /* First: a fork before the pool is mapped costs less, and is not in the trace's time; and
     * before we are a subreaper, so that the witness is none of ours. */
    ptt_witness_start(&s.witness);
    if (create_pool(&s, o, &hz))
        return TRACE_FAILED;
    if (open_output(&s, o, hz))
        return undo(&s);
    open_control(&s);
    if (child_env(&s, lib))
        return undo(&s);
    s.guardian_pid = guardian_pid;
    /* Orphaned descendants are re-parented to us, so we see every process of the session end. */
    if (o->follow)
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    block_signals(&saved->mask);
    if (start_program(&s, o->prog, saved))
        return undo(&s);
    add_pid_info(&s);

    int code = ptt_session_run(&s);
    ptt_witness_stop(&s.witness);
    if (s.exec_errno) { /* the file records nothing but the failure, which we say here */
        undo_output(&s, o->output);
        ptt_warn("trace", "cannot run '%s': %s", o->prog[0], strerror(s.exec_errno));
    }
    ptt_rotate_free(s.rot);
    free(s.info);
    return s.exec_errno ? code : check_after(o, code);
}

int cmd_trace(int argc, char **argv)
{
    ptt_oom_status = 125; /* ptt trace itself failed (docs/trace.md, "Exit status") */
    /* A file-size limit or a reader that went away is a write error ptt trace reports, not a
     * signal that kills it; the program gets the dispositions back (start_program). */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    struct saved_sigs saved;
    sigaction(SIGXFSZ, &ign, &saved.xfsz);
    sigaction(SIGPIPE, &ign, &saved.pipe);
    struct trace_opts o;
    if (trace_defaults(&o))
        return TRACE_FAILED;
    int code = trace_options(&o, argc, argv);
    if (code >= 0)
        return code;
    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib)) {
        ptt_warn("trace", "cannot find libptt.so (looked at %s; set PTT_LIB)", lib);
        return TRACE_FAILED;
    }
    if (choose_output(&o))
        return TRACE_FAILED;
    return o.pid ? attach_session(&o, lib) : trace_session(&o, lib, &saved);
}
