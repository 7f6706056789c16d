/* The session loop of ptt trace. One thread: it sleeps in poll() on a signalfd (children,
 * signals to forward), the control socket and its clients (never waited for), and wakes at least
 * every 5 ms to drain the pool (every 0.5 ms while there is work). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "session/control.h"
#include "trace/events.h"
#include "session/hang.h"
#include "session/session.h"
#include "export/textfmt.h"
#include "util/util.h"

void ptt_session_clock(struct ptt_session *s)
{
    struct ptt_rec_clock c = {{0, 0}, ptt_ticks(s->d.clock_tsc), ptt_mono_ns(), ptt_real_ns()};
    s->clocks[s->nclocks ? 1 : 0] = c;
    s->nclocks = s->nclocks ? 2 : 1;
    if (!s->flight)
        ptt_writer_clock(&s->w, c.ticks, c.mono_ns, c.real_ns);
}

static int status_code(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* The masks the writers read (common/pool.h), from the session's settings; the switch is
 * recorded, so that a reader knows which spans are partial. */
static void apply_masks(struct ptt_session *s)
{
    uint64_t calls = s->stopped ? PTT_META_MASK : s->class_mask | PTT_META_MASK;
    uint64_t states = s->stopped || s->light ? 0 : s->class_mask | PTT_META_MASK;
    atomic_store(&s->d.pool->masks[0], calls);
    atomic_store(&s->d.pool->masks[1], states);
    uint16_t id = PTT_EV_TRACE_CONTROL;
    unsigned n = 2;
    uint64_t a[2] = {calls, states};
    ptt_daemon_events(&s->d, s->d.pool->daemon_pid, 1, &id, &n, a);
}

/* The window of the flight recorder, into the trace file. */
static int64_t dump(struct ptt_session *s, int why, const struct ptt_rec_end *end)
{
    uint16_t id = PTT_EV_TRACE_DUMP;
    unsigned n = 1;
    uint64_t a = (uint64_t)why;
    ptt_daemon_events(&s->d, s->d.pool->daemon_pid, 1, &id, &n, &a);
    ptt_session_clock(s);
    int64_t k = ptt_flight_write(s->flight, s->output, s->info, s->clocks, s->nclocks, end);
    if (k < 0)
        ptt_warn("trace", "writing %s: %s", s->output, strerror(errno));
    return k;
}

static void control(void *arg, const char *req, char *reply, size_t len)
{
    struct ptt_session *s = arg;
    char cls[256];
    if (!strcmp(req, "ping")) {
        snprintf(reply, len, "ok\n");
    } else if (!strcmp(req, "status")) {
        snprintf(reply, len,
                 "session %s\npid %d\noutput %s\nrecording %s\nlevel %s\nevents %s\n"
                 "events_written %llu\nlost %llu\nflight_recorder %s\nhangs %d\n",
                 s->name, (int)s->child, s->output, s->stopped ? "off" : "on",
                 s->light ? "light" : "full", ptt_class_list(cls, sizeof cls, s->class_mask),
                 (unsigned long long)(s->flight ? s->d.events : s->w.events),
                 (unsigned long long)atomic_load(&s->d.pool->lost), s->flight ? "on" : "off",
                 s->hangs);
    } else if (!strcmp(req, "start") || !strcmp(req, "stop")) {
        s->stopped = req[2] == 'o';
        apply_masks(s);
        snprintf(reply, len, "ok: recording %s\n", s->stopped ? "off" : "on");
    } else if (!strcmp(req, "level light") || !strcmp(req, "level full")) {
        s->light = req[6] == 'l';
        apply_masks(s);
        snprintf(reply, len, "ok: level %s\n", s->light ? "light" : "full");
    } else if (!strncmp(req, "events ", 7)) {
        uint64_t m;
        char bad[32];
        if (ptt_parse_classes(req + 7, &m, bad, sizeof bad)) {
            snprintf(reply, len, "error: unknown event class '%s'\n", bad);
            return;
        }
        s->class_mask = m & ptt_all_classes();
        apply_masks(s);
        snprintf(reply, len, "ok: events %s\n", ptt_class_list(cls, sizeof cls, m));
    } else if (!strcmp(req, "dump")) {
        ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
        if (s->flight) {
            int64_t k = dump(s, 1, NULL);
            if (k >= 0)
                snprintf(reply, len, "ok: wrote %lld events to %s\n", (long long)k, s->output);
            else
                snprintf(reply, len, "error: cannot write %s\n", s->output);
        } else {
            snprintf(reply, len, "ok: %llu events written to %s so far\n",
                     (unsigned long long)s->w.events, s->output);
        }
    } else {
        snprintf(reply, len,
                 "error: unknown request '%s' (status, start, stop, level light|full, events "
                 "CLASS,..., dump)\n",
                 req);
    }
}

/* The last clock and the END record into the file. After a write error, the END record holds
 * the true figures (what the file holds; lost: every event missing from it) if it still fits,
 * with an INFO record saying what was not written. 1 when the trace is incomplete. */
static int save_end(struct ptt_session *s, struct ptt_rec_end *end)
{
    ptt_session_clock(s);
    if (!s->w.error)
        ptt_writer_record(&s->w, PTT_REC_END, end, sizeof *end, 0, 0);
    if (s->w.error) {
        char text[256];
        snprintf(text, sizeof text, "write_error=%s\nevents_not_written=%llu", strerror(s->w.error),
                 (unsigned long long)s->w.unwritten);
        struct ptt_record h;
        end->events = s->w.events;
        end->bytes = s->w.bytes;
        end->lost += s->w.unwritten;
        end->exit_status = PTT_TRACE_FAILED;
        struct ptt_writer_rec r[2] = {{PTT_REC_INFO, &h, sizeof h, text, strlen(text)},
                                      {PTT_REC_END, end, sizeof *end, 0, 0}};
        ptt_writer_retry(&s->w, r, 2);
    }
    int failed = s->w.error != 0;
    if (ptt_writer_close(&s->w) && !failed) {
        ptt_warn("trace", "writing %s: %s; the trace is incomplete", s->output, strerror(errno));
        failed = 1;
    }
    return failed;
}

/* Every process the session has, for --kill-on-hang: those seen writing, and the child. */
static unsigned session_pids(struct ptt_session *s, struct ptt_hang *h, int *pids, unsigned max)
{
    unsigned n = ptt_hang_pids(h, s->d.pool, pids, max - 1), i;
    for (i = 0; i < n && pids[i] != s->child; i++)
        ;
    if (i == n && !s->child_done)
        pids[n++] = s->child;
    return n;
}

static void kill_all(struct ptt_session *s, struct ptt_hang *h)
{
    int pids[1024];
    unsigned n = session_pids(s, h, pids, 1024);
    for (unsigned i = 0; i < n; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGKILL);
}

/* The hang detector's state across the loop's steps. */
struct hang_watch {
    uint64_t last_event, last_check;
    uint64_t since; /* --kill-on-hang: every thread blocked since then (0: not watching) */
    int hung, reported, killed, said;
    char why[160]; /* the last thread seen not blocked */
};

/* --kill-on-hang kills only a program all of whose threads stayed blocked in traced calls (or
 * stopped) for the whole timeout: a thread computing, or waiting outside any traced call, may
 * still release the others. */
static void watch_threads(struct ptt_session *s, struct ptt_hang *h, struct hang_watch *w,
                          uint64_t now)
{
    int pids[1024];
    unsigned n = session_pids(s, h, pids, 1024);
    if (!w->since || !ptt_hang_settled(h, pids, n, 0, w->why, sizeof w->why)) {
        ptt_hang_settled(h, pids, n, 1, NULL, 0);
        w->since = now;
    }
    if (!w->reported || w->killed)
        return;
    if (now - w->since >= s->hang_ns) {
        fprintf(stderr, "ptt: killing the program (--kill-on-hang)\n");
        kill_all(s, h);
        w->killed = 1;
    } else if (w->why[0] && !w->said) {
        fprintf(stderr,
                "ptt: hang: %s: the program is not killed (--kill-on-hang waits for every "
                "thread to be blocked in a traced call)\n",
                w->why);
        w->said = 1;
    }
}

static void hang_step(struct ptt_session *s, struct ptt_hang *h, struct hang_watch *w, size_t n,
                      uint64_t now)
{
    if (now - w->last_check <= s->hang_ns / 4)
        return;
    w->last_check = now;
    if (n || ptt_hang_progress(h, s->d.pool)) {
        *w = (struct hang_watch){.last_event = now, .last_check = now};
        return;
    }
    if (!w->hung && now - w->last_event >= s->hang_ns) {
        w->hung = 1; /* once per hang: report again only after some progress */
        if (ptt_hang_report(h, &s->d, stderr, now - w->last_event, s->ns_per_tick)) {
            s->hangs++;
            w->reported = 1;
            if (s->flight)
                dump(s, 2, NULL);
        }
    }
    if (s->kill_on_hang)
        watch_threads(s, h, w, now);
}

/* A process that another process reaped (procs.h): what it had not handed over, and its end. */
static void ended(void *arg, pid_t pid, int status)
{
    struct ptt_session *s = arg;
    ptt_daemon_drain(&s->d, pid);
    ptt_daemon_process_exit(&s->d, pid, status);
}

int ptt_session_run(struct ptt_session *s)
{
    /* A pidfd per traced process: more than the usual 1024 descriptors (the program, forked
     * already, keeps its own limits). */
    struct rlimit nofile;
    if (s->procs && !getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    sigset_t sigs;
    sigemptyset(&sigs);
    int forward[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    sigaddset(&sigs, SIGCHLD);
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; i++)
        sigaddset(&sigs, forward[i]);
    int sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    struct ptt_hang *hang = s->hang_ns ? ptt_hang_new(s->d.pool) : NULL;
    uint64_t last_clock = ptt_mono_ns(), last_reap = last_clock;
    struct hang_watch hw = {.last_event = last_clock, .last_check = last_clock};
    struct ptt_ctl_server *ctl = s->ctl_fd >= 0 ? ptt_ctl_server_new(s->ctl_fd, control, s) : NULL;
    for (;;) {
        size_t n = ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
        atomic_fetch_add_explicit(&s->d.pool->heartbeat, 1, memory_order_relaxed);
        int st, none_left = 0;
        pid_t p;
        if (s->procs) /* before our reaps, so that one announced late is known as ours */
            ptt_procs_step(s->procs, ended, s);
        while ((p = ptt_procs_reap(s->procs, &st)) != 0) {
            if (p < 0) {
                none_left = errno == ECHILD;
                break;
            }
            ptt_daemon_drain(&s->d, p); /* what the ended process had not handed over */
            ptt_daemon_process_exit(&s->d, p, st);
            if (p == s->child) {
                s->child_status = st;
                s->child_done = 1;
            }
        }
        if (none_left || (s->child_done && !s->follow))
            break;
        uint64_t now = ptt_mono_ns();
        if (now - last_reap > 1000000000ull) {
            ptt_daemon_drain(&s->d, PTT_DRAIN_DEAD);
            last_reap = now;
        }
        if (now - last_clock > 10000000000ull) {
            ptt_session_clock(s);
            last_clock = now;
        }
        if (hang)
            hang_step(s, hang, &hw, n, now);
        struct pollfd fds[2 + PTT_CTL_POLLFDS] = {
            {sfd, POLLIN, 0}, {s->procs ? ptt_procs_fd(s->procs) : -1, POLLIN, 0}};
        unsigned nfds = 2 + (ctl ? ptt_ctl_pollfds(ctl, fds + 2) : 0);
        struct timespec to = {0, n ? 500000 : 5000000}; /* busy: drain again soon */
        if (ppoll(fds, nfds, &to, NULL) > 0) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == sizeof si) {
                /* A terminal's signal reached the program already; pass on those sent to us. */
                if (si.ssi_signo != SIGCHLD && !s->child_done &&
                    (si.ssi_code <= 0 || si.ssi_pid != 0))
                    kill(s->child, (int)si.ssi_signo);
            }
        }
        if (ctl) /* each client only as far as its socket allows: the drain never waits */
            ptt_ctl_step(ctl, fds + 2, nfds - 2);
    }
    close(sfd);
    if (s->procs) { /* the ends that came with the last reaps */
        ptt_procs_step(s->procs, ended, s);
        ptt_procs_close(s->procs);
        s->procs = NULL;
    }
    ptt_daemon_drain(&s->d, PTT_DRAIN_ALL);
    ptt_hang_free(hang);
    ptt_ctl_server_free(ctl);
    if (s->ctl_fd >= 0) {
        close(s->ctl_fd);
        unlink(s->ctl_path);
    }

    uint64_t lost = atomic_load(&s->d.pool->lost), wait_ns = atomic_load(&s->d.pool->wait_ns),
             waits = atomic_load(&s->d.pool->waits);
    int code = s->exec_errno ? (s->exec_errno == ENOENT ? 127 : 126) : status_code(s->child_status);
    struct ptt_rec_end end = {.events = s->d.events,
                              .bytes = s->d.bytes,
                              .lost = lost,
                              .wait_ns = wait_ns,
                              .waits = waits,
                              .exit_status = code};
    for (int i = 0; i < PTT_LOST_NWHY; i++)
        end.lost_why[i] = atomic_load(&s->d.pool->lost_why[i]);
    end.lost_unmarked = lost > s->d.lost_marked ? lost - s->d.lost_marked : 0;
    uint64_t written = s->d.events, bytes = 0, unwritten = 0;
    int incomplete = 0;
    if (s->flight) {
        int64_t k = dump(s, 0, &end);
        written = k > 0 ? (uint64_t)k : 0;
        incomplete = k < 0;
        if (incomplete) /* the window: every event drained but those it left out */
            unwritten = s->d.events - ptt_flight_dropped(s->flight);
    } else {
        incomplete = save_end(s, &end);
        written = s->w.events;
        bytes = s->w.offset;
        unwritten = s->w.unwritten;
    }
    ptt_daemon_destroy(&s->d);
    if (s->exec_errno)
        return code;
    if (s->flight) {
        FILE *f = fopen(s->output, "r");
        if (f) {
            fseek(f, 0, SEEK_END);
            bytes = (uint64_t)ftell(f);
            fclose(f);
        }
        fprintf(stderr,
                "ptt: flight recorder kept the newest %llu events (%llu older ones left out)\n",
                (unsigned long long)written, (unsigned long long)ptt_flight_dropped(s->flight));
        ptt_flight_free(s->flight);
    }
    if (s->d.corrupt)
        ptt_warn("trace", "%llu sub-buffers held a malformed event and were cut short",
                 (unsigned long long)s->d.corrupt);
    if (waits)
        fprintf(stderr,
                "ptt: warning: threads waited %.3f ms in all, %llu times, for a free "
                "sub-buffer (a larger --buffer avoids it)\n",
                (double)wait_ns / 1e6, (unsigned long long)waits);
    if (lost) {
        char why[512];
        fprintf(stderr, "ptt: warning: %s\n",
                ptt_lost_text(why, sizeof why, lost, end.lost_why, end.lost_unmarked));
    }
    fprintf(stderr, "ptt: wrote %llu events (%llu bytes) to %s, %llu lost",
            (unsigned long long)written, (unsigned long long)bytes, s->output,
            (unsigned long long)lost);
    if (incomplete) /* the status ptt trace exits with no longer says it */
        fprintf(stderr, ", %llu not written; the program's exit status: %d",
                (unsigned long long)unwritten, code);
    fputc('\n', stderr);
    return incomplete ? PTT_TRACE_FAILED : code;
}
