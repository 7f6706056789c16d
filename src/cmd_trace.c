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

#include "../common/clock.h"
#include "cmds.h"
#include "daemon.h"
#include "events.h"
#include "util.h"

#ifndef PTT_LIBDIR
#define PTT_LIBDIR "/usr/local/lib"
#endif

static const char usage_text[] =
    "usage: ptt trace [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "Run PROGRAM with its POSIX threads routines traced, and write the trace to a file.\n"
    "\n"
    "  -o, --output=FILE      trace file (default: ptt-PID.ptt in the current directory)\n"
    "      --events=CLASS,... event classes to record (default: all but key; 'all' for\n"
    "                         every one); see 'ptt trace --list'\n"
    "      --buffer=SIZE      shared pool size, e.g. 64M (default: memory x cpus / 128,\n"
    "                         between 8M and 64M; environment PTT_BUFFER)\n"
    "      --subbuffer=SIZE   per-thread sub-buffer size (default 32K)\n"
    "      --overflow=MODE    block (default): writers wait for ptt when the pool is full;\n"
    "                         discard: drop events and count them\n"
    "      --clock=CLOCK      tsc or monotonic (default: tsc when invariant)\n"
    "      --no-follow        end when PROGRAM ends, not when the last process it started ends\n"
    "      --list             list the event classes\n"
    "  -q, --quiet            no start line on stderr\n";

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
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    *mask = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "all")) {
            *mask = ~0ull;
            continue;
        }
        int n = ptt_class_number(tok);
        if (n < 0) {
            ptt_warn("trace", "unknown event class '%s'; 'ptt trace --list' lists them", tok);
            return -1;
        }
        *mask |= 1ull << n;
    }
    return 0;
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

static void write_info(struct ptt_writer *w, char **argv, int tsc, double hz,
                       const struct ptt_pool *pool, const char *events)
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
    ptt_writer_info(w, text);
    free(text);
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

static void write_clock(struct ptt_daemon *d, struct ptt_writer *w)
{
    uint64_t m = ptt_mono_ns(), t = ptt_ticks(d->clock_tsc), r = ptt_real_ns();
    ptt_writer_clock(w, t, m, r);
}

static int status_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
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
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *output = NULL, *events = getenv("PTT_EVENTS");
    /* Default: every class but key (getspecific and setspecific are hot in real programs). */
    struct ptt_pool_config cfg = {0, 32u << 10, tsc_invariant(), PTT_OVERFLOW_BLOCK,
                                  ~0ull & ~(1ull << PTT_CLASS_key)};
    int follow = 1, quiet = 0;
    const char *bufenv = getenv("PTT_BUFFER");
    int64_t v;
    if (bufenv && *bufenv) {
        if ((v = ptt_parse_size(bufenv)) < (1 << 20)) {
            ptt_warn("trace", "PTT_BUFFER='%s' is not a size of at least 1M", bufenv);
            return PTT_EXIT_USAGE;
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
                return PTT_EXIT_USAGE;
            }
            cfg.size = (uint64_t)v;
            break;
        case 's':
            if ((v = ptt_parse_size(optarg)) < 4096 || v > (16 << 20) || v % 4096) {
                ptt_warn("trace", "--subbuffer=%s: give a multiple of 4K from 4K to 16M", optarg);
                return PTT_EXIT_USAGE;
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
                return PTT_EXIT_USAGE;
            }
            break;
        case 'c':
            if (!strcmp(optarg, "tsc")) {
                if (!tsc_invariant()) {
                    ptt_warn("trace", "--clock=tsc: this CPU has no invariant TSC");
                    return PTT_EXIT_USAGE;
                }
                cfg.clock_tsc = 1;
            } else if (!strcmp(optarg, "monotonic"))
                cfg.clock_tsc = 0;
            else {
                ptt_warn("trace", "--clock=%s: use tsc or monotonic", optarg);
                return PTT_EXIT_USAGE;
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
        case 'h': fputs(usage_text, stdout); return 0;
        default: ptt_bad_option("trace", argv); return PTT_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        ptt_warn("trace", "no program to run; usage: ptt trace [-o FILE] -- PROGRAM [ARGS...]");
        return PTT_EXIT_USAGE;
    }
    if (events && parse_classes(events, &cfg.class_mask))
        return PTT_EXIT_USAGE;
    if (!cfg.size)
        cfg.size = default_pool_size();
    char **prog = argv + optind;

    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib)) {
        ptt_warn("trace", "cannot find libptt.so (looked at %s; set PTT_LIB)", lib);
        return PTT_EXIT_USAGE;
    }
    char outbuf[64];
    if (!output) {
        snprintf(outbuf, sizeof outbuf, "ptt-%d.ptt", (int)getpid());
        output = outbuf;
    }

    uint64_t t0 = 0, m0 = 0;
    double hz = measure_hz(cfg.clock_tsc, &t0, &m0);
    struct ptt_daemon d;
    char err[512];
    if (ptt_daemon_create(&d, &cfg, err, sizeof err)) {
        ptt_warn("trace", "%s", err);
        return PTT_EXIT_USAGE;
    }
    struct ptt_writer w;
    if (ptt_writer_open(&w, output)) {
        ptt_warn("trace", "cannot create %s: %s", output, strerror(errno));
        ptt_daemon_destroy(&d);
        return PTT_EXIT_USAGE;
    }
    d.out = &w;
    write_info(&w, prog, cfg.clock_tsc, hz, d.pool, events ? events : "all but key");
    write_clock(&d, &w);

    /* The environment the program and its descendants inherit. */
    const char *pre = getenv("LD_PRELOAD");
    char *preload = NULL;
    if (asprintf(&preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "") < 0)
        return PTT_EXIT_USAGE;
    setenv("LD_PRELOAD", preload, 1);
    setenv(PTT_ENV_SHM, d.shm_name, 1);
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
        return PTT_EXIT_USAGE;
    }
    if (!quiet)
        fprintf(stderr, "ptt: session %s records into %s\n", d.shm_name + 1, output);
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        ptt_warn("trace", "fork: %s", strerror(errno));
        ptt_daemon_destroy(&d);
        return PTT_EXIT_USAGE;
    }
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pipefd[0]);
        execvp(prog[0], prog);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(pipefd[1]);
    int exec_errno = 0;
    if (read(pipefd[0], &exec_errno, sizeof exec_errno) != sizeof exec_errno)
        exec_errno = 0;
    close(pipefd[0]);
    char pidinfo[64];
    snprintf(pidinfo, sizeof pidinfo, "pid=%d", (int)child);
    ptt_writer_info(&w, pidinfo);

    int child_status = 0, child_done = 0;
    uint64_t last_clock = ptt_mono_ns(), last_reap = last_clock;
    for (;;) {
        size_t n = ptt_daemon_drain(&d, PTT_DRAIN_READY);
        atomic_fetch_add_explicit(&d.pool->heartbeat, 1, memory_order_relaxed);
        int st;
        pid_t p;
        int none_left = 0;
        while ((p = waitpid(-1, &st, WNOHANG)) != 0) {
            if (p < 0) {
                none_left = errno == ECHILD;
                break;
            }
            ptt_daemon_drain(&d, p); /* what the ended process had not handed over */
            ptt_daemon_process_exit(&d, p, st);
            if (p == child) {
                child_status = st;
                child_done = 1;
            }
        }
        if (none_left || (child_done && !follow))
            break;
        uint64_t now = ptt_mono_ns();
        if (now - last_reap > 1000000000ull) {
            ptt_daemon_drain(&d, PTT_DRAIN_DEAD);
            last_reap = now;
        }
        if (now - last_clock > 10000000000ull) {
            write_clock(&d, &w);
            last_clock = now;
        }
        struct timespec to = {0, n ? 500000 : 5000000};
        siginfo_t si;
        int sig = sigtimedwait(&wanted, &si, &to);
        if (sig > 0 && sig != SIGCHLD && !child_done) {
            /* A terminal's signal reached the program already; pass on the ones sent to us. */
            if (si.si_code <= 0 || si.si_pid != 0)
                kill(child, sig);
        }
    }
    ptt_daemon_drain(&d, PTT_DRAIN_ALL);
    write_clock(&d, &w);
    uint64_t lost = atomic_load(&d.pool->lost), wait_ns = atomic_load(&d.pool->wait_ns),
             waits = atomic_load(&d.pool->waits);
    int code = exec_errno ? (exec_errno == ENOENT ? 127 : 126) : status_code(child_status);
    struct ptt_rec_end end = {{0, 0}, d.events, d.bytes, lost, wait_ns, waits, code, 0};
    ptt_writer_record(&w, PTT_REC_END, &end, sizeof end, 0, 0);
    ptt_daemon_destroy(&d);
    if (ptt_writer_close(&w))
        ptt_warn("trace", "writing %s: %s; the trace is incomplete", output, strerror(errno));
    if (exec_errno) { /* the file records nothing but the failure, which we say here */
        unlink(output);
        ptt_warn("trace", "cannot run '%s': %s", prog[0], strerror(exec_errno));
        return code;
    }
    if (d.corrupt)
        ptt_warn("trace", "%llu sub-buffers held a malformed event and were cut short",
                 (unsigned long long)d.corrupt);
    if (waits)
        fprintf(stderr,
                "ptt: warning: threads waited %.3f ms in all, %llu times, for a free "
                "sub-buffer (a larger --buffer avoids it)\n",
                (double)wait_ns / 1e6, (unsigned long long)waits);
    if (lost)
        fprintf(stderr, "ptt: warning: %llu events were dropped: the pool was exhausted (%s)\n",
                (unsigned long long)lost,
                cfg.overflow == PTT_OVERFLOW_DISCARD
                    ? "--overflow=discard"
                    : "every sub-buffer held by a live thread; a larger --buffer avoids it");
    fprintf(stderr, "ptt: wrote %llu events (%llu bytes) to %s, %llu lost\n",
            (unsigned long long)d.events, (unsigned long long)w.offset, output,
            (unsigned long long)lost);
    return code;
}
