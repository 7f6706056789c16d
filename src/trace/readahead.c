/* Reading ahead on a second thread (readahead.h). Batches of packed events: each event's header
 * and its recorded arguments only (an event has up to PTT_EVENT_MAX_ARGS; most have 2 to 4), 8-byte
 * aligned; a batch keeps a whole struct ptt_ev of room after its last event, so that an event is a
 * valid struct ptt_ev to read up to its nargs. A mutex and two condition variables per batch
 * handed over: a few thousand events each, so the locking costs nothing per event. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/readahead.h"
#include "util/util.h"

/* Four batches of 512 KiB: measured against 16 KiB to 2 MiB, 4 to 16 batches (docs/performance.md,
 * "Reading ahead"), a ring larger than a core's L2 cost least: the events reach the consumer
 * from the shared L3, not line by line from the producer's L2, and the producer's stores find
 * their lines there too. The pages are touched only as used: a small trace takes little. */
#define NBATCH 4
#define BATCH_BYTES (512u * 1024)

struct batch {
    unsigned char *buf; /* BATCH_BYTES + room for one whole event */
    size_t used;        /* bytes of events */
    size_t err_at;      /* once the event ending here is taken, the error is known; else SIZE_MAX */
    int last;           /* no event after this batch */
    int oom;            /* the producer ran out of memory after this batch's events */
};

struct ptt_readahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t room, ready; /* a batch free for the producer; full for the consumer, or the
                                   producer parked or ended (for the stop) */
    unsigned filled, taken;     /* batches published, batches given back (mod 2^32) */
    int stop;
    int parked; /* the producer ran out of memory and waits for the exit (producer_oom) */
    int exited; /* the producer returned: joined at the stop */
    struct batch b[NBATCH];
    /* Producer's. */
    _Alignas(128) struct ptt_reader *r;
    ptt_readahead_fn get;
    const char *err;
    struct batch *filling; /* and the bytes in it so far: what an out-of-memory hands over */
    size_t filling_used;
    /* Consumer's, on lines of their own: written at every event, they would otherwise take
     * the producer's lines from its core at every event too. */
    _Alignas(128) struct batch *cur; /* being taken, or NULL */
    size_t pos;
    int ended, err_seen;
};

static size_t entry_size(unsigned nargs)
{
    return offsetof(struct ptt_ev, args) + (size_t)nargs * sizeof(uint64_t);
}

int ptt_readahead_wanted(int asked)
{
    const char *e = getenv("PTT_READ_AHEAD");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1")))
        return *e == '1';
    if (!asked)
        return 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) < 0)
        return errno == EINVAL; /* more CPU ids than a cpu_set_t holds: surely more than one */
    return CPU_COUNT(&set) > 1;
}

/* Fill b from the reader: full, or up to the end, or up to the event the error came with. */
static void fill(struct ptt_readahead *ra, struct batch *b, int *err_known)
{
    struct ptt_reader *r = ra->r;
    ptt_readahead_fn get = ra->get;
    const char *err = ra->err;
    unsigned char *buf = b->buf;
    size_t used = 0;
    b->err_at = SIZE_MAX;
    b->last = b->oom = 0;
    ra->filling = b;
    for (unsigned k = 0; used < BATCH_BYTES; k++) {
        if (!(k % 256) && __atomic_load_n(&ra->stop, __ATOMIC_RELAXED))
            break; /* closed: what is in the batch is never taken */
        ra->filling_used = used;
        const struct ptt_ev *ev = get(r);
        if (!ev) {
            b->last = 1;
            break;
        }
        size_t n = entry_size(ev->nargs);
        memcpy(buf + used, ev, n);
        used += n;
        if (!*err_known && err[0]) {
            *err_known = 1;
            b->err_at = used;
            break;
        }
    }
    b->used = used;
}

/* Publish the batch filled (or the last). */
static void publish(struct ptt_readahead *ra)
{
    pthread_mutex_lock(&ra->mu);
    ra->filled++;
    pthread_cond_signal(&ra->ready);
    pthread_mutex_unlock(&ra->mu);
}

static _Thread_local struct ptt_readahead *producing;

/* ptt_oom_hook of the producer: the events of the batch being filled go over as the last, and
 * the command's thread says "out of memory" after them, as it would have on one thread. */
static void producer_oom(void)
{
    struct ptt_readahead *ra = producing;
    struct batch *b = ra->filling;
    b->used = ra->filling_used;
    b->last = b->oom = 1;
    pthread_mutex_lock(&ra->mu);
    ra->filled++;
    ra->parked = 1;
    pthread_cond_signal(&ra->ready);
    pthread_mutex_unlock(&ra->mu);
    /* Not pthread_exit: it loads libgcc_s to unwind, which needs memory there is none of, and
     * aborts the process when it fails. The thread waits (every signal blocked) for the exit
     * that follows, or is left to it by ptt_readahead_stop; it no longer touches ra. */
    for (;;)
        pause();
}

static void produce_all(struct ptt_readahead *ra)
{
    int err_known = ra->err[0] != 0;
    for (;;) {
        pthread_mutex_lock(&ra->mu);
        while (ra->filled - ra->taken == NBATCH && !ra->stop)
            pthread_cond_wait(&ra->room, &ra->mu);
        int stop = ra->stop;
        pthread_mutex_unlock(&ra->mu);
        if (stop)
            return;
        struct batch *b = &ra->b[ra->filled % NBATCH];
        fill(ra, b, &err_known);
        publish(ra);
        if (b->last)
            return;
    }
}

/* The producer's thread. Its end is told (exited), as its parking is (producer_oom): the stop
 * waits for one or the other, since out of memory can come after the stop was asked for. */
static void *produce(void *arg)
{
    struct ptt_readahead *ra = arg;
    producing = ra;
    ptt_oom_hook = producer_oom;
    produce_all(ra);
    pthread_mutex_lock(&ra->mu);
    ra->exited = 1;
    pthread_cond_signal(&ra->ready);
    pthread_mutex_unlock(&ra->mu);
    return NULL;
}

static void free_batches(struct ptt_readahead *ra)
{
    for (int i = 0; i < NBATCH; i++)
        free(ra->b[i].buf);
    free(ra);
}

struct ptt_readahead *ptt_readahead_start(struct ptt_reader *r, ptt_readahead_fn get,
                                          const char *err)
{
    struct ptt_readahead *ra = aligned_alloc(_Alignof(struct ptt_readahead), sizeof *ra);
    if (!ra)
        return NULL;
    memset(ra, 0, sizeof *ra);
    for (int i = 0; i < NBATCH; i++)
        if (!(ra->b[i].buf = malloc(BATCH_BYTES + sizeof(struct ptt_ev)))) {
            free_batches(ra);
            return NULL;
        }
    ra->r = r;
    ra->get = get;
    ra->err = err;
    ra->err_seen = err[0] != 0; /* met before any event: known from the start, as without */
    pthread_mutex_init(&ra->mu, NULL);
    pthread_cond_init(&ra->room, NULL);
    pthread_cond_init(&ra->ready, NULL);
    /* The producer needs no signal: blocked in it, they go to the command's thread. Not those
     * of a fault, which, blocked, would kill the process without its handlers (the sanitizers',
     * a fuzzer's) running. */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    sigset_t all, old;
    sigfillset(&all);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&ra->thread, NULL, produce, ra);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        free_batches(ra);
        return NULL;
    }
    return ra;
}

/* Give the batch taken back and wait for the next one; NULL at the end. */
__attribute__((noinline)) static const struct ptt_ev *next_batch(struct ptt_readahead *ra)
{
    for (;;) {
        if (ra->ended)
            return NULL;
        pthread_mutex_lock(&ra->mu);
        if (ra->cur) {
            if (ra->cur->oom)
                ptt_out_of_memory(); /* after the events read before, as on one thread */
            ra->ended = ra->cur->last;
            ra->cur = NULL;
            ra->taken++;
            pthread_cond_signal(&ra->room);
        }
        while (!ra->ended && ra->filled == ra->taken)
            pthread_cond_wait(&ra->ready, &ra->mu);
        if (!ra->ended) {
            ra->cur = &ra->b[ra->taken % NBATCH];
            ra->pos = 0;
        }
        pthread_mutex_unlock(&ra->mu);
        if (ra->ended) {
            ra->err_seen = 1; /* the producer is done: its error, if any, is final */
            return NULL;
        }
        if (ra->cur->used)
            return ptt_readahead_get(ra);
    }
}

const struct ptt_ev *ptt_readahead_get(struct ptt_readahead *ra)
{
    struct batch *b = ra->cur;
    if (!b || ra->pos >= b->used)
        return next_batch(ra);
    const struct ptt_ev *ev = (const void *)(b->buf + ra->pos);
    ra->pos += entry_size(ev->nargs);
    if (ra->pos >= b->err_at)
        ra->err_seen = 1;
    return ev;
}

int ptt_readahead_err_seen(const struct ptt_readahead *ra)
{
    return ra->err_seen;
}

void ptt_readahead_stop(struct ptt_readahead *ra)
{
    if (!ra)
        return;
    pthread_mutex_lock(&ra->mu);
    __atomic_store_n(&ra->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_signal(&ra->room);
    while (!ra->parked && !ra->exited) /* it may still run out of memory before it sees stop */
        pthread_cond_wait(&ra->ready, &ra->mu);
    int parked = ra->parked;
    pthread_mutex_unlock(&ra->mu);
    if (parked) /* out of memory, waiting for the exit (producer_oom) */
        pthread_detach(ra->thread);
    else
        pthread_join(ra->thread, NULL);
    pthread_mutex_destroy(&ra->mu);
    pthread_cond_destroy(&ra->room);
    pthread_cond_destroy(&ra->ready);
    free_batches(ra);
}
