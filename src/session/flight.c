/* The flight recorder's window: chunks in arrival order, the oldest dropped first. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "session/flight.h"
#include "trace/writer.h"

struct fchunk {
    struct fchunk *next, *prev;
    uint32_t len;
    struct ptt_rec_chunk c;
    uint8_t data[];
};

struct queue {
    struct fchunk *head, *tail; /* the window: by the time its events start, oldest first */
};

struct ptt_flight {
    uint64_t size, used;
    uint64_t dropped;
    struct queue window; /* the program's events, bounded by size */
    struct queue own;    /* ptt trace's own events, all kept: they are few */
};

struct ptt_flight *ptt_flight_new(uint64_t size)
{
    struct ptt_flight *f = calloc(1, sizeof *f);
    if (f)
        f->size = size;
    return f;
}

/* Insert k in time order. Chunks arrive nearly in order (ptt trace drains sub-buffers in
 * pool order, not time order), so the place is found from the end. */
static void push(struct queue *q, struct fchunk *k)
{
    struct fchunk *after = q->tail;
    while (after && (int64_t)(after->c.base_ts - k->c.base_ts) > 0)
        after = after->prev;
    k->prev = after;
    k->next = after ? after->next : q->head;
    if (k->next)
        k->next->prev = k;
    else
        q->tail = k;
    if (after)
        after->next = k;
    else
        q->head = k;
}

void ptt_flight_add(void *arg, const struct ptt_rec_chunk *c, const void *data, uint32_t len,
                    int daemon_own)
{
    struct ptt_flight *f = arg;
    struct fchunk *k = malloc(sizeof *k + len);
    if (!k) { /* out of memory: the window keeps what it has */
        f->dropped += c->nevents;
        return;
    }
    k->len = len;
    k->c = *c;
    memcpy(k->data, data, len);
    if (daemon_own) {
        push(&f->own, k);
        return;
    }
    push(&f->window, k);
    f->used += len;
    while (f->used > f->size && f->window.head != f->window.tail) { /* the oldest go */
        struct fchunk *old = f->window.head;
        f->window.head = old->next;
        f->window.head->prev = NULL;
        f->used -= old->len;
        f->dropped += old->c.nevents;
        free(old);
    }
}

static void write_queue(struct ptt_writer *w, const struct queue *q, int64_t *events)
{
    for (const struct fchunk *k = q->head; k; k = k->next) {
        struct ptt_rec_chunk c = k->c;
        ptt_writer_record(w, PTT_REC_CHUNK, &c, sizeof c, k->data, k->len);
        *events += c.nevents;
    }
}

int64_t ptt_flight_write(struct ptt_flight *f, const char *path, const char *info,
                         const struct ptt_rec_clock *clocks, unsigned nclocks,
                         const struct ptt_rec_end *end)
{
    /* A name of its own, created exclusively: none another user put there first is removed or
     * stands in the way (a killed ptt trace's is left, never reused). */
    char tmp[4200];
    struct ptt_writer w;
    int tries = 0, r;
    do {
        uint32_t k = 0;
        if (getrandom(&k, sizeof k, 0) != sizeof k)
            k = (uint32_t)getpid() * 2654435761u + (uint32_t)tries;
        if (snprintf(tmp, sizeof tmp, "%s.tmp-%08x", path, k) >= (int)sizeof tmp) {
            errno = ENAMETOOLONG;
            return -1;
        }
    } while ((r = ptt_writer_open(&w, tmp)) && errno == EEXIST && ++tries < 16);
    if (r)
        return -1;
    char extra[128];
    snprintf(extra, sizeof extra, "flight_recorder=%llu\nolder_events_dropped=%llu",
             (unsigned long long)f->size, (unsigned long long)f->dropped);
    ptt_writer_info(&w, info);
    ptt_writer_info(&w, extra);
    for (unsigned i = 0; i < nclocks; i++)
        ptt_writer_clock(&w, clocks[i].ticks, clocks[i].mono_ns, clocks[i].real_ns);
    int64_t events = 0;
    write_queue(&w, &f->own, &events);
    write_queue(&w, &f->window, &events);
    if (end) {
        struct ptt_rec_end e = *end;
        e.events = (uint64_t)events;
        ptt_writer_record(&w, PTT_REC_END, &e, sizeof e, 0, 0);
    }
    if (ptt_writer_close(&w) || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return events;
}

uint64_t ptt_flight_dropped(const struct ptt_flight *f)
{
    return f->dropped;
}

static void free_queue(struct queue *q)
{
    while (q->head) {
        struct fchunk *k = q->head;
        q->head = k->next;
        free(k);
    }
    q->tail = NULL;
}

void ptt_flight_free(struct ptt_flight *f)
{
    if (!f)
        return;
    free_queue(&f->window);
    free_queue(&f->own);
    free(f);
}
