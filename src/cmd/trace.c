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
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "cmd/cmds.h"
#include "session/control.h"
#include "session/daemon.h"
#include "session/guardian.h"
#include "session/session.h"
#include "trace/events.h"
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

static void append_quoted(char *buf, size_t len, const char *arg)
{
    size_t l = strlen(buf);
    int plain = *arg && !arg[strcspn(arg, " \t\n'\"\\$`*?;&|<>()[]{}!#~")];
    if (plain) {
        snprintf(buf + l, len - l, "%s%s", l ? " " : "", arg);
        return;
    }
    snprintf(buf + l, len - l, "%s'", l ? " " : "");
    for (const char *p = arg; *p; p++) {
        l = strlen(buf);
        snprintf(buf + l, len - l, *p == '\'' ? "'\\''" : "%c", *p);
    }
    l = strlen(buf);
    snprintf(buf + l, len - l, "'");
}

static char *make_info(char **argv, int tsc, double hz, const struct ptt_pool *pool,
                       const char *events)
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
    FILE *f = open_memstream(&text, &tl);
    fprintf(f, "ptt_version=%s\nhost=%s\nkernel=%s %s %s\ncommand=%s\nstart_time=%s\n", PTT_VERSION,
            u.nodename, u.sysname, u.release, u.machine, cmd, when);
    fprintf(f, "clock=%s\nticks_per_second=%.0f\n", tsc ? "tsc" : "monotonic", hz);
    fprintf(f, "pool_size=%llu\nsubbuffer_size=%u\nsubbuffers=%u\noverflow=%s\nevents=%s\n",
            (unsigned long long)pool->total_size, pool->buf_size, pool->nbufs,
            pool->overflow ? "discard" : "block", events);
    fclose(f);
    return text;
}

/* Ticks per second of the trace clock, measured against CLOCK_MONOTONIC over 20 ms; the reader
 * prefers the slope between the first and last clock records of the file. */
static double measure_hz(int tsc, uint64_t *t0, uint64_t *m0)
{
    if (!tsc)
        return 1e9;
    *m0 = ptt_mono_ns();
    *t0 = ptt_ticks(1);
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    uint64_t m1 = ptt_mono_ns(), t1 = ptt_ticks(1);
    return (double)(t1 - *t0) * 1e9 / (double)(m1 - *m0);
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

/* The session's guardian: whatever ends ptt trace, nothing of the session outlives it. */
static int guardian(void)
{
    int fd = ptt_guardian_start();
    if (fd < 0)
        ptt_warn("trace", "no guardian (%s): if ptt trace is killed, its pool stays in /dev/shm",
                 strerror(errno));
    return fd;
}

int cmd_trace(int argc, char **argv)
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
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    /* A file-size limit or a reader that went away is a write error ptt trace reports, not a
     * signal that kills it; the program gets the dispositions back (see the child below). */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_xfsz, old_pipe;
    sigaction(SIGXFSZ, &ign, &old_xfsz);
    sigaction(SIGPIPE, &ign, &old_pipe);
    const char *output = NULL, *events = getenv("PTT_EVENTS");
    /* Default: every class but key (getspecific and setspecific are hot in real programs). */
    struct ptt_pool_config cfg = {0,
                                  32u << 10,
                                  tsc_invariant(),
                                  PTT_OVERFLOW_BLOCK,
                                  ptt_all_classes() & ~(1ull << PTT_CLASS_key),
                                  0,
                                  0,
                                  0};
    int follow = 1, quiet = 0, kill_on_hang = 0, force = 0;
    uint64_t hang_ns = 0, flight_size = 0;
    const char *bufenv = getenv("PTT_BUFFER");
    int64_t v;
    if (bufenv && *bufenv) {
        if ((v = ptt_parse_size(bufenv)) < (1 << 20)) {
            ptt_warn("trace", "PTT_BUFFER='%s' is not a size of at least 1M", bufenv);
            return TRACE_FAILED;
        }
        cfg.size = (uint64_t)v;
    }
    const char *clk = getenv("PTT_CLOCK");
    if (clk && !strcmp(clk, "monotonic"))
        cfg.clock_tsc = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'e': events = optarg; break;
        case 'b':
            if ((v = ptt_parse_size(optarg)) < (1 << 20) || v > (1ll << 40)) {
                ptt_warn("trace", "--buffer=%s: give a size from 1M to 1T, e.g. 64M", optarg);
                return TRACE_FAILED;
            }
            cfg.size = (uint64_t)v;
            break;
        case 's':
            if ((v = ptt_parse_size(optarg)) < 4096 || v > (16 << 20) || v % 4096) {
                ptt_warn("trace", "--subbuffer=%s: give a multiple of 4K from 4K to 16M", optarg);
                return TRACE_FAILED;
            }
            cfg.buf_size = (uint32_t)v;
            break;
        case 'O':
            if (!strcmp(optarg, "block"))
                cfg.overflow = PTT_OVERFLOW_BLOCK;
            else if (!strcmp(optarg, "discard"))
                cfg.overflow = PTT_OVERFLOW_DISCARD;
            else {
                ptt_warn("trace", "--overflow=%s: use block or discard", optarg);
                return TRACE_FAILED;
            }
            break;
        case 'c':
            if (!strcmp(optarg, "tsc")) {
                if (!tsc_invariant()) {
                    ptt_warn("trace", "--clock=tsc: this CPU has no invariant TSC");
                    return TRACE_FAILED;
                }
                cfg.clock_tsc = 1;
            } else if (!strcmp(optarg, "monotonic"))
                cfg.clock_tsc = 0;
            else {
                ptt_warn("trace", "--clock=%s: use tsc or monotonic", optarg);
                return TRACE_FAILED;
            }
            break;
        case 'n': follow = 0; break;
        case 'l': {
            unsigned n;
            const struct ptt_classinfo *cl = ptt_classes(&n);
            for (unsigned i = 0; i < n; i++)
                printf("%-8s %s\n", cl[i].name, cl[i].description);
            return 0;
        }
        case 'q': quiet = 1; break;
        case 'H': {
            char *end;
            double sec = strtod(optarg, &end);
            if (*end || !(sec > 0) || sec > 1e6) {
                ptt_warn("trace", "--hang-timeout=%s: give seconds, e.g. 5 or 0.5", optarg);
                return TRACE_FAILED;
            }
            hang_ns = (uint64_t)(sec * 1e9);
            break;
        }
        case 'K': kill_on_hang = 1; break;
        case 'f': force = 1; break;
        case 'F':
            if ((v = ptt_parse_size(optarg)) < 65536) {
                ptt_warn("trace", "--flight-recorder=%s: give a size of at least 64K, e.g. 16M",
                         optarg);
                return TRACE_FAILED;
            }
            flight_size = (uint64_t)v;
            break;
        case 'S': cfg.stopped = 1; break;
        case 'B': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 0 || n > 32) {
                ptt_warn("trace", "--backtrace=%s: give a number of frames from 0 to 32", optarg);
                return TRACE_FAILED;
            }
            cfg.backtrace = (unsigned)n;
            break;
        }
        case 'L':
            if (strcmp(optarg, "light") && strcmp(optarg, "full")) {
                ptt_warn("trace", "--level=%s: use light or full", optarg);
                return TRACE_FAILED;
            }
            cfg.light = optarg[0] == 'l';
            break;
        case 'h': fputs(ptt_usage("trace"), stdout); return 0;
        default: ptt_bad_option("trace", argv); return TRACE_FAILED;
        }
    }
    if (kill_on_hang && !hang_ns) {
        ptt_warn("trace", "--kill-on-hang needs --hang-timeout=SECONDS");
        return TRACE_FAILED;
    }
    if (optind >= argc) {
        ptt_warn("trace", "no program to run; usage: ptt trace [-o FILE] -- PROGRAM [ARGS...]");
        return TRACE_FAILED;
    }
    if (events && parse_classes(events, &cfg.class_mask))
        return TRACE_FAILED;
    cfg.class_mask &= ptt_all_classes();
    if (!cfg.size)
        cfg.size = default_pool_size();
    char **prog = argv + optind;

    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib)) {
        ptt_warn("trace", "cannot find libptt.so (looked at %s; set PTT_LIB)", lib);
        return TRACE_FAILED;
    }
    char outbuf[PATH_MAX];
    if (!output) { /* ptt-PID.ptt, in $PTT_DIR if set */
        const char *dir = getenv("PTT_DIR");
        if (snprintf(outbuf, sizeof outbuf, "%s%sptt-%d.ptt", dir && *dir ? dir : "",
                     dir && *dir ? "/" : "", (int)getpid()) >= (int)sizeof outbuf) {
            ptt_warn("trace", "PTT_DIR is too long");
            return TRACE_FAILED;
        }
        output = outbuf;
    }

    static struct ptt_session s;
    s.output = output;
    s.follow = follow;
    s.quiet = quiet;
    s.overflow = cfg.overflow;
    s.class_mask = cfg.class_mask;
    s.light = cfg.light;
    s.stopped = cfg.stopped;
    s.hang_ns = hang_ns;
    s.kill_on_hang = kill_on_hang;
    s.ctl_fd = -1;
    uint64_t t0 = 0, m0 = 0;
    double hz = measure_hz(cfg.clock_tsc, &t0, &m0);
    s.ns_per_tick = 1e9 / hz;
    char err[512], ctl_dir[200];
    int have_dir = !ptt_ctl_dir(ctl_dir, sizeof ctl_dir, err, sizeof err);
    ptt_daemon_sweep(have_dir ? ctl_dir : NULL);
    if (ptt_daemon_create_guarded(&s.d, &cfg, guardian(), err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        return TRACE_FAILED;
    }
    s.name = s.d.name;
    for (int i = 0; i < 2 && have_dir; i++) { /* before they exist: a kill may come in between */
        char path[300];
        snprintf(path, sizeof path, "%s/%s.%s", ctl_dir, s.name, i ? "proc" : "sock");
        ptt_guardian_watch(s.d.guardian, path);
    }
    if (flight_size) {
        s.flight = ptt_flight_new(flight_size);
        s.d.sink = ptt_flight_add;
        s.d.sink_arg = s.flight;
    }
    if (ptt_output_open(output, force, !s.flight, &s.out, err, sizeof err) ||
        (!s.flight && ptt_writer_start(&s.w, s.out.fd, output))) {
        if (s.out.fd >= 0) { /* the header could not be written */
            ptt_warn("trace", "cannot write %s: %s", output, strerror(errno));
            close(s.out.fd);
            ptt_output_undo(output, &s.out);
        } else {
            ptt_warn("trace", "%s", err);
        }
        return undo(&s);
    }
    s.d.out = &s.w;
    s.info = make_info(prog, cfg.clock_tsc, hz, s.d.pool, events ? events : "all but key");
    if (!s.flight)
        ptt_writer_info(&s.w, s.info);
    ptt_session_clock(&s);
    if ((s.ctl_fd = ptt_ctl_listen(s.name, s.ctl_path, sizeof s.ctl_path, err, sizeof err)) < 0)
        ptt_warn("trace", "no live control: %s", err);
    else
        ptt_guardian_watch(s.d.guardian, s.ctl_path);
    /* Next to the control socket, where each traced process hands over a pidfd of itself. */
    size_t cl = strlen(s.ctl_path);
    if (s.ctl_fd >= 0 && cl > 5 && ptt_procs_supported()) {
        char path[sizeof s.ctl_path];
        snprintf(path, sizeof path, "%.*s.proc", (int)(cl - 5), s.ctl_path);
        if ((s.procs = ptt_procs_open(path, err, sizeof err)))
            ptt_guardian_watch(s.d.guardian, path);
        if (s.procs && strlen(path) < sizeof s.d.pool->proc_socket)
            memcpy(s.d.pool->proc_socket, path, strlen(path) + 1);
        else if (!s.procs)
            ptt_warn("trace", "the ends of processes reaped by others are not recorded: %s", err);
    }

    /* The environment the program and its descendants inherit. */
    const char *pre = getenv("LD_PRELOAD");
    char *preload = NULL;
    if (asprintf(&preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "") < 0)
        return undo(&s);
    setenv("LD_PRELOAD", preload, 1);
    setenv(PTT_ENV_SHM, s.d.env, 1);
    free(preload);

    /* Orphaned descendants are re-parented to us, so we see every process of the session end. */
    if (follow)
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t wanted, old;
    sigemptyset(&wanted);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&wanted, sigs[i]);
    sigprocmask(SIG_BLOCK, &wanted, &old);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC)) {
        ptt_warn("trace", "pipe: %s", strerror(errno));
        return undo(&s);
    }
    if (!quiet)
        fprintf(stderr, "ptt: session %s records into %s\n", s.name, output);
    fflush(NULL);
    s.child = fork();
    if (s.child < 0) {
        ptt_warn("trace", "fork: %s", strerror(errno));
        return undo(&s);
    }
    if (s.child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        sigaction(SIGXFSZ, &old_xfsz, NULL);
        sigaction(SIGPIPE, &old_pipe, NULL);
        close(pipefd[0]);
        execvp(prog[0], prog);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(pipefd[1]);
    if (read(pipefd[0], &s.exec_errno, sizeof s.exec_errno) != sizeof s.exec_errno)
        s.exec_errno = 0;
    close(pipefd[0]);
    char pidinfo[64];
    snprintf(pidinfo, sizeof pidinfo, "pid=%d\n", (int)s.child);
    size_t il = strlen(s.info);
    s.info = realloc(s.info, il + sizeof pidinfo);
    memcpy(s.info + il, pidinfo, strlen(pidinfo) + 1);
    if (!s.flight)
        ptt_writer_info(&s.w, pidinfo);

    int code = ptt_session_run(&s);
    if (s.exec_errno) { /* the file records nothing but the failure, which we say here */
        ptt_output_undo(output, &s.out);
        ptt_warn("trace", "cannot run '%s': %s", prog[0], strerror(s.exec_errno));
    }
    free(s.info);
    return code;
}
