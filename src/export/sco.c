/* ptt export --format=sco: the trace as the SCO OpenServer Threads Library wrote its traces
 * (docs/export.md): in DIR, a text file per thread, tr.PPPPPPP.LLL (the last seven hex digits of
 * the pid, the last three of the kernel thread id), one record per event,
 *     time1:time2:lwpid:pid:tid:event1:event2:which:a1:a2:a3:a4:a5
 * and tracemap.h, the names of the event numbers ("2_2:MUTEX_LOCK_IN"), from the event table.
 * Numbering: event1 is the class number, event2 the event's number in its class (its id & 0xff),
 * as in common/events.def. Times are since the start of the trace, as ptt view prints them:
 * time1 seconds, time2 the nanoseconds within that second, always nine digits, so that the SCO
 * merge (sort -m -n -t: +0 -4) orders events of the same second by the rest of the line. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "util/hmap.h"
#include "util/obuf.h"
#include "util/outdir.h"
#include "export/textfmt.h"
#include "analysis/timeline.h"

/* Files open at once: a program with thousands of threads must not run out of descriptors. */
#define MAX_OPEN 64
#define NFIELDS 5

struct sfile {
    FILE *f;
    int written; /* created (truncated) already: reopened for appending */
    uint64_t used;
    int32_t pid, lwp;
};

struct sco {
    const char *dir;
    struct ptt_hmap files;
    struct sfile *open[MAX_OPEN];
    int nopen;
    uint64_t clock; /* for least recently used */
    uint64_t events;
    int dir_ok; /* DIR made (or there already) */
    int failed; /* errno of the first failure to open or write */
    char failed_path[512];
};

static void path_of(const struct sco *s, const struct sfile *sf, char *buf, size_t len)
{
    snprintf(buf, len, "%s/tr.%07x.%03x", s->dir, (unsigned)sf->pid & 0xfffffff,
             (unsigned)sf->lwp & 0xfff);
}

static void close_file(struct sco *s, struct sfile *sf)
{
    if (!sf->f)
        return;
    errno = 0;
    int bad = ferror(sf->f);
    if ((fclose(sf->f) | bad) && !s->failed) {
        s->failed = errno ? errno : EIO;
        path_of(s, sf, s->failed_path, sizeof s->failed_path);
    }
    sf->f = NULL;
    for (int i = 0; i < s->nopen; i++)
        if (s->open[i] == sf) {
            s->open[i] = s->open[--s->nopen];
            break;
        }
}

/* DIR, made when there is something to write into it: 0, or -1 with s->failed set. */
static int make_dir(struct sco *s)
{
    if (s->dir_ok)
        return 0;
    if (s->failed)
        return -1;
    if (ptt_outdir_make(s->dir))
        s->failed = errno;
    if (s->failed) {
        snprintf(s->failed_path, sizeof s->failed_path, "%s", s->dir);
        return -1;
    }
    s->dir_ok = 1;
    return 0;
}

/* The file of a thread, open. Threads whose ids end in the same three hex digits share a file:
 * records are written in time order, so it is in time order still. */
static FILE *file_of(struct sco *s, int32_t pid, int32_t tid)
{
    int32_t lwp = tid & 0xfff;
    struct sfile *sf =
        ptt_hmap_get(&s->files, ptt_key2((uint64_t)(uint32_t)pid, (uint64_t)lwp), sizeof *sf);
    sf->used = ++s->clock;
    if (sf->f)
        return sf->f;
    if (make_dir(s))
        return NULL;
    if (s->nopen == MAX_OPEN) {
        struct sfile *lru = s->open[0];
        for (int i = 1; i < s->nopen; i++)
            if (s->open[i]->used < lru->used)
                lru = s->open[i];
        close_file(s, lru);
    }
    sf->pid = pid;
    sf->lwp = lwp;
    char path[512];
    path_of(s, sf, path, sizeof path);
    sf->f = ptt_outdir_fopen(path, sf->written);
    if (!sf->f) {
        if (!s->failed) {
            s->failed = errno;
            snprintf(s->failed_path, sizeof s->failed_path, "%s", path);
        }
        return NULL;
    }
    sf->written = 1;
    s->open[s->nopen++] = sf;
    return sf->f;
}

/* A field as ptt view --format=raw prints it, without what would split the record. */
static void put_field(struct ptt_obuf *b, const char *v)
{
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        ptt_obuf_putc(b, c == ':' || c <= ' ' || c == 0x7f ? '_' : (char)c);
    }
}

/* "TIME1:TIME2:LWPID:PID:TID:EVENT1:EVENT2:WHICH" */
static void put_head(struct ptt_obuf *b, const struct ptt_ev *ev, int which)
{
    int64_t ns = ev->ns < 0 ? 0 : ev->ns;
    ptt_obuf_u64(b, (uint64_t)ns / 1000000000);
    ptt_obuf_putc(b, ':');
    ptt_obuf_u64z(b, (uint64_t)ns % 1000000000, 9);
    ptt_obuf_putc(b, ':');
    ptt_obuf_i64(b, ev->tid);
    ptt_obuf_putc(b, ':');
    ptt_obuf_i64(b, ev->pid);
    ptt_obuf_putc(b, ':');
    ptt_obuf_u64(b, ev->serial);
    ptt_obuf_putc(b, ':');
    ptt_obuf_u64(b, PTT_CLASS_OF(ev->id));
    ptt_obuf_putc(b, ':');
    ptt_obuf_u64(b, ev->id & 0xffu);
    ptt_obuf_putc(b, ':');
    ptt_obuf_i64(b, which);
}

static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct sco *s = arg;
    s->events++;
    /* ptt trace's own (control, dumps, the hang's head), under its pid: no thread's file */
    if (ptt_ev_of_session(ev) && ev->id != PTT_EV_HANG_BLOCKED)
        return;
    FILE *f = s->failed ? NULL : file_of(s, ev->pid, ev->tid); /* said once, at the end */
    if (!f)
        return;
    const struct ptt_evinfo *info = ev->info;
    int which = 0; /* a single record: STATE, META, and calls that never return */
    if (info && info->kind == PTT_KIND_IN && !info->noreturn)
        which = 1;
    else if (info && info->kind == PTT_KIND_OUT)
        which = 2;
    char line[2048], buf[1100];
    struct ptt_obuf b; /* the record, then one write: not a printf per field */
    ptt_obuf_on(&b, f, line, sizeof line);
    put_head(&b, ev, which);
    for (unsigned i = 0; i < NFIELDS; i++) {
        ptt_obuf_putc(&b, ':');
        if (!info) { /* an event this ptt does not know: its words */
            if (i < ev->nargs)
                ptt_obuf_x64(&b, ev->args[i]);
        } else if (ptt_ev_has_field(ev, i)) {
            put_field(&b, ptt_fmt_ev_field(buf, sizeof buf, ev, i, 0));
        }
    }
    ptt_obuf_putc(&b, '\n');
    ptt_obuf_flush(&b);
}

static void on_thread(void *arg, int32_t pid, int32_t tid, int64_t ns, int begin, const char *name)
{
    struct sco *s = arg;
    (void)ns;
    (void)name;
    if (begin)
        return;
    /* It ended: its file can be closed (it is reopened should anything follow). */
    struct sfile *sf =
        ptt_hmap_get(&s->files, ptt_key2((uint64_t)(uint32_t)pid, (uint64_t)(tid & 0xfff)), 0);
    if (sf)
        close_file(s, sf);
}

static int by_id(const void *a, const void *b)
{
    const struct ptt_evinfo *x = *(const struct ptt_evinfo *const *)a;
    const struct ptt_evinfo *y = *(const struct ptt_evinfo *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* tracemap.h: "CLASS_NUMBER:NAME" per event of the table, by id; no blank, no comment (the SCO
 * awk script reads every line as a mapping). */
static int write_map(const char *dir, char *err, size_t errlen)
{
    unsigned n;
    const struct ptt_evinfo *all = ptt_evinfo_all(&n);
    const struct ptt_evinfo **v = malloc((n ? n : 1) * sizeof *v);
    char path[512];
    snprintf(path, sizeof path, "%s/tracemap.h", dir);
    FILE *f = v ? ptt_outdir_fopen(path, 0) : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, ptt_outdir_strerror(v ? errno : ENOMEM));
        free(v);
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        v[i] = &all[i];
    qsort(v, n, sizeof *v, by_id);
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "%u_%u:%s\n", PTT_CLASS_OF(v[i]->id), v[i]->id & 0xffu, v[i]->name);
    free(v);
    if (ferror(f) | fclose(f)) {
        snprintf(err, errlen, "%s: cannot write: %m", path);
        return -1;
    }
    return 0;
}

int ptt_export_sco(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    struct sco s = {.dir = o->out};
    static const struct ptt_tl_callbacks cb = {.event = on_event, .thread = on_thread};
    char terr[512] = "";
    int r = ptt_timeline_run(o->in, o->names, &cb, &s, terr, sizeof terr);
    while (s.nopen)
        close_file(&s, s.open[0]);
    ptt_hmap_free(&s.files, NULL);
    if (r && !s.events) { /* not a trace: nothing written, not even DIR */
        snprintf(err, errlen, "%s", terr);
        return -1;
    }
    if (make_dir(&s) == 0 && write_map(o->out, err, errlen))
        return -1;
    if (s.failed) {
        snprintf(err, errlen, "%s: %s", s.failed_path, ptt_outdir_strerror(s.failed));
        return -1;
    }
    if (r) {
        snprintf(err, errlen, "%s (the files hold what could be read)", terr);
        return -1;
    }
    return 0;
}
