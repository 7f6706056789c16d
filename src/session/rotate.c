/* Rotation of the trace into parts (rotate.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "session/carry.h"
#include "session/rotate.h"
#include "trace/parts.h"
#include "util/hmap.h"
#include "util/util.h"

/* A chunk that came before its turn: kept until those before it in its thread are written. */
struct held {
    struct held *next;
    uint32_t len;
    uint8_t named; /* it holds events that name things */
    struct ptt_rec_chunk c;
    uint8_t data[];
};

/* A thread's chunks as written into the parts: in their order, so that the parts deleted hold
 * the beginning of each thread's events, and a thread read from later parts has no hole. */
struct ostream {
    int32_t pid;
    uint32_t next;     /* the number (seq) of the chunk it writes next */
    struct held *held; /* those that came early, by number */
};

struct ptt_rotate {
    struct ptt_rotate_config cfg;
    struct ptt_writer *w;
    char *const *info;
    const struct ptt_rec_clock *first;
    struct ptt_carry *carry;
    char set[17];            /* the set's id: random, the same in every part */
    char cur[PATH_MAX];      /* the part being written */
    unsigned part;           /* its number */
    unsigned oldest;         /* the oldest part kept */
    uint64_t part_start;     /* its offset after its header, INFO, first CLOCK and carried state */
    uint64_t done;           /* bytes of the parts ended */
    int moved;               /* the previous run was kept as FILE.old... */
    int stopped;             /* a part could not be made: no more rotation */
    int unlink_failed;       /* said once */
    struct ptt_hmap streams; /* (pid, serial) -> struct ostream */
    uint64_t held_bytes;
    struct ptt_writer_rec *out; /* the records to write now */
    uint8_t *outnamed;          /* which hold events that name things */
    unsigned nout, outcap;
    struct held *written; /* held chunks in out, freed once written */
};

/* Bytes held at most, waiting for the chunks before them: past that, they are written as they
 * are (a chunk that never comes: none is known to). */
#define MAX_HELD (64ull << 20)

static int set_id(char *out, size_t len)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        return -1;
    snprintf(out, len, "%016llx", (unsigned long long)r);
    return 0;
}

/* The INFO keys of the set in the part being written. */
static void write_keys(struct ptt_rotate *t)
{
    char keys[160];
    snprintf(keys, sizeof keys, "set=%s\npart=%u\nmax_size=%llu\nmax_files=%u", t->set, t->part,
             (unsigned long long)t->cfg.max_size, t->cfg.max_files);
    ptt_writer_info(t->w, keys);
}

struct ptt_rotate *ptt_rotate_start(const struct ptt_rotate_config *cfg, struct ptt_writer *w,
                                    char *const *info, const struct ptt_rec_clock *first, char *err,
                                    size_t errlen)
{
    struct ptt_rotate *t = ptt_must(calloc(1, sizeof *t));
    *t = (struct ptt_rotate){
        .cfg = *cfg, .w = w, .info = info, .first = first, .part = 1, .oldest = 1};
    if (set_id(t->set, sizeof t->set)) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        free(t);
        return NULL;
    }
    if (ptt_part_name(t->cur, sizeof t->cur, cfg->path, 1)) {
        snprintf(err, errlen, "%s: name too long", cfg->path);
        free(t);
        return NULL;
    }
    if (ptt_parts_aside(cfg->path, cfg->force, 1, &t->moved, err, errlen)) {
        free(t);
        return NULL;
    }
    int fd = ptt_part_create(t->cur, err, errlen);
    if (fd < 0 || ptt_writer_start(w, fd, t->cur)) {
        if (fd >= 0) {
            snprintf(err, errlen, "cannot write %s: %s", t->cur, strerror(errno));
            close(fd);
            unlink(t->cur);
        }
        if (t->moved)
            ptt_parts_restore(cfg->path, 1);
        free(t);
        return NULL;
    }
    t->carry = ptt_carry_new();
    write_keys(t);
    return t;
}

/* The start of a part after the first: the set's keys, the session's INFO, time 0, the carried
 * state. The carried events are copies: not counted as the session's. */
static void preamble(struct ptt_rotate *t)
{
    struct ptt_writer *w = t->w;
    write_keys(t); /* first: a reader finds the set's keys at the start */
    ptt_writer_info(w, *t->info);
    ptt_writer_clock(w, t->first->ticks, t->first->mono_ns, t->first->real_ns);
    uint64_t events = w->events, bytes = w->bytes, unwritten = w->unwritten, carried;
    ptt_carry_write(t->carry, w, &carried);
    w->events = events;
    w->bytes = bytes;
    w->unwritten = unwritten;
    t->part_start = w->offset;
}

/* The next part cannot be made: the session goes on writing nothing, as after a write error. */
static void stop(struct ptt_rotate *t, const char *why, int e)
{
    ptt_warn("trace",
             "%s; the trace ends with %s, its first %llu events; the next ones are counted but "
             "not written",
             why, t->cur, (unsigned long long)t->w->events);
    t->stopped = 1;
    t->w->error = e;
}

/* The threads of processes that ended: none of their chunks is still to come. */
static void forget_ended(struct ptt_rotate *t)
{
    struct ptt_hmap n = {0};
    for (size_t i = 0; i < t->streams.cap; i++) {
        struct ostream *s = t->streams.vals[i];
        if (s && (s->held || !ptt_carry_ended(t->carry, s->pid)))
            memcpy(ptt_hmap_get(&n, t->streams.keys[i], sizeof *s), s, sizeof *s);
        free(s);
    }
    free(t->streams.keys);
    free(t->streams.vals);
    t->streams = n;
}

/* The parts past --max-files deleted, oldest first. */
static void delete_old(struct ptt_rotate *t)
{
    char old[PATH_MAX];
    while (t->cfg.max_files && t->part - t->oldest + 1 > t->cfg.max_files) {
        if (!ptt_part_name(old, sizeof old, t->cfg.path, t->oldest) && unlink(old) &&
            errno != ENOENT && !t->unlink_failed) {
            ptt_warn("trace", "cannot remove %s (--max-files=%u): %s", old, t->cfg.max_files,
                     strerror(errno));
            t->unlink_failed = 1;
        }
        t->oldest++;
    }
}

/* The part being written ends (where the next one goes, and a clock); the next one begins. */
static void rotate(struct ptt_rotate *t)
{
    struct ptt_writer *w = t->w, next;
    char path[PATH_MAX], err[PATH_MAX + 256];
    int fd = -1;
    if (ptt_part_name(path, sizeof path, t->cfg.path, t->part + 1))
        snprintf(err, sizeof err, "cannot create the next part of %s: name too long", t->cfg.path);
    else
        fd = ptt_part_create(path, err, sizeof err);
    if (fd < 0) {
        stop(t, err, errno ? errno : EIO);
        return;
    }
    if (ptt_writer_start(&next, fd, NULL)) {
        int e = errno;
        snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(e));
        close(fd);
        unlink(path);
        stop(t, err, e);
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "next_part=%u", t->part + 1);
    ptt_writer_info(w, text);
    ptt_writer_clock(w, ptt_ticks(t->cfg.clock_tsc), ptt_mono_ns(), ptt_real_ns());
    ptt_writer_trim(w);
    if (close(w->fd) && errno != EINTR && !w->error) {
        w->error = errno;
        ptt_warn("trace", "writing %s: %s", t->cur, strerror(errno));
    }
    if (w->error) { /* reported: the session writes no more */
        close(fd);
        unlink(path);
        t->stopped = 1;
        return;
    }
    t->done += w->offset;
    next.events = w->events;
    next.bytes = w->bytes;
    next.unwritten = w->unwritten;
    *w = next;
    memcpy(t->cur, path, sizeof path);
    w->path = t->cur;
    t->part++;
    delete_old(t);
    forget_ended(t);
    preamble(t);
}

static void check(struct ptt_rotate *t)
{
    struct ptt_writer *w = t->w;
    /* A part whose carried state alone reached SIZE still takes one chunk: no endless turn. */
    if (!t->stopped && !w->error && w->offset >= t->cfg.max_size && w->offset > t->part_start)
        rotate(t);
}

static uint64_t room(const struct ptt_rotate *t)
{
    return t->w->offset < t->cfg.max_size ? t->cfg.max_size - t->w->offset : 0;
}

static uint64_t record_size(const struct ptt_writer_rec *r)
{
    return (r->head_len + r->payload_len + 7) / 8 * 8;
}

/* The records of out into the parts: a part that reaches SIZE ends after the record that took it
 * there (it exceeds SIZE by less than one record), the next one begins before the next record.
 * Every chunk written is kept for the carried state. */
static void write_out(struct ptt_rotate *t)
{
    const struct ptt_writer_rec *r = t->out;
    unsigned n = t->nout;
    while (n) {
        check(t);
        uint64_t left = room(t), sum = 0;
        unsigned k = 0;
        while (k < n && (sum < left || !k))
            sum += record_size(&r[k++]);
        ptt_writer_records(t->w, r, k);
        for (unsigned i = 0; i < k; i++)
            if (t->outnamed[r - t->out + i])
                ptt_carry_chunk(t->carry, r[i].head, r[i].payload, (uint32_t)r[i].payload_len);
        r += k;
        n -= k;
    }
    check(t);
    t->nout = 0;
    while (t->written) {
        struct held *h = t->written;
        t->written = h->next;
        free(h);
    }
}

static void emit(struct ptt_rotate *t, const struct ptt_writer_rec *r, uint8_t named)
{
    if (!((const struct ptt_rec_chunk *)r->head)->nevents)
        return; /* an empty sub-buffer: its number only counts */
    if (t->nout == t->outcap) {
        t->outcap = t->outcap ? 2 * t->outcap : 256;
        t->out = ptt_must(realloc(t->out, t->outcap * sizeof *t->out));
        t->outnamed = ptt_must(realloc(t->outnamed, t->outcap));
    }
    t->outnamed[t->nout] = named;
    t->out[t->nout++] = *r;
}

/* Keep a copy of a chunk that came early, in s's list by number. */
static void hold(struct ptt_rotate *t, struct ostream *s, const struct ptt_writer_rec *r,
                 uint8_t named)
{
    struct held *h = ptt_must(malloc(sizeof *h + r->payload_len));
    h->len = (uint32_t)r->payload_len;
    h->named = named;
    h->c = *(const struct ptt_rec_chunk *)r->head;
    memcpy(h->data, r->payload, r->payload_len);
    struct held **at = &s->held;
    while (*at && (int32_t)((*at)->c.seq - h->c.seq) < 0)
        at = &(*at)->next;
    h->next = *at;
    *at = h;
    t->held_bytes += h->len;
}

/* s's held chunks whose turn has come (all with all): into out. */
static void release(struct ptt_rotate *t, struct ostream *s, int all)
{
    while (s->held && (all || s->held->c.seq == s->next)) {
        struct held *h = s->held;
        s->held = h->next;
        t->held_bytes -= h->len;
        s->next = h->c.seq + 1;
        struct ptt_writer_rec r = {PTT_REC_CHUNK, &h->c, sizeof h->c, h->data, h->len};
        emit(t, &r, h->named);
        h->next = t->written;
        t->written = h;
    }
}

/* Every chunk held, written as it is. */
static void release_all(struct ptt_rotate *t)
{
    for (size_t i = 0; i < t->streams.cap; i++) {
        struct ostream *s = ptt_hmap_slot(&t->streams, i);
        if (s)
            release(t, s, 1);
    }
}

void ptt_rotate_chunks(struct ptt_rotate *t, const struct ptt_writer_rec *r, const uint8_t *named,
                       unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        const struct ptt_rec_chunk *c = r[i].head;
        uint8_t nm = named ? named[i] : 1;
        if (!c->serial) { /* ptt trace's own: no order to keep */
            emit(t, &r[i], nm);
            continue;
        }
        struct ostream *s =
            ptt_hmap_get(&t->streams, ptt_key2((uint32_t)c->pid, c->serial), sizeof *s);
        s->pid = c->pid;
        if ((int32_t)(c->seq - s->next) > 0) {
            hold(t, s, &r[i], nm);
            continue;
        }
        emit(t, &r[i], nm);
        if (c->seq == s->next)
            s->next++;
        release(t, s, 0);
    }
    if (t->held_bytes > MAX_HELD)
        release_all(t);
    write_out(t);
}

void ptt_rotate_finish(struct ptt_rotate *t)
{
    release_all(t);
    write_out(t);
}

uint64_t ptt_rotate_bytes(const struct ptt_rotate *t)
{
    return t->done + t->w->offset;
}

void ptt_rotate_target(const struct ptt_rotate *t, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s.1, %s.2, ... (a new part every %llu bytes", t->cfg.path,
                     t->cfg.path, (unsigned long long)t->cfg.max_size);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, t->cfg.max_files ? ", the last %u kept)" : ")",
                 t->cfg.max_files);
}

void ptt_rotate_summary(const struct ptt_rotate *t, char *buf, size_t len)
{
    int n = t->part > 1 ? snprintf(buf, len, "%s.1 to %s", t->cfg.path, t->cur)
                        : snprintf(buf, len, "%s", t->cur);
    if (n > 0 && (size_t)n < len && t->oldest > 1) {
        if (t->oldest == 2)
            snprintf(buf + n, len - (size_t)n, " (part 1 deleted: --max-files=%u)",
                     t->cfg.max_files);
        else
            snprintf(buf + n, len - (size_t)n, " (parts 1-%u deleted: --max-files=%u)",
                     t->oldest - 1, t->cfg.max_files);
    }
}

void ptt_rotate_undo(struct ptt_rotate *t)
{
    unlink(t->cur);
    if (t->moved)
        ptt_parts_restore(t->cfg.path, 1);
}

void ptt_rotate_free(struct ptt_rotate *t)
{
    if (!t)
        return;
    ptt_carry_free(t->carry);
    for (size_t i = 0; i < t->streams.cap; i++) {
        struct ostream *s = ptt_hmap_slot(&t->streams, i);
        while (s && s->held) {
            struct held *h = s->held;
            s->held = h->next;
            free(h);
        }
    }
    ptt_hmap_free(&t->streams, NULL);
    free(t->out);
    free(t->outnamed);
    free(t);
}
