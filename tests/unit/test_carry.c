/* The carried state of a rotated trace (src/session/carry.c): chunks fed in any order, what a
 * new part gets, what is forgotten; and the names of the parts (src/trace/parts.c). */
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/event.h"
#include "ptt_fields.h"
#include "src/session/carry.h"
#include "src/trace/parts.h"
#include "src/trace/writer.h"

/* ---- feeding ---- */

/* A chunk of one event of stream (pid, tid, serial) at time t (ABS), with args. */
static void feed(struct ptt_carry *c, int32_t pid, int32_t tid, uint32_t serial, uint16_t id,
                 uint64_t t, unsigned n, ...)
{
    uint64_t buf[16];
    struct ptt_event h = {(uint16_t)(id | PTT_EVF_ABS), (uint16_t)(16 + 8 * n), 0};
    memcpy(&buf[0], &h, 8);
    buf[1] = t;
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n; i++)
        buf[2 + i] = va_arg(ap, uint64_t);
    va_end(ap);
    struct ptt_rec_chunk ch = {{0, 0}, pid, tid, serial, 0, t, 1, serial ? 0 : PTT_CHUNK_DAEMON};
    ptt_carry_chunk(c, &ch, buf, h.size);
}

#define START(c, pid, t, ppid) \
    feed(c, pid, pid, 1, PTT_EV_PROCESS_START, t, 2, (uint64_t)(ppid), 1ull)
#define EXIT(c, pid, t) feed(c, pid, pid, 0, PTT_EV_PROCESS_EXIT, t, 1, 0ull)
#define MODULE(c, pid, t, base) \
    feed(c, pid, pid, 1, PTT_EV_MODULE_LOAD, t, 3, (uint64_t)(base), 4096ull, 0x6f73ull)
#define THREAD(c, pid, tid, t, self)                                               \
    feed(c, pid, tid, (uint32_t)(tid), PTT_EV_THREAD_START, t, 5, 0x1000ull, 0ull, \
         (uint64_t)(pid), (uint64_t)(self), 0ull)
#define THREAD_END(c, pid, tid, t) \
    feed(c, pid, tid, (uint32_t)(tid), PTT_EV_THREAD_END, t, 2, 0ull, 0ull)
#define NAME_IN(c, pid, t, target) \
    feed(c, pid, pid, 1, PTT_EV_THREAD_SETNAME_NP_IN, t, 2, (uint64_t)(target), 0x6b726f77ull)
#define NAME_OUT(c, pid, t, ret) \
    feed(c, pid, pid, 1, PTT_EV_THREAD_SETNAME_NP_OUT, t, 1, (uint64_t)(ret))
/* ptt trace's THREAD_RUNNING of thread tid (named "work"), in its process's stream */
#define RUNNING(c, pid, tid, t) \
    feed(c, pid, pid, 0, PTT_EV_THREAD_RUNNING, t, 2, (uint64_t)(tid), 0x6b726f77ull)

/* ---- what a part gets ---- */

struct got {
    int32_t pid, tid;
    uint32_t serial;
    uint16_t id;
    uint64_t t, arg0;
};

/* ptt_carry_write into a file, read back: its events, in order; how many. */
static size_t carried(struct ptt_carry *c, struct got *out, size_t max)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/ptt-unit-carry-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct ptt_writer w;
    assert_int_equal(ptt_writer_open(&w, path), 0);
    uint64_t bytes;
    uint64_t n = ptt_carry_write(c, &w, &bytes);
    assert_int_equal(ptt_writer_close(&w), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t data[1 << 16];
    size_t len = fread(data, 1, sizeof data, f);
    fclose(f);
    unlink(path);
    size_t k = 0;
    for (size_t off = 16; off + 8 <= len;) {
        struct ptt_rec_chunk ch;
        memcpy(&ch, data + off, sizeof ch);
        assert_int_equal(ch.h.type, PTT_REC_CHUNK);
        assert_int_equal(ch.flags, PTT_CHUNK_DAEMON | PTT_CHUNK_CARRY);
        for (size_t p = off + sizeof ch; p < off + ch.h.size;) {
            struct ptt_event h;
            memcpy(&h, data + p, 8);
            assert_true(h.id & PTT_EVF_ABS);
            assert_true(k < max);
            out[k] =
                (struct got){ch.pid, ch.tid, ch.serial, (uint16_t)(h.id & PTT_EV_ID_MASK), 0, 0};
            memcpy(&out[k].t, data + p + 8, 8);
            if (h.size > 16)
                memcpy(&out[k].arg0, data + p + 16, 8);
            k++;
            p += h.size;
        }
        off += ch.h.size;
    }
    assert_int_equal(n, k);
    return k;
}

static size_t count_id(const struct got *g, size_t n, uint16_t id)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += g[i].id == id;
    return k;
}

/* A live process and thread: their starts, the modules, the thread's name, each stream's
 * events in time order. */
static void test_live(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    MODULE(c, 100, 11, 0x1000);
    MODULE(c, 100, 12, 0x2000);
    MODULE(c, 100, 13, 0x1000); /* the same base again: one module */
    THREAD(c, 100, 101, 20, 0xaaa);
    NAME_IN(c, 100, 21, 0xaaa);
    NAME_OUT(c, 100, 22, 0);
    struct got g[32];
    size_t n = carried(c, g, 32);
    assert_int_equal(n, 1 + 2 + 1 + 2);
    assert_int_equal(g[0].id, PTT_EV_PROCESS_START);
    assert_int_equal(count_id(g, n, PTT_EV_MODULE_LOAD), 2);
    for (size_t i = 1; i < n; i++)
        if (g[i].pid == g[i - 1].pid && g[i].serial == g[i - 1].serial)
            assert_true(g[i].t >= g[i - 1].t);
    for (size_t i = 0; i < n; i++)
        if (g[i].id == PTT_EV_THREAD_START)
            assert_true(g[i].tid == 101 && g[i].serial == 101 && g[i].t == 20);
    /* the state stays for the next part */
    assert_int_equal(carried(c, g, 32), n);
    ptt_carry_free(c);
}

/* A thread whose end comes before its start (its chunks written out of order): not carried,
 * neither now nor when the start comes. Its name goes with it. */
static void test_end_before_start(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    THREAD_END(c, 100, 101, 30);
    struct got g[32];
    assert_int_equal(count_id(g, carried(c, g, 32), PTT_EV_THREAD_START), 0);
    THREAD(c, 100, 101, 20, 0xaaa);
    NAME_OUT(c, 100, 22, 0); /* the OUT before its IN, too */
    NAME_IN(c, 100, 21, 0xaaa);
    size_t n = carried(c, g, 32);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_START), 0);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_SETNAME_NP_IN), 0);
    /* the thread id used again by a thread started after: carried */
    THREAD(c, 100, 101, 40, 0xaaa);
    n = carried(c, g, 32);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_START), 1);
    ptt_carry_free(c);
}

/* A name given and taken: a failed pthread_setname_np is not carried; a later one wins. */
static void test_names(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    THREAD(c, 100, 101, 20, 0xaaa);
    NAME_IN(c, 100, 21, 0xaaa);
    NAME_OUT(c, 100, 22, 34); /* ERANGE */
    struct got g[32];
    size_t n = carried(c, g, 32);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_SETNAME_NP_OUT), 0);
    NAME_IN(c, 100, 31, 0xaaa);
    NAME_OUT(c, 100, 32, 0);
    NAME_IN(c, 100, 25, 0xaaa); /* an older one, come late */
    NAME_OUT(c, 100, 26, 0);
    n = carried(c, g, 32);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_SETNAME_NP_OUT), 1);
    for (size_t i = 0; i < n; i++)
        if (g[i].id == PTT_EV_THREAD_SETNAME_NP_OUT)
            assert_int_equal(g[i].t, 32);
    ptt_carry_free(c);
}

/* The names ptt trace read as recording started (THREAD_RUNNING): the latest of each thread is
 * carried; a thread that ended, or that a later listing of its process (main's, first) no
 * longer has, is not, nor is a started thread missing from that listing. */
static uint64_t running_of(const struct got *g, size_t n, int32_t tid)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i].id == PTT_EV_THREAD_RUNNING && g[i].arg0 == (uint64_t)tid) {
            assert_int_equal(t, 0); /* one of each thread */
            t = g[i].t;
        }
    return t;
}

static void test_running(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    THREAD(c, 100, 101, 15, 0xaaa); /* started while recording */
    RUNNING(c, 100, 100, 20);       /* the first listing: main, 102, 103 (101 had ended) */
    RUNNING(c, 100, 102, 21);
    RUNNING(c, 100, 103, 22);
    THREAD_END(c, 100, 103, 25);
    struct got g[32];
    size_t n = carried(c, g, 32);
    assert_int_equal(running_of(g, n, 100), 20);
    assert_int_equal(running_of(g, n, 102), 21);
    assert_int_equal(running_of(g, n, 103), 0);               /* ended */
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_START), 0); /* 101: not listed, gone */
    RUNNING(c, 100, 100, 40); /* the second listing: main and 104; 102 ended unrecorded */
    RUNNING(c, 100, 104, 41);
    RUNNING(c, 100, 104, 30); /* an older one, come late */
    n = carried(c, g, 32);
    assert_int_equal(running_of(g, n, 100), 40);
    assert_int_equal(running_of(g, n, 102), 0);
    assert_int_equal(running_of(g, n, 104), 41);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_RUNNING), 2);
    EXIT(c, 100, 50);
    n = carried(c, g, 32);
    assert_int_equal(count_id(g, n, PTT_EV_THREAD_RUNNING), 0);
    ptt_carry_free(c);
}

/* An exec: the program before it, its modules and threads, are not carried. */
static void test_exec(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    MODULE(c, 100, 11, 0x1000);
    THREAD(c, 100, 101, 12, 0xaaa);
    START(c, 100, 50, 1); /* exec */
    MODULE(c, 100, 51, 0x5000);
    MODULE(c, 100, 13, 0x2000); /* the old program's, come late */
    struct got g[32];
    size_t n = carried(c, g, 32);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].id, PTT_EV_PROCESS_START);
    assert_int_equal(g[0].t, 50);
    assert_int_equal(g[1].arg0, 0x5000);
    ptt_carry_free(c);
}

/* A process that ended is not carried, nor its threads, and is forgotten; its pid used again
 * names another process. But a parent that ended is carried, with its end, while a child that
 * forked from it without an exec (no modules of its own) lives. */
static void test_ended(void **state)
{
    (void)state;
    struct ptt_carry *c = ptt_carry_new();
    START(c, 100, 10, 1);
    MODULE(c, 100, 11, 0x1000);
    START(c, 200, 20, 100); /* forked */
    THREAD(c, 200, 201, 21, 0xbbb);
    EXIT(c, 100, 30);
    assert_true(ptt_carry_ended(c, 100));
    struct got g[32];
    size_t n = carried(c, g, 32);
    assert_int_equal(n, 2 + 1 + 1 + 1); /* 100: start, module, end; 200: start, thread */
    assert_int_equal(count_id(g, n, PTT_EV_PROCESS_EXIT), 1);
    for (size_t i = 0; i < n; i++)
        if (g[i].id == PTT_EV_PROCESS_EXIT)
            assert_true(g[i].pid == 100 && g[i].serial == 0 && g[i].tid == 100);
    EXIT(c, 200, 40);
    assert_int_equal(carried(c, g, 32), 0);
    assert_int_equal(carried(c, g, 32), 0);
    /* pid 100 again: a new process */
    START(c, 100, 60, 1);
    n = carried(c, g, 32);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].t, 60);
    ptt_carry_free(c);
}

/* ---- parts ---- */

static void test_ranges(void **state)
{
    (void)state;
    char b[64];
    unsigned v[] = {1, 2, 3, 5, 7, 8};
    assert_string_equal(ptt_parts_ranges(b, sizeof b, v, 6), "1-3, 5, 7-8");
    assert_string_equal(ptt_parts_ranges(b, sizeof b, v, 1), "1");
    assert_string_equal(ptt_parts_ranges(b, sizeof b, v, 0), "");
    /* Too long: "..." where what follows would not fit (as ptt_parts_missing) */
    assert_string_equal(ptt_parts_ranges(b, 12, v, 6), "1-3, 5, 7-8");
    assert_string_equal(ptt_parts_ranges(b, 11, v, 6), "1-3, ...");
    assert_string_equal(ptt_parts_ranges(b, 6, v, 6), "...");
}

static void test_missing(void **state)
{
    (void)state;
    char b[64];
    unsigned v[] = {3, 4, 7, 9, 4000000000u};
    assert_string_equal(ptt_parts_missing(b, sizeof b, v, 5, 1), "1-2, 5-6, 8, 10-3999999999");
    assert_string_equal(ptt_parts_missing(b, sizeof b, v, 4, 3), "5-6, 8");
    assert_string_equal(ptt_parts_missing(b, sizeof b, v, 2, 3), "");
    assert_string_equal(ptt_parts_missing(b, sizeof b, v, 0, 1), "");
    /* too long for buf: cut between two ranges */
    assert_string_equal(ptt_parts_missing(b, 14, v, 5, 1), "1-2, 5-6, ...");
    assert_string_equal(ptt_parts_missing(b, 10, v, 5, 1), "1-2, ...");
    unsigned w[] = {1, 1073741825u, 4294967295u};
    assert_string_equal(ptt_parts_missing(b, sizeof b, w, 3, 1),
                        "2-1073741824, 1073741826-4294967294");
}

static void test_list(void **state)
{
    (void)state;
    char dir[PATH_MAX], p[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/ptt-unit-parts-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    const char *names[] = {"t.ptt.10",    "t.ptt.2", "t.ptt.1", "t.ptt.01", "t.ptt.x",
                           "t.ptt.old.3", "t.ptt",   "u.ptt.4", "t.ptt.0"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/t.ptt", dir);
    unsigned n, *v = ptt_parts_list(p, &n);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 1);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 10);
    free(v);
    snprintf(p, sizeof p, "%s/t.ptt.old", dir);
    v = ptt_parts_list(p, &n);
    assert_int_equal(n, 1);
    free(v);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live),    cmocka_unit_test(test_end_before_start),
        cmocka_unit_test(test_names),   cmocka_unit_test(test_exec),
        cmocka_unit_test(test_ended),   cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_missing), cmocka_unit_test(test_list),
        cmocka_unit_test(test_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
