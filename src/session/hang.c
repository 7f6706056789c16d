/* Hang detection: an incremental read of every OWNED sub-buffer, keeping each thread's open
 * calls (the tracker's). A writer writes an event's header last (lib/record.h), so a header read as
 * non-zero means a whole event. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "trace/events.h"
#include "session/hang.h"
#include "analysis/tracker.h"

struct peek {
    int32_t pid, tid;
    uint32_t serial, seq;
    uint32_t off;              /* read up to here */
    uint64_t base;             /* time of the last event read */
    struct ptt_tthread *calls; /* its thread's (h->calls) */
    int live;                  /* OWNED at the last look */
};

/* pthread_t values seen in THREAD_START, to name the thread a join waits for. */
#define NTHREADS 4096
struct thread_id {
    uint64_t self;
    int32_t tid;
};

/* A thread's CPU time when the watch of --kill-on-hang began. */
struct task {
    int32_t pid, tid;
    uint64_t cpu;
};

struct ptt_hang {
    struct ptt_tracker *calls;          /* by pid and serial */
    struct thread_id threads[NTHREADS]; /* by hash of self, the newest wins */
    struct task *tasks;
    unsigned ntasks, cap;
    uint32_t n;
    struct peek p[];
};

struct ptt_hang *ptt_hang_new(const struct ptt_pool *pool)
{
    struct ptt_hang *h = calloc(1, sizeof *h + pool->nbufs * sizeof(struct peek));
    if (h) {
        h->n = pool->nbufs;
        h->calls = ptt_tracker_new(PTT_TRACK_SERIAL);
    }
    return h;
}

static struct thread_id *thread_slot(struct ptt_hang *h, uint64_t self)
{
    return &h->threads[(self >> 8 ^ self >> 20) % NTHREADS];
}

/* The field a call is reported by: its object, else its first field. */
static int shown_field(const struct ptt_evinfo *in)
{
    return in->rfield[PTT_RF_OBJECT] >= 0 ? in->rfield[PTT_RF_OBJECT] : 0;
}

/* Whether a call waits for a thread to end (the object it reports is a pthread_t). */
static int is_join(const struct ptt_evinfo *in)
{
    return in && in->role == PTT_ROLE_WAIT && in->okind == PTT_CLASS_thread;
}

static void track(struct ptt_hang *h, struct peek *k, const struct ptt_event *e,
                  const uint64_t *args, unsigned n, uint64_t ticks)
{
    struct ptt_ev ev;
    memset(&ev, 0, offsetof(struct ptt_ev, args));
    ev.id = e->id & PTT_EV_ID_MASK;
    ev.info = ptt_evinfo(ev.id);
    if (!ev.info || ev.nested) /* a signal handler's: it returns before its thread goes on */
        return;
    ev.nested = (e->id & PTT_EVF_NEST) != 0;
    ev.ticks = ticks;
    ev.pid = k->pid;
    ev.tid = k->tid;
    ev.serial = k->serial;
    ev.nargs = n < PTT_EVENT_MAX_ARGS ? n : PTT_EVENT_MAX_ARGS;
    memcpy(ev.args, args, ev.nargs * sizeof *args);
    if (!k->calls)
        k->calls = ptt_tracker_get(h->calls, &ev);
    ptt_tracker_feed(k->calls, &ev, NULL);
    uint64_t self;
    if (ev.info->role == PTT_ROLE_THREAD_START && ptt_ev_role_get(&ev, PTT_RF_OBJECT, &self))
        *thread_slot(h, self) = (struct thread_id){self, k->tid};
}

/* The call a live sub-buffer's thread is in, or NULL. */
static struct ptt_open *call_of(const struct peek *k)
{
    return k->live && k->calls ? ptt_tthread_call(k->calls) : NULL;
}

/* A new sub-buffer of a thread: its open calls carry over from its previous one when we saw
 * it, else they are unknown. */
static void carry_over(struct ptt_hang *h, uint32_t i, const struct ptt_desc *d)
{
    const struct peek *k = &h->p[i];
    if (k->pid == d->pid && k->serial == d->serial)
        return;
    for (uint32_t j = 0; j < h->n; j++) /* its previous sub-buffer elsewhere */
        if (j != i && h->p[j].pid == d->pid && h->p[j].serial == d->serial &&
            h->p[j].seq + 1 == d->seq)
            return;
    ptt_tracker_reset(h->calls, d->pid, d->serial);
}

int ptt_hang_progress(struct ptt_hang *h, const struct ptt_pool *pool)
{
    int progress = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        struct ptt_desc *d = ptt_pool_desc((struct ptt_pool *)pool, i);
        struct peek *k = &h->p[i];
        uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire);
        if (st != PTT_BUF_OWNED) {
            if (k->live)
                progress = 1; /* handed over: its thread went on */
            k->live = 0;
            continue;
        }
        if (!k->live || k->pid != d->pid || k->serial != d->serial || k->seq != d->seq) {
            carry_over(h, i, d);
            memset(k, 0, sizeof *k);
            k->calls = ptt_tracker_thread(h->calls, d->pid, d->serial);
            k->pid = d->pid;
            k->tid = d->tid;
            k->serial = d->serial;
            k->seq = d->seq;
            k->base = d->base_ts;
            k->live = 1;
            progress = 1;
        }
        const uint8_t *data = ptt_pool_data((struct ptt_pool *)pool, i);
        while (k->off + 8 <= pool->buf_size) {
            uint64_t hv = __atomic_load_n((const uint64_t *)(data + k->off), __ATOMIC_ACQUIRE);
            struct ptt_event e;
            memcpy(&e, &hv, 8);
            if (!(e.id & PTT_EV_ID_MASK) || e.size < 8 || e.size % 8 ||
                k->off + e.size > pool->buf_size)
                break;
            const uint64_t *w = (const uint64_t *)(data + k->off + 8);
            unsigned n = (e.size - 8) / 8;
            uint64_t t;
            if (e.id & PTT_EVF_ABS) {
                t = n ? w[0] : k->base;
                w++;
                n = n ? n - 1 : 0;
                if (!(e.id & PTT_EVF_NEST))
                    k->base = t;
            } else {
                t = k->base + e.dts;
                k->base = t;
            }
            track(h, k, &e, w, n, t);
            k->off += e.size;
            progress = 1;
        }
    }
    return progress;
}

unsigned ptt_hang_report(struct ptt_hang *h, struct ptt_daemon *d, FILE *f, uint64_t idle_ns,
                         double ns_per_tick)
{
    unsigned blocked = 0;
    uint64_t now = ptt_ticks(d->clock_tsc);
    for (uint32_t i = 0; i < h->n; i++)
        blocked += call_of(&h->p[i]) != NULL;
    if (!blocked)
        return 0;
    fprintf(f, "ptt: hang: no traced thread recorded an event for %.1f s; %u blocked in a call:\n",
            (double)idle_ns / 1e9, blocked);
    uint16_t id = PTT_EV_HANG_DETECTED;
    unsigned na = 2;
    uint64_t a[2] = {idle_ns, blocked};
    ptt_daemon_events(d, d->pool->daemon_pid, 1, &id, &na, a);
    for (uint32_t i = 0; i < h->n; i++) {
        struct peek *k = &h->p[i];
        struct ptt_open *c = call_of(k);
        if (!c)
            continue;
        const struct ptt_evinfo *in = c->in.info;
        uint64_t object = ptt_ev_arg(&c->in, (unsigned)shown_field(in), 0);
        if (!c->owner && is_join(in)) {
            struct thread_id *t = thread_slot(h, object);
            if (t->self == object)
                c->owner = (uint64_t)(int64_t)t->tid; /* the thread it waits for */
        }
        uint64_t since = (uint64_t)((double)(now - c->in.ticks) * ns_per_tick);
        fprintf(f, "ptt:   pid %d thread %d: in %s (%.*s 0x%llx) for %.1f s", k->pid, k->tid,
                in ? in->routine : "?",
                in && in->nfields ? in->fields[shown_field(in)].name_len : 6,
                in && in->nfields ? in->fields[shown_field(in)].name : "object",
                (unsigned long long)object, (double)since / 1e9);
        if (c->owner)
            fprintf(f, is_join(in) ? ", waiting for thread %lld" : ", held by thread %lld",
                    (long long)(int64_t)c->owner);
        fputc('\n', f);
        id = PTT_EV_HANG_BLOCKED;
        na = 5;
        uint64_t b[5] = {(uint64_t)(int64_t)k->tid, c->in.id, object, c->owner, since};
        ptt_daemon_events(d, k->pid, 1, &id, &na, b);
    }
    fflush(f);
    return blocked;
}

unsigned ptt_hang_pids(const struct ptt_hang *h, const struct ptt_pool *pool, int *pids,
                       unsigned max)
{
    unsigned n = 0;
    (void)pool;
    for (uint32_t i = 0; i < h->n && n < max; i++) {
        if (!h->p[i].live)
            continue;
        unsigned j;
        for (j = 0; j < n && pids[j] != h->p[i].pid; j++)
            ;
        if (j == n)
            pids[n++] = h->p[i].pid;
    }
    return n;
}

/* State and CPU time (user + system, in clock ticks) of a thread: 0, or -1 when it is gone. */
static int read_task(int pid, int tid, char *state, uint64_t *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold anything but ends before it */
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", state, &ut,
                     &st) != 3)
        return -1;
    *cpu = ut + st;
    return 0;
}

static int in_traced_call(const struct ptt_hang *h, int pid, int tid)
{
    for (uint32_t i = 0; i < h->n; i++)
        if (h->p[i].pid == pid && h->p[i].tid == tid && call_of(&h->p[i]))
            return 1;
    return 0;
}

/* One thread: 1 if it counts as blocked (or is gone), else 0 with why. */
static int task_blocked(struct ptt_hang *h, int pid, int tid, int restart, char *why, size_t len)
{
    char state;
    uint64_t cpu;
    if (read_task(pid, tid, &state, &cpu) || state == 'Z' || state == 'X' || state == 'x')
        return 1;
    if (restart) {
        if (h->ntasks == h->cap) {
            unsigned cap = h->cap ? 2 * h->cap : 64;
            struct task *t = realloc(h->tasks, cap * sizeof *t);
            if (!t)
                return 0;
            h->tasks = t;
            h->cap = cap;
        }
        h->tasks[h->ntasks++] = (struct task){pid, tid, cpu};
        return 1;
    }
    if (state == 'T' || state == 't')
        return 1;
    unsigned i;
    for (i = 0; i < h->ntasks && (h->tasks[i].pid != pid || h->tasks[i].tid != tid); i++)
        ;
    if (state == 'R' || i == h->ntasks || h->tasks[i].cpu != cpu)
        snprintf(why, len, "pid %d thread %d is running", pid, tid);
    else if (!in_traced_call(h, pid, tid))
        snprintf(why, len, "pid %d thread %d is not in a traced call (state %c)", pid, tid, state);
    else
        return 1;
    return 0;
}

int ptt_hang_settled(struct ptt_hang *h, const int *pids, unsigned npids, int restart, char *why,
                     size_t len)
{
    if (restart)
        h->ntasks = 0;
    int settled = 1;
    for (unsigned i = 0; i < npids && settled; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/task", pids[i]);
        DIR *d = opendir(dir);
        if (!d)
            continue; /* gone */
        struct dirent *e;
        while (settled && (e = readdir(d)))
            if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
                settled = task_blocked(h, pids[i], atoi(e->d_name), restart, why, len);
        closedir(d);
    }
    return settled && !restart;
}

void ptt_hang_free(struct ptt_hang *h)
{
    if (h) {
        free(h->tasks);
        ptt_tracker_free(h->calls);
    }
    free(h);
}
