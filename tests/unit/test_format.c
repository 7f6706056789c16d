/* The trace file (common/format.h, docs/format.md): files written with the writer, or crafted
 * byte by byte, read back with the reader, including every way a file can be damaged. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "src/analysis/timeline.h"
#include "../../common/codec.h"
#include "src/trace/decode.h"
#include "src/trace/reader.h"
#include "src/export/textfmt.h"
#include "src/trace/writer.h"

/* ------------------------------------------------------------------------ building files */

struct file {
    struct ptt_writer w;
    char path[PATH_MAX];
    uint64_t rec[1024]; /* start offset of each record, and the end of the last */
    size_t nrec;
};

/* An expected event. */
struct xev {
    uint64_t offset, ticks, rec_end;
    uint16_t id;
    uint16_t nested;
    int32_t pid, tid;
    uint32_t serial;
    unsigned nargs;
    uint64_t args[PTT_EVENT_MAX_ARGS];
};

/* A chunk's events being built, with the time each decodes to. */
struct chunkb {
    uint8_t data[8192];
    uint32_t len;
    uint64_t base;
    unsigned n;
    struct xev ev[128];
};

static struct ptt_reader *live; /* closed by teardown when a test fails */

static void close_r(struct ptt_reader *r)
{
    ptt_reader_close(r);
    live = NULL;
}

static void tmp_path(char *buf, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/ptt-unit-format-XXXXXX", dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
}

static int setup(void **state)
{
    struct file *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    tmp_path(f->path, sizeof f->path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct file *f = *state;
    close_r(live);
    unlink(f->path);
    free(f);
    return 0;
}

static void fopen_w(struct file *f)
{
    unlink(f->path); /* ptt_writer_open creates its file exclusively */
    assert_int_equal(ptt_writer_open(&f->w, f->path), 0);
    f->nrec = 0;
    f->rec[0] = f->w.offset;
}

static void mark(struct file *f)
{
    assert_true(f->nrec + 1 < sizeof f->rec / sizeof f->rec[0]);
    f->rec[++f->nrec] = f->w.offset;
}

static void info(struct file *f, const char *text)
{
    assert_int_equal(ptt_writer_info(&f->w, text), 0);
    mark(f);
}

static void clk(struct file *f, uint64_t ticks, uint64_t mono)
{
    assert_int_equal(ptt_writer_clock(&f->w, ticks, mono, mono + 1000000), 0);
    mark(f);
}

static void end(struct file *f)
{
    struct ptt_rec_end e = {.events = 11,
                            .bytes = 222,
                            .lost = 3,
                            .wait_ns = 4,
                            .waits = 5,
                            .exit_status = 7,
                            .lost_why = {1, 0, 2, 0},
                            .lost_unmarked = 1};
    assert_int_equal(ptt_writer_record(&f->w, PTT_REC_END, &e, sizeof e, 0, 0), 0);
    mark(f);
}

static void fclose_w(struct file *f)
{
    assert_int_equal(ptt_writer_close(&f->w), 0);
}

static void cb_init(struct chunkb *c, uint64_t base)
{
    memset(c, 0, sizeof *c);
    c->base = base;
}

/* Append an event: relative (dts) or, with PTT_EVF_ABS in id, at absolute time ts. Returns its
 * offset in the chunk's data. */
static uint32_t ev_full(struct chunkb *c, uint16_t id, uint64_t t, unsigned n, const uint64_t *a)
{
    int abs = (id & PTT_EVF_ABS) != 0;
    struct ptt_event h = {id, (uint16_t)(8 + 8 * n + (abs ? 8 : 0)), abs ? 0 : (uint32_t)t};
    uint32_t off = c->len;
    assert_true(off + h.size <= sizeof c->data && c->n < 128);
    memcpy(c->data + off, &h, 8);
    if (abs)
        memcpy(c->data + off + 8, &t, 8);
    if (n)
        memcpy(c->data + off + 8 + (abs ? 8 : 0), a, 8 * n);
    c->len += h.size;
    struct xev *x = &c->ev[c->n++];
    x->offset = off;
    x->id = id & PTT_EV_ID_MASK;
    x->nested = (id & PTT_EVF_NEST) != 0;
    x->nargs = n;
    if (n)
        memcpy(x->args, a, 8 * n);
    uint64_t ts = abs ? t : c->base + t;
    if (!x->nested)
        c->base = ts;
    x->ticks = ts;
    return off;
}

#define EV(c, id, t, ...) \
    ev_full(c, id, t, sizeof((uint64_t[]){__VA_ARGS__}) / 8, (const uint64_t[]){__VA_ARGS__})
#define EV0(c, id, t) ev_full(c, id, t, 0, NULL)

/* Write a chunk record; its events' file offsets are appended to out (if not NULL). */
static uint64_t chunk(struct file *f, struct chunkb *c, int32_t pid, int32_t tid, uint32_t serial,
                      uint32_t seq, uint64_t base, uint32_t flags, struct xev *out, size_t *nout)
{
    struct ptt_rec_chunk h = {{0, 0}, pid, tid, serial, seq, base, c->n, flags};
    uint64_t at = f->w.offset;
    assert_int_equal(ptt_writer_record(&f->w, PTT_REC_CHUNK, &h, sizeof h, c->data, c->len), 0);
    mark(f);
    for (unsigned i = 0; out && i < c->n; i++) {
        struct xev x = c->ev[i];
        x.offset += at + sizeof h;
        x.rec_end = f->w.offset;
        x.pid = pid;
        x.tid = tid;
        x.serial = flags & PTT_CHUNK_DAEMON ? 0 : serial;
        out[(*nout)++] = x;
    }
    return at;
}

static int by_ticks(const void *a, const void *b)
{
    const struct xev *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* A file of three threads in two processes, chunks out of seq order, an ABS event, a process end
 * and two clock records 2 ns per tick apart; every event time distinct. Expected events sorted. */
static size_t build_sample(struct file *f, struct xev *x)
{
    size_t n = 0;
    struct chunkb c;
    fopen_w(f);
    info(f, "name=sample\nticks_per_second=500000000\n");
    clk(f, 1000, 5000);
    cb_init(&c, 1500); /* thread 1, second chunk first */
    EV(&c, PTT_EV_COND_WOKEN, 7, 4, 5, 6);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 3, 7);
    chunk(f, &c, 42, 100, 1, 1, 1500, 0, x, &n);
    cb_init(&c, 1105); /* thread 2 */
    EV(&c, PTT_EV_THREAD_START, 0, 8, 9, 10, 11);
    EV(&c, PTT_EV_BARRIER_RELEASED, 400, 12, 13);
    chunk(f, &c, 42, 101, 2, 0, 1105, 0, x, &n);
    cb_init(&c, 1100); /* thread 1, first chunk */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 1);
    EV(&c, PTT_EV_MUTEX_WAIT, 10, 2, 3);
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS, 1300, 14);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 2, 15);
    chunk(f, &c, 42, 100, 1, 0, 1100, 0, x, &n);
    cb_init(&c, 1200); /* process 43, thread 1: the same serial as in process 42 */
    EV(&c, PTT_EV_MUTEX_WAIT, 0, 16, 17);
    EV(&c, PTT_EV_TRACE_LOST, 50, 3);
    chunk(f, &c, 43, 200, 1, 0, 1200, 0, x, &n);
    cb_init(&c, 1600); /* ptt trace saw process 43 end */
    EV(&c, PTT_EV_PROCESS_EXIT, 0, 0);
    chunk(f, &c, 43, 43, 0, 0, 1600, PTT_CHUNK_DAEMON, x, &n);
    clk(f, 3000, 9000);
    end(f);
    fclose_w(f);
    qsort(x, n, sizeof *x, by_ticks);
    for (size_t i = 1; i < n; i++)
        assert_true(x[i].ticks > x[i - 1].ticks);
    return n;
}

static struct ptt_reader *open_ok(const char *path)
{
    char err[512];
    struct ptt_reader *r = ptt_reader_open(path, err, sizeof err);
    if (!r)
        fail_msg("ptt_reader_open: %s", err);
    return live = r;
}

/* Open must fail with a message containing want (and the path). */
static void open_fails(const char *path, const char *want)
{
    char err[512] = "";
    struct ptt_reader *r = ptt_reader_open(path, err, sizeof err);
    if (r) {
        close_r(r);
        fail_msg("%s opened; expected: %s", path, want);
    }
    if (!strstr(err, want) || !strstr(err, path))
        fail_msg("error '%s' does not say '%s'", err, want);
}

static void check_ev(const struct ptt_ev *ev, const struct xev *x)
{
    if (ev->offset != x->offset || ev->id != x->id || ev->ticks != x->ticks)
        fail_msg("event 0x%04x at %" PRIu64 " (ticks %" PRIu64 "), expected 0x%04x at %" PRIu64
                 " (ticks %" PRIu64 ")",
                 ev->id, ev->offset, ev->ticks, x->id, x->offset, x->ticks);
    assert_int_equal(ev->nargs, x->nargs);
    assert_memory_equal(ev->args, x->args, 8 * x->nargs);
    assert_int_equal(ev->pid, x->pid);
    assert_int_equal(ev->tid, x->tid);
    assert_int_equal(ev->serial, x->serial);
    assert_int_equal(ev->nested, x->nested);
    assert_ptr_equal(ev->info, ptt_evinfo(x->id));
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static size_t read_bytes(const char *path, uint8_t *buf, size_t max)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, max);
    close(fd);
    assert_true(n > 0 && (size_t)n < max);
    return (size_t)n;
}

static void patch(const char *path, uint64_t off, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, data, len, (off_t)off), (ssize_t)len);
    close(fd);
}

/* ------------------------------------------------------------------------------ the tests */

static void test_roundtrip(void **state)
{
    struct file *f = *state;
    struct xev x[64];
    size_t n = build_sample(f, x);
    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    size_t k = 0;
    while (ptt_reader_next(r, &ev)) {
        assert_true(k < n);
        check_ev(&ev, &x[k]);
        assert_int_equal(ev.ns, (int64_t)(x[k].ticks - 1000) * 2); /* the clock records' line */
        k++;
    }
    assert_int_equal(k, n);
    assert_int_equal(n, 11);
    assert_null(ptt_reader_error(r));
    assert_int_equal(ptt_reader_next(r, &ev), 0); /* stays at the end */
    const struct ptt_rec_end *e = ptt_reader_end(r);
    assert_non_null(e);
    assert_int_equal(e->events, 11);
    assert_int_equal(e->bytes, 222);
    assert_int_equal(e->lost, 3);
    assert_int_equal(e->wait_ns, 4);
    assert_int_equal(e->waits, 5);
    assert_int_equal(e->exit_status, 7);
    assert_int_equal(e->lost_why[0], 1);
    assert_int_equal(e->lost_why[2], 2);
    assert_int_equal(e->lost_unmarked, 1);
    assert_int_equal(ptt_reader_nthreads(r), 3); /* the daemon's stream is not a thread */
    assert_string_equal(ptt_reader_info(r, "name"), "sample");
    close_r(r);
}

/* The first records are a file's metadata; key lookup across records and edge cases. */
static void test_info(void **state)
{
    struct file *f = *state;
    fopen_w(f);
    info(f, "alpha=1\nalphabet=2\nempty=\n");
    info(f, "gamma=three words"); /* no newline: NUL padding ends it */
    info(f, "=nokey\nx==y\nnoequals\n");
    char big[6000];
    memset(big, 'v', sizeof big);
    memcpy(big, "big=", 4);
    big[sizeof big - 1] = 0;
    info(f, big);
    info(f, "alpha=shadowed\n");
    fclose_w(f);
    struct ptt_reader *r = open_ok(f->path);
    assert_string_equal(ptt_reader_info(r, "alpha"), "1"); /* the first one */
    assert_string_equal(ptt_reader_info(r, "alphabet"), "2");
    assert_null(ptt_reader_info(r, "alph"));
    assert_null(ptt_reader_info(r, "alphabetical"));
    assert_string_equal(ptt_reader_info(r, "empty"), "");
    assert_string_equal(ptt_reader_info(r, "gamma"), "three words");
    assert_string_equal(ptt_reader_info(r, "x"), "=y");
    assert_null(ptt_reader_info(r, "noequals"));
    assert_null(ptt_reader_info(r, "missing"));
    const char *v = ptt_reader_info(r, "big");
    assert_non_null(v);
    assert_true(strlen(v) > 1000 && strspn(v, "v") == strlen(v)); /* cut, not overrun */
    /* No chunk and no END: ptt trace ended before writing any event, which the reader says. */
    assert_non_null(strstr(ptt_reader_error(r), "no events"));
    assert_null(ptt_reader_end(r)); /* no END: the session did not end cleanly */
    struct ptt_ev ev;
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    close_r(r);
}

static void test_not_a_trace(void **state)
{
    struct file *f = *state;
    write_bytes(f->path, "", 0);
    open_fails(f->path, "too short");
    write_bytes(f->path, "PTTRACE", 8);
    open_fails(f->path, "too short");
    struct ptt_file_header h = {"PTTRACE", PTT_FORMAT_MAJOR, PTT_FORMAT_MINOR, 16};
    write_bytes(f->path, &h, 15);
    open_fails(f->path, "too short");
    memcpy(h.magic, "PTTRACX", 8);
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, "bad magic");
    write_bytes(f->path, "#!/bin/sh\necho not a trace\n", 27);
    open_fails(f->path, "bad magic");
    memcpy(h.magic, PTT_FILE_MAGIC, 8);
    h.header_size = 12;
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, "corrupt file header");
    h.header_size = 20;
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, "corrupt file header");
    h.header_size = 24; /* beyond the file */
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, "corrupt file header");
    h.header_size = 16; /* a header alone: no events, said as a problem of the file */
    write_bytes(f->path, &h, sizeof h);
    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_non_null(strstr(ptt_reader_error(r), "no events: nothing follows the file header"));
    close_r(r);

    char missing[PATH_MAX + 16];
    snprintf(missing, sizeof missing, "%s.missing", f->path);
    open_fails(missing, strerror(ENOENT));
    open_fails("/", "not a regular file");
}

/* Another major version is refused, naming it; a newer minor is read, skipping what it adds. */
static void test_versions(void **state)
{
    struct file *f = *state;
    struct ptt_file_header h = {"PTTRACE", PTT_FORMAT_MAJOR + 1, 0, 16};
    char want[32];
    snprintf(want, sizeof want, "version %u.0", PTT_FORMAT_MAJOR + 1);
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, want);
    h.major = 0;
    h.minor = 9;
    write_bytes(f->path, &h, sizeof h);
    open_fails(f->path, "version 0.9");

    /* 1.7: a longer header, a record type 1.0 does not know, an event id it does not know */
    uint8_t buf[512];
    size_t o = 0;
    h = (struct ptt_file_header){"PTTRACE", 1, 7, 24};
    memcpy(buf, &h, sizeof h);
    memset(buf + 16, 0xee, 8);
    o = 24;
    struct ptt_record u = {99, 32};
    memcpy(buf + o, &u, 8);
    memset(buf + o + 8, 0xab, 24);
    o += 32;
    struct chunkb c;
    cb_init(&c, 100);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 5);
    EV(&c, 0x3f07, 1, 6, 7);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 8);
    struct ptt_rec_chunk ch = {
        {PTT_REC_CHUNK, (uint32_t)(sizeof ch + c.len)}, 1, 2, 1, 0, 100, c.n, 0};
    memcpy(buf + o, &ch, sizeof ch);
    memcpy(buf + o + sizeof ch, c.data, c.len);
    uint64_t data = o + sizeof ch;
    o += sizeof ch + c.len;
    struct ptt_record u2 = {0x10000, 8}; /* an empty unknown record at the end */
    memcpy(buf + o, &u2, 8);
    o += 8;
    write_bytes(f->path, buf, o);
    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(ptt_reader_next(r, &ev), 1);
        assert_int_equal(ev.offset, data + c.ev[i].offset);
        assert_int_equal(ev.args[0], 5 + i + (i == 2));
        assert_int_equal(ev.ticks, 101 + i);
    }
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_null(ptt_reader_error(r));
    close_r(r);
}

/* A 1.0 file's END (56 bytes) reads, without the reasons of its losses (0); a longer one, of a
 * newer minor, reads too. */
static void test_end_versions(void **state)
{
    struct file *f = *state;
    uint8_t buf[256];
    for (int v = 0; v < 2; v++) {
        struct ptt_file_header h = {"PTTRACE", 1, (uint16_t)v, 16};
        struct ptt_rec_end e = {.events = 11,
                                .bytes = 222,
                                .lost = 3,
                                .exit_status = 7,
                                .lost_why = {3, 0, 0, 0},
                                .lost_unmarked = 1};
        uint32_t size = v ? (uint32_t)sizeof e + 16 : PTT_REC_END_V0_SIZE;
        e.h = (struct ptt_record){PTT_REC_END, size};
        memset(buf, 0x5a, sizeof buf); /* what lies after a 1.0 END must not be read as its */
        memcpy(buf, &h, sizeof h);
        memcpy(buf + 16, &e, size < sizeof e ? size : sizeof e);
        write_bytes(f->path, buf, 16 + size);
        struct ptt_reader *r = open_ok(f->path);
        struct ptt_ev ev;
        assert_int_equal(ptt_reader_next(r, &ev), 0);
        assert_null(ptt_reader_error(r));
        const struct ptt_rec_end *got = ptt_reader_end(r);
        assert_non_null(got);
        assert_int_equal(got->lost, 3);
        assert_int_equal(got->exit_status, 7);
        assert_int_equal(got->lost_why[0], v ? 3 : 0);
        assert_int_equal(got->lost_unmarked, v ? 1 : 0);
        close_r(r);
    }
}

/* A file cut at every byte: never a crash; the events of the whole records before the cut are
 * delivered, in order; the error names the offset of the record cut short. */
static void test_truncation(void **state)
{
    struct file *f = *state;
    struct xev x[64];
    size_t n = build_sample(f, x);
    static uint8_t full[8192];
    size_t size = read_bytes(f->path, full, sizeof full);
    assert_int_equal(size, f->rec[f->nrec]);
    char cut[PATH_MAX + 8];
    snprintf(cut, sizeof cut, "%s.cut", f->path);
    for (size_t len = 0; len < size; len++) {
        write_bytes(cut, full, len);
        char err[512];
        struct ptt_reader *r = live = ptt_reader_open(cut, err, sizeof err);
        if (len < sizeof(struct ptt_file_header)) {
            if (r)
                fail_msg("opened a file of %zu bytes", len);
            assert_non_null(strstr(err, "too short"));
            continue;
        }
        if (!r)
            fail_msg("cut at %zu: %s", len, err);
        size_t k = 0;
        struct ptt_ev ev;
        while (ptt_reader_next(r, &ev)) {
            while (k < n && x[k].rec_end > len)
                k++; /* in a record cut off: not expected */
            if (k == n)
                fail_msg("cut at %zu: event at %" PRIu64 " not expected", len, ev.offset);
            check_ev(&ev, &x[k]);
            k++;
        }
        for (; k < n; k++)
            if (x[k].rec_end <= len)
                fail_msg("cut at %zu: event at %" PRIu64 " missing", len, x[k].offset);
        size_t rec = 0;
        while (f->rec[rec + 1] <= len)
            rec++;
        const char *e = ptt_reader_error(r);
        size_t whole = 0; /* events of the records before the cut */
        for (k = 0; k < n; k++)
            whole += x[k].rec_end <= len;
        if (f->rec[rec] == len && !whole) { /* no chunk yet: an empty trace */
            if (!e || !strstr(e, "no events"))
                fail_msg("cut at record boundary %zu: error '%s'", len, e ? e : "(none)");
        } else if (f->rec[rec] == len) {
            if (e)
                fail_msg("cut at record boundary %zu: error %s", len, e);
        } else {
            char want[64];
            snprintf(want, sizeof want, "at offset %" PRIu64, f->rec[rec]);
            if (!e || !strstr(e, want))
                fail_msg("cut at %zu: error '%s' does not say '%s'", len, e ? e : "(none)", want);
        }
        assert_null(ptt_reader_end(r));
        close_r(r);
    }
    unlink(cut);
}

/* A malformed event ends its thread's stream there, with an error naming its offset; the other
 * threads are read to the end. */
static void test_corrupt_event(void **state)
{
    struct file *f = *state;
    enum { SIZE, ID };
    static const struct {
        const char *what;
        int field;
        uint16_t v;
    } bad[] = {
        {"size not a multiple of 8", SIZE, 12},
        {"size 0", SIZE, 0},
        {"size beyond the chunk", SIZE, 4096},
        {"more than PTT_EVENT_MAX_ARGS arguments", SIZE, 8 + 8 * (PTT_EVENT_MAX_ARGS + 1)},
        {"id 0", ID, 0},
        {"ABS without its time stamp", ID, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS},
    };
    for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
        struct xev x[64];
        size_t n = 0;
        struct chunkb c;
        fopen_w(f);
        clk(f, 0, 0);
        cb_init(&c, 100);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 1);               /* 100 */
        uint32_t at = EV0(&c, PTT_EV_MUTEX_ACQUIRED, 100); /* 8 bytes: the one damaged */
        for (unsigned i = 0; i < 20; i++)
            EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 3 + i);
        uint64_t rec = chunk(f, &c, 1, 10, 1, 0, 100, 0, x, &n);
        cb_init(&c, 1000);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 50);
        chunk(f, &c, 1, 10, 1, 1, 1000, 0, x, &n);
        cb_init(&c, 150);
        for (unsigned i = 0; i < 5; i++)
            EV(&c, PTT_EV_MUTEX_WAIT, 10, 60 + i, 0);
        chunk(f, &c, 1, 11, 2, 0, 150, 0, x, &n);
        fclose_w(f);
        uint64_t off = rec + sizeof(struct ptt_rec_chunk) + at;
        patch(f->path, off + (bad[v].field == SIZE ? 2 : 0), &bad[v].v, 2);

        struct ptt_reader *r = open_ok(f->path);
        struct ptt_ev ev;
        unsigned got1 = 0, got2 = 0;
        while (ptt_reader_next(r, &ev)) {
            if (ev.serial == 1) {
                assert_int_equal(ev.args[0], 1); /* only the event before the bad one */
                got1++;
            } else {
                assert_int_equal(ev.args[0], 60 + got2);
                got2++;
            }
        }
        if (got1 != 1 || got2 != 5)
            fail_msg("%s: %u and %u events delivered", bad[v].what, got1, got2);
        const char *e = ptt_reader_error(r);
        char want[64];
        snprintf(want, sizeof want, "at offset %" PRIu64, off);
        if (!e || !strstr(e, want) || !strstr(e, "corrupt event"))
            fail_msg("%s: error '%s' does not say '%s'", bad[v].what, e ? e : "(none)", want);
        close_r(r);
    }
}

/* Damaged record headers: the error names the record; what came before is delivered. */
static void test_corrupt_record(void **state)
{
    struct file *f = *state;
    static const struct {
        uint32_t type, size;
        const char *want;
    } bad[] = {
        {0, 16, "corrupt record (type 0, size 16)"},
        {PTT_REC_CHUNK, 12, "corrupt record (type 3, size 12)"},
        {PTT_REC_CHUNK, 4, "corrupt record (type 3, size 4)"},
        {PTT_REC_CHUNK, 24, "corrupt chunk record"},
        {PTT_REC_CLOCK, 16, "corrupt clock record"},
        {PTT_REC_CHUNK, 0x7ffffff8, "truncated record (type 3, 2147483640 bytes)"},
    };
    for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
        struct xev x[8];
        size_t n = 0;
        struct chunkb c;
        fopen_w(f);
        cb_init(&c, 100);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 1);
        chunk(f, &c, 1, 10, 1, 0, 100, 0, x, &n);
        uint64_t at = f->w.offset;
        cb_init(&c, 200);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 2);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 3);
        chunk(f, &c, 1, 10, 1, 1, 200, 0, x, &n);
        cb_init(&c, 300);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 4);
        chunk(f, &c, 1, 10, 1, 2, 300, 0, x, &n);
        fclose_w(f);
        struct ptt_record h = {bad[v].type, bad[v].size};
        patch(f->path, at, &h, sizeof h);
        struct ptt_reader *r = open_ok(f->path);
        struct ptt_ev ev;
        assert_int_equal(ptt_reader_next(r, &ev), 1);
        assert_int_equal(ev.args[0], 1);
        assert_int_equal(ptt_reader_next(r, &ev), 0); /* the index stops at the damage */
        const char *e = ptt_reader_error(r);
        char want[64];
        snprintf(want, sizeof want, "at offset %" PRIu64, at);
        if (!e || !strstr(e, bad[v].want) || !strstr(e, want))
            fail_msg("error '%s' does not say '%s ... %s'", e ? e : "(none)", bad[v].want, want);
        close_r(r);
    }
}

/* An event id this reader does not know: delivered as it is, without a table entry. */
static void test_unknown_event(void **state)
{
    struct file *f = *state;
    struct xev x[8];
    size_t n = 0;
    struct chunkb c;
    fopen_w(f);
    cb_init(&c, 100);
    EV(&c, 0x3f05, 1, 0xdead, 0xbeef);
    EV0(&c, 0x1ff0, 1);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 7);
    chunk(f, &c, 1, 10, 1, 0, 100, 0, x, &n);
    fclose_w(f);
    struct ptt_reader *r = open_ok(f->path);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct ptt_ev ev;
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(ptt_reader_next(r, &ev), 1);
        check_ev(&ev, &x[k]);
        assert_true((ev.info == NULL) == (k < 2));
        ptt_print_raw(out, &ev);
        ptt_print_human(out, &ev);
    }
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_null(ptt_reader_error(r));
    close_r(r);
    fclose(out);
    assert_non_null(strstr(text, ":UNKNOWN_0x3f05 : 1 : 10 : 0xdead : 0xbeef\n"));
    assert_non_null(strstr(text, ":UNKNOWN_0x1ff0 : 1 : 10\n"));
    assert_non_null(strstr(text, "unknown to this ptt (id 0x3f05)"));
    free(text);
}

/* Times: relative events count from the chunk's base, then from the previous event; ABS sets
 * the time; a nested (signal handler) event does not move the base, and the stream's times are
 * merged on their running maximum. */
static void test_time_decoding(void **state)
{
    struct file *f = *state;
    struct xev x[16];
    size_t n = 0;
    struct chunkb c;
    fopen_w(f);
    cb_init(&c, 1000);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 10, 1);                                /* 1010 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS, 5000, 2);                /* 5000 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 5, 3);                                 /* 5005 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS | PTT_EVF_NEST, 4000, 4); /* before: 5005 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 5, 5);                                 /* 5010: base kept */
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS | PTT_EVF_NEST, 6000, 6); /* 6000 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 7);                                 /* 5011: 6000 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 0xffffffffu, 8);                       /* 5011 + 2^32 - 1 */
    chunk(f, &c, 1, 10, 1, 0, 1000, 0, x, &n);
    fclose_w(f);
    static const uint64_t want[] = {1010, 5000, 5005, 5005, 5010, 6000, 6000, 5011 + 0xffffffffull};
    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(ptt_reader_next(r, &ev), 1);
        assert_int_equal(ev.args[0], k + 1);
        assert_int_equal(ev.ticks, want[k]);
        assert_int_equal(ev.nested, k == 3 || k == 5);
        assert_int_equal(ev.offset, x[k].offset);
    }
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_null(ptt_reader_error(r));
    close_r(r);
}

/* ------------------------------------------------------------ the compact encoding (2.0) */

/* Varints of every length, and those that do not end or hold more than 64 bits. */
static void test_varints(void **state)
{
    (void)state;
    static const uint64_t v[] = {0,      1,          0x7f,       0x80,      0x3fff,
                                 0x4000, 1ull << 32, 1ull << 63, UINT64_MAX};
    static const unsigned len[] = {1, 1, 1, 2, 2, 3, 5, 10, 10};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t b[16];
        const uint8_t *p = b;
        uint64_t x;
        assert_int_equal(ptt_put_varint(b, v[i]) - b, len[i]);
        assert_int_equal(ptt_get_varint(&p, b + len[i], &x), 1);
        assert_int_equal(x, v[i]);
        assert_ptr_equal(p, b + len[i]);
        p = b;
        assert_int_equal(ptt_get_varint(&p, b + len[i] - 1, &x), 0); /* cut short */
    }
    uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    const uint8_t *p = over;
    uint64_t x;
    assert_int_equal(ptt_get_varint(&p, over + sizeof over, &x), 0);
    p = eleven;
    assert_int_equal(ptt_get_varint(&p, eleven + sizeof eleven, &x), 0);
}

/* The writer's dictionary: two values of one slot both stay (the slot next to it), a third
 * evicts one; every value reads back through the reader's copy. */
static void test_dictionary(void **state)
{
    (void)state;
    uint64_t v[3] = {0x10000, 0, 0}, dict[PTT_DICT_SLOTS] = {0};
    for (uint64_t x = 0x10001, n = 1; n < 3; x++)
        if (ptt_dict_slot(x) == ptt_dict_slot(v[0]) && (n < 2 || x != v[1]))
            v[n++] = x;
    static const int order[] = {0, 1, 0, 1, 2, 0, 1, 2};
    uint8_t buf[256], *q = buf;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        q = ptt_put_val(q, v[order[i]], dict);
    /* defs of 0 and 1 (4 bytes each: a slot byte and 3 of varint), then refs, then 2 evicts */
    assert_int_equal(buf[0] & 0xc0, PTT_CODEC_DEF);
    assert_int_equal(buf[4] & 0xc0, PTT_CODEC_DEF);
    assert_int_not_equal(buf[0] & 63, buf[4] & 63);
    assert_int_equal(buf[8], PTT_CODEC_REF | (buf[0] & 63));
    assert_int_equal(buf[9], PTT_CODEC_REF | (buf[4] & 63));
    struct ptt_dec d;
    ptt_dec_start(&d, 0);
    /* read back through a record of the compact encoding */
    uint8_t rec[300], *body = rec + 3, *r = body;
    r = ptt_put_varint(r, (uint64_t)PTT_EV_BACKTRACE << 2);
    r = ptt_put_varint(r, 5);
    memcpy(r, buf, (size_t)(q - buf));
    r += q - buf;
    uintptr_t size;
    const uint8_t *start = ptt_codec_close(body, r, &size);
    struct ptt_event h;
    uint64_t t;
    assert_int_equal(ptt_dec_next(&d, start, size, &h, &t), (int)size);
    assert_int_equal(d.nargs, sizeof order / sizeof order[0]);
    for (size_t i = 0; i < d.nargs; i++)
        assert_int_equal(d.args[i], v[order[i]]);
}

/* What no writer makes is a malformed record, not a value: a use of a slot no record defined
 * (it would read as 0), a definition of a value that is a literal's (0 among them). */
static void test_dictionary_damage(void **state)
{
    (void)state;
    static const struct {
        uint8_t v[4];
        size_t n;
        int ok;
    } cases[] = {
        {{PTT_CODEC_DEF | 5, 0x61, PTT_CODEC_REF | 5}, 3, 1}, /* defined, then used: 0x61 */
        {{PTT_CODEC_REF | 5}, 1, 0},
        {{PTT_CODEC_DEF | 5, 0x61, PTT_CODEC_REF | 6}, 3, 0},
        {{PTT_CODEC_DEF | 5, 0}, 2, 0},
        {{PTT_CODEC_DEF | 5, PTT_CODEC_LIT_MAX}, 2, 0},
        {{PTT_CODEC_DEF | 5, 0x80, 0}, 3, 0}, /* 0 in two bytes */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t rec[32], *body = rec + 3, *q = body;
        q = ptt_put_varint(q, (uint64_t)PTT_EV_MUTEX_ACQUIRED << 2);
        q = ptt_put_varint(q, 5);
        memcpy(q, cases[i].v, cases[i].n);
        uintptr_t size;
        const uint8_t *start = ptt_codec_close(body, q + cases[i].n, &size);
        struct ptt_dec d;
        struct ptt_event h;
        uint64_t t;
        ptt_dec_start(&d, 0);
        int k = ptt_dec_next(&d, start, size, &h, &t);
        if (cases[i].ok) {
            assert_int_equal(k, (int)size);
            assert_int_equal(d.args[d.nargs - 1], 0x61);
        } else if (k != -1) {
            fail_msg("case %zu: %d, not -1 (malformed)", i, k);
        }
    }
}

/* A chunk of the compact encoding being built (common/codec.h), with the dictionary its writer
 * keeps. */
struct cchunk {
    uint8_t data[4096];
    uint32_t len;
    uint64_t dict[PTT_DICT_SLOTS];
};

static void crec(struct cchunk *c, uint16_t id, unsigned flags, uint64_t time, uint64_t dur,
                 unsigned n, const uint64_t *a, int dict)
{
    uint8_t buf[PTT_CODEC_MAX], *body = buf + 3, *q = body;
    q = ptt_put_varint(q, (uint64_t)id << 2 | flags);
    q = ptt_put_varint(q, time);
    if (id & PTT_EV_CALL)
        q = ptt_put_varint(q, dur);
    for (unsigned i = 0; i < n; i++)
        q = dict ? ptt_put_val(q, a[i], c->dict) : ptt_put_lit(q, a[i]);
    uintptr_t size;
    const uint8_t *r = ptt_codec_close(body, q, &size);
    assert_true(c->len + size <= sizeof c->data);
    memcpy(c->data + c->len, r, size);
    c->len += (uint32_t)size;
}

#define CREC(c, id, flags, time, dur, dict, ...)                         \
    crec(c, id, flags, time, dur, sizeof((uint64_t[]){__VA_ARGS__}) / 8, \
         (const uint64_t[]){__VA_ARGS__}, dict)

/* A compact chunk of every kind of record and value: small and big values, the dictionary's
 * slots defined then used, deltas of 7 and 40 bits, an absolute time, a signal handler's record,
 * a call's one record, padding, a record longer than 254 bytes; each event exact. Then the same
 * chunk cut by a malformed record: the events before it, and the error. */
static void test_compact(void **state)
{
    struct file *f = *state;
    struct cchunk c;
    memset(&c, 0, sizeof c);
    const uint64_t obj = 0x7fff12345678, site = 0x400123, t2 = 1127 + (1ull << 40);
    CREC(&c, PTT_EV_MUTEX_ACQUIRED, 0, 0x7f, 0, 1, 0x5f); /* 1127 */
    uint32_t first = c.len;
    CREC(&c, PTT_EV_MUTEX_WAIT, 0, 1ull << 40, 0, 1, 0x60, obj); /* t2 */
    CREC(&c, PTT_EV_MUTEX_WAIT, PTT_CODEC_NEST | PTT_CODEC_ABS, 5000, 0, 0, UINT64_MAX, 7);
    CREC(&c, PTT_EV_MUTEX_LOCK_IN | PTT_EV_CALL, 0, 3, 10, 1, obj, site, 0); /* t2 + 3 */
    uint8_t pad[7] = {6, PTT_EV_TRACE_PAD << 2, 0xff, 0xff, 0xff, 0xff, 0xff};
    memcpy(c.data + c.len, pad, sizeof pad);
    c.len += sizeof pad;
    CREC(&c, PTT_EV_MUTEX_ACQUIRED, PTT_CODEC_ABS, t2 + 20, 0, 1, obj); /* t2 + 20 */
    uint64_t frames[40];
    for (unsigned i = 0; i < 40; i++)
        frames[i] = (1ull << 45) + i;
    crec(&c, PTT_EV_BACKTRACE, 0, 1, 0, 40, frames, 0); /* t2 + 21 */
    assert_true(c.len > 300); /* the backtrace: 40 x 7 bytes, a record of the long form */
    uint32_t good = c.len;
    fopen_w(f);
    struct ptt_rec_chunk h = {{0, 0}, 1, 10, 1, 0, 1000, 8, PTT_CHUNK_COMPACT};
    assert_int_equal(ptt_writer_record(&f->w, PTT_REC_CHUNK, &h, sizeof h, c.data, c.len), 0);
    fclose_w(f);
    static const struct {
        uint16_t id;
        uint64_t ticks;
        int nested;
        unsigned nargs;
        uint64_t a[3];
    } want[] = {
        {PTT_EV_MUTEX_ACQUIRED, 1127, 0, 1, {0x5f}},
        {PTT_EV_MUTEX_WAIT, t2, 0, 2, {0x60, obj}},
        {PTT_EV_MUTEX_WAIT, t2, 1, 2, {UINT64_MAX, 7}}, /* at 5000: merged on the maximum */
        {PTT_EV_MUTEX_LOCK_IN, t2 + 3, 0, 2, {obj, site}},
        {PTT_EV_MUTEX_LOCK_OUT, t2 + 13, 0, 1, {0}},
        {PTT_EV_MUTEX_ACQUIRED, t2 + 20, 0, 1, {obj}},
        {PTT_EV_BACKTRACE, t2 + 21, 0, 40, {1ull << 45, (1ull << 45) + 1, (1ull << 45) + 2}},
    };
    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        assert_int_equal(ptt_reader_next(r, &ev), 1);
        assert_int_equal(ev.id, want[k].id);
        assert_int_equal(ev.ticks, want[k].ticks);
        assert_int_equal(ev.nested, want[k].nested);
        assert_int_equal(ev.nargs, want[k].nargs);
        assert_memory_equal(ev.args, want[k].a, (want[k].nargs < 3 ? want[k].nargs : 3) * 8);
    }
    assert_int_equal(ev.args[39], (1ull << 45) + 39);
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_null(ptt_reader_error(r));
    close_r(r);

    /* The same, a malformed record after the first: a value of the reserved range. */
    c.len = first;
    CREC(&c, PTT_EV_MUTEX_ACQUIRED, 0, 1, 0, 0, 1);
    c.data[c.len - 1] = 0x61;
    memset(c.data + c.len, 0x33, good - c.len);
    c.len = good;
    fopen_w(f);
    assert_int_equal(ptt_writer_record(&f->w, PTT_REC_CHUNK, &h, sizeof h, c.data, c.len), 0);
    fclose_w(f);
    r = open_ok(f->path);
    assert_int_equal(ptt_reader_next(r, &ev), 1);
    assert_int_equal(ev.ticks, 1127);
    assert_int_equal(ev.args[0], 0x5f);
    assert_int_equal(ptt_reader_next(r, &ev), 0);
    assert_non_null(ptt_reader_error(r));
    assert_non_null(strstr(ptt_reader_error(r), "corrupt record"));
    close_r(r);
}

/* Ticks to ns: through the first and last clock records, else ticks_per_second, else 1:1. */
static void test_clock_conversion(void **state)
{
    struct file *f = *state;
    for (int variant = 0; variant < 3; variant++) {
        struct xev x[4];
        size_t n = 0;
        struct chunkb c;
        fopen_w(f);
        info(f, "ticks_per_second=250000000\n"); /* 4 ns per tick */
        if (variant < 2)
            clk(f, 100, 7777);
        cb_init(&c, 350);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 1);
        EV(&c, PTT_EV_MUTEX_ACQUIRED, 50, 2);
        chunk(f, &c, 1, 10, 1, 0, 350, 0, x, &n);
        if (variant == 0)
            clk(f, 1100, 7777 + 10000); /* 10 ns per tick wins over ticks_per_second */
        fclose_w(f);
        struct ptt_reader *r = open_ok(f->path);
        struct ptt_ev ev;
        static const int64_t want[3][2] = {{2500, 3000}, {1000, 1200}, {1400, 1600}};
        for (int k = 0; k < 2; k++) {
            assert_int_equal(ptt_reader_next(r, &ev), 1);
            if (ev.ns != want[variant][k])
                fail_msg("variant %d: event %d at %" PRId64 " ns, expected %" PRId64, variant, k,
                         ev.ns, want[variant][k]);
        }
        close_r(r);
    }
}

/* Calls entered and not left get a TRACE_UNFINISHED each, innermost first: at the end of their
 * process when ptt trace saw it, else at the last clock record. Calls left, calls that do not
 * return (pthread_exit) and calls made by a signal handler do not. */
static void test_unfinished(void **state)
{
    struct file *f = *state;
    struct xev x[16];
    size_t n = 0;
    struct chunkb c;
    fopen_w(f);
    clk(f, 1000, 1000);
    cb_init(&c, 1100);
    EV(&c, PTT_EV_MUTEX_LOCK_IN, 0, 0xa);
    EV(&c, PTT_EV_COND_WAIT_IN, 10, 0xc, 0xa);
    EV(&c, PTT_EV_COND_WAIT_OUT, 10, 0);
    EV(&c, PTT_EV_THREAD_EXIT_IN, 10, 0);
    EV(&c, PTT_EV_BARRIER_WAIT_IN, 10, 0xb);
    EV(&c, PTT_EV_MUTEX_UNLOCK_IN | PTT_EVF_ABS | PTT_EVF_NEST, 1150, 0xd);
    chunk(f, &c, 50, 500, 1, 0, 1100, 0, x, &n);
    cb_init(&c, 1200);
    EV(&c, PTT_EV_MUTEX_TRYLOCK_IN, 0, 0xe);
    chunk(f, &c, 51, 510, 1, 0, 1200, 0, x, &n);
    cb_init(&c, 1300);
    EV(&c, PTT_EV_MUTEX_LOCK_IN, 0, 0xf);
    EV(&c, PTT_EV_MUTEX_LOCK_OUT, 5, 0);
    chunk(f, &c, 51, 511, 2, 0, 1300, 0, x, &n);
    cb_init(&c, 2500);
    EV(&c, PTT_EV_PROCESS_EXIT, 0, 0);
    chunk(f, &c, 50, 50, 0, 0, 2500, PTT_CHUNK_DAEMON, x, &n);
    clk(f, 3000, 3000);
    fclose_w(f);

    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    struct {
        int32_t tid;
        uint64_t ticks, what;
    } got[8];
    unsigned ng = 0, real = 0;
    while (ptt_reader_next(r, &ev)) {
        if (ev.offset) {
            assert_int_not_equal(ev.id, PTT_EV_TRACE_UNFINISHED);
            real++;
            continue;
        }
        assert_int_equal(ev.id, PTT_EV_TRACE_UNFINISHED);
        assert_non_null(ev.info);
        assert_string_equal(ev.info->name, "TRACE_UNFINISHED");
        assert_int_equal(ev.nargs, 1);
        assert_true(ng < 8);
        got[ng].tid = ev.tid;
        got[ng].ticks = ev.ticks;
        got[ng].what = ev.args[0];
        assert_int_equal(ev.pid, ev.tid == 500 ? 50 : 51);
        assert_int_equal(ev.serial, 1);
        ng++;
    }
    assert_int_equal(real, n);
    assert_int_equal(ng, 3);
    assert_int_equal(got[0].tid, 500); /* at the process end, innermost first */
    assert_int_equal(got[0].ticks, 2500);
    assert_int_equal(got[0].what, PTT_EV_BARRIER_WAIT_IN);
    assert_int_equal(got[1].tid, 500);
    assert_int_equal(got[1].ticks, 2500);
    assert_int_equal(got[1].what, PTT_EV_MUTEX_LOCK_IN);
    assert_int_equal(got[2].tid, 510); /* no process end seen: the end of the trace */
    assert_int_equal(got[2].ticks, 3000);
    assert_int_equal(got[2].what, PTT_EV_MUTEX_TRYLOCK_IN);
    assert_null(ptt_reader_error(r));
    close_r(r);
}

/* A thread killed 40 calls deep (more than the 16 the reader once kept, silently) gets a
 * TRACE_UNFINISHED for each, innermost first; cancelled there, its THREAD_CANCELLED names the
 * innermost. */
static void test_unfinished_deep(void **state)
{
    struct file *f = *state;
    struct chunkb c;
    fopen_w(f);
    clk(f, 1000, 1000);
    for (uint32_t serial = 1; serial <= 2; serial++) {
        cb_init(&c, 1100);
        for (uint64_t i = 0; i < 40; i++)
            EV(&c, i % 2 ? PTT_EV_MUTEX_LOCK_IN : PTT_EV_SEM_WAIT_IN, 1, 0x100 + i, 0, 0);
        if (serial == 2)
            EV(&c, PTT_EV_THREAD_END, 1, 0, 2);
        chunk(f, &c, 60, 600 + (int32_t)serial, serial, 0, 1100, 0, NULL, NULL);
    }
    clk(f, 3000, 3000);
    fclose_w(f);

    struct ptt_reader *r = open_ok(f->path);
    struct ptt_ev ev;
    unsigned unfinished = 0, cancelled = 0;
    while (ptt_reader_next(r, &ev)) {
        if (ev.id == PTT_EV_THREAD_CANCELLED) {
            assert_int_equal(ev.tid, 602);
            assert_int_equal(ev.args[0], PTT_EV_MUTEX_LOCK_IN);
            cancelled++;
        }
        if (ev.id != PTT_EV_TRACE_UNFINISHED)
            continue;
        assert_int_equal(ev.tid, 601);
        assert_int_equal(ev.args[0],
                         (39 - unfinished) % 2 ? PTT_EV_MUTEX_LOCK_IN : PTT_EV_SEM_WAIT_IN);
        unfinished++;
    }
    assert_int_equal(unfinished, 40);
    assert_int_equal(cancelled, 1);
    assert_null(ptt_reader_error(r));
    close_r(r);
}

/* Times far from the clock records (a damaged or hostile file): read and printed without
 * undefined behaviour (the sanitizer build checks that). Found by tests/fuzz. */
static void test_extreme_times(void **state)
{
    struct file *f = *state;
    struct xev x[8];
    size_t n = 0;
    struct chunkb c;
    fopen_w(f);
    info(f, "ticks_per_second=250000000\n"); /* 4 ns per tick, no clock record */
    cb_init(&c, 0x5000000000000000ull);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 0, 1);
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS, 0xffffffffffffffffull, 2);
    EV(&c, PTT_EV_MUTEX_ACQUIRED | PTT_EVF_ABS, 0x8000000000000000ull, 3);
    chunk(f, &c, 1, 10, 1, 0, 0x5000000000000000ull, 0, x, &n);
    fclose_w(f);
    struct ptt_reader *r = open_ok(f->path);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    struct ptt_ev ev;
    unsigned k = 0;
    while (ptt_reader_next(r, &ev)) {
        ptt_print_raw(out, &ev);
        ptt_print_human(out, &ev);
        k++;
    }
    fclose(out);
    assert_int_equal(k, 3);
    close_r(r);
}

/* Many threads and chunks: the index and the merge scale past their first allocations. */
static void test_many_streams(void **state)
{
    struct file *f = *state;
    enum { THREADS = 300, CHUNKS = 3, PER = 4 };
    fopen_w(f);
    for (uint32_t seq = CHUNKS; seq-- > 0;)
        for (uint32_t t = 0; t < THREADS; t++) {
            struct chunkb c;
            uint64_t base = 1000 + seq * 100000 + t;
            cb_init(&c, base);
            for (uint32_t i = 0; i < PER; i++)
                EV(&c, PTT_EV_MUTEX_ACQUIRED, i ? 1000 : 0, (uint64_t)t << 32 | (seq * PER + i));
            chunk(f, &c, 7 + (int32_t)(t % 3), (int32_t)t, t + 1, seq, base, 0, NULL, NULL);
        }
    fclose_w(f);
    struct ptt_reader *r = open_ok(f->path);
    assert_int_equal(ptt_reader_nthreads(r), THREADS);
    struct ptt_ev ev;
    static uint32_t next[THREADS];
    uint64_t last = 0, count = 0;
    while (ptt_reader_next(r, &ev)) {
        uint32_t t = (uint32_t)(ev.args[0] >> 32);
        assert_true(t < THREADS);
        assert_int_equal((uint32_t)ev.args[0], next[t]);
        next[t]++;
        assert_true(ev.ticks >= last);
        last = ev.ticks;
        count++;
    }
    assert_int_equal(count, THREADS * CHUNKS * PER);
    assert_null(ptt_reader_error(r));
    close_r(r);
}

/* The memory under a write cut (EFAULT: a pool ptt trace -p gave away, shrunk): the chunk met
 * there is left out whole, the file cut back to the record before it; later chunks are counted,
 * not written (they would be zeros), other records still are; the file reads whole. */
static int cut_seen;

static int cut_hook(const struct iovec *iov, int n)
{
    (void)iov;
    if (n)
        cut_seen = 1;
    return cut_seen;
}

static void test_writer_source_cut(void **state)
{
    struct file *f = *state;
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *m =
        mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    memset(m, 0, 2 * (size_t)page);
    assert_int_equal(munmap(m + 2 * page, (size_t)page), 0); /* its third page cut */
    struct chunkb c;
    cb_init(&c, 100);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 1, 1);
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 2, 2);
    memcpy(m, c.data, c.len);
    struct ptt_rec_chunk h[3] = {{{0, 0}, 42, 100, 1, 0, 100, 2, 0},
                                 {{0, 0}, 42, 100, 1, 1, 100, 5, 0},
                                 {{0, 0}, 42, 100, 1, 2, 100, 2, 0}};
    struct ptt_record ih;
    const char *text = "after=1";
    struct ptt_writer_rec r[4] = {
        {PTT_REC_CHUNK, &h[0], sizeof h[0], c.data, c.len},
        {PTT_REC_CHUNK, &h[1], sizeof h[1], m, 3 * (size_t)page}, /* into the cut page */
        {PTT_REC_INFO, &ih, sizeof ih, text, strlen(text)},
        {PTT_REC_CHUNK, &h[2], sizeof h[2], c.data, c.len},
    };
    fopen_w(f);
    uint64_t first = f->w.offset;
    cut_seen = 0;
    ptt_writer_fault_hook = cut_hook;
    int rc = ptt_writer_records(&f->w, r, 4);
    int rc2 = ptt_writer_record(&f->w, PTT_REC_CHUNK, &h[2], sizeof h[2], c.data, c.len);
    ptt_writer_fault_hook = NULL;
    munmap(m, 2 * (size_t)page);
    assert_int_equal(rc, 0);
    assert_int_equal(rc2, 0);
    assert_int_equal(cut_seen, 1);
    assert_int_equal(f->w.error, 0);
    assert_int_equal(f->w.cut, 1);
    assert_int_equal(f->w.events, 2);
    assert_int_equal(f->w.unwritten, 5 + 2 + 2);
    uint64_t info_size = (sizeof ih + strlen(text) + 7) / 8 * 8;
    assert_int_equal(f->w.offset, first + sizeof h[0] + c.len + info_size);
    struct stat st;
    assert_int_equal(fstat(f->w.fd, &st), 0);
    assert_int_equal((uint64_t)st.st_size, f->w.offset);
    fclose_w(f);
    struct ptt_reader *rd = open_ok(f->path);
    struct ptt_ev ev;
    unsigned k = 0;
    while (ptt_reader_next(rd, &ev))
        assert_int_equal(ev.args[0], ++k);
    assert_int_equal(k, 2);
    assert_null(ptt_reader_error(rd));
    close_r(rd);
}

/* The same cut with the trace going into a pipe, which cannot be cut back: the chunk cut short
 * is padded with zeros to its length, so that the records after it begin where a reader looks
 * for them: the bytes read parse as the file header, then CHUNK, CHUNK, INFO records. */
static void test_writer_source_cut_pipe(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *m =
        mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    memset(m, 0, 2 * (size_t)page);
    assert_int_equal(munmap(m + 2 * page, (size_t)page), 0);
    uint8_t data[64] = {0};
    struct ptt_rec_chunk h[2] = {{{0, 0}, 42, 100, 1, 0, 100, 0, 0},
                                 {{0, 0}, 42, 100, 1, 1, 100, 5, 0}};
    struct ptt_record ih;
    const char *text = "after=1";
    struct ptt_writer_rec r[3] = {
        {PTT_REC_CHUNK, &h[0], sizeof h[0], data, sizeof data},
        {PTT_REC_CHUNK, &h[1], sizeof h[1], m, 3 * (size_t)page},
        {PTT_REC_INFO, &ih, sizeof ih, text, strlen(text)},
    };
    int fds[2];
    assert_int_equal(pipe(fds), 0); /* 64 KiB: room for all of it */
    struct ptt_writer w;
    assert_int_equal(ptt_writer_start(&w, fds[1], NULL), 0);
    cut_seen = 0;
    ptt_writer_fault_hook = cut_hook;
    int rc = ptt_writer_records(&w, r, 3);
    ptt_writer_fault_hook = NULL;
    munmap(m, 2 * (size_t)page);
    close(fds[1]);
    assert_int_equal(rc, 0);
    assert_int_equal(w.error, 0);
    assert_int_equal(w.unwritten, 5);
    static uint8_t buf[65536];
    size_t got = 0;
    ssize_t k;
    while ((k = read(fds[0], buf + got, sizeof buf - got)) > 0)
        got += (size_t)k;
    close(fds[0]);
    assert_int_equal(got, w.offset);
    uint32_t types[3], nrec = 0;
    size_t at = sizeof(struct ptt_file_header);
    while (at + sizeof(struct ptt_record) <= got && nrec < 3) {
        struct ptt_record rec;
        memcpy(&rec, buf + at, sizeof rec);
        types[nrec++] = rec.type;
        at += rec.size;
    }
    assert_int_equal(at, got);
    assert_int_equal(nrec, 3);
    assert_int_equal(types[0], PTT_REC_CHUNK);
    assert_int_equal(types[1], PTT_REC_CHUNK);
    assert_int_equal(types[2], PTT_REC_INFO);
}

/* ------------------------------------------------------------------------ the timeline */

struct span {
    enum ptt_tl_state state;
    int64_t from, to;
};

static void keep_span(void *arg, int32_t pid, int32_t tid, enum ptt_tl_state state, int64_t from,
                      int64_t to, uint64_t object, uint16_t call)
{
    struct span *v = arg;
    (void)pid, (void)tid, (void)object, (void)call;
    while (v->to)
        v++;
    *v = (struct span){state, from, to};
}

/* ptt's own wait for a sub-buffer (TRACE_BUFFER_WAIT, at its end) is a state of its own: a mutex
 * wait around it is cut where it began and goes on from its end; while the thread runs it is
 * the only span. */
static void test_timeline_buffer_wait(void **state)
{
    struct file *f = *state;
    struct chunkb c;
    fopen_w(f);
    info(f, "name=bufwait\nticks_per_second=1000000000\n");
    clk(f, 1000, 5000);
    cb_init(&c, 1000); /* 1 ns per tick, the trace's 0 at tick 1000 */
    EV(&c, PTT_EV_MUTEX_LOCK_IN, 100, 0x50, 0x60);
    EV(&c, PTT_EV_MUTEX_WAIT, 100, 0x50, 7);
    EV(&c, PTT_EV_TRACE_BUFFER_WAIT, 500, 300); /* at 700, since 400 */
    EV(&c, PTT_EV_MUTEX_ACQUIRED, 50, 0x50);
    EV(&c, PTT_EV_MUTEX_LOCK_OUT, 50, 0);
    EV(&c, PTT_EV_TRACE_BUFFER_WAIT, 1000, 400); /* at 1800, since 1400 */
    EV(&c, PTT_EV_MUTEX_UNLOCK_IN, 100, 0x50, 0x61);
    EV(&c, PTT_EV_MUTEX_UNLOCK_OUT, 10, 0);
    /* at 2000 after 500, by another clock: it began after the unlock's end, at 1910 */
    EV(&c, PTT_EV_TRACE_BUFFER_WAIT, 90, 500);
    chunk(f, &c, 42, 42, 1, 0, 1000, 0, NULL, NULL);
    fclose_w(f);
    struct span got[8] = {{0, 0, 0}};
    const struct ptt_tl_callbacks cb = {.state = keep_span};
    char err[512];
    struct ptt_names *names = ptt_names_new();
    assert_int_equal(ptt_timeline_run(f->path, names, &cb, got, err, sizeof err), 0);
    ptt_names_free(names);
    const struct span want[] = {{PTT_TL_MUTEX, 200, 400},
                                {PTT_TL_PTT_BUFFER, 400, 700},
                                {PTT_TL_MUTEX, 700, 800},
                                {PTT_TL_PTT_BUFFER, 1400, 1800},
                                {PTT_TL_PTT_BUFFER, 1910, 2000}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_int_equal(got[i].state, want[i].state);
        assert_int_equal(got[i].from, want[i].from);
        assert_int_equal(got[i].to, want[i].to);
    }
    assert_int_equal(got[sizeof want / sizeof *want].to, 0);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_roundtrip),         T(test_info),
        T(test_not_a_trace),       T(test_versions),
        T(test_truncation),        T(test_corrupt_event),
        T(test_corrupt_record),    T(test_unknown_event),
        T(test_time_decoding),     T(test_clock_conversion),
        T(test_unfinished),        T(test_extreme_times),
        T(test_many_streams),      T(test_end_versions),
        T(test_unfinished_deep),   T(test_timeline_buffer_wait),
        T(test_varints),           T(test_compact),
        T(test_dictionary),        T(test_dictionary_damage),
        T(test_writer_source_cut), T(test_writer_source_cut_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
