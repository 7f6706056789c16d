/* The recorder (lib/record.h, lib/buffer.c) against a real pool, drained by the daemon's code into
 * a real file and read back by the reader: what was recorded is what is read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef sigev_notify_thread_id /* glibc before 2.35 */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#include "lib/libptt.h"
#include "src/session/daemon.h"
#include "src/session/hang.h"
#include "src/trace/decode.h"
#include "src/trace/reader.h"
#include "src/trace/writer.h"

/* ---------------------------------------------------------------- session: pool, file, drain */

struct session {
    struct ptt_daemon d;
    struct ptt_writer w;
    char path[PATH_MAX];
    pthread_t drainer;
    int draining;
    unsigned drain_sleep_us;
    atomic_int stop;
    uint64_t clock0;      /* ticks of the first clock record */
    struct ptt_reader *r; /* closed by teardown, also when a test fails */
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int have_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return 1;
#else
    return 0;
#endif
}

/* In monotonic mode ticks are the monotonic ns themselves: the reader's slope is then exactly 1. */
static void write_clock(struct session *s)
{
    uint64_t m = clock_ns(CLOCK_MONOTONIC);
    uint64_t t = s->d.clock_tsc ? ptt_ticks(1) : m;
    if (!s->clock0)
        s->clock0 = t;
    assert_int_equal(ptt_writer_clock(&s->w, t, m, clock_ns(CLOCK_REALTIME)), 0);
}

static int setup(void **state)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    struct session *s = *state;
    if (s->draining) {
        atomic_store(&s->stop, 1);
        pthread_join(s->drainer, NULL);
    }
    ptt_active = 0;
    ptt_pool = NULL;
    memset(&ptt_self, 0, sizeof ptt_self);
    ptt_reader_close(s->r);
    ptt_daemon_destroy(&s->d);
    if (s->path[0])
        unlink(s->path);
    free(s);
    return 0;
}

/* Create the pool and the file, and point libptt's globals at the pool as its constructor would. */
static void begin(struct session *s, uint64_t size, uint32_t buf_size, int tsc, int overflow)
{
    struct ptt_pool_config c = {size, buf_size, tsc, overflow, ~0ull, 0, 0, 0, 0};
    char err[256];
    if (ptt_daemon_create(&s->d, &c, err, sizeof err))
        fail_msg("ptt_daemon_create: %s", err);
    shm_unlink(s->d.shm_name); /* mapped already: nothing is left in /dev/shm if the test dies */
    const char *dir = getenv("TMPDIR");
    snprintf(s->path, sizeof s->path, "%s/ptt-unit-buffer-XXXXXX", dir ? dir : "/tmp");
    int fd = mkstemp(s->path);
    assert_true(fd >= 0);
    assert_int_equal(ptt_writer_start(&s->w, fd, NULL), 0);
    s->d.out = &s->w;
    assert_int_equal(ptt_writer_info(&s->w, tsc ? "clock=tsc\n" : "clock=monotonic\n"), 0);
    write_clock(s);

    ptt_pool = s->d.pool;
    ptt_clock_tsc = ptt_pool->clock == PTT_CLOCK_TSC;
    atomic_store(&ptt_pool->masks[0], ~0ull);
    atomic_store(&ptt_pool->masks[1], ~0ull);
    ptt_masks = ptt_pool->masks;
    ptt_pid = (int)getpid();
    memset(&ptt_self, 0, sizeof ptt_self); /* the main thread's state from an earlier test */
    ptt_active = 1;
}

static void *drain_loop(void *arg)
{
    struct session *s = arg;
    while (!atomic_load(&s->stop)) {
        size_t n = ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
        atomic_fetch_add_explicit(&s->d.pool->heartbeat, 1, memory_order_relaxed);
        if (!n || s->drain_sleep_us)
            usleep(s->drain_sleep_us ? s->drain_sleep_us : 100);
    }
    return NULL;
}

static void start_drainer(struct session *s, unsigned sleep_us)
{
    s->drain_sleep_us = sleep_us;
    atomic_store(&s->stop, 0);
    assert_int_equal(pthread_create(&s->drainer, NULL, drain_loop, s), 0);
    s->draining = 1;
}

/* What the records of a compact chunk hold, as a reader counts them: its events (a call's one
 * record: 2, padding: none), returned; the losses its TRACE_LOST events mark, added to *marked;
 * whether one names things, in *named. */
static uint32_t count_records(const uint8_t *data, uint32_t len, uint64_t base_ts, uint64_t *marked,
                              int *named)
{
    struct ptt_dec d;
    ptt_dec_start(&d, base_ts);
    uint32_t at = 0, n = 0;
    *named = 0;
    for (;;) {
        struct ptt_event h = {0, 0, 0};
        uint64_t t;
        int k = at < len ? ptt_dec_next(&d, data + at, len - at, &h, &t) : 0;
        assert_true(k >= 0);
        if (!k)
            break;
        uint16_t id = h.id & PTT_EV_ID_MASK;
        if (id == PTT_EV_TRACE_LOST)
            *marked += d.args[0];
        *named |= ptt_ev_names(id);
        n += id == PTT_EV_TRACE_PAD ? 0 : 1 + ((id & PTT_EV_CALL) != 0);
        at += (uint32_t)k;
    }
    return n;
}

/* A chunk whose count is not its records': what it holds, one line a record (id, nested,
 * first argument), to tell which switch wrote it. */
static void dump_chunk(const struct ptt_rec_chunk *c, const uint8_t *data, uint32_t len)
{
    print_message("chunk tid %d serial %u seq %u nevents %u len %u\n", c->tid, c->serial, c->seq,
                  c->nevents, len);
    struct ptt_dec d;
    ptt_dec_start(&d, c->base_ts);
    for (uint32_t at = 0, k = 0; at < len; k++) {
        struct ptt_event h = {0, 0, 0};
        uint64_t t;
        int n = ptt_dec_next(&d, data + at, len - at, &h, &t);
        if (n <= 0)
            break;
        print_message("  %2u @%4u id 0x%04x%s a0 %llu\n", k, at, h.id & PTT_EV_ID_MASK,
                      h.id & PTT_EVF_NEST ? " nest" : "", (unsigned long long)d.args[0]);
        at += (uint32_t)n;
    }
}

/* A chunk's place: its stream (pid, serial) and its number there. */
struct chunk_key {
    int32_t pid;
    uint32_t serial, seq;
};

static int by_chunk_key(const void *a, const void *b)
{
    const struct chunk_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->serial != y->serial)
        return x->serial < y->serial ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* No two chunks of a thread have the same number: the reader orders them by it. */
static void assert_unique_seqs(struct chunk_key *k, size_t n)
{
    qsort(k, n, sizeof *k, by_chunk_key);
    for (size_t i = 1; i < n; i++)
        if (!by_chunk_key(&k[i - 1], &k[i]))
            fail_msg("two chunks of thread %u numbered %u", k[i].serial, k[i].seq);
}

/* Every chunk of the threads in the file says how many events its records hold, and the
 * TRACE_LOST events the drain counted are those in the file: what a writer published at the
 * hand-over, or the drain found walking the records, is what the readers count. */
static void assert_chunk_counts(struct session *s)
{
    int fd = open(s->path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    uint8_t *buf = malloc((size_t)st.st_size);
    assert_non_null(buf);
    assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    uint64_t marked = 0;
    struct chunk_key *keys =
        malloc(((size_t)st.st_size / sizeof(struct ptt_rec_chunk) + 1) * sizeof *keys);
    size_t nkeys = 0;
    assert_non_null(keys);
    for (size_t off = sizeof(struct ptt_file_header); off + 8 <= (size_t)st.st_size;) {
        struct ptt_record h;
        memcpy(&h, buf + off, sizeof h);
        assert_true(h.size >= 8 && off + h.size <= (size_t)st.st_size);
        struct ptt_rec_chunk c;
        memcpy(&c, buf + off, sizeof c);
        int named;
        if (h.type == PTT_REC_CHUNK && (c.flags & PTT_CHUNK_COMPACT)) {
            uint32_t n = count_records(buf + off + sizeof c, (uint32_t)(h.size - sizeof c),
                                       c.base_ts, &marked, &named);
            if (n != c.nevents)
                dump_chunk(&c, buf + off + sizeof c, (uint32_t)(h.size - sizeof c));
            assert_int_equal(n, c.nevents);
            keys[nkeys++] = (struct chunk_key){c.pid, c.serial, c.seq};
        }
        off += h.size;
    }
    assert_int_equal(marked, s->d.lost_marked);
    assert_unique_seqs(keys, nkeys);
    free(keys);
    free(buf);
}

/* End the session as ptt trace does, and open the file. */
static struct ptt_reader *finish(struct session *s)
{
    if (s->draining) {
        atomic_store(&s->stop, 1);
        pthread_join(s->drainer, NULL);
        s->draining = 0;
    }
    ptt_thread_release(&ptt_self);
    ptt_daemon_drain(&s->d, PTT_DRAIN_ALL);
    write_clock(s);
    struct ptt_pool *p = s->d.pool;
    struct ptt_rec_end end = {.events = s->d.events,
                              .bytes = s->d.bytes,
                              .lost = atomic_load(&p->lost),
                              .wait_ns = atomic_load(&p->wait_ns),
                              .waits = atomic_load(&p->waits)};
    assert_int_equal(ptt_writer_record(&s->w, PTT_REC_END, &end, sizeof end, 0, 0), 0);
    assert_int_equal(ptt_writer_close(&s->w), 0);
    assert_int_equal(s->d.corrupt, 0);
    assert_chunk_counts(s);
    char err[512];
    s->r = ptt_reader_open(s->path, err, sizeof err);
    if (!s->r)
        fail_msg("ptt_reader_open: %s", err);
    return s->r;
}

static void assert_clean_end(struct ptt_reader *r)
{
    const char *e = ptt_reader_error(r);
    if (e)
        fail_msg("reader error: %s", e);
    assert_non_null(ptt_reader_end(r));
}

/* The chunk records of the file, for what the reader does not show (seq, nevents, flags). */
struct rawchunk {
    uint32_t serial, seq, nevents, flags;
    uint64_t base_ts;
    const uint8_t *data;
    uint32_t len;
};

struct rawfile {
    uint8_t *buf;
    size_t size;
    struct rawchunk *chunks;
    size_t n;
};

static void raw_load(const char *path, struct rawfile *f)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    f->size = (size_t)st.st_size;
    f->buf = malloc(f->size + 1);
    assert_non_null(f->buf);
    assert_int_equal(pread(fd, f->buf, f->size, 0), (ssize_t)f->size);
    close(fd);
    f->chunks = calloc(f->size / sizeof(struct ptt_rec_chunk) + 1, sizeof *f->chunks);
    assert_non_null(f->chunks);
    for (size_t off = sizeof(struct ptt_file_header); off + 8 <= f->size;) {
        struct ptt_record h;
        memcpy(&h, f->buf + off, sizeof h);
        assert_true(h.size >= 8 && off + h.size <= f->size);
        if (h.type == PTT_REC_CHUNK) {
            struct ptt_rec_chunk c;
            memcpy(&c, f->buf + off, sizeof c);
            f->chunks[f->n++] = (struct rawchunk){c.serial,
                                                  c.seq,
                                                  c.nevents,
                                                  c.flags,
                                                  c.base_ts,
                                                  f->buf + off + sizeof c,
                                                  (uint32_t)(h.size - sizeof c)};
        }
        off += h.size;
    }
}

static void raw_free(struct rawfile *f)
{
    free(f->buf);
    free(f->chunks);
}

/* The records of a chunk written from the pool (the compact encoding, common/codec.h), one at a
 * time: *at moves past each; 0 at the end. What each holds: its header as format 1's would be
 * (*h), its time (*t), its head (id << 2 and flags), its arguments in d. */
static int raw_record(const struct rawchunk *c, struct ptt_dec *d, uint32_t *at,
                      struct ptt_event *h, uint64_t *t, uint64_t *head)
{
    assert_true(c->flags & PTT_CHUNK_COMPACT);
    if (!*at)
        ptt_dec_start(d, c->base_ts);
    int k = ptt_dec_next(d, c->data + *at, c->len - *at, h, t);
    assert_true(k >= 0);
    if (!k)
        return 0;
    const uint8_t *b = ptt_codec_body(c->data + *at);
    assert_true(ptt_get_varint(&b, c->data + *at + k, head));
    *at += (uint32_t)k;
    return 1;
}

/* The bytes of the records of a chunk (its record's zero padding left out). */
static uint32_t raw_used(const struct rawchunk *c)
{
    struct ptt_dec d;
    struct ptt_event h;
    uint64_t t, head;
    uint32_t at = 0;
    while (raw_record(c, &d, &at, &h, &t, &head))
        ;
    return at;
}

/* Sort a thread's chunks by seq; returns how many. */
static size_t raw_thread(struct rawfile *f, uint32_t serial, struct rawchunk *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->chunks[i].serial == serial) {
            assert_true(n < max);
            out[n++] = f->chunks[i];
        }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j - 1].seq > out[j].seq; j--) {
            struct rawchunk t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* ----------------------------------------------------- several threads, sub-buffer switches */

#define RT_THREADS 4
#define RT_EVENTS 20000

struct worker {
    int idx;
    int n;
    pid_t tid;
    uint64_t lost;
    int broken; /* saw its state broken (test_signal_during_release) */
    pthread_barrier_t *barrier;
    struct session *s;
};

static const uint16_t mix_ids[4] = {PTT_EV_MUTEX_ACQUIRED, PTT_EV_MUTEX_WAIT, PTT_EV_COND_WOKEN,
                                    PTT_EV_RWLOCK_WAIT};

/* Event i of thread idx: 1 to 4 arguments derived from one key, so that a torn or shifted event
 * cannot pass for a whole one. */
static void mix_expect(int idx, uint32_t i, uint16_t *id, unsigned *n, uint64_t *a)
{
    uint64_t k = (uint64_t)idx << 32 | i;
    *id = mix_ids[i % 4];
    *n = i % 4 + 1;
    a[0] = k;
    a[1] = ~k;
    a[2] = k * 3;
    a[3] = k ^ 0x5555aaaa5555aaaaull;
}

static void mix_record(int idx, uint32_t i)
{
    uint64_t k = (uint64_t)idx << 32 | i;
    switch (i % 4) {
    case 0: PTT_REC(MUTEX_ACQUIRED, k); break;
    case 1: PTT_REC(MUTEX_WAIT, k, ~k); break;
    case 2: PTT_REC(COND_WOKEN, k, ~k, k * 3); break;
    default: PTT_REC(RWLOCK_WAIT, k, ~k, k * 3, k ^ 0x5555aaaa5555aaaaull); break;
    }
}

static void *mix_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    for (int i = 0; i < w->n; i++)
        mix_record(w->idx, (uint32_t)i);
    ptt_thread_release(&ptt_self);
    return NULL;
}

/* Check the merged stream of mix_worker threads: each thread's sequence exactly, in time order.
 * Returns the number of TRACE_BUFFER_WAIT events (the threads' waits for a sub-buffer). */
static uint64_t check_mix(struct ptt_reader *r, struct worker *w, int nthreads, uint64_t *ids_seen)
{
    uint32_t next[RT_THREADS] = {0}, serial[RT_THREADS] = {0};
    uint64_t last_ticks = 0, waits = 0;
    int64_t last_ns = INT64_MIN;
    struct ptt_ev ev;
    while (ptt_reader_next(r, &ev)) {
        if (ev.ticks < last_ticks || ev.ns < last_ns)
            fail_msg("merge out of time order at offset %llu", (unsigned long long)ev.offset);
        last_ticks = ev.ticks;
        last_ns = ev.ns;
        assert_int_equal(ev.pid, getpid());
        assert_false(ev.nested);
        if (ev.id == PTT_EV_TRACE_BUFFER_WAIT) { /* ptt's own wait for a sub-buffer */
            assert_true(ev.nargs == 1 && ev.args[0] > 0);
            waits++;
            continue;
        }
        int idx = (int)(ev.args[0] >> 32);
        if (ev.id == PTT_EV_TRACE_LOST || idx >= nthreads)
            fail_msg("unexpected event 0x%04x arg 0x%llx", ev.id, (unsigned long long)ev.args[0]);
        uint32_t i = (uint32_t)ev.args[0];
        if (i != next[idx])
            fail_msg("thread %d: event %u where %u was expected", idx, i, next[idx]);
        next[idx]++;
        if (!serial[idx])
            serial[idx] = ev.serial;
        assert_int_equal(ev.serial, serial[idx]);
        assert_int_equal(ev.tid, w[idx].tid);
        uint16_t id;
        unsigned n;
        uint64_t a[4];
        mix_expect(idx, i, &id, &n, a);
        assert_int_equal(ev.id, id);
        assert_int_equal(ev.nargs, n);
        assert_memory_equal(ev.args, a, n * sizeof a[0]);
        assert_ptr_equal(ev.info, ptt_evinfo(id));
        ids_seen[i % 4]++;
    }
    for (int t = 0; t < nthreads; t++) {
        assert_int_equal(next[t], w[t].n);
        for (int u = 0; u < t; u++)
            assert_int_not_equal(serial[t], serial[u]);
    }
    return waits;
}

static void run_threads(void **state, int tsc)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, tsc, PTT_OVERFLOW_BLOCK);
    start_drainer(s, 0);
    struct worker w[RT_THREADS];
    pthread_t th[RT_THREADS];
    for (int t = 0; t < RT_THREADS; t++) {
        w[t] = (struct worker){.idx = t, .n = RT_EVENTS};
        assert_int_equal(pthread_create(&th[t], NULL, mix_worker, &w[t]), 0);
    }
    for (int t = 0; t < RT_THREADS; t++)
        pthread_join(th[t], NULL);
    struct ptt_reader *r = finish(s);
    uint64_t ids[4] = {0};
    uint64_t waits = check_mix(r, w, RT_THREADS, ids);
    for (int k = 0; k < 4; k++)
        assert_int_equal(ids[k], RT_THREADS * RT_EVENTS / 4);
    assert_clean_end(r);
    /* Each wait of a writer for a sub-buffer is recorded once, and only those. */
    assert_int_equal(waits, atomic_load(&s->d.pool->waits));
    assert_int_equal(ptt_reader_end(r)->events, RT_THREADS * RT_EVENTS + waits);
    assert_int_equal(ptt_reader_end(r)->lost, 0);
    assert_int_equal(ptt_reader_nthreads(r), RT_THREADS);
    assert_int_equal(atomic_load(&s->d.pool->lost), 0);
    /* 20000 events of 24 bytes on average: many more than a 4 KiB sub-buffer holds */
    assert_true(s->d.chunks > RT_THREADS * 100);
}

static void test_threads_mono(void **state)
{
    run_threads(state, 0);
}

static void test_threads_tsc(void **state)
{
    if (!have_tsc())
        skip();
    run_threads(state, 1);
}

/* A sub-buffer is filled up to the last record that fits (the next one would not: records
 * here are at most 32 bytes), and the next record opens a new chunk with the next seq: nothing
 * is lost at the switch. */
static void test_subbuffer_switch(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    const uint32_t n1 = 1000, n2 = 800;
    for (uint32_t i = 0; i < n1; i++)
        PTT_REC(MUTEX_WAIT, i, ~(uint64_t)i); /* 14 to 19 bytes */
    ptt_thread_release(&ptt_self);
    for (uint32_t i = 0; i < n2; i++)
        PTT_REC(COND_WOKEN, i, ~(uint64_t)i, 7); /* 15 to 20 bytes */
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        int second = k >= n1;
        uint32_t i = second ? k - n1 : k;
        assert_int_equal(ev.id, second ? PTT_EV_COND_WOKEN : PTT_EV_MUTEX_WAIT);
        assert_int_equal(ev.args[0], i);
        assert_int_equal(ev.args[1], ~(uint64_t)i);
        k++;
    }
    assert_int_equal(k, n1 + n2);
    assert_clean_end(r);

    struct rawfile f;
    raw_load(s->path, &f);
    struct rawchunk c[32];
    size_t n = raw_thread(&f, 1, c, 32);
    assert_true(n >= 8);
    uint32_t events = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(c[i].seq, i);
        events += c[i].nevents;
        uint32_t used = raw_used(&c[i]);
        int last = i == n - 1 || events == n1;          /* the last chunk of each part */
        if (!last && used <= 4096 - PTT_CALL_ROOM - 32) /* the writer leaves PTT_CALL_ROOM */
            fail_msg("chunk seq %zu holds %u bytes of records: one more would have fit", i, used);
    }
    assert_int_equal(events, n1 + n2);
    raw_free(&f);
}

/* The pool is full and nobody drains: with --overflow=discard every event is either recorded or
 * counted, exactly; a thread's count is reported by TRACE_LOST in its stream when it gets a
 * sub-buffer again. */
#define DS_THREADS 4
#define DS_EVENTS 3000

static void *discard_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    for (int i = 0; i < w->n; i++)
        PTT_REC(MUTEX_WAIT, (uint64_t)w->idx << 32 | (uint32_t)i, ~(uint64_t)i);
    w->lost = ptt_self.lost;
    pthread_barrier_wait(w->barrier); /* phase 1 done */
    pthread_barrier_wait(w->barrier); /* the main thread drained */
    PTT_REC(MUTEX_ACQUIRED, (uint64_t)w->idx << 32 | 0xffffffffu);
    ptt_thread_release(&ptt_self);
    return NULL;
}

static void test_discard_exact(void **state)
{
    struct session *s = *state;
    /* 8 sub-buffers of 4 KiB: 32 KiB for 4 x 3000 x 20 bytes: every thread loses events */
    begin(s, 4096 + 8 * (4096 + sizeof(struct ptt_desc)), 4096, 0, PTT_OVERFLOW_DISCARD);
    assert_int_equal(s->d.pool->nbufs, 8);
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, DS_THREADS + 1);
    struct worker w[DS_THREADS];
    pthread_t th[DS_THREADS];
    for (int t = 0; t < DS_THREADS; t++) {
        w[t] = (struct worker){.idx = t, .n = DS_EVENTS, .barrier = &b};
        assert_int_equal(pthread_create(&th[t], NULL, discard_worker, &w[t]), 0);
    }
    pthread_barrier_wait(&b);
    uint64_t lost = atomic_load(&s->d.pool->lost), sum = 0;
    for (int t = 0; t < DS_THREADS; t++) {
        assert_true(w[t].lost > 0);
        sum += w[t].lost;
    }
    assert_int_equal(lost, sum);
    assert_int_equal(atomic_load(&s->d.pool->waits), 0); /* discard never waits */
    ptt_daemon_drain(&s->d, PTT_DRAIN_READY);
    pthread_barrier_wait(&b);
    for (int t = 0; t < DS_THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&b);
    assert_int_equal(atomic_load(&s->d.pool->lost), lost); /* phase 2 lost nothing */

    struct ptt_reader *r = finish(s);
    uint32_t recorded[DS_THREADS] = {0};
    int state_[DS_THREADS] = {0}; /* 0: phase 1, 1: TRACE_LOST seen, 2: the last event seen */
    uint32_t serial[DS_THREADS] = {0};
    struct ptt_ev ev;
    while (ptt_reader_next(r, &ev)) {
        int t;
        for (t = 0; t < DS_THREADS && w[t].tid != ev.tid; t++)
            ;
        assert_true(t < DS_THREADS);
        if (!serial[t])
            serial[t] = ev.serial;
        assert_int_equal(serial[t], ev.serial);
        if (ev.id == PTT_EV_MUTEX_WAIT) {
            assert_int_equal(state_[t], 0);
            assert_int_equal(ev.args[0], (uint64_t)t << 32 | recorded[t]); /* a prefix */
            recorded[t]++;
        } else if (ev.id == PTT_EV_TRACE_LOST) {
            assert_int_equal(state_[t], 0);
            assert_int_equal(ev.args[0], w[t].lost);
            state_[t] = 1;
        } else {
            assert_int_equal(ev.id, PTT_EV_MUTEX_ACQUIRED);
            assert_int_equal(state_[t], 1); /* TRACE_LOST just before, in the same stream */
            assert_int_equal(ev.args[0], (uint64_t)t << 32 | 0xffffffffu);
            state_[t] = 2;
        }
    }
    for (int t = 0; t < DS_THREADS; t++) {
        assert_int_equal(state_[t], 2);
        if (recorded[t] + w[t].lost != DS_EVENTS)
            fail_msg("thread %d: %u recorded + %llu lost != %d attempted", t, recorded[t],
                     (unsigned long long)w[t].lost, DS_EVENTS);
    }
    assert_clean_end(r);
    assert_int_equal(ptt_reader_end(r)->lost, lost);
}

/* Back-pressure: a slow daemon makes writers wait, never drop. */
static void test_block_waits(void **state)
{
    struct session *s = *state;
    begin(s, 4096 + 8 * (4096 + sizeof(struct ptt_desc)), 4096, 0, PTT_OVERFLOW_BLOCK);
    start_drainer(s, 1000);
    struct worker w[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        w[t] = (struct worker){.idx = t, .n = 20000};
        assert_int_equal(pthread_create(&th[t], NULL, mix_worker, &w[t]), 0);
    }
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    struct ptt_reader *r = finish(s);
    uint64_t ids[4] = {0};
    check_mix(r, w, 2, ids);
    assert_clean_end(r);
    assert_int_equal(atomic_load(&s->d.pool->lost), 0);
    assert_true(atomic_load(&s->d.pool->waits) > 0);
    assert_true(atomic_load(&s->d.pool->wait_ns) > 0);
    assert_int_equal(ptt_active, 1);
}

/* The file holds n chunks of the main thread's, each filled up to the last record that fits
 * (records of at most 32 bytes), with k events in all. */
static void assert_full_chunks(struct session *s, size_t n, uint32_t k)
{
    struct rawfile f;
    raw_load(s->path, &f);
    assert_int_equal(f.n, n);
    uint32_t events = 0;
    for (size_t i = 0; i < f.n; i++) {
        events += f.chunks[i].nevents;
        assert_true(raw_used(&f.chunks[i]) > 4096 - PTT_CALL_ROOM - 32);
    }
    assert_int_equal(events, k);
    raw_free(&f);
}

/* A daemon that is gone (its heartbeat stopped and its process no longer exists) and whose pool
 * nobody marked abandoned (its guardian killed too): a blocked writer gives up once the heartbeat
 * stalled 50 ms, and recording stops for the process, which runs on. The event that waited
 * counts as lost; nothing is recorded after. */
static void test_dead_daemon(void **state)
{
    struct session *s = *state;
    begin(s, 4096 + 2 * (4096 + sizeof(struct ptt_desc)), 4096, 0, PTT_OVERFLOW_BLOCK);
    assert_int_equal(s->d.pool->nbufs, 2);
    pid_t gone = fork(); /* a pid that no longer exists, as the daemon's */
    if (gone == 0)
        _exit(0);
    assert_int_equal(waitpid(gone, NULL, 0), gone);
    s->d.pool->daemon_pid = gone;
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    uint32_t i;
    for (i = 0; i < 1000; i++)
        PTT_REC(MUTEX_WAIT, i, ~(uint64_t)i); /* about 2 x 230 fit */
    uint64_t took = clock_ns(CLOCK_MONOTONIC) - t0;
    assert_int_equal(ptt_active, 0);
    assert_true(took >= 50000000u && took < 10000000000u);
    assert_int_equal(atomic_load(&s->d.pool->waits), 1);
    assert_int_equal(atomic_load(&s->d.pool->lost), 1);
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev))
        assert_int_equal(ev.args[0], k++);
    assert_full_chunks(s, 2, k);
}

/* A pool marked abandoned (ptt trace ended, or its guardian saw it die), its daemon's process
 * still there: the writer gives up at its next sub-buffer, without waiting; nothing is
 * recorded after. */
static void test_abandoned(void **state)
{
    struct session *s = *state;
    begin(s, 4096 + 2 * (4096 + sizeof(struct ptt_desc)), 4096, 0, PTT_OVERFLOW_BLOCK);
    for (uint32_t i = 0; i < 10; i++)
        PTT_REC(MUTEX_WAIT, i, ~(uint64_t)i);
    atomic_store(&s->d.pool->abandoned, 1);
    for (uint32_t i = 10; i < 1000; i++)
        PTT_REC(MUTEX_WAIT, i, ~(uint64_t)i); /* about 2 x 230 fit: the pool runs dry without it */
    assert_int_equal(ptt_active, 0);
    assert_int_equal(atomic_load(&s->d.pool->waits), 0);
    assert_int_equal(atomic_load(&s->d.pool->lost), 1);
    atomic_store(&s->d.pool->abandoned, 0); /* for finish() */
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev))
        assert_int_equal(ev.args[0], k++);
    assert_full_chunks(s, 1, k);
}

/* Sub-buffers a thread still owns reach the file only once it is gone: its thread ended without
 * handing them over (PTT_DRAIN_DEAD, or its process's pid), or the session ended. */
static void *owned_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    for (int i = 0; i < w->n; i++)
        PTT_REC(MUTEX_ACQUIRED, (uint64_t)w->idx << 32 | (uint32_t)i);
    return NULL; /* no hand-off: a thread that ended outside the wrapper */
}

static void test_drain_owned(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    for (uint32_t i = 0; i < 10; i++)
        PTT_REC(MUTEX_ACQUIRED, i);
    struct worker w = {.idx = 1, .n = 7};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owned_worker, &w), 0);
    pthread_join(th, NULL);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 0);
    assert_int_equal(ptt_daemon_drain(&s->d, getpid() + 100000), 0);
    assert_int_equal(s->d.events, 0);
    /* pthread_join returns when the kernel clears the thread's tid, a little before the task is
     * gone for tgkill: wait for that, as the daemon's periodic drain does. */
    for (int tries = 0; tries < 10000 && syscall(SYS_tgkill, getpid(), w.tid, 0) == 0; tries++)
        usleep(100);
    /* the worker is gone, the main thread is not */
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_DEAD), 1);
    assert_int_equal(s->d.events, 7);
    /* Drained for its process's end, only the threads gone are taken: the pid may be another
     * process's by then (one reaped by its parent). The main thread lives: its is left. */
    assert_int_equal(ptt_daemon_drain(&s->d, getpid()), 0);
    assert_int_equal(s->d.events, 7);
    /* Go on as a new thread: the main thread's old sub-buffer reaches the file at the end. */
    memset(&ptt_self, 0, sizeof ptt_self);
    for (uint32_t i = 10; i < 15; i++)
        PTT_REC(MUTEX_ACQUIRED, i);
    struct ptt_reader *r = finish(s); /* drains the new sub-buffer with PTT_DRAIN_ALL */
    struct ptt_ev ev;
    uint32_t k = 0, kw = 0;
    uint32_t serials[3] = {0};
    while (ptt_reader_next(r, &ev)) {
        if (ev.tid == w.tid) {
            assert_int_equal(ev.args[0], (uint64_t)1 << 32 | kw++);
            serials[1] = ev.serial;
            continue;
        }
        serials[k < 10 ? 0 : 2] = ev.serial;
        assert_int_equal(ev.args[0], k++);
    }
    assert_int_equal(k, 15);
    assert_int_equal(kw, 7);
    /* session-unique serials, from 1 in the order threads took their first sub-buffer */
    assert_int_equal(serials[0], 1);
    assert_int_equal(serials[1], 2);
    assert_int_equal(serials[2], 3);
    /* three streams, two threads: the main thread's two have its pid and tid (as after an
     * exec), and threads are counted by those */
    assert_int_equal(ptt_reader_nthreads(r), 2);
    assert_clean_end(r);
}

/* ptt_thread_release hands the sub-buffer over; the thread's next event opens a new one, with the
 * next seq. The daemon writes chunks in pool order, so they can reach the file out of seq order:
 * the reader must sort them. */
static void test_handoff(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    enum { SEGS = 4, PER = 50 };
    uint64_t before[SEGS], after[SEGS];
    for (int g = 0; g < SEGS; g++) {
        before[g] = ptt_now();
        for (uint32_t i = 0; i < PER; i++)
            PTT_REC(MUTEX_WAIT, (uint64_t)g * PER + i, g);
        after[g] = ptt_now();
        ptt_thread_release(&ptt_self);
        assert_null(ptt_self.desc);
        if (g % 2)
            assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY),
                             2); /* the free list now runs 1, 0 */
    }
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        unsigned g = k / PER;
        assert_int_equal(ev.args[0], k);
        assert_int_equal(ev.args[1], g);
        assert_in_range(ev.ticks, before[g], after[g]);
        k++;
    }
    assert_int_equal(k, SEGS * PER);
    assert_clean_end(r);

    struct rawfile f;
    raw_load(s->path, &f);
    assert_int_equal(f.n, SEGS);
    assert_int_equal(f.chunks[2].seq, 3); /* written before seq 2 */
    assert_int_equal(f.chunks[3].seq, 2);
    struct rawchunk c[SEGS];
    assert_int_equal(raw_thread(&f, 1, c, SEGS), SEGS);
    for (unsigned g = 0; g < SEGS; g++) {
        assert_int_equal(c[g].seq, g);
        assert_int_equal(c[g].nevents, PER);
    }
    raw_free(&f);
}

/* A sub-buffer's event count larger than its bytes (its descriptor written by another user,
 * who owns the pool under ptt trace -p as root) is not taken: its records are counted. */
static void test_count_above_bytes(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    for (uint32_t i = 0; i < 10; i++)
        PTT_REC(MUTEX_WAIT, i, 1);
    ptt_thread_release(&ptt_self);
    struct ptt_pool *p = s->d.pool;
    unsigned ready = 0;
    for (uint32_t i = 0; i < p->nbufs; i++) {
        struct ptt_desc *d = ptt_pool_desc(p, i);
        if (atomic_load(&d->state) == PTT_BUF_READY) {
            d->nevents = 21285929;
            ready++;
        }
    }
    assert_int_equal(ready, 1);
    struct ptt_reader *r = finish(s);
    assert_int_equal(s->d.events, 10);
    assert_clean_end(r);
    struct rawfile f;
    raw_load(s->path, &f);
    assert_int_equal(f.n, 1);
    assert_int_equal(f.chunks[0].nevents, 10);
    raw_free(&f);
}

/* The sub-buffers handed over, before the drain: each with the counts of its records (events,
 * TRACE_LOST's counts, whether one names things), none to be walked. Returns how many; into
 * *named those with an event that names things, into *marked their TRACE_LOST counts. */
static unsigned check_published(struct session *s, unsigned *named, uint64_t *marked)
{
    struct ptt_pool *p = s->d.pool;
    unsigned n = 0;
    for (uint32_t i = 0; i < p->nbufs; i++) {
        struct ptt_desc *d = ptt_pool_desc(p, i);
        if (atomic_load(&d->state) != PTT_BUF_READY)
            continue;
        uint64_t m = 0;
        int nm;
        uint32_t len = atomic_load(&d->committed);
        assert_int_equal(count_records(ptt_pool_data(p, i), len, d->base_ts, &m, &nm), d->nevents);
        assert_int_equal(m, d->marked);
        assert_int_equal(nm, !!(d->flags & PTT_DESC_NAMED));
        assert_false(d->flags & PTT_DESC_WALK);
        *named += (unsigned)nm;
        *marked += m;
        n++;
    }
    return n;
}

/* A writer hands each sub-buffer over with the counts the drain used to find by reading it,
 * and sets its ready bit:
 * full ones (switched at the next record that does not fit), a partial one (the thread's
 * release), and ones with a slot given up (padding, no event), with calls (two events a record),
 * TRACE_LOST events (written at a switch and by ptt_report_lost) and an event that names things.
 * The drain takes them as they are: the file's chunks and END count what the readers count. */
static void test_published_counts(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    struct ptt_thread *t = &ptt_self;
    enum { N = 900 };
    uint64_t events = 0, lost = 0;
    unsigned pads = 0;
    for (uint32_t i = 0; i < N; i++) {
        PTT_CALL_IN(call, MUTEX_LOCK, i, 0x1000 + i % 7);
        PTT_CALL_OUT(call, MUTEX_LOCK, 0);
        PTT_REC(MUTEX_WAIT, i, ~(uint64_t)i);
        events += 3;
        if (i == 100) {
            PTT_REC_STR(OBJECT_NAME, "queue lock", 0x1234);
            events++;
        }
        if (i % 100 == 50 && ptt_pos(t) + 6 <= t->end) { /* a slot given up: padding */
            uintptr_t w = ptt_reserve(t, 6);
            assert_int_equal(ptt_moved(t, w, 6), PTT_SLOT_AGAIN);
            pads++;
        }
        if (i == 400) { /* reported at the next switch (300 records on): the slow path */
            t->lost = 3;
            lost += 3;
            events++;
        }
        if (i == 700) { /* through the hot path where it fits, else at the next switch */
            t->lost = 5;
            lost += 5;
            events++;
        }
        if (i >= 700)
            ptt_report_lost(t);
    }
    ptt_thread_release(t); /* a partial one */
    unsigned named = 0;
    uint64_t marked = 0;
    assert_true(pads >= 5);
    unsigned ready = check_published(s, &named, &marked);
    assert_true(ready >= 5);
    assert_int_equal(named, 1);
    assert_int_equal(marked, lost);
    /* The drain finds them by their ready bits, which it clears; a bit left over (its
     * sub-buffer taken by a full scan) takes nothing. */
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), ready);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 0);
    atomic_fetch_or(&ptt_pool_ready(s->d.pool)[0], 3);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 0);
    struct ptt_reader *r = finish(s);
    assert_int_equal(s->d.events, events);
    assert_int_equal(s->d.lost_marked, lost);
    struct ptt_ev ev;
    uint64_t k = 0;
    while (ptt_reader_next(r, &ev))
        k++;
    assert_int_equal(k, events);
    assert_clean_end(r);
}

/* A base event in another sub-buffer, or a clock going backwards, gives a record with an absolute
 * time stamp, the new base: every event decodes to the time it was recorded at. */
static void run_abs(void **state, int tsc)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, tsc, PTT_OVERFLOW_BLOCK);
    enum { N = 30 };
    uint64_t before[N], after[N];
    for (uint32_t k = 0; k < N; k++) {
        before[k] = ptt_now();
        if (k % 3 == 1)
            ptt_self.last_data = 0; /* the base event in another sub-buffer (one parked) */
        else if (k % 3 == 2)
            ptt_self.last = before[k] + (1ull << 40); /* in the future: a negative gap */
        PTT_REC(MUTEX_WAIT, k, before[k]);
        after[k] = ptt_now();
    }
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        assert_int_equal(ev.args[0], k);
        if (ev.ticks < before[k] || ev.ticks > after[k])
            fail_msg("event %u decodes to %llu, recorded between %llu and %llu", k,
                     (unsigned long long)ev.ticks, (unsigned long long)before[k],
                     (unsigned long long)after[k]);
        if (!tsc) /* ticks are ns: the reader's time is exact */
            assert_int_equal(ev.ns, ev.ticks - s->clock0);
        k++;
    }
    assert_int_equal(k, N);
    assert_clean_end(r);

    struct rawfile f;
    raw_load(s->path, &f);
    assert_int_equal(f.n, 1);
    unsigned nabs = 0;
    struct ptt_dec d;
    struct ptt_event h;
    uint64_t t, head;
    uint32_t at = 0;
    while (raw_record(&f.chunks[0], &d, &at, &h, &t, &head)) {
        assert_false(head & PTT_CODEC_NEST);
        nabs += (head & PTT_CODEC_ABS) != 0;
    }
    assert_int_equal(nabs, 2 * N / 3);
    raw_free(&f);
}

static void test_abs_mono(void **state)
{
    run_abs(state, 0);
}

static void test_abs_tsc(void **state)
{
    if (!have_tsc())
        skip();
    run_abs(state, 1);
}

/* Only the selected classes are recorded. */
static void test_class_mask(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    atomic_store(&ptt_pool->masks[0], 1ull << PTT_CLASS_mutex | 1);
    atomic_store(&ptt_pool->masks[1], 1ull << PTT_CLASS_mutex | 1);
    for (uint32_t i = 0; i < 10; i++) {
        PTT_REC(MUTEX_ACQUIRED, i);
        PTT_REC(COND_WOKEN, i, 0, 0);
        PTT_REC(BARRIER_RELEASED, i, 0);
    }
    struct ptt_reader *r = finish(s);
    struct ptt_ev ev;
    uint32_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        assert_int_equal(ev.id, PTT_EV_MUTEX_ACQUIRED);
        assert_int_equal(ev.args[0], k++);
    }
    assert_int_equal(k, 10);
}

/* --------------------------------------------------------------- signal handlers that record */

#define SIG_LOOP 200000      /* loop events at least */
#define SIG_MIN 2000         /* signals handled at least */
#define SIG_LOOP_MAX 2000000 /* loop events at most */
/* calls at least in the storm of test_calls_in_storm: under ASan, signals every 10 us take
 * most of the thread's time, and 200000 calls took 80 s */
#define CALL_LOOP 30000

static atomic_uint_fast64_t sig_count;

/* The storm: a timer that sends SIGALRM to the calling thread 10 us after each handler. The kernel
 * delivers each when it interrupts the thread, at whatever instruction it is (a pthread_kill from
 * another thread depends on the scheduler: signals sent while one is pending merge). Where
 * delivering a signal takes longer than that (40 to 80 us seen on a virtual machine), the thread
 * would do nothing but handle them: a handler that finds the thread's loop moved fewer than
 * storm_rounds rounds since the last one doubles the wait, up to 1 ms, and halves it again once
 * it moves. */
static timer_t storm_timer;
static atomic_int storm_on;
static atomic_uint storm_progress; /* the rounds of the thread's loop */
static unsigned storm_rounds, storm_seen;
static long storm_gap;

static void storm_arm(long ns)
{
    struct itimerspec its = {{0, 0}, {0, ns}};
    if (atomic_load(&storm_on))
        timer_settime(storm_timer, 0, &its, NULL);
}

static void storm_next(void)
{
    unsigned p = atomic_load_explicit(&storm_progress, memory_order_relaxed);
    if (p - storm_seen < storm_rounds)
        storm_gap = storm_gap * 2 < 1000000 ? storm_gap * 2 : 1000000;
    else
        storm_gap = storm_gap / 2 > 10000 ? storm_gap / 2 : 10000;
    storm_seen = p;
    storm_arm(storm_gap);
}

static void storm_round(unsigned i)
{
    atomic_store_explicit(&storm_progress, i, memory_order_relaxed);
}

static int storm_start(timer_t *timer, unsigned rounds)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev.sigev_notify_thread_id = gettid();
    if (timer_create(CLOCK_MONOTONIC, &sev, timer))
        return -1;
    storm_timer = *timer;
    storm_rounds = rounds;
    storm_seen = 0;
    storm_gap = 10000;
    atomic_store(&storm_progress, 0);
    atomic_store(&storm_on, 1);
    storm_next();
    return 0;
}

/* By the thread of the storm: a handler runs wholly before or after the store. */
static void storm_stop(timer_t timer)
{
    atomic_store(&storm_on, 0);
    timer_delete(timer);
}

static void alarm_record(void)
{
    int e = errno;
    uint64_t k = atomic_fetch_add(&sig_count, 1);
    uint64_t t = ptt_now();
    PTT_REC(COND_WOKEN, k, t, ~k);
    errno = e;
}

static void on_alarm(int sig)
{
    (void)sig;
    alarm_record();
    int e = errno;
    storm_next();
    errno = e;
}

static void *sig_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    timer_t timer;
    if (storm_start(&timer, 64))
        return NULL; /* w->n stays 0: the test fails */
    uint32_t i;
    for (i = 0; i < SIG_LOOP_MAX && (i < SIG_LOOP || atomic_load(&sig_count) < SIG_MIN); i++) {
        uint64_t t = ptt_now();
        PTT_REC(MUTEX_WAIT, i, t);
        storm_round(i);
    }
    storm_stop(timer);
    w->n = (int)i;
    ptt_thread_release(&ptt_self);
    return NULL;
}

/* A storm of signals on a thread recording in a loop; the handler records too. Every event is
 * in the file, whole; those that interrupted another event are flagged nested; the loop's time
 * base is not disturbed by them. Small sub-buffers (1 KiB): handlers often land at a switch. */
static void test_signal_nesting(void **state)
{
    struct session *s = *state;
    begin(s, 8u << 20, 1024, 0, PTT_OVERFLOW_BLOCK);
    start_drainer(s, 0);
    atomic_store(&sig_count, 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct worker w = {.idx = 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sig_worker, &w), 0);
    pthread_join(th, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_true(w.n >= SIG_LOOP); /* else timer_create failed */
    uint64_t handled = atomic_load(&sig_count);

    struct ptt_reader *r = finish(s);
    uint64_t lost = atomic_load(&s->d.pool->lost), reported = 0;
    uint64_t nloop = 0, nhandler = 0, nnested = 0, next_k = 0, prev_loop_ticks = 0;
    struct ptt_ev ev;
    while (ptt_reader_next(r, &ev)) {
        assert_int_equal(ev.tid, w.tid);
        if (ev.id == PTT_EV_MUTEX_WAIT) {
            assert_false(ev.nested);
            assert_int_equal(ev.args[0], nloop);
            /* recorded after the stamp in args[1], before the next loop event's stamp */
            if (ev.ticks < ev.args[1])
                fail_msg("loop event %llu decodes before it was recorded",
                         (unsigned long long)nloop);
            if (nloop && prev_loop_ticks > ev.args[1])
                fail_msg("loop event %llu decodes after the next one started",
                         (unsigned long long)nloop - 1);
            prev_loop_ticks = ev.ticks;
            nloop++;
        } else if (ev.id == PTT_EV_COND_WOKEN) {
            if (ev.args[0] < next_k || ev.args[2] != ~ev.args[0] || ev.ticks < ev.args[1])
                fail_msg("handler event %llu (expected >= %llu) torn or misdated",
                         (unsigned long long)ev.args[0], (unsigned long long)next_k);
            next_k = ev.args[0] + 1;
            nhandler++;
            nnested += ev.nested;
        } else {
            assert_int_equal(ev.id, PTT_EV_TRACE_LOST);
            reported += ev.args[0];
        }
    }
    print_message("%d loop events, %llu signals handled, %llu nested, %llu lost\n", w.n,
                  (unsigned long long)handled, (unsigned long long)nnested,
                  (unsigned long long)lost);
    assert_int_equal(nloop, w.n);
    assert_int_equal(nhandler + lost, handled); /* only a handler's event can be dropped */
    assert_true(reported <= lost);
    assert_true(handled >= SIG_MIN);
    assert_true(nnested > 0);
    assert_clean_end(r);
}

/* Sub-buffers handed over (ptt_thread_release, as at a thread's end) while signal handlers
 * record: the thread's state stays consistent (no sub-buffer owned without a position in it) and
 * every handler's event is in the file or counted as lost. Each round's first sub-buffer is taken
 * and its last handed over with signals open (install_first, release_open): the counts published
 * and the numbers are exact (finish) whatever handlers did in the middle. */
#define REL_ROUNDS 20000

static atomic_int rel_broken;

/* Recording enabled (end set) with the position outside the sub-buffer that end says (what a
 * handler goes by: a first switch may be storing its own desc and data, bound to be undone): the
 * next event would be written at address pos. (While end is 0 the state is in flux, and a handler
 * drops its event.) */
static int state_broken(void)
{
    return ptt_self.end && ptt_pos(&ptt_self) < ptt_self.end - (ptt_pool->buf_size - PTT_CALL_ROOM);
}

/* The same, or data not where end says: seen by the thread itself, outside any switch. */
static int state_broken_settled(void)
{
    return state_broken() ||
           (ptt_self.end && ptt_self.data != ptt_self.end - (ptt_pool->buf_size - PTT_CALL_ROOM));
}

/* Now and then a burst of handlers that outlast the wait for the next signal: the kernel delivers
 * it as one returns, so the thread runs no instruction between them, and they take and fill
 * sub-buffers at one point of whatever it was doing (as under ASan, whose handlers are slow). */
#define BURST_EVERY 256
#define BURST_LEN 40

static void on_alarm_guarded(int sig)
{
    if (state_broken()) {
        atomic_store(&rel_broken, 1); /* and do not crash on it */
        storm_next();
        return;
    }
    int slow = atomic_load(&sig_count) % BURST_EVERY < BURST_LEN;
    if (!slow) {
        on_alarm(sig);
        return;
    }
    /* The next in 10 us, whatever the thread did: it comes during the 15 us spin, pending at
     * the return; the gap is left as it was for the handlers after the burst. */
    int e = errno;
    alarm_record();
    storm_arm(10000);
    uint64_t until = clock_ns(CLOCK_MONOTONIC) + 15000;
    while (clock_ns(CLOCK_MONOTONIC) < until)
        ;
    errno = e;
}

static void *release_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    timer_t timer;
    if (storm_start(&timer, 1))
        return NULL;
    int i;
    for (i = 0; i < REL_ROUNDS; i++) {
        storm_round((unsigned)i);
        PTT_REC(MUTEX_WAIT, (uint64_t)i, 0);
        ptt_thread_release(&ptt_self);
        pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* look at the state without a handler */
        if (state_broken_settled() || atomic_load(&rel_broken)) {
            w->broken = 1;
            break;
        }
        pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    }
    storm_stop(timer);
    w->n = i;
    memset(&ptt_self, 0, sizeof ptt_self); /* what ptt_self.desc still owns is drained at the end */
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    return NULL;
}

static void test_signal_during_release(void **state)
{
    struct session *s = *state;
    begin(s, 8u << 20, 1024, 0, PTT_OVERFLOW_BLOCK);
    start_drainer(s, 0);
    atomic_store(&sig_count, 0);
    atomic_store(&rel_broken, 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm_guarded;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct worker w = {.idx = 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, release_worker, &w), 0);
    pthread_join(th, NULL);
    sigaction(SIGALRM, &old, NULL);
    uint64_t handled = atomic_load(&sig_count);
    struct ptt_reader *r = finish(s);
    uint64_t nloop = 0, nhandler = 0, lost = atomic_load(&s->d.pool->lost);
    struct ptt_ev ev;
    while (ptt_reader_next(r, &ev)) {
        if (ev.id == PTT_EV_MUTEX_WAIT)
            assert_int_equal(ev.args[0], nloop++);
        else if (ev.id == PTT_EV_COND_WOKEN)
            nhandler++;
    }
    print_message("%d rounds, %llu signals handled, %llu lost\n", w.n, (unsigned long long)handled,
                  (unsigned long long)lost);
    if (w.broken)
        fail_msg("round %d: after ptt_thread_release the thread owns a sub-buffer but its position "
                 "is 0 (a handler took the sub-buffer during the hand-off): its next event would "
                 "be written at address 0",
                 w.n);
    assert_int_equal(w.n, REL_ROUNDS);
    assert_int_equal(nloop, REL_ROUNDS);
    assert_int_equal(nhandler + lost, handled);
    assert_true(handled >= 100);
    assert_clean_end(r);
}

/* Calls (PTT_CALL_IN, PTT_CALL_OUT) in a storm of signals whose handler records: each reads back
 * as its IN, what was recorded inside it (a wait, one call in three; handlers' events), and its
 * OUT, whether it was written as one record or flushed; and both forms are in the file. */
static void *call_worker(void *arg)
{
    struct worker *w = arg;
    w->tid = gettid();
    timer_t timer;
    if (storm_start(&timer, 16))
        return NULL;
    uint32_t i;
    for (i = 0; i < SIG_LOOP_MAX && (i < CALL_LOOP || atomic_load(&sig_count) < SIG_MIN); i++) {
        storm_round(i);
        uint64_t t = ptt_now();
        PTT_CALL_IN(call, MUTEX_LOCK, i, t);
        if (i % 3 == 0)
            PTT_REC(MUTEX_WAIT, i, t);
        PTT_CALL_OUT(call, MUTEX_LOCK, i);
    }
    storm_stop(timer);
    w->n = (int)i;
    ptt_thread_release(&ptt_self);
    return NULL;
}

/* One event of call_worker's thread against what its loop recorded; *at: 0 before a call's IN,
 * 1 inside (IN seen), 2 after its wait. Returns the handler's events. */
static int check_call_event(const struct ptt_ev *ev, uint64_t *i, int *at, uint64_t *in_ticks)
{
    if (ev->id == PTT_EV_COND_WOKEN || ev->id == PTT_EV_TRACE_LOST)
        return ev->id == PTT_EV_COND_WOKEN;
    assert_false(ev->nested);
    if (ev->id == PTT_EV_MUTEX_LOCK_IN) {
        assert_int_equal(*at, 0);
        assert_int_equal(ev->args[0], *i);
        assert_true(ev->ticks >= ev->args[1]); /* its entry: after the loop's time stamp */
        *in_ticks = ev->ticks;
        *at = 1;
    } else if (ev->id == PTT_EV_MUTEX_WAIT) {
        assert_int_equal(*at, 1);
        assert_int_equal(*i % 3, 0);
        assert_int_equal(ev->args[0], *i);
        *at = 2;
    } else {
        assert_int_equal(ev->id, PTT_EV_MUTEX_LOCK_OUT);
        assert_int_equal(*at, *i % 3 == 0 ? 2 : 1);
        assert_int_equal(ev->args[0], *i);
        assert_true(ev->ticks >= *in_ticks);
        *at = 0;
        ++*i;
    }
    return 0;
}

static void test_calls_in_storm(void **state)
{
    struct session *s = *state;
    begin(s, 8u << 20, 1024, 0, PTT_OVERFLOW_BLOCK);
    start_drainer(s, 0);
    atomic_store(&sig_count, 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct worker w = {.idx = 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, call_worker, &w), 0);
    pthread_join(th, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_true(w.n >= CALL_LOOP);
    uint64_t handled = atomic_load(&sig_count);
    struct ptt_reader *r = finish(s);
    uint64_t i = 0, in_ticks = 0, nhandler = 0, lost = atomic_load(&s->d.pool->lost);
    int at = 0;
    struct ptt_ev ev;
    while (ptt_reader_next(r, &ev)) {
        assert_int_equal(ev.tid, w.tid);
        nhandler += (uint64_t)check_call_event(&ev, &i, &at, &in_ticks);
    }
    assert_int_equal(i, w.n);
    assert_int_equal(at, 0);
    assert_int_equal(nhandler + lost, handled);
    assert_clean_end(r);
    struct rawfile f;
    raw_load(s->path, &f);
    uint64_t whole = 0, flushed = 0;
    for (size_t c = 0; c < f.n; c++) {
        struct ptt_dec d;
        struct ptt_event h;
        uint64_t t, head;
        uint32_t at = 0;
        while (raw_record(&f.chunks[c], &d, &at, &h, &t, &head)) {
            whole += (h.id & PTT_EV_ID_MASK) == (PTT_EV_MUTEX_LOCK_IN | PTT_EV_CALL);
            flushed += (h.id & PTT_EV_ID_MASK) == PTT_EV_MUTEX_LOCK_IN;
        }
    }
    raw_free(&f);
    print_message("%d calls: %llu as one record, %llu as IN and OUT; %llu signals, %llu lost\n",
                  w.n, (unsigned long long)whole, (unsigned long long)flushed,
                  (unsigned long long)handled, (unsigned long long)lost);
    assert_int_equal(whole + flushed, w.n);
    assert_true(flushed >= ((uint64_t)w.n + 2) / 3); /* the waits', and the handlers' if any */
    assert_true(whole > 0);
}

/* A signal handler that records while a call waits in the slot (its signal sent to the thread
 * itself, delivered as the system call returns): the call's IN first, at its entry, then the
 * handler's events (a call of its own among them), then the call's OUT. */
static void on_usr1(int sig)
{
    (void)sig;
    PTT_REC(COND_WOKEN, 1, 2, 3);         /* the interrupted call's IN first */
    PTT_CALL_IN(call, SEM_POST, 4, 5, 6); /* the slot is free again: one record */
    PTT_CALL_OUT(call, SEM_POST, 0, 0, 7);
}

static void test_call_flushed_by_handler(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 4096, 0, PTT_OVERFLOW_BLOCK);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    uint64_t t0 = ptt_now();
    PTT_CALL_IN(call, MUTEX_UNLOCK, 10, 11);
    syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
    PTT_CALL_OUT(call, MUTEX_UNLOCK, 0);
    PTT_CALL_IN(call2, MUTEX_UNLOCK, 12, 13);
    PTT_CALL_OUT(call2, MUTEX_UNLOCK, 0);
    uint64_t t1 = ptt_now();
    sigaction(SIGUSR1, &old, NULL);
    struct ptt_reader *r = finish(s);
    static const struct {
        uint16_t id;
        unsigned n;
        uint64_t a[3];
    } want[] = {
        {PTT_EV_MUTEX_UNLOCK_IN, 2, {10, 11}}, {PTT_EV_COND_WOKEN, 3, {1, 2, 3}},
        {PTT_EV_SEM_POST_IN, 3, {4, 5, 6}},    {PTT_EV_SEM_POST_OUT, 3, {0, 0, 7}},
        {PTT_EV_MUTEX_UNLOCK_OUT, 1, {0}},     {PTT_EV_MUTEX_UNLOCK_IN, 2, {12, 13}},
        {PTT_EV_MUTEX_UNLOCK_OUT, 1, {0}},
    };
    struct ptt_ev ev;
    size_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        assert_true(k < sizeof want / sizeof want[0]);
        assert_int_equal(ev.id, want[k].id);
        assert_int_equal(ev.nargs, want[k].n);
        assert_memory_equal(ev.args, want[k].a, want[k].n * sizeof ev.args[0]);
        assert_false(ev.nested);
        assert_in_range(ev.ticks, t0, t1);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof want[0]);
    assert_clean_end(r);
    assert_int_equal(ptt_reader_end(r)->events, k);
    struct rawfile f;
    raw_load(s->path, &f);
    assert_int_equal(f.n, 1);
    assert_int_equal(f.chunks[0].nevents, k);
    struct ptt_dec d;
    struct ptt_event h;
    uint64_t t, head;
    uint32_t at = 0, ids[8], nrec = 0;
    while (raw_record(&f.chunks[0], &d, &at, &h, &t, &head)) {
        assert_true(nrec < 8);
        ids[nrec++] = h.id;
    }
    /* The first call: its IN, the handler's (its own call in one record), its OUT; the last
     * call: one record. */
    static const uint32_t want_ids[] = {PTT_EV_MUTEX_UNLOCK_IN, PTT_EV_COND_WOKEN,
                                        PTT_EV_SEM_POST_IN | PTT_EV_CALL, PTT_EV_MUTEX_UNLOCK_OUT,
                                        PTT_EV_MUTEX_UNLOCK_IN | PTT_EV_CALL};
    assert_int_equal(nrec, 5);
    assert_memory_equal(ids, want_ids, sizeof want_ids);
    raw_free(&f);
}

/* ---------------------------------------------------------- the hang watch, a parked sub-buffer */

/* A thread's lock taken while a signal handler ran: the lock's OUT had its slot reserved when
 * the handler came, whose events then moved the thread to a new sub-buffer, parking the first
 * (record_nested). The hang watch looks at both while the first is parked (read as far as
 * written), then the slot is written, the sub-buffer handed over (ptt_unpark) and the thread
 * blocks on a second lock. The watch must still see the OUT: the thread holds the first lock.
 * drain_first: the parked sub-buffer's rest comes from the drain, else from the next look. */
#define HANG_M1 0x10000u
#define HANG_M2 0x20000u

/* A session of small sub-buffers with a hang watch told of every drained one. */
static struct ptt_hang *hang_begin(struct session *s)
{
    begin(s, 1u << 20, 1024, 0, PTT_OVERFLOW_BLOCK);
    struct ptt_hang *h = ptt_hang_new(&s->d.geom);
    assert_non_null(h);
    s->d.drained = ptt_hang_drained;
    s->d.drained_arg = h;
    return h;
}

/* The session's end: the file, read; the watch let go. */
static struct ptt_reader *hang_finish(struct session *s, struct ptt_hang *h)
{
    struct ptt_reader *r = finish(s);
    s->d.drained = NULL;
    ptt_hang_free(h);
    return r;
}

/* The lock's OUT in a slot reserved at nest 1 (its record, made whole, in buf: *rec, *size),
 * then a handler's events (at nest 2) until the thread is in another sub-buffer: the slot's
 * address; *k the handler's events. The OUT carries an absolute time: its dictionary is not the
 * thread's. */
static uintptr_t park_lock_out(uint8_t *buf, const uint8_t **rec, uintptr_t *size, unsigned *k)
{
    uint8_t *body = buf + 3, *q = body;
    q = ptt_put_varint(q, (uint64_t)PTT_EV_MUTEX_LOCK_OUT << 2 | PTT_CODEC_ABS);
    q = ptt_put_varint(q, ptt_now());
    q = ptt_put_lit(q, 0);
    *rec = ptt_codec_close(body, q, size);
    ptt_self.nest = 1;
    uintptr_t slot = ptt_reserve(&ptt_self, *size) & PTT_POS_ADDR;
    assert_true(slot + *size <= ptt_self.end);
    for (*k = 0; !ptt_self.parked; ++*k) {
        assert_true(*k < 1000);
        PTT_REC(COND_WOKEN, *k, 0, ~(uint64_t)*k);
    }
    return slot;
}

/* The interrupted record written (the handler returned). */
static void write_slot(uintptr_t slot, const uint8_t *rec, uintptr_t size)
{
    ptt_count(&ptt_self.nev, 1);
    ptt_copy_record((uint8_t *)slot, rec, size);
}

/* The watch's report, printed (the caller frees it); *n its count of blocked threads. */
static char *report_text(struct ptt_hang *h, struct session *s, unsigned *n)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    *n = ptt_hang_report(h, &s->d, f, 1000000000u, 1.0);
    fclose(f);
    print_message("%s", out);
    return out;
}

/* The watch's report: one thread blocked, in the lock of HANG_M2, holding HANG_M1. */
static void assert_blocked_holding(struct ptt_hang *h, struct session *s)
{
    unsigned blocked;
    char *out = report_text(h, s, &blocked);
    assert_int_equal(blocked, 1);
    char want_in[64], want_held[64];
    snprintf(want_in, sizeof want_in, ": in pthread_mutex_lock (mutex 0x%x)", HANG_M2);
    snprintf(want_held, sizeof want_held, "holds mutex 0x%x\n", HANG_M1);
    if (!strstr(out, want_in) || !strstr(out, want_held))
        fail_msg("the report says no '%s' or no '%s'", want_in, want_held);
    free(out);
}

static void run_hang_parked(void **state, int drain_first)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    PTT_REC(MUTEX_LOCK_IN, HANG_M1, 0);
    uint32_t first = ptt_self.desc ? ptt_self.desc->seq : 0;
    uint8_t buf[PTT_CODEC_MAX];
    const uint8_t *rec;
    uintptr_t size;
    unsigned k;
    uintptr_t slot = park_lock_out(buf, &rec, &size, &k);
    for (unsigned j = 0; j < 3; j++, k++) /* a few more in the new sub-buffer */
        PTT_REC(COND_WOKEN, k, 0, ~(uint64_t)k);
    assert_int_equal(ptt_self.desc->seq, first + 1);

    assert_true(ptt_hang_progress(h));
    write_slot(slot, rec, size);
    ptt_unnest(&ptt_self); /* and its sub-buffer handed over */
    assert_null((void *)ptt_self.parked);
    PTT_REC(MUTEX_LOCK_IN, HANG_M2, 0);
    if (drain_first)
        assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 1);
    assert_true(ptt_hang_progress(h));
    assert_blocked_holding(h, s);
    struct ptt_reader *r = hang_finish(s, h);
    /* The trace has it all: the thread's three events in order, among the handler's. */
    static const uint16_t want[] = {PTT_EV_MUTEX_LOCK_IN, PTT_EV_MUTEX_LOCK_OUT,
                                    PTT_EV_MUTEX_LOCK_IN};
    struct ptt_ev ev;
    unsigned nwoken = 0, n = 0;
    while (ptt_reader_next(r, &ev)) {
        if (ev.id == PTT_EV_COND_WOKEN) {
            nwoken++;
            continue;
        }
        if (ev.id == PTT_EV_HANG_DETECTED || ev.id == PTT_EV_HANG_BLOCKED ||
            ev.id == PTT_EV_TRACE_UNFINISHED)
            continue; /* the report's, and the reader's for the call never left */
        if (n >= 3 || ev.id != want[n])
            fail_msg("event %u: %s", n, ptt_evinfo(ev.id) ? ptt_evinfo(ev.id)->name : "?");
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(nwoken, k);
    assert_clean_end(r);
}

/* The parked sub-buffer's interrupted record written, and its thread's next record (the event a
 * call's IN was flushed for) in the new sub-buffer, which a handler then hands over, all before
 * the parked one goes (at the end of the event): the drain of the new one reads the parked one's
 * rest first, then the thread's record. (It read the handler's records and dropped the rest.) */
static void test_hang_parked_event_after(void **state)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    PTT_REC(MUTEX_LOCK_IN, HANG_M1, 0);
    uint8_t buf[PTT_CODEC_MAX];
    const uint8_t *rec;
    uintptr_t size;
    unsigned k;
    uintptr_t slot = park_lock_out(buf, &rec, &size, &k);
    write_slot(slot, rec, size);
    const uint64_t a[2] = {HANG_M2, 0};
    ptt_put(&ptt_self, PTT_PUT_NOW, PTT_EV_MUTEX_LOCK_IN, 0, 2, a, 0, NULL);
    const struct ptt_desc *second = ptt_self.desc;
    for (k = 0; ptt_self.desc == second; k++) { /* a handler's, handing it over */
        assert_true(k < 1000);
        PTT_REC(COND_WOKEN, k, 0, ~(uint64_t)k);
    }
    assert_non_null((void *)ptt_self.parked);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 1); /* the second alone */
    ptt_unnest(&ptt_self);
    ptt_hang_progress(h);
    assert_blocked_holding(h, s);
    hang_finish(s, h);
}

/* Records until the thread moves to another sub-buffer (of 1 KiB). */
static void switch_subbuffer(void)
{
    const struct ptt_desc *d = ptt_self.desc;
    for (unsigned k = 0; ptt_self.desc == d; k++) {
        assert_true(k < 1000);
        PTT_REC(COND_SIGNAL_IN, HANG_M2 + 64, 0);
        PTT_REC(COND_SIGNAL_OUT, 0);
    }
}

/* A number the thread left unused between two of its sub-buffers (number in lib/buffer.c: a
 * handler took a sub-buffer between the claim and the switch): the watch reads on, and still knows
 * what the thread holds. (It forgot it, taking the gap for events never seen.) */
static void test_hang_unused_number(void **state)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    PTT_REC(MUTEX_LOCK_IN, HANG_M1, 0);
    PTT_REC(MUTEX_LOCK_OUT, 0);
    assert_true(ptt_hang_progress(h));
    const struct ptt_desc *first = ptt_self.desc;
    ptt_self.seq++; /* the next sub-buffer's number is not first's + 1 */
    switch_subbuffer();
    assert_int_equal(ptt_self.desc->seq, first->seq + 2);
    PTT_REC(MUTEX_LOCK_IN, HANG_M2, 0);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 1); /* the first, read whole */
    assert_true(ptt_hang_progress(h));
    assert_blocked_holding(h, s);
    hang_finish(s, h);
}

/* ------------------------------------------ a thread that hands its sub-buffer over as it blocks
 */

/* The pool counts the sub-buffers threads hold: once they hold fifteen sixteenths (the others
 * counted here as if held), a thread about to block (PTT_BLOCKS, after the IN of the lock that
 * waits) hands its own over, marked, and holds none; the hang watch, which sees the thread
 * through no sub-buffer of its own then, still reports it blocked, with what it holds. Below
 * seven eighths, the pool is no longer under pressure. */
static void test_blocked_hand_over(void **state)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    struct ptt_pool *p = s->d.pool;
    PTT_REC(MUTEX_LOCK_IN, HANG_M1, 0);
    PTT_REC(MUTEX_LOCK_OUT, 0);
    assert_int_equal(atomic_load(&p->owned), 1);
    PTT_BLOCKS(); /* no pressure: kept */
    assert_non_null(ptt_self.desc);
    atomic_store(&p->owned, (int32_t)PTT_PRESSURE_ON(p->nbufs) - 1); /* ours and others' */
    switch_subbuffer(); /* the new one taken first: on, then the old one handed over */
    assert_int_equal(atomic_load(&p->pressure), 1);
    assert_int_equal(atomic_load(&p->owned), (int32_t)PTT_PRESSURE_ON(p->nbufs) - 1);
    PTT_REC(MUTEX_LOCK_IN, HANG_M2, 0);
    PTT_BLOCKS();
    assert_null(ptt_self.desc);
    assert_int_equal(atomic_load(&p->owned), (int32_t)PTT_PRESSURE_ON(p->nbufs) - 2);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 2);
    assert_true(ptt_hang_progress(h));
    assert_blocked_holding(h, s);
    /* Its next event takes a sub-buffer again; one handed over below seven eighths clears it. */
    PTT_REC(MUTEX_LOCK_OUT, 0);
    assert_non_null(ptt_self.desc);
    atomic_store(&p->owned, (int32_t)PTT_PRESSURE_OFF(p->nbufs) - 1); /* ours among them */
    switch_subbuffer();
    assert_int_equal(atomic_load(&p->pressure), 0);
    hang_finish(s, h);
}

/* A thread that holds no sub-buffer because it handed its last over otherwise (its events
 * dropped since, say) is in no call the watch knows of: not reported. */
static void test_handed_over_not_blocked(void **state)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    PTT_REC(MUTEX_LOCK_IN, HANG_M2, 0);
    ptt_thread_release(&ptt_self);
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 1);
    ptt_hang_progress(h);
    unsigned n;
    char *out = report_text(h, s, &n);
    assert_int_equal(n, 0);
    assert_string_equal(out, "");
    free(out);
    hang_finish(s, h);
}

/* The report's count of blocked threads (its text printed). */
static unsigned report_count(struct ptt_hang *h, struct session *s)
{
    unsigned n;
    free(report_text(h, s, &n));
    return n;
}

/* A thread that handed its sub-buffer over as it blocked is no longer taken to be blocked once
 * a thread of the pool starved since (its own next events may be among those dropped), nor once
 * it is gone (its THREAD_END dropped); one that blocked after a starvation still is. */
static void run_blocked_then(void **state, int then)
{
    struct session *s = *state;
    struct ptt_hang *h = hang_begin(s);
    struct ptt_pool *p = s->d.pool;
    if (then == 0)
        atomic_store(&p->lost_why[PTT_LOST_STARVED], 5); /* before: counted already */
    PTT_REC(MUTEX_LOCK_IN, HANG_M2, 0);
    struct ptt_desc *mine = ptt_self.desc;
    ptt_release_blocked(&ptt_self);
    if (then == 2) /* a thread that no longer exists */
        mine->tid = INT32_MAX;
    assert_int_equal(ptt_daemon_drain(&s->d, PTT_DRAIN_READY), 1);
    ptt_hang_progress(h);
    if (then == 1)
        atomic_store(&p->lost_why[PTT_LOST_STARVED], 1);
    assert_int_equal(report_count(h, s), then == 0);
    atomic_store(&p->lost_why[PTT_LOST_STARVED], 0);
    hang_finish(s, h);
}

static void test_blocked_after_starved(void **state)
{
    run_blocked_then(state, 0);
}

static void test_blocked_then_starved(void **state)
{
    run_blocked_then(state, 1);
}

static void test_blocked_then_gone(void **state)
{
    run_blocked_then(state, 2);
}

/* With --overflow=discard, no pressure however many are held (lib/buffer.c count_owned). */
static void test_discard_no_pressure(void **state)
{
    struct session *s = *state;
    begin(s, 1u << 20, 1024, 0, PTT_OVERFLOW_DISCARD);
    struct ptt_pool *p = s->d.pool;
    PTT_REC(MUTEX_LOCK_IN, HANG_M1, 0);
    atomic_store(&p->owned, (int32_t)p->nbufs - 1);
    switch_subbuffer();
    assert_int_equal(atomic_load(&p->pressure), 0);
    assert_int_equal(atomic_load(&p->owned), (int32_t)p->nbufs - 1);
    finish(s);
}

static void test_hang_parked_look(void **state)
{
    run_hang_parked(state, 0);
}

static void test_hang_parked_drain(void **state)
{
    run_hang_parked(state, 1);
}

/* An argument: only the tests whose names match it (cmocka's pattern), to loop one. */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_threads_mono, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_tsc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subbuffer_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discard_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandoned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_owned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_published_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abs_mono, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abs_tsc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_class_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_during_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_in_storm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_flushed_by_handler, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_parked_look, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_parked_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_unused_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_parked_event_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocked_hand_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handed_over_not_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discard_no_pressure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocked_after_starved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocked_then_starved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocked_then_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_above_bytes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
