/* The session loop of ptt trace. One thread: it sleeps in poll() on a signalfd (children,
 * signals to forward), the control socket and its clients (never waited for), and wakes at least
 * every 5 ms to drain the pool (0.5 to 5 ms while there is work, about 32 sub-buffers a turn; idle,
 * every 100 ms, or when a writer hands a sub-buffer over). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "session/attach.h"
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

/* One thread's id and name (comm: 15 bytes at most), as the event's arguments. */
struct task_name {
    uint64_t a[1 + 8];
    unsigned n;
};

/* The threads of process pid, from /proc; their number, or -1 when unreadable. */
static int read_tasks(pid_t pid, struct task_name **out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int k = 0, cap = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char cp[400], name[64] = "";
        snprintf(cp, sizeof cp, "%s/%s/comm", path, e->d_name);
        FILE *f = fopen(cp, "re");
        if (!f)
            continue;
        if (!fgets(name, sizeof name, f))
            name[0] = 0;
        fclose(f);
        name[strcspn(name, "\n")] = 0;
        if (k == cap)
            *out = ptt_must(realloc(*out, (size_t)(cap = cap ? 2 * cap : 16) * sizeof **out));
        struct task_name *t = &(*out)[k++];
        memset(t, 0, sizeof *t);
        t->a[0] = (uint64_t)atoi(e->d_name);
        size_t len = strlen(name) < 63 ? strlen(name) : 63;
        memcpy(&t->a[1], name, len);
        t->n = 1 + (unsigned)(len / 8 + 1);
    }
    closedir(d);
    for (int i = 1; i < k; i++) /* main first: its event starts the listing (carry.c) */
        if ((pid_t)(*out)[i].a[0] == pid) {
            struct task_name m = (*out)[i];
            (*out)[i] = (*out)[0];
            (*out)[0] = m;
        }
    return k;
}

void ptt_session_threads(struct ptt_session *s, pid_t pid, int pidfd, uint16_t id)
{
    struct task_name *t = NULL;
    int k = read_tasks(pid, &t);
    /* Still the process of that pidfd after the reading: its pid was not another's. One we may
     * not signal (EPERM: it exec'd a set-user-ID program, without libptt) is not listed: its
     * threads' names are another user's now. */
    if (k > 0 && (pidfd < 0 || !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)))
        for (int i = 0; i < k; i++)
            ptt_daemon_events(&s->d, (int)pid, 1, &id, &t[i].n, t[i].a);
    free(t);
}

static void running_in(void *arg, pid_t pid, int pidfd)
{
    struct ptt_session *s = arg;
    if (s->child_done || pid != s->child) /* the child's comes first, below */
        ptt_session_threads(s, pid, pidfd, PTT_EV_THREAD_RUNNING);
}

/* Recording starts (or records more): the threads already there, with their names, whose
 * THREAD_START the trace may not have (it came while stopped). */
static void threads_running(struct ptt_session *s)
{
    if (s->child > 0 && !s->child_done) /* not reaped (ptt trace -p: watched by its pidfd) */
        ptt_session_threads(s, s->child, s->attach ? s->target_fd : -1, PTT_EV_THREAD_RUNNING);
    ptt_procs_each_live(s->procs, running_in, s);
}

/* The masks the writers read (common/pool.h), from the session's settings; the switch is
 * recorded, so that a reader knows which spans are partial. */
static void apply_masks(struct ptt_session *s)
{
    uint64_t calls = s->stopped ? PTT_META_MASK : s->class_mask | PTT_META_MASK;
    uint64_t states = s->stopped || s->light ? 0 : s->class_mask | PTT_META_MASK;
    uint64_t before = atomic_exchange(&s->d.pool->masks[0], calls);
    atomic_store(&s->d.pool->masks[1], states);
    uint16_t id = PTT_EV_TRACE_CONTROL;
    unsigned n = 2;
    uint64_t a[2] = {calls, states};
    ptt_daemon_events(&s->d, (int)getpid(), 1, &id, &n, a);
    if (calls & ~before & ~(uint64_t)PTT_META_MASK)
        threads_running(s);
}

/* The window of the flight recorder, into the trace file. */
static int64_t dump(struct ptt_session *s, int why, const struct ptt_rec_end *end)
{
    uint16_t id = PTT_EV_TRACE_DUMP;
    unsigned n = 1;
    uint64_t a = (uint64_t)why;
    ptt_daemon_events(&s->d, (int)getpid(), 1, &id, &n, &a);
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
    } else if (s->attach && (!strcmp(req, "stop") || !strcmp(req, "detach"))) {
        s->detach_asked = 1;
        snprintf(reply, len, "ok: detaching from process %d\n", (int)s->child);
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
    } else if (!strcmp(req, "detach")) {
        snprintf(reply, len,
                 "error: detach is for a session of ptt trace -p; this one runs its program "
                 "(stop switches recording off)\n");
    } else {
        snprintf(reply, len,
                 "error: unknown request '%s' (status, start, stop, level light|full, events "
                 "CLASS,..., dump, detach)\n",
                 req);
    }
}

/* The last clock and the END record into the file. After a write error, the END record holds
 * the true figures (what the file holds; lost: every event missing from it) if it still fits,
 * with an INFO record saying what was not written; after the pool was cut (ptt trace -p), the
 * INFO record says which events the file does not hold. 1 when the trace is incomplete. */
static int save_end(struct ptt_session *s, struct ptt_rec_end *end)
{
    ptt_session_clock(s);
    int cut = !s->w.error && s->w.cut && s->w.unwritten;
    if (cut) {
        char text[256];
        snprintf(text, sizeof text, "pool_cut=1\nevents_not_written=%llu",
                 (unsigned long long)s->w.unwritten);
        ptt_writer_info(&s->w, text);
        end->events = s->w.events;
        end->bytes = s->w.bytes;
        end->lost += s->w.unwritten; /* as after a write error: every event missing from it */
    }
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
    int failed = s->w.error != 0 || cut;
    if (ptt_writer_close(&s->w) && !failed) {
        ptt_warn("trace", "writing %s: %s; the trace is incomplete", s->output, strerror(errno));
        failed = 1;
    }
    return failed;
}

/* Every process the session has, for --kill-on-hang: those seen writing, and the child. */
static unsigned session_pids(struct ptt_session *s, struct ptt_hang *h, int *pids, unsigned max)
{
    unsigned n = ptt_hang_pids(h, pids, max - 1), i;
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
    unsigned busy; /* reports in a row that found a thread running: each waits twice as long */
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
        if (ptt_hang_stopped(h)[0])
            fprintf(stderr, "ptt: hang: %s is stopped (state T: a SIGSTOP, or a debugger)\n",
                    ptt_hang_stopped(h));
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

/* Threads that wait for each other are a hang whatever the program's other threads do (a timer
 * thread's periodic waits keep the program from ever going quiet): reported, and with
 * --kill-on-hang the program killed at once, for nothing the others do can end it. A quiet
 * program's hang is the report of every blocked thread, as before. */
static void deadlock_step(struct ptt_session *s, struct ptt_hang *h, struct hang_watch *w)
{
    if (!ptt_hang_deadlocks(h, &s->d, stderr, s->hang_ns, s->ns_per_tick))
        return;
    s->hangs++;
    if (s->flight)
        dump(s, 2, NULL);
    if (s->kill_on_hang && !w->killed) {
        fprintf(stderr, "ptt: killing the program (--kill-on-hang)\n");
        kill_all(s, h);
        w->killed = 1;
    }
}

/* How many timeouts a report waits for, after busy reports in a row that found a thread outside
 * any traced call (computing, or idle in epoll or a sleep): 1, 2, 4, 8, then 16. */
static unsigned backoff(unsigned busy)
{
    return 1u << (busy < 4 ? busy : 4);
}

/* A quiet program's threads blocked in calls may wait for one that is not in any (a server's
 * pool waiting for work that its main thread, in epoll_wait, hands out; a worker computing):
 * the first such thread said after the report, for the program may be idle or busy rather than
 * hung. 1 if there is one (the next report then waits longer: an idle server's periodic work
 * would bring one at each of its rounds), 0 when every thread is blocked in a call. */
static int outside_calls(struct ptt_session *s, struct ptt_hang *h, unsigned busy)
{
    int pids[1024];
    char why[160] = "";
    unsigned n = session_pids(s, h, pids, 1024);
    ptt_hang_settled(h, pids, n, 1, NULL, 0);
    if (ptt_hang_settled(h, pids, n, 0, why, sizeof why) || !why[0]) {
        if (ptt_hang_stopped(h)[0])
            fprintf(stderr,
                    "ptt: hang: %s is stopped (state T: a SIGSTOP, or a debugger): the program "
                    "may be stopped rather than hung\n",
                    ptt_hang_stopped(h));
        return 0;
    }
    if (strstr(why, " is running")) {
        fprintf(stderr,
                "ptt: hang: %s: the threads blocked may wait for its work (a program that "
                "computes between its calls is busy, not hung; a next report waits for %u times "
                "the timeout)\n",
                why, backoff(busy + 1));
        return 1;
    }
    fprintf(stderr,
            "ptt: hang: %s: the threads blocked may wait for it (a program that waits for "
            "work in epoll, read or a sleep is idle, not hung; a next report waits for %u times "
            "the timeout)\n",
            why, backoff(busy + 1));
    return 1;
}

static void hang_step(struct ptt_session *s, struct ptt_hang *h, struct hang_watch *w, size_t n,
                      uint64_t now)
{
    if (now - w->last_check <= s->hang_ns / 4)
        return;
    w->last_check = now;
    if (ptt_hang_progress(h) || n) { /* the calls as they are now, for the deadlocks */
        *w = (struct hang_watch){
            .last_event = now, .last_check = now, .killed = w->killed, .busy = w->busy};
        deadlock_step(s, h, w);
        return;
    }
    if (!w->hung && now - w->last_event >= s->hang_ns * backoff(w->busy)) {
        w->hung = 1; /* once per hang: report again only after some progress */
        if (ptt_hang_report(h, &s->d, stderr, now - w->last_event, s->ns_per_tick)) {
            s->hangs++;
            w->reported = 1;
            if (s->flight)
                dump(s, 2, NULL);
            if (!s->kill_on_hang) /* busy or idle: the next report waits longer, else not */
                w->busy = outside_calls(s, h, w->busy) ? w->busy + 1 : 0;
        }
    }
    if (s->kill_on_hang)
        watch_threads(s, h, w, now);
}

/* A process that another process reaped (procs.h): what it had not handed over, and its end. */
static void ended(void *arg, pid_t pid, int status, uint64_t at)
{
    struct ptt_session *s = arg;
    ptt_daemon_drain(&s->d, pid);
    ptt_daemon_process_exit(&s->d, pid, status, at);
}

static void execd(void *arg, pid_t pid, uint32_t before)
{
    struct ptt_session *s = arg;
    ptt_daemon_process_exec(&s->d, pid, before);
}

static void started(void *arg, pid_t pid, uint32_t before)
{
    struct ptt_session *s = arg;
    ptt_daemon_process_start(&s->d, pid, before);
}

static void procs_step(struct ptt_session *s)
{
    const struct ptt_procs_hooks h = {
        .ended = ended, .execd = execd, .started = started, .arg = s, .clock_tsc = s->d.clock_tsc};
    ptt_procs_step(s->procs, &h);
}

/* What the loop keeps from one step to the next. */
struct loop {
    int sfd;
    struct ptt_hang *hang;
    struct ptt_ctl_server *ctl;
    uint64_t last_clock, last_reap;
    unsigned quiet;     /* turns in a row that drained nothing */
    uint64_t last_turn; /* when idle_timeout last ran (CLOCK_MONOTONIC ns) */
    struct hang_watch hw;
};

/* What the session wrote, for the end record and the summary. */
struct totals {
    struct ptt_rec_end end;
    uint64_t lost, wait_ns, waits, written, bytes, unwritten;
    int incomplete, code;
    uint64_t growing; /* waits begun while the guardian still reserved the pool */
};

static void loop_start(struct ptt_session *s, struct loop *l)
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
    sigaddset(&sigs, SIGURG); /* a writer's wake-up (idle_timeout, and lib/buffer.c wake_drain) */
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; i++)
        sigaddset(&sigs, forward[i]);
    l->sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    l->hang = s->hang_ns ? ptt_hang_new(&s->d.geom) : NULL;
    if (l->hang) { /* every event, in order: who holds what, and the names */
        s->d.drained = ptt_hang_drained;
        s->d.exited = ptt_hang_exited;
        s->d.execd = ptt_hang_execd;
        s->d.started = ptt_hang_started;
        s->d.drained_arg = l->hang;
    }
    l->last_clock = l->last_reap = ptt_mono_ns();
    l->hw = (struct hang_watch){.last_event = l->last_clock, .last_check = l->last_clock};
    l->ctl = s->ctl_fd >= 0 ? ptt_ctl_server_new(s->ctl_fd, control, s) : NULL;
}

/* As a pid namespace's init (ptt trace as a container's first process), every orphan is our
 * child, the guardian and the witness too: the session is over when they are all that is left
 * (/proc/self/task/TID/children, each of our threads' children). */
static int only_helpers_left(const struct ptt_session *s)
{
    if (getpid() != 1)
        return 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int others = !d;
    while (d && !others && (e = readdir(d))) {
        char path[64];
        if (e->d_name[0] == '.' || snprintf(path, sizeof path, "/proc/self/task/%s/children",
                                            e->d_name) >= (int)sizeof path)
            continue;
        FILE *f = fopen(path, "re");
        long pid;
        others = !f;
        while (f && !others && fscanf(f, "%ld", &pid) == 1)
            others = pid != s->guardian_pid && pid != s->witness.pid;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return !others;
}

/* The processes that ended, with what they had not handed over; 1 once the session is over. */
static int reap(struct ptt_session *s)
{
    int st, none_left = 0;
    pid_t p;
    if (s->procs) /* before our reaps, so that one announced late is known as ours */
        procs_step(s);
    while ((p = ptt_procs_reap(s->procs, &st)) != 0) {
        if (p < 0) {
            none_left = errno == ECHILD;
            break;
        }
        ptt_daemon_drain(&s->d, p); /* what the ended process had not handed over */
        ptt_daemon_process_exit(&s->d, p, st, 0);
        if (p == s->child) {
            s->child_status = st;
            s->child_done = 1;
        }
    }
    if (!none_left && s->child_done && s->follow)
        none_left = only_helpers_left(s);
    return none_left || (s->child_done && !s->follow);
}

/* What is due by the clock: sub-buffers of dead threads, a clock record, the hang watch. */
static void timed(struct ptt_session *s, struct loop *l, size_t n)
{
    uint64_t now = ptt_mono_ns();
    if (now - l->last_reap > 1000000000ull) {
        ptt_daemon_drain(&s->d, PTT_DRAIN_DEAD);
        l->last_reap = now;
    }
    if (now - l->last_clock > 10000000000ull) {
        ptt_session_clock(s);
        l->last_clock = now;
    }
    if (l->hang)
        hang_step(s, l->hang, &l->hw, n, now);
}

/* How long the loop sleeps, in ns. Busy (n sub-buffers drained): long enough, at this turn's
 * rate, for about a writev's worth (32 sub-buffers) to be ready at the next, but for at most an
 * eighth of the pool, from 0.5 to 5 ms: each turn costs a ppoll and its wake-up, a tenth of the
 * drain's CPU when it woke every 0.5 ms. Then 5 ms, and once nothing was drained for 20 ms,
 * 100 ms: idle, it is woken by the first writer that hands a sub-buffer over (pool->idle,
 * SIGURG; lib/buffer.c). Not with the hang watch, which looks every few ms. */
static long idle_timeout(struct ptt_session *s, struct loop *l, size_t n)
{
    enum { MIN_NS = 500000, MAX_NS = 5000000, BATCH = 32 };
    uint64_t now = ptt_mono_ns(), elapsed = now - l->last_turn;
    l->last_turn = now;
    l->quiet = n ? 0 : l->quiet + 1;
    if (n) {
        uint64_t want = s->d.geom.nbufs / 8, ns;
        want = want < 1 ? 1 : want > BATCH ? BATCH : want;
        ns = elapsed / n * want;
        return ns < MIN_NS ? MIN_NS : ns > MAX_NS ? MAX_NS : (long)ns;
    }
    if (l->quiet < 4 || l->hang || s->unwakeable)
        return MAX_NS;
    atomic_store(&s->d.pool->idle, 1);
    /* idle, then the states (a writer stores its state, then reads idle) */
    if (ptt_daemon_drain(&s->d, PTT_DRAIN_READY)) {
        atomic_store(&s->d.pool->idle, 0);
        l->quiet = 0;
        return MIN_NS;
    }
    return 100000000;
}

/* The signals read, by bit (seen), how many times each came (asked), and which came from the
 * kernel (tty: a terminal's, to its foreground group or, on a hangup, to its session's leader
 * alone). A writer's wake-up (SIGURG) is no signal to pass on; attached, such a signal means
 * detach. */
static void read_signals(struct ptt_session *s, struct loop *l, unsigned *seen, unsigned *tty,
                         uint8_t *asked)
{
    struct signalfd_siginfo si;
    while (read(l->sfd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD || si.ssi_signo == SIGURG || si.ssi_signo >= 32)
            continue;
        *seen |= 1u << si.ssi_signo;
        if (s->attach) /* not ours to forward: detach */
            s->detach_asked = 1;
        else if (asked[si.ssi_signo] < 255) {
            asked[si.ssi_signo]++;
            if (si.ssi_code > 0 && si.ssi_pid == 0)
                *tty |= 1u << si.ssi_signo;
        }
    }
}

/* Pass on the signals that did not reach the program. One sent to the whole process group, to
 * every process, or by a terminal to its foreground group reached it as well: the witness has
 * it then (witness.h), once its sender is done, which 20 ms leave time for (timeout(1) signals
 * ptt trace, then the group). Such a copy accounts for one of the signals we got, the others
 * are passed on (a kill to ptt trace and one to the group: two). The witness's copy is taken
 * each time: else it would stay pending there, and a later signal sent to us alone would seem
 * sent to the group. Without a witness, a terminal's signal is taken for one the program got,
 * and the others are passed on. */
static void take_signals(struct ptt_session *s, struct loop *l)
{
    unsigned seen = 0, tty = 0;
    uint8_t asked[32] = {0};
    read_signals(s, l, &seen, &tty, asked);
    if (!seen)
        return;
    if (s->witness.pid) {
        struct timespec d = {0, 20000000};
        nanosleep(&d, NULL);
        read_signals(s, l, &seen, &tty, asked);
    }
    for (int sig = 1; sig < 32; sig++) {
        if (!(seen >> sig & 1))
            continue;
        int got = ptt_witness_got(&s->witness, sig);
        unsigned n = asked[sig];
        if (got == 1 || (got < 0 && (tty >> sig & 1)))
            n = n ? n - 1 : 0;
        for (unsigned k = 0; k < n && !s->child_done; k++)
            kill(s->child, sig);
    }
}

/* Sleep until a signal, a process's end or a control request, or the time idle_timeout says;
 * forward signals; serve control. */
static void wait_and_serve(struct ptt_session *s, struct loop *l, size_t n)
{
    struct pollfd fds[2 + PTT_CTL_POLLFDS] = {{l->sfd, POLLIN, 0},
                                              {s->procs ? ptt_procs_fd(s->procs) : -1, POLLIN, 0}};
    unsigned nfds = 2 + (l->ctl ? ptt_ctl_pollfds(l->ctl, fds + 2) : 0);
    struct timespec to = {0, idle_timeout(s, l, n)};
    int r = ppoll(fds, nfds, &to, NULL);
    atomic_store_explicit(&s->d.pool->idle, 0, memory_order_relaxed);
    if (r > 0)
        take_signals(s, l);
    if (r > 0 && fds[1].revents) /* a process ended: its time now, not after the next drain */
        procs_step(s);
    if (l->ctl) /* each client only as far as its socket allows: the drain never waits */
        ptt_ctl_step(l->ctl, fds + 2, nfds - 2);
}

/* ptt trace -p: recording stopped in the process, the pool drained (what threads were writing
 * settles meanwhile), then every thread's state cleared and the pool unmapped there. */
static int target_ended(struct ptt_session *s)
{
    struct pollfd p = {s->target_fd, POLLIN, 0};
    return s->target_fd < 0 || poll(&p, 1, 0) > 0;
}

/* The attached process ended: its end recorded, with its status once its parent has reaped it
 * (waited for 0.2 s at most), and said. As any process's that announced itself (procs.h) when
 * it did: libptt announces it once loaded. */
static void target_exit(struct ptt_session *s)
{
    int st = 0, known = 0;
    /* Without the announcements (a kernel that does not tell a status), no wait for it. */
    for (int i = 0; i < 40 && s->procs && !(known = !ptt_procs_exit_status(s->target_fd, &st)); i++)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (s->procs)
        procs_step(s);
    char how[128] = "", v[100];
    if (known) {
        if (!ptt_procs_recorded(s->procs, s->target_fd)) {
            ptt_daemon_drain(&s->d, s->child); /* what it had not handed over, first */
            ptt_daemon_process_exit(&s->d, s->child, st, 0);
        }
        ptt_fmt_field(v, sizeof v, PTT_F_WSTATUS, (uint64_t)(uint32_t)st, 1);
        snprintf(how, sizeof how, " (%s)", v);
    }
    if (!s->quiet)
        fprintf(stderr, "ptt: process %d ended while attached%s\n", (int)s->child, how);
}

/* A detach that failed because the process ended meanwhile did not fail. */
static void detach_failed(struct ptt_session *s, const char *err)
{
    if (target_ended(s)) {
        s->child_done = 1;
        return;
    }
    ptt_warn("trace", "detaching: %s", err);
    s->detach_failed = 1;
}

static void detach(struct ptt_session *s)
{
    char err[512];
    if (ptt_attach_stop(s->attach, err, sizeof err)) {
        detach_failed(s, err);
        return;
    }
    for (int i = 0; i < 10; i++) { /* 50 ms with the pool served */
        ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
        atomic_fetch_add_explicit(&s->d.pool->heartbeat, 1, memory_order_relaxed);
        struct timespec d = {0, 5000000};
        nanosleep(&d, NULL);
    }
    if (ptt_attach_release(s->attach, err, sizeof err))
        detach_failed(s, err);
    else if (!s->quiet)
        fprintf(stderr, "ptt: detached from process %d\n", (int)s->child);
}

/* ptt trace -p: 1 once the session is over (detached, or the process ended). */
static int attach_step(struct ptt_session *s)
{
    if (s->procs)
        procs_step(s);
    if (ptt_pool_cut()) { /* what it held after the cut is lost: nothing to detach through */
        ptt_warn("trace",
                 "the pool was shrunk by the user of process %d, to whom ptt trace -p gave it: "
                 "the session ends, the process keeps libptt loaded",
                 (int)s->child);
        s->detach_failed = 1;
        return 1;
    }
    if (target_ended(s)) {
        s->child_done = 1; /* the process ended while attached */
        target_exit(s);
        return 1;
    }
    if (s->detach_asked || (s->deadline_ns && ptt_mono_ns() >= s->deadline_ns)) {
        detach(s);
        return 1;
    }
    return 0;
}

/* One turn of the loop; 1 once every process of the session has ended. */
static int loop_step(struct ptt_session *s, struct loop *l)
{
    /* Before the drain: a writer that finds none free after it wakes the next sleep. */
    atomic_store_explicit(&s->d.pool->drain_wanted, 0, memory_order_relaxed);
    size_t n = ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
    atomic_fetch_add_explicit(&s->d.pool->heartbeat, 1, memory_order_relaxed);
    if (s->attach ? attach_step(s) : reap(s))
        return 1;
    timed(s, l, n);
    wait_and_serve(s, l, n);
    return 0;
}

/* The last of the pool drained; the loop's descriptors and the control socket closed. */
static void loop_end(struct ptt_session *s, struct loop *l)
{
    close(l->sfd);
    if (s->procs) { /* the ends that came with the last reaps */
        procs_step(s);
        ptt_procs_close(s->procs);
        s->procs = NULL;
    }
    s->d.drained = NULL; /* no hang to report any more */
    s->d.exited = NULL;
    ptt_daemon_drain(&s->d, PTT_DRAIN_ALL);
    ptt_hang_free(l->hang);
    ptt_ctl_server_free(l->ctl);
    if (s->ctl_fd >= 0) {
        close(s->ctl_fd);
        unlink(s->ctl_path);
    }
}

/* The end record written (the trace file's, or the flight recorder's window), the pool gone. */
static void save(struct ptt_session *s, struct totals *t)
{
    t->lost = atomic_load(&s->d.pool->lost);
    t->wait_ns = atomic_load(&s->d.pool->wait_ns);
    t->waits = atomic_load(&s->d.pool->waits);
    t->growing = atomic_load(&s->d.pool->reserve_waits);
    t->code = s->exec_errno ? (s->exec_errno == ENOENT ? 127 : 126) : status_code(s->child_status);
    if (s->attach) /* the process is not ours: its status is its own business */
        t->code = s->detach_failed ? PTT_TRACE_FAILED : 0;
    t->end = (struct ptt_rec_end){.events = s->d.events,
                                  .bytes = s->d.bytes,
                                  .lost = t->lost,
                                  .wait_ns = t->wait_ns,
                                  .waits = t->waits,
                                  .exit_status = t->code};
    for (int i = 0; i < PTT_LOST_NWHY; i++)
        t->end.lost_why[i] = atomic_load(&s->d.pool->lost_why[i]);
    t->end.lost_unmarked = t->lost > s->d.lost_marked ? t->lost - s->d.lost_marked : 0;
    t->written = s->d.events;
    if (s->flight) {
        int64_t k = dump(s, 0, &t->end);
        t->written = k > 0 ? (uint64_t)k : 0;
        t->incomplete = k < 0;
        if (t->incomplete) /* the window: every event drained but those it left out */
            t->unwritten = s->d.events - ptt_flight_dropped(s->flight);
    } else {
        if (s->rot)
            ptt_rotate_finish(s->rot);
        t->incomplete = save_end(s, &t->end);
        t->written = s->w.events;
        t->bytes = s->rot ? ptt_rotate_bytes(s->rot) : s->w.offset;
        t->unwritten = s->w.unwritten;
    }
    ptt_daemon_destroy(&s->d);
}

/* What the flight recorder kept, in the file it wrote. */
static void flight_summary(struct ptt_session *s, struct totals *t)
{
    FILE *f = fopen(s->output, "r");
    if (f) {
        fseek(f, 0, SEEK_END);
        t->bytes = (uint64_t)ftell(f);
        fclose(f);
    }
    fprintf(stderr, "ptt: flight recorder kept the newest %llu events (%llu older ones left out)\n",
            (unsigned long long)t->written, (unsigned long long)ptt_flight_dropped(s->flight));
    ptt_flight_free(s->flight);
}

/* The warnings and the last line on stderr; ptt trace's exit status. */
static int summary(struct ptt_session *s, struct totals *t)
{
    if (s->flight)
        flight_summary(s, t);
    if (s->d.corrupt)
        ptt_warn("trace", "%llu sub-buffers held a malformed event and were cut short",
                 (unsigned long long)s->d.corrupt);
    if (t->waits)
        fprintf(stderr,
                "ptt: warning: threads waited %.3f ms in all, %llu time%s, for a free "
                "sub-buffer (%s)\n",
                (double)t->wait_ns / 1e6, (unsigned long long)t->waits, t->waits == 1 ? "" : "s",
                t->growing >= t->waits ? "while the guardian was still reserving the pool: a "
                                         "larger --buffer would not avoid it"
                                       : "a larger --buffer avoids it");
    if (t->lost) {
        char why[512];
        fprintf(stderr, "ptt: warning: %s\n",
                ptt_lost_text(why, sizeof why, t->lost, t->end.lost_why, t->end.lost_unmarked));
    }
    char parts[4200];
    if (s->rot)
        ptt_rotate_summary(s->rot, parts, sizeof parts);
    fprintf(stderr, "ptt: wrote %llu events (%llu bytes) to %s, %llu lost",
            (unsigned long long)t->written, (unsigned long long)t->bytes,
            s->rot ? parts : s->output, (unsigned long long)t->lost);
    if (t->incomplete) /* the status ptt trace exits with no longer says it */
        fprintf(stderr, ", %llu not written; the program's exit status: %d",
                (unsigned long long)t->unwritten, t->code);
    fputc('\n', stderr);
    return t->incomplete ? PTT_TRACE_FAILED : t->code;
}

int ptt_session_run(struct ptt_session *s)
{
    struct loop l = {0}; /* the fields loop_start leaves (quiet, last_turn...) start at 0 */
    loop_start(s, &l);
    while (!loop_step(s, &l))
        ;
    loop_end(s, &l);
    struct totals t = {0};
    save(s, &t);
    if (s->exec_errno)
        return t.code;
    return summary(s, &t);
}
