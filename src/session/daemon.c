/* Draining the pool into the trace file. Only this side pushes onto the free list; writers
 * only pop (see lib/buffer.c), so the list needs a tag against ABA only on the pop side. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../common/event.h"
#include "session/carry.h"
#include "../../common/codec.h"
#include "session/daemon.h"
#include "trace/events.h"
#include "session/guardian.h"
#include "util/util.h"

void ptt_pool_push_free(const struct ptt_pool_geom *g, uint32_t i)
{
    struct ptt_pool *p = g->base;
    struct ptt_desc *d = ptt_geom_desc(g, i);
    /* Not a number of its next owner's: hang detection reads the sub-buffers being written, some
     * before their owner numbers them. */
    d->seq = PTT_SEQ_UNSET;
    uint64_t h = atomic_load_explicit(&p->free_head, memory_order_relaxed);
    do {
        __atomic_store_n(&d->next, (uint32_t)h, __ATOMIC_RELAXED);
    } while (!atomic_compare_exchange_weak_explicit(&p->free_head, &h, (((h >> 32) + 1) << 32) | i,
                                                    memory_order_release, memory_order_relaxed));
}

void ptt_pool_freed(const struct ptt_pool_geom *g, uint32_t n)
{
    struct ptt_pool *p = g->base;
    atomic_fetch_add_explicit(&p->freed, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&p->sleepers, memory_order_seq_cst))
        syscall(SYS_futex, &p->freed, FUTEX_WAKE, n < INT_MAX ? (int)n : INT_MAX, NULL, NULL, 0);
}

void ptt_pool_abandon(struct ptt_pool *p)
{
    atomic_store(&p->abandoned, 1);
    atomic_fetch_add(&p->freed, 1);
    syscall(SYS_futex, &p->freed, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* A pool name nobody has: /ptt-UID-PID-RAND, created exclusively (O_EXCL never follows a
 * symbolic link), 0600, and checked once open. The session's secret too. */
static int create_pool(struct ptt_daemon *d, char *err, size_t errlen)
{
    snprintf(d->name, sizeof d->name, "ptt-%u-%d", (unsigned)getuid(), (int)getpid());
    uint64_t r[3];
    for (int tries = 0; tries < 64; tries++) {
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
            snprintf(err, errlen, "getrandom: %s", strerror(errno));
            return -1;
        }
        snprintf(d->shm_name, sizeof d->shm_name, "/ptt-%u-%d-%016llx", (unsigned)getuid(),
                 (int)getpid(), (unsigned long long)r[0]);
        ptt_guardian_pool(d->guardian, d->shm_name);
        int fd = shm_open(d->shm_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue; /* someone's, perhaps another user's: not ours to remove */
        if (fd < 0) {
            snprintf(err, errlen, "cannot create shared memory %s: %s", d->shm_name,
                     strerror(errno));
            return -1;
        }
        struct stat st;
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 077) || st.st_size) {
            snprintf(err, errlen, "shared memory %s is not a new file of ours closed to others",
                     d->shm_name);
            close(fd);
            shm_unlink(d->shm_name); /* ours: O_EXCL created it */
            return -1;
        }
        memcpy(d->secret, &r[1], sizeof d->secret);
        int n = snprintf(d->env, sizeof d->env, "%s:", d->shm_name);
        for (size_t i = 0; i < sizeof d->secret; i++)
            n += snprintf(d->env + n, sizeof d->env - (size_t)n, "%02x", d->secret[i]);
        return fd;
    }
    snprintf(err, errlen, "cannot create shared memory: every name tried is taken");
    return -1;
}

static void reserve_error(int e, uint64_t total, char *err, size_t errlen)
{
    struct rlimit fs;
    if (e == EFBIG && !getrlimit(RLIMIT_FSIZE, &fs) && fs.rlim_cur < total)
        snprintf(err, errlen,
                 "cannot reserve a pool of %llu bytes in /dev/shm: the file-size limit (ulimit "
                 "-f) is %llu bytes; raise it, or give a smaller --buffer=SIZE",
                 (unsigned long long)total, (unsigned long long)fs.rlim_cur);
    else
        snprintf(err, errlen,
                 "cannot reserve a pool of %llu bytes in /dev/shm: %s; give a smaller "
                 "--buffer=SIZE, or free space in /dev/shm",
                 (unsigned long long)total, strerror(e));
}

/* Reserve sub-buffers [from, upto) and put them on the free list: 0, or an errno. */
int ptt_pool_reserve(const struct ptt_pool_geom *g, int fd, uint32_t from, uint32_t upto)
{
    int e = posix_fallocate(fd, (off_t)(g->data_offset + (uint64_t)from * g->buf_size),
                            (off_t)((uint64_t)(upto - from) * g->buf_size));
    if (e)
        return e;
    for (uint32_t i = upto; i-- > from;)
        ptt_pool_push_free(g, i);
    ptt_pool_freed(g, upto - from);
    return 0;
}

/* How many sub-buffers are reserved before the program starts: all, but for a large pool with
 * --overflow=block whose rest a guardian reserves as the writers need it (guardian.c: each page
 * reserved in /dev/shm is a page the kernel zeroes, and frees at the end; a sub-buffer goes on
 * the free list only once reserved, so a writer never touches memory /dev/shm could refuse).
 * Then FIRST_STEP only: the guardian's first
 * look finds fewer than half a step free and reserves the next step at once, beside the
 * program's start rather than before it (zeroed pages: 1.2 ms for 4 MiB on an idle machine here,
 * docs/performance.md). */
#define FIRST_STEP (1u << 20)
static uint32_t first_step(const struct ptt_pool_config *c, uint32_t n, int guardian)
{
    uint32_t k = FIRST_STEP / c->buf_size;
    return guardian >= 0 && c->reserve_later && c->overflow == PTT_OVERFLOW_BLOCK && k >= 2 && k < n
               ? k
               : n;
}

/* Whether /dev/shm has room for bytes more: the pool reserved in steps fails now, as a pool
 * reserved whole would, when it cannot be had. */
static int shm_room(int fd, uint64_t bytes)
{
    struct statvfs v;
    return fstatvfs(fd, &v) || (uint64_t)v.f_bavail * v.f_frsize >= bytes;
}

static void fill_header(struct ptt_daemon *d, struct ptt_pool *p, const struct ptt_pool_config *c,
                        uint32_t n, uint64_t head, uint64_t data, uint64_t total)
{
    p->version = PTT_POOL_VERSION;
    p->nbufs = n;
    p->buf_size = c->buf_size;
    p->clock = c->clock_tsc ? PTT_CLOCK_TSC : PTT_CLOCK_MONO;
    p->overflow = (uint32_t)c->overflow;
    p->daemon_pid = (int32_t)getpid();
    p->backtrace_depth = c->backtrace;
    p->desc_offset = head;
    p->data_offset = data;
    p->total_size = total;
    memcpy(p->secret, d->secret, sizeof p->secret);
    atomic_store(&p->masks[0], c->stopped ? PTT_META_MASK : c->class_mask | PTT_META_MASK);
    atomic_store(&p->masks[1], c->stopped || c->light ? 0 : c->class_mask | PTT_META_MASK);
    atomic_store(&p->free_head, PTT_POOL_EMPTY);
    for (uint32_t i = 0; i < n; i++) /* every call slot free, in order */
        ptt_pool_desc(p, i)->call.next = i + 1 < n ? i + 1 : PTT_POOL_EMPTY;
    atomic_store(&p->slot_head, 0);
}

static char *guard_base;
static size_t guard_len;
static volatile sig_atomic_t guard_cut;

static void on_pool_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    char *a = si->si_addr;
    if (si->si_code <= 0) { /* sent (kill, sigqueue), not a fault: what it would have done */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (guard_base && a >= guard_base && a < guard_base + guard_len &&
        mmap(guard_base, guard_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
             -1, 0) != MAP_FAILED) {
        guard_cut = 1;
        return; /* the access again, on zeros */
    }
    signal(sig, SIG_DFL); /* the access again, and the fault it is */
}

/* A writev of the guarded pool that failed with EFAULT: the kernel met a page cut off, where a
 * read of ours would have faulted. Read each page here: the first cut one faults, and the guard
 * replaces the mapping with zeros, which the writer then leaves out; 0 when no iovec is the
 * pool's (the error is the write's own). With n 0: whether the pool was cut (by a read of the
 * drain's own too). */
static int pool_write_fault(const struct iovec *iov, int n)
{
    int pool = !n; /* the write reads the pool: else a cut made before is not its error */
    for (int i = 0; i < n; i++) {
        const volatile char *p = iov[i].iov_base;
        if (!guard_base || (const char *)p < guard_base ||
            (const char *)p + iov[i].iov_len > guard_base + guard_len)
            continue; /* not the pool's: the error is the write's own */
        pool = 1;
        /* every page it spans: one byte of each, from the first page's start, and the last */
        size_t off = (uintptr_t)p % 4096, len = iov[i].iov_len;
        for (size_t k = 0; k < len && !guard_cut; k = k ? k + 4096 : 4096 - off)
            (void)p[k];
        if (len && !guard_cut)
            (void)p[len - 1];
    }
    return pool && guard_cut;
}

void ptt_pool_guard(void *base, size_t len)
{
    guard_base = base;
    guard_len = len;
    struct sigaction sa = {.sa_sigaction = on_pool_fault, .sa_flags = SA_SIGINFO};
    sigaction(SIGBUS, &sa, NULL);
    ptt_writer_fault_hook = pool_write_fault;
}

int ptt_pool_cut(void)
{
    return guard_cut;
}

static int create(struct ptt_daemon *d, const struct ptt_pool_config *c, char *err, size_t errlen)
{
    uint64_t page = 4096;
    uint64_t head = (sizeof(struct ptt_pool) + page - 1) / page * page;
    uint32_t n = (uint32_t)((c->size - head) / (c->buf_size + sizeof(struct ptt_desc)));
    if (n < 2) {
        snprintf(err, errlen, "a pool of %llu bytes holds fewer than 2 sub-buffers of %u",
                 (unsigned long long)c->size, c->buf_size);
        return -1;
    }
    uint64_t data =
        head +
        ((uint64_t)n * sizeof(struct ptt_desc) + PTT_POOL_READY_BYTES(n) + page - 1) / page * page;
    uint64_t total = data + (uint64_t)n * c->buf_size;
    uint32_t first = first_step(c, n, d->guardian);
    int fd = create_pool(d, err, errlen);
    if (fd < 0)
        return -1;
    int e = ftruncate(fd, (off_t)total) ? errno : posix_fallocate(fd, 0, (off_t)data);
    if (!e && !shm_room(fd, (uint64_t)(n - first) * c->buf_size))
        e = ENOSPC;
    void *m = MAP_FAILED;
    if (!e && (m = mmap(0, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        snprintf(err, errlen, "cannot map the pool: %s", strerror(errno));
    if (!e && m != MAP_FAILED) {
        d->pool = m;
        d->geom = (struct ptt_pool_geom){m, n, c->buf_size, head, data, total};
        fill_header(d, m, c, n, head, data, total);
        e = ptt_pool_reserve(&d->geom, fd, 0, first);
        if (e)
            munmap(m, total);
    }
    if (e)
        reserve_error(e, total, err, errlen);
    if (e || m == MAP_FAILED) {
        close(fd);
        shm_unlink(d->shm_name);
        d->pool = NULL;
        return -1;
    }
    close(fd);
    __atomic_store_n(&((struct ptt_pool *)m)->magic, PTT_POOL_MAGIC, __ATOMIC_RELEASE);
    d->size = total;
    if (first < n)
        ptt_guardian_reserve(d->guardian, first);
    return 0;
}

int ptt_daemon_create(struct ptt_daemon *d, const struct ptt_pool_config *c, char *err,
                      size_t errlen)
{
    return ptt_daemon_create_guarded(d, c, -1, err, errlen);
}

int ptt_daemon_create_guarded(struct ptt_daemon *d, const struct ptt_pool_config *c, int guardian,
                              char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->clock_tsc = c->clock_tsc;
    d->guardian = guardian;
    if (!create(d, c, err, errlen))
        return 0;
    ptt_guardian_end(d->guardian); /* nothing left: what failed removed the pool */
    d->guardian = -1;
    return -1;
}

/* The events of a record of the compact encoding (common/codec.h): 0 for padding, 2 for a call's
 * one record (its IN and OUT), else 1; its id (a call's: its IN's) into *id, TRACE_LOST's count
 * into *marked (meta records hold their values as they are). -1: malformed. */
static int record_events(const uint8_t *r, size_t size, uint64_t *marked, uint16_t *idp)
{
    const uint8_t *p = ptt_codec_body(r), *end = r + size;
    uint64_t head, v;
    if (!ptt_get_varint(&p, end, &head) || !(head >> 2) || head >> 2 > PTT_EV_ID_MASK)
        return -1;
    uint16_t id = (uint16_t)(head >> 2);
    *idp = (uint16_t)(id & ~PTT_EV_CALL);
    if (id == PTT_EV_TRACE_PAD)
        return 0;
    if (id == PTT_EV_TRACE_LOST && ptt_get_varint(&p, end, &v) && p < end) {
        uint8_t c = *p++;
        if (c <= PTT_CODEC_LIT_MAX)
            *marked += c;
        else if (c == PTT_CODEC_BIG && ptt_get_varint(&p, end, &v))
            *marked += v;
    }
    return 1 + ((id & PTT_EV_CALL) != 0);
}

/* Count the events of a sub-buffer of the pool whose writer could not (PTT_DESC_WALK) or is gone,
 * and find where they end: at len for one handed over (a shorter walk is a malformed record,
 * counted), at the first empty length for one whose writer is gone. With ids (rotation), *named
 * says whether it holds an event ids marks. */
static uint32_t walk(const uint8_t *data, uint32_t *len, int exact, uint64_t *corrupt,
                     uint64_t *marked, const uint8_t *ids, uint8_t *named)
{
    uint32_t p = 0, n = 0;
    uint8_t any = 0;
    while (p < *len) {
        size_t k = ptt_codec_size(data + p, *len - p);
        uint16_t id = 0;
        int e = k ? record_events(data + p, k, marked, &id) : -1;
        if (e < 0)
            break;
        if (ids)
            any |= ids[id];
        n += (uint32_t)e;
        p += (uint32_t)k;
    }
    if (p != *len && exact)
        ++*corrupt;
    *len = p;
    if (named)
        *named = any;
    return n;
}

/* The same for ptt trace's own chunks, in the encoding of format 1 (common/event.h). */
static uint32_t walk_own(const uint8_t *data, uint32_t *len, uint64_t *corrupt, uint64_t *marked)
{
    uint32_t p = 0, n = 0;
    while (p + 8 <= *len) {
        struct ptt_event h;
        memcpy(&h, data + p, 8);
        if (h.size < 8 || h.size % 8 || p + h.size > *len || !(h.id & PTT_EV_ID_MASK))
            break;
        uint32_t at = p + 8 + ((h.id & PTT_EVF_ABS) ? 8 : 0); /* TRACE_LOST's count */
        if ((h.id & PTT_EV_ID_MASK) == PTT_EV_TRACE_LOST && at + 8 <= p + h.size) {
            uint64_t k;
            memcpy(&k, data + at, 8);
            *marked += k;
        }
        p += h.size;
        n += (h.id & PTT_EV_ID_MASK) != PTT_EV_TRACE_PAD; /* padding is no event */
    }
    if (p != *len)
        ++*corrupt;
    *len = p;
    return n;
}

static void account(struct ptt_daemon *d, const struct ptt_rec_chunk *c, uint32_t len)
{
    d->events += c->nevents;
    d->bytes += len;
    d->chunks++;
}

/* Chunk records into the file, or with rotation into its parts (in each thread's order; named:
 * which hold events that name things, NULL: unknown). */
static void out_records(struct ptt_daemon *d, const struct ptt_writer_rec *r, const uint8_t *named,
                        unsigned n)
{
    if (d->rot)
        ptt_rotate_chunks(d->rot, r, named, n);
    else
        ptt_writer_records(d->out, r, n);
}

/* One of ptt trace's own chunks: to the file or the flight recorder's window. */
static void write_chunk(struct ptt_daemon *d, const struct ptt_rec_chunk *proto, const void *data,
                        uint32_t len)
{
    struct ptt_rec_chunk c = *proto;
    c.nevents = walk_own(data, &len, &d->corrupt, &d->lost_marked);
    if (!c.nevents)
        return;
    struct ptt_writer_rec r = {PTT_REC_CHUNK, &c, sizeof c, data, len};
    if (d->sink)
        d->sink(d->sink_arg, &c, data, len, 1);
    else
        out_records(d, &r, NULL, 1);
    account(d, &c, len);
}

/* Whether an OWNED sub-buffer can be taken from its writer: it is gone. A process that ended
 * (which > 0) may be told of after its parent reaped it, its pid another's already: only its
 * threads that no longer exist. */
static int writer_gone(const struct ptt_daemon *d, const struct ptt_desc *b, int which)
{
    if (which == PTT_DRAIN_ALL)
        return 1;
    if (which == PTT_DRAIN_IMAGE) /* the old main (the process keeps its tid), or a thread gone */
        return b->pid == d->image_pid && b->serial <= d->image_before &&
               (b->tid == b->pid || ptt_thread_gone(b->pid, b->tid));
    if (which > 0 && b->pid != which)
        return 0;
    if (which > 0 || which == PTT_DRAIN_DEAD)
        return ptt_thread_gone(b->pid, b->tid);
    return 0;
}

/* Sub-buffers written to the file in one writev: the kernel's cost per byte into the page cache
 * is about half that of one writev per sub-buffer (docs/performance.md). With rotation, more are
 * taken at once and put in each thread's order first: most come out of order (the free list
 * hands sub-buffers out last freed first, the drain takes them in pool order). */
#define DRAIN_BATCH 32
#define DRAIN_SORTED 256

struct drained {
    struct ptt_rec_chunk c;
    uint32_t index;
    uint32_t len;  /* bytes of whole events */
    uint32_t used; /* bytes the writer may have touched: all are zeroed */
    uint8_t named; /* with rotation: it holds events that name things (carry.h) */
};

/* Write the batch (the chunks that have events), then free its sub-buffers. */
static void flush(struct ptt_daemon *d, struct drained *b, unsigned n)
{
    const struct ptt_pool_geom *g = &d->geom;
    struct ptt_writer_rec r[DRAIN_SORTED];
    uint8_t named[DRAIN_SORTED];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!b[i].c.nevents && !d->rot) /* rotation orders the chunks: it must see every one */
            continue;
        const void *data = ptt_geom_data(g, b[i].index);
        if (d->sink)
            d->sink(d->sink_arg, &b[i].c, data, b[i].len, 0);
        else {
            named[k] = b[i].named;
            r[k++] = (struct ptt_writer_rec){PTT_REC_CHUNK, &b[i].c, sizeof b[i].c, data, b[i].len};
        }
        if (b[i].c.nevents)
            account(d, &b[i].c, b[i].len);
    }
    if (k)
        out_records(d, r, named, k);
    for (unsigned i = 0; i < n; i++) {
        struct ptt_desc *desc = ptt_geom_desc(g, b[i].index);
        /* Zeroed for its next writer: only its own events may read as events. */
        memset(ptt_geom_data(g, b[i].index), 0, b[i].used);
        desc->nevents = 0;
        desc->marked = 0;
        desc->flags = 0;
        atomic_store_explicit(&desc->committed, 0, memory_order_relaxed);
        atomic_store_explicit(&desc->state, PTT_BUF_FREE, memory_order_relaxed);
        ptt_pool_push_free(g, b[i].index);
    }
    if (n)
        ptt_pool_freed(g, n);
}

/* The IN of the call the writer of sub-buffer b died in, after its records (*len bytes of data):
 * its thread was inside a call that records nothing until it returns (a crash in it, an exit or
 * a kill of its process: lib/record.h), whose IN waits in the thread's call slot. Written as a
 * record of literal values at an absolute time, in the room every writer leaves for it. The
 * slot goes back to the free list, once (the thread may have another sub-buffer, parked), and
 * only if that thread holds it still: one that gave it back as it ended, and then took a
 * sub-buffer in a signal handler, names a slot another thread may hold now. */
static void died_in_call(struct ptt_daemon *d, const struct ptt_desc *b, uint8_t *data,
                         uint32_t *len, uint32_t *nevents)
{
    const struct ptt_pool_geom *g = &d->geom;
    if (!b->slot || b->slot > g->nbufs)
        return;
    struct ptt_call *c = &ptt_geom_desc(g, b->slot - 1)->call;
    uint32_t owner = b->serial;
    if (!owner || atomic_load_explicit(&c->owner, memory_order_acquire) != owner)
        return;
    const struct ptt_evinfo *e = ptt_evinfo(c->id);
    if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == PTT_CALL_PENDING && e &&
        e->kind == PTT_KIND_IN && c->n == e->nargs && c->n <= PTT_CALL_MAX_ARGS &&
        *len <= g->buf_size - PTT_CALL_ROOM) {
        uint8_t buf[3 + PTT_CALL_ROOM], *body = buf + 3, *q = body;
        q = ptt_put_varint(q, (uint64_t)c->id << 2 | PTT_CODEC_ABS);
        q = ptt_put_varint(q, c->t0);
        for (unsigned k = 0; k < c->n; k++)
            q = ptt_put_lit(q, c->a[k]);
        uintptr_t size;
        const uint8_t *rec = ptt_codec_close(body, q, &size);
        memcpy(data + *len, rec, size);
        *len += (uint32_t)size;
        (*nevents)++;
    }
    c->state = PTT_CALL_FREE;
    if (atomic_compare_exchange_strong_explicit(&c->owner, &owner, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        ptt_slot_push(&g->base->slot_head, c, b->slot - 1);
}

/* Sub-buffer i (descriptor b) into x: one handed over (ready) with the counts its writer kept,
 * read without touching its records; one whose writer could not count them, or is gone, by
 * walking them. */
static void take(struct ptt_daemon *d, const struct ptt_desc *b, uint32_t i, int ready,
                 struct drained *x)
{
    uint32_t size = d->geom.buf_size;
    uint32_t len = ready ? atomic_load_explicit(&b->committed, memory_order_acquire) : size;
    if (len > size)
        len = size;
    x->index = i;
    x->used = x->len = len;
    x->c = (struct ptt_rec_chunk){{0, 0}, b->pid,     b->tid, b->serial,
                                  b->seq, b->base_ts, 0,      PTT_CHUNK_COMPACT};
    uint32_t counted = b->nevents; /* a record is 2 bytes at least, 2 events in 4 for a call */
    if (ready && !(b->flags & PTT_DESC_WALK) && counted <= len / 2) {
        x->c.nevents = counted;
        d->lost_marked += b->marked;
        x->named = (b->flags & PTT_DESC_NAMED) != 0;
        return;
    }
    x->c.nevents = walk(ptt_geom_data(&d->geom, i), &x->len, ready, &d->corrupt, &d->lost_marked,
                        d->rot ? ptt_carry_ids() : NULL, &x->named);
    if (!ready) /* its writer is gone */
        died_in_call(d, b, ptt_geom_data(&d->geom, i), &x->len, &x->c.nevents);
}

/* By thread, then by sub-buffer number. */
static int by_stream(const void *a, const void *b)
{
    const struct ptt_rec_chunk *x = &((const struct drained *)a)->c;
    const struct ptt_rec_chunk *y = &((const struct drained *)b)->c;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->serial != y->serial)
        return x->serial < y->serial ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sub-buffers being taken, written by the batch. */
struct batch {
    struct drained b[DRAIN_SORTED];
    unsigned n, max;
    size_t done;
};

static void batch_flush(struct ptt_daemon *d, struct batch *t)
{
    if (t->n && d->rot)
        qsort(t->b, t->n, sizeof *t->b, by_stream);
    if (t->n)
        flush(d, t->b, t->n);
    t->n = 0;
}

/* Take sub-buffer i if it is READY, or OWNED by a writer which says is gone. */
static void consider(struct ptt_daemon *d, struct batch *t, uint32_t i, int which)
{
    struct ptt_desc *b = ptt_geom_desc(&d->geom, i);
    uint32_t st = atomic_load_explicit(&b->state, memory_order_acquire);
    if (st != PTT_BUF_READY && !(st == PTT_BUF_OWNED && writer_gone(d, b, which)))
        return;
    /* Again: a thread may hand it over and end between the first look and writer_gone. */
    st = atomic_load_explicit(&b->state, memory_order_acquire);
    if (st == PTT_BUF_OWNED) /* its writer, gone, never counts it handed over */
        atomic_fetch_sub_explicit(&d->geom.base->owned, 1, memory_order_relaxed);
    else if (st != PTT_BUF_READY)
        return;
    struct drained *x = &t->b[t->n++];
    take(d, b, i, st == PTT_BUF_READY, x);
    if (d->drained)
        d->drained(d->drained_arg, i, x->len);
    t->done++;
    if (t->n == t->max)
        batch_flush(d, t);
}

size_t ptt_daemon_drain(struct ptt_daemon *d, int which)
{
    const struct ptt_pool_geom *g = &d->geom;
    struct batch t; /* not zeroed: 18 KB a turn */
    t.n = 0;
    t.max = d->rot ? DRAIN_SORTED : DRAIN_BATCH;
    t.done = 0;
    if (which == PTT_DRAIN_READY) {
        /* The ready bits, not every descriptor (common/pool.h). After the caller's store of
         * idle, as the writers' bits come before their look at it (lib/buffer.c). */
        _Atomic uint64_t *ready = ptt_geom_ready(g);
        atomic_thread_fence(memory_order_seq_cst);
        for (uint32_t w = 0; w < (g->nbufs + 63) / 64; w++) {
            if (!atomic_load_explicit(&ready[w], memory_order_relaxed))
                continue;
            for (uint64_t bits = atomic_exchange_explicit(&ready[w], 0, memory_order_acquire); bits;
                 bits &= bits - 1) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
                if (i < g->nbufs) /* a bit past the last: not a writer's (docs/security.md) */
                    consider(d, &t, i, which);
            }
        }
    } else {
        for (uint32_t i = 0; i < g->nbufs; i++)
            consider(d, &t, i, which);
    }
    batch_flush(d, &t);
    return t.done;
}

static void events_at(struct ptt_daemon *d, int pid, unsigned n, const uint16_t *ids,
                      const unsigned *nargs, const uint64_t *args, uint64_t at)
{
    uint64_t buf[512];
    size_t w = 0;
    for (unsigned i = 0; i < n; i++) {
        if (w + 1 + nargs[i] > sizeof buf / sizeof buf[0])
            break;
        struct ptt_event h = {ids[i], (uint16_t)(8 + 8 * nargs[i]), 0};
        memcpy(&buf[w++], &h, 8);
        memcpy(&buf[w], args, 8 * nargs[i]);
        w += nargs[i];
        args += nargs[i];
    }
    uint64_t base = at ? at : ptt_ticks(d->clock_tsc);
    struct ptt_rec_chunk c = {{0, 0}, pid, pid, 0, 0, base, 0, PTT_CHUNK_DAEMON};
    write_chunk(d, &c, buf, (uint32_t)(w * 8));
}

void ptt_daemon_events(struct ptt_daemon *d, int pid, unsigned n, const uint16_t *ids,
                       const unsigned *nargs, const uint64_t *args)
{
    events_at(d, pid, n, ids, nargs, args, 0);
}

void ptt_daemon_process_exec(struct ptt_daemon *d, int pid, uint32_t before)
{
    d->image_pid = pid;
    d->image_before = before;
    ptt_daemon_drain(d, PTT_DRAIN_IMAGE);
    if (d->execd)
        d->execd(d->drained_arg, pid, before);
}

void ptt_daemon_process_start(struct ptt_daemon *d, int pid, uint32_t before)
{
    if (d->started)
        d->started(d->drained_arg, pid, before);
}

void ptt_daemon_process_exit(struct ptt_daemon *d, int pid, int status, uint64_t at)
{
    if (d->exited)
        d->exited(d->drained_arg, pid);
    uint16_t id = PTT_EV_PROCESS_EXIT;
    unsigned n = 1;
    uint64_t a = (uint64_t)(uint32_t)status;
    events_at(d, pid, 1, &id, &n, &a, at);
}

void ptt_daemon_destroy(struct ptt_daemon *d)
{
    if (!d->pool)
        return;
    ptt_pool_abandon(d->pool);
    if (guard_base == (char *)d->pool) /* nothing mapped there later is the pool */
        guard_base = NULL;
    munmap(d->pool, d->size);
    shm_unlink(d->shm_name);
    d->pool = NULL;
    ptt_guardian_end(d->guardian);
    d->guardian = -1;
}

/* PID of a name "ptt-UID-PID" followed by one of ends or nothing, of our user (UID), whose ptt
 * trace (PID) is no more: 0 if not such a name. */
static int stale_pid(const char *name, const char *ends)
{
    unsigned uid;
    int pid, n = 0;
    if (sscanf(name, "ptt-%u-%d%n", &uid, &pid, &n) != 2 || uid != (unsigned)getuid() || pid <= 0 ||
        !strchr(ends, name[n]))
        return 0;
    /* Our own pid: a session that had it before us (we have created nothing yet). */
    return pid == getpid() || (kill(pid, 0) < 0 && errno == ESRCH) ? pid : 0;
}

/* In directory path, remove the entries of ours named ptt-UID-PID followed by one of ends whose
 * ptt trace is gone. shm: through shm_unlink; for root, also a pool of its name that another
 * user owns: one its ptt trace -p gave to the traced process's user (trace.c, give_pool), left
 * when both ptt trace and its guardian were killed. */
static void sweep_dir(const char *path, const char *ends, int shm)
{
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        struct stat st;
        if (!stale_pid(e->d_name, ends) ||
            fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            (st.st_uid != geteuid() && !(shm && geteuid() == 0)) || (shm && !S_ISREG(st.st_mode)))
            continue;
        if (shm) {
            char name[300];
            snprintf(name, sizeof name, "/%s", e->d_name);
            shm_unlink(name);
        } else {
            unlinkat(dirfd(dir), e->d_name, 0);
        }
    }
    closedir(dir);
}

/* Whether we run in a pid namespace other than the first (a container's, unshare -p): the first
 * has a fixed inode number (the kernel's PROC_PID_INIT_INO). Neither NSpid in /proc/self/status
 * (with a /proc of the namespace) nor NS_GET_PARENT (an ancestor is out of reach) would tell. */
static int nested_pid_namespace(void)
{
    struct stat st;
    return !stat("/proc/self/ns/pid", &st) && st.st_ino != 0xEFFFFFFCu;
}

void ptt_daemon_sweep(const char *ctl_dir)
{
    /* A name's PID is that of a ptt trace of our pid namespace only if the directories are not
     * shared with another: in a nested one, the sessions of the host (or of another container)
     * seem gone, and sweeping would remove their live pools and sockets. */
    if (nested_pid_namespace())
        return;
    sweep_dir("/dev/shm", "-", 1); /* and "ptt-UID-PID", a name of older versions */
    if (ctl_dir)
        sweep_dir(ctl_dir, ".", 0);
}
