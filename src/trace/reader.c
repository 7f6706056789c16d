/* Trace reader: index pass over the records, then a heap merge of per-thread streams. */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptt_fields.h"
#include "trace/reader.h"
#include "trace/decode.h"
#include "analysis/tracker.h"

#define MAX_CHUNK (1u << 30)
#define BUF_SLACK 64

struct chunkref {
    uint64_t offset; /* of the chunk record */
    uint32_t size;
    uint32_t seq;
};

struct stream {
    int32_t pid, tid;
    uint32_t serial;
    struct chunkref *chunks;
    size_t nchunks, cap, next_chunk;
    uint8_t *buf;
    size_t buf_cap, pos, len;
    uint64_t data_off; /* file offset of buf[0] */
    uint64_t base, last;
    struct ptt_tthread *calls; /* its calls entered and not yet left (r->calls) */
    int done;
    int skipping; /* before r->skip_below still */
    /* Its next event, ev[cur], decoded; the other, the one ptt_reader_get gave last (valid
     * until the next call: no copy). */
    unsigned cur;
    struct ptt_ev ev[2];
    int has_held;
    struct ptt_ev held; /* delivered after a synthesized event that must precede it */
    /* Its chunk is of the compact encoding (format 2), decoded with dec (decode.h). */
    int compact;
    struct ptt_dec *dec;
};

/* A stream in the merge, with its next event's sort key: the heap compares these alone, not
 * the streams' events (far apart in memory). order: the stream's index, ptt trace's own
 * streams (serial 0: a process's end) after its threads' at the same time. */
struct heapent {
    uint64_t ticks;
    uint64_t order;
};

struct pid_end {
    int32_t pid;
    uint64_t ticks;
};

struct ptt_reader {
    int fd;
    char *path;
    uint64_t size;
    char *info;
    size_t info_len;
    struct ptt_rec_clock clk_first, clk_last;
    int nclk;
    struct ptt_rec_end end;
    int has_end;
    struct stream *streams;
    size_t nstreams, streams_cap;
    size_t *hash; /* open addressing: stream index + 1, 0 = empty */
    size_t hash_cap;
    struct pid_end *ends;
    size_t nends, ends_cap;
    struct heapent *heap;
    size_t nheap;
    struct ptt_tracker *calls; /* each stream's calls entered and not yet left */
    int started;
    uint64_t skip_below;      /* ptt_reader_skip: the events before are not decoded */
    int (*keep)(uint16_t id); /* but these */
    long double ns_per_tick;
    uint64_t tick_m; /* ns_per_tick = tick_m * 2^tick_e exactly, when long double is x87's */
    int tick_e;
    char err[512];
};

static void set_err(struct ptt_reader *r, const char *fmt, ...)
{
    if (r->err[0])
        return; /* keep the first problem: the later ones usually follow from it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
}

static int read_at(struct ptt_reader *r, void *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t k = pread(r->fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) {
        fprintf(stderr, "ptt: out of memory\n");
        exit(2);
    }
    *cap = n;
    return q;
}

static size_t hash_key(int32_t pid, uint32_t serial)
{
    uint64_t k = ((uint64_t)(uint32_t)pid << 32) | serial;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

static struct stream *stream_for(struct ptt_reader *r, int32_t pid, uint32_t serial, int32_t tid)
{
    if (r->nstreams * 2 >= r->hash_cap) {
        size_t cap = r->hash_cap ? r->hash_cap * 2 : 64;
        size_t *h = calloc(cap, sizeof *h);
        if (!h) {
            fprintf(stderr, "ptt: out of memory\n");
            exit(2);
        }
        for (size_t i = 0; i < r->nstreams; i++) {
            size_t j = hash_key(r->streams[i].pid, r->streams[i].serial) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = i + 1;
        }
        free(r->hash);
        r->hash = h;
        r->hash_cap = cap;
    }
    size_t j = hash_key(pid, serial) & (r->hash_cap - 1);
    while (r->hash[j]) {
        struct stream *s = &r->streams[r->hash[j] - 1];
        if (s->pid == pid && s->serial == serial)
            return s;
        j = (j + 1) & (r->hash_cap - 1);
    }
    r->streams = grow(r->streams, &r->streams_cap, r->nstreams + 1, sizeof *r->streams);
    struct stream *s = &r->streams[r->nstreams];
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->serial = serial;
    s->tid = tid;
    r->hash[j] = ++r->nstreams;
    return s;
}

/* Events ptt trace wrote itself are few: read them during the index pass, to know when each
 * process ended (calls still open in it are closed at that time). */
static void note_daemon_chunk(struct ptt_reader *r, const struct ptt_rec_chunk *c, uint64_t off)
{
    size_t len = c->h.size - sizeof *c;
    if (len > 1u << 20)
        return;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf || read_at(r, buf, len, off + sizeof *c)) {
        free(buf);
        return;
    }
    uint64_t base = c->base_ts;
    for (size_t p = 0; p + 8 <= len;) {
        struct ptt_event h;
        memcpy(&h, buf + p, 8);
        if (h.size < 8 || h.size % 8 || p + h.size > len)
            break;
        uint64_t t = base + h.dts;
        if ((h.id & PTT_EV_ID_MASK) == PTT_EV_PROCESS_EXIT) {
            r->ends = grow(r->ends, &r->ends_cap, r->nends + 1, sizeof *r->ends);
            r->ends[r->nends++] = (struct pid_end){c->pid, t};
        }
        base = t;
        p += h.size;
    }
    free(buf);
}

static int by_seq(const void *a, const void *b)
{
    const struct chunkref *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void index_file(struct ptt_reader *r, uint64_t off)
{
    while (off < r->size) {
        struct ptt_record h;
        if (off + sizeof h > r->size) {
            set_err(r, "truncated record header at offset %llu", (unsigned long long)off);
            return;
        }
        if (read_at(r, &h, sizeof h, off)) {
            set_err(r, "cannot read at offset %llu: %s", (unsigned long long)off,
                    strerror(errno ? errno : EIO));
            return;
        }
        if (h.size < sizeof h || h.size % 8 || h.type == 0) {
            set_err(r, "corrupt record (type %u, size %u) at offset %llu", h.type, h.size,
                    (unsigned long long)off);
            return;
        }
        if (off + h.size > r->size) {
            set_err(r, "truncated record (type %u, %u bytes) at offset %llu", h.type, h.size,
                    (unsigned long long)off);
            return;
        }
        switch (h.type) {
        case PTT_REC_INFO: {
            size_t n = h.size - sizeof h;
            char *p = realloc(r->info, r->info_len + n + 2);
            if (!p)
                exit(2);
            r->info = p;
            if (read_at(r, r->info + r->info_len, n, off + sizeof h) == 0) {
                r->info_len += strnlen(r->info + r->info_len, n);
                r->info[r->info_len++] = '\n';
                r->info[r->info_len] = 0;
            }
            break;
        }
        case PTT_REC_CLOCK: {
            struct ptt_rec_clock c;
            if (h.size < sizeof c || read_at(r, &c, sizeof c, off)) {
                set_err(r, "corrupt clock record at offset %llu", (unsigned long long)off);
                return;
            }
            if (!r->nclk++)
                r->clk_first = c;
            r->clk_last = c;
            break;
        }
        case PTT_REC_CHUNK: {
            struct ptt_rec_chunk c;
            if (h.size < sizeof c || h.size > MAX_CHUNK || read_at(r, &c, sizeof c, off)) {
                set_err(r, "corrupt chunk record at offset %llu", (unsigned long long)off);
                return;
            }
            struct stream *s =
                stream_for(r, c.pid, (c.flags & PTT_CHUNK_DAEMON) ? 0 : c.serial, c.tid);
            s->chunks = grow(s->chunks, &s->cap, s->nchunks + 1, sizeof *s->chunks);
            s->chunks[s->nchunks++] = (struct chunkref){off, h.size, c.seq};
            if (c.flags & PTT_CHUNK_DAEMON)
                note_daemon_chunk(r, &c, off);
            break;
        }
        case PTT_REC_END:
            /* Minor 0's is shorter: what it lacks reads as 0. */
            memset(&r->end, 0, sizeof r->end);
            if (h.size >= PTT_REC_END_V0_SIZE &&
                read_at(r, &r->end, h.size < sizeof r->end ? h.size : sizeof r->end, off) == 0)
                r->has_end = 1;
            break;
        default: break; /* a record of a newer minor version: skipped */
        }
        off += h.size;
    }
}

/* A pipe's content, whole, into a memfd: the reader reads at offsets, and some commands read
 * the trace twice. -1 with one line in err. */
static int copy_stream(int in, const char *path, char *err, size_t errlen)
{
    int fd = memfd_create("ptt-trace", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot hold the stream: %s", path, strerror(errno));
        return -1;
    }
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return fd;
        for (ssize_t k = 0, w; n > 0 && k < n; k += w)
            if ((w = write(fd, buf + k, (size_t)(n - k))) < 0) {
                n = -1;
                break;
            }
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
    }
}

#define FIFO_WAIT_MS 10000

/* A FIFO, opened without waiting for a writer, then waited for FIFO_WAIT_MS at most: the
 * first data or a writer's close. */
static int open_fifo(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int n;
    while ((n = poll(&p, 1, FIFO_WAIT_MS)) < 0 && errno == EINTR) {
    }
    if (n <= 0) {
        snprintf(err, errlen, "%s: a FIFO no one wrote to in %d s; start its writer first", path,
                 FIFO_WAIT_MS / 1000);
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* a writer came: read it to its end */
    return fd;
}

int ptt_reader_fd(const char *path, char *err, size_t errlen)
{
    static char *cached; /* a stream read once already: its copy */
    static int cached_fd = -1;
    if (cached && !strcmp(cached, path))
        return fcntl(cached_fd, F_DUPFD_CLOEXEC, 0);
    int stdin_ = !strcmp(path, "-");
    struct stat st;
    if (stdin_ ? fstat(0, &st) : stat(path, &st)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        int fd = stdin_ ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return fd;
    }
    if (!S_ISFIFO(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file, a pipe nor a FIFO", path);
        return -1;
    }
    int in = stdin_ ? 0 : open_fifo(path, err, errlen);
    if (in < 0)
        return -1;
    int fd = copy_stream(in, path, err, errlen);
    if (!stdin_)
        close(in);
    if (fd >= 0 && (cached = strdup(path)))
        cached_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return fd;
}

/* ns_per_tick as tick_m * 2^tick_e, for to_ns; tick_m stays 0 (long double used) where long
 * double is not x87's 64-bit mantissa. */
static void split_ns_per_tick(struct ptt_reader *r)
{
#if LDBL_MANT_DIG == 64
    int e;
    long double f = frexpl(r->ns_per_tick, &e);
    if (!(f >= 0.5L && f < 1))
        return;
    r->tick_m = (uint64_t)ldexpl(f, 64);
    r->tick_e = e - 64;
#else
    (void)r;
#endif
}

/* |d| * tick_m * 2^tick_e rounded to 64 significant bits (to nearest, ties to even) then
 * truncated: what the long double product gives, in integers (x87 conversions cost a tenth of
 * the reading). At least 9.2e18: UINT64_MAX. */
static uint64_t scaled(const struct ptt_reader *r, uint64_t a)
{
    unsigned __int128 p = (unsigned __int128)a * r->tick_m;
    int e = r->tick_e;
    uint64_t q = (uint64_t)p;
    if (p >> 64) {
        int sh = 64 - __builtin_clzll((uint64_t)(p >> 64));
        /* Mostly the integer part is p's bits from -e up (past 64), and rounding up at bit sh
         * (rounding down leaves them) cannot carry into it: p's floor is the answer. */
        if (e <= -64 && e > -128 && sh < 64) {
            uint64_t lo = (uint64_t)p, hi = (uint64_t)(p >> 64), up = lo + (1ull << sh);
            unsigned f = (unsigned)(-e - 64);
            if (((hi + (up < lo)) >> f) == hi >> f)
                return hi >> f >= 9200000000000000000ull ? UINT64_MAX : hi >> f;
        }
        q = (uint64_t)(p >> sh);
        unsigned __int128 rem = p & (((unsigned __int128)1 << sh) - 1);
        unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
        if ((rem > half || (rem == half && (q & 1))) && !++q) {
            q = 1ull << 63;
            sh++;
        }
        e += sh;
    }
    uint64_t v;
    if (e >= 0)
        v = e >= 64 || q > (UINT64_MAX >> e) ? UINT64_MAX : q << e;
    else
        v = e <= -64 ? 0 : q >> -e;
    return v >= 9200000000000000000ull ? UINT64_MAX : v;
}

static int64_t to_ns(const struct ptt_reader *r, uint64_t ticks)
{
    int64_t d = (int64_t)(ticks - r->clk_first.ticks);
    if (r->tick_m) {
        uint64_t v = scaled(r, d < 0 ? -(uint64_t)d : (uint64_t)d);
        if (v == UINT64_MAX)
            return d < 0 ? -INT64_MAX : INT64_MAX;
        return d < 0 ? -(int64_t)v : (int64_t)v;
    }
    long double x = (long double)d * r->ns_per_tick;
    /* A corrupt time stamp or calibration must not overflow the conversion. */
    if (x >= 9.2e18L)
        return INT64_MAX;
    if (x <= -9.2e18L)
        return -INT64_MAX;
    return (int64_t)x;
}

struct ptt_reader *ptt_reader_open(const char *path, char *err, size_t errlen)
{
    struct ptt_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->fd = ptt_reader_fd(path, err, errlen);
    struct stat st;
    if (r->fd < 0)
        goto fail;
    if (fstat(r->fd, &st)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    r->size = (uint64_t)st.st_size;
    struct ptt_file_header fh;
    if (r->size < sizeof fh || read_at(r, &fh, sizeof fh, 0)) {
        snprintf(err, errlen, "%s: not a ptt trace (file too short: %llu bytes)", path,
                 (unsigned long long)r->size);
        goto fail;
    }
    if (memcmp(fh.magic, PTT_FILE_MAGIC, 8)) {
        snprintf(err, errlen, "%s: not a ptt trace (bad magic at offset 0)", path);
        goto fail;
    }
    if (fh.major < 1 || fh.major > PTT_FORMAT_MAJOR) {
        snprintf(err, errlen, "%s: trace format version %u.%u, this ptt reads versions 1.x to %u.x",
                 path, fh.major, fh.minor, PTT_FORMAT_MAJOR);
        goto fail;
    }
    if (fh.header_size < sizeof fh || fh.header_size % 8 || fh.header_size > r->size) {
        snprintf(err, errlen, "%s: corrupt file header (size %u) at offset 8", path,
                 fh.header_size);
        goto fail;
    }
    r->path = strdup(path);
    r->calls = ptt_tracker_new(PTT_TRACK_SERIAL | PTT_TRACK_CALLS_ONLY);
    index_file(r, fh.header_size);
    if (!r->nstreams && !r->has_end)
        set_err(r, "no events: %s (ptt trace ended before writing any)",
                r->size == fh.header_size ? "nothing follows the file header"
                                          : "no chunk and no END record");
    for (size_t i = 0; i < r->nstreams; i++)
        qsort(r->streams[i].chunks, r->streams[i].nchunks, sizeof(struct chunkref), by_seq);
    r->ns_per_tick = 1;
    if (r->nclk >= 2 && r->clk_last.ticks > r->clk_first.ticks &&
        r->clk_last.mono_ns > r->clk_first.mono_ns)
        r->ns_per_tick = (long double)(r->clk_last.mono_ns - r->clk_first.mono_ns) /
                         (long double)(r->clk_last.ticks - r->clk_first.ticks);
    else {
        const char *hz = ptt_reader_info(r, "ticks_per_second");
        if (hz && strtod(hz, NULL) > 0)
            r->ns_per_tick = 1e9L / strtold(hz, NULL);
    }
    split_ns_per_tick(r);
    return r;
fail:
    if (r->fd >= 0)
        close(r->fd);
    free(r);
    return NULL;
}

/* Load the stream's next chunk; 0 when there is none (or it is unreadable). */
static int load_chunk(struct ptt_reader *r, struct stream *s)
{
    if (s->next_chunk >= s->nchunks)
        return 0;
    struct chunkref *c = &s->chunks[s->next_chunk++];
    struct ptt_rec_chunk h;
    size_t len = c->size - sizeof h;
    if (len > s->buf_cap) {
        free(s->buf);
        /* Room after the events: advance copies six arguments of an event with fewer. */
        s->buf = calloc(1, len + BUF_SLACK);
        s->buf_cap = s->buf ? len : 0;
        if (!s->buf) {
            set_err(r, "out of memory for a chunk of %zu bytes", len);
            return 0;
        }
    }
    if (read_at(r, &h, sizeof h, c->offset) || read_at(r, s->buf, len, c->offset + sizeof h)) {
        set_err(r, "cannot read chunk at offset %llu", (unsigned long long)c->offset);
        return 0;
    }
    s->tid = h.tid;
    s->pos = 0;
    s->len = len;
    s->data_off = c->offset + sizeof h;
    s->base = h.base_ts;
    s->compact = (h.flags & PTT_CHUNK_COMPACT) != 0;
    if (s->compact && !s->dec && !(s->dec = malloc(sizeof *s->dec))) {
        set_err(r, "out of memory for a chunk's decoding");
        return 0;
    }
    if (s->compact)
        ptt_dec_start(s->dec, h.base_ts);
    return 1;
}

static uint64_t pid_end_ticks(struct ptt_reader *r, int32_t pid)
{
    for (size_t i = 0; i < r->nends; i++)
        if (r->ends[i].pid == pid)
            return r->ends[i].ticks;
    return 0;
}

/* Calls still open when the stream ended are closed by TRACE_UNFINISHED events, at the end of
 * the process when ptt trace saw it, else at the end of the trace. */
static int synth_unfinished(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    struct ptt_open *call = s->calls ? ptt_tthread_call(s->calls) : NULL;
    if (!call)
        return 0;
    uint64_t t = pid_end_ticks(r, s->pid);
    if (!t)
        t = r->nclk >= 2 ? r->clk_last.ticks : s->last;
    if ((int64_t)(t - s->last) < 0)
        t = s->last;
    memset(ev, 0, sizeof *ev);
    ev->ticks = t;
    ev->pid = s->pid;
    ev->tid = s->tid;
    ev->serial = s->serial;
    ev->id = PTT_EV_TRACE_UNFINISHED;
    ev->info = ptt_evinfo(ev->id);
    ev->nargs = PTT_F(TRACE_UNFINISHED, event) + 1;
    ev->args[PTT_F(TRACE_UNFINISHED, event)] = call->in.id;
    ptt_tracker_feed(s->calls, ev, NULL); /* closes it */
    return 1;
}

/* Follow the stream's calls. A cancelled thread was inside the innermost call it had not left:
 * its end (held back) is told just after a THREAD_CANCELLED naming it. */
static void track_calls(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    if (ev->nested || !ev->info) /* a signal handler's calls are not reported unfinished */
        return;
    if (!s->calls)
        s->calls = ptt_tracker_get(r->calls, ev);
    struct ptt_open *call = ev->id == PTT_EV_THREAD_END ? ptt_tthread_call(s->calls) : NULL;
    uint16_t in = call ? call->in.id : 0;
    ptt_tracker_feed(s->calls, ev, NULL);
    if (ev->id == PTT_EV_THREAD_END && in && ptt_ev_arg(ev, PTT_F(THREAD_END, how), 0) == 2) {
        s->held = *ev;
        s->has_held = 1;
        ev->id = PTT_EV_THREAD_CANCELLED;
        ev->info = ptt_evinfo(ev->id);
        ev->nargs = PTT_F(THREAD_CANCELLED, call) + 1;
        ev->args[PTT_F(THREAD_CANCELLED, call)] = in;
        ev->offset = 0;
    }
}

static void track_calls(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev);

/* Whether the event of header h and time t, in a stream still before r->skip_below, is passed
 * over: a call's IN or OUT event r->keep does not want. Its call is followed still (from its
 * header: the calls left unfinished are told as if nothing was skipped). The stream stops
 * looking at its first event past skip_below. */
static int skipped(struct ptt_reader *r, struct stream *s, const struct ptt_event *h, uint64_t t)
{
    if ((int64_t)(t - r->skip_below) >= 0) {
        s->skipping = 0;
        return 0;
    }
    uint16_t id = h->id & PTT_EV_ID_MASK;
    const struct ptt_evinfo *info = ptt_evinfo(id);
    if (!info || (info->kind != PTT_KIND_IN && info->kind != PTT_KIND_OUT) ||
        (r->keep && r->keep(id)))
        return 0;
    struct ptt_ev ev;
    memset(&ev, 0, offsetof(struct ptt_ev, args));
    ev.id = id;
    ev.info = info;
    ev.nested = (h->id & PTT_EVF_NEST) != 0;
    ev.ticks = t;
    ev.pid = s->pid;
    ev.tid = s->tid;
    ev.serial = s->serial;
    track_calls(r, s, &ev);
    return 1;
}

/* The stream's next event to decode: its header h at s->buf + s->pos, its time into *t (the
 * stream's clock moved on); 0 at the stream's end, or at a corrupt event (the rest of the
 * stream dropped). Padding and the events skipped are passed over, not decoded. */
static int next_raw(struct ptt_reader *r, struct stream *s, struct ptt_event *h, uint64_t *t)
{
    for (;;) {
        while (s->pos + (s->compact ? 1 : 8) > s->len) {
            if (s->pos != s->len)
                set_err(r, "corrupt event at offset %llu (chunk ends inside it)",
                        (unsigned long long)(s->data_off + s->pos));
            if (!load_chunk(r, s))
                return 0;
        }
        uint64_t x;
        if (s->compact) { /* decode.c: its arguments wait in s->dec */
            int k = ptt_dec_next(s->dec, s->buf + s->pos, s->len - s->pos, h, &x);
            if (!k) { /* the chunk's records end here */
                s->pos = s->len;
                continue;
            }
            if (k > 0)
                goto decoded;
            set_err(r, "corrupt record at offset %llu", (unsigned long long)(s->data_off + s->pos));
            s->nchunks = s->next_chunk;
            return 0;
        }
        memcpy(h, s->buf + s->pos, 8);
        int abs = (h->id & PTT_EVF_ABS) != 0;
        unsigned hdr = abs ? 16 : 8;
        if (h->size < hdr || h->size % 8 || s->pos + h->size > s->len ||
            (h->size - hdr) / 8 > PTT_EVENT_MAX_ARGS || (h->id & PTT_EV_ID_MASK) == 0) {
            set_err(r, "corrupt event (id 0x%04x, size %u) at offset %llu", h->id, h->size,
                    (unsigned long long)(s->data_off + s->pos));
            s->nchunks = s->next_chunk; /* the rest of this thread cannot be trusted */
            return 0;
        }
        if (abs) {
            memcpy(&x, s->buf + s->pos + 8, 8);
            if (!(h->id & PTT_EVF_NEST))
                s->base = x;
        } else {
            x = s->base + h->dts;
            s->base = x;
        }
    decoded:
        /* Merge on a per-thread non-decreasing time: an event of a signal handler may carry a
         * time a little before the event it interrupted. */
        if ((int64_t)(x - s->last) < 0 && s->last)
            x = s->last;
        s->last = x;
        if ((h->id & PTT_EV_ID_MASK) != PTT_EV_TRACE_PAD && !(s->skipping && skipped(r, s, h, x))) {
            *t = x;
            return 1;
        }
        s->pos += h->size; /* a slot its writer gave up, or an event skipped */
    }
}

/* Decode the stream's next event into ev[cur]; 0 at its end. */
static int advance(struct ptt_reader *r, struct stream *s)
{
    struct ptt_ev *ev = &s->ev[s->cur];
    if (s->has_held) {
        s->has_held = 0;
        memcpy(ev, &s->held, offsetof(struct ptt_ev, args) + s->held.nargs * sizeof ev->args[0]);
        return 1;
    }
    struct ptt_event h;
    uint64_t t;
    if (s->done || !next_raw(r, s, &h, &t)) {
        s->done = 1; /* what is left: the calls it never left */
        return synth_unfinished(r, s, ev);
    }
    unsigned hdr = (h.id & PTT_EVF_ABS) ? 16 : 8;
    memset(ev, 0, offsetof(struct ptt_ev, args));
    ev->id = h.id & PTT_EV_ID_MASK;
    ev->nested = (h.id & PTT_EVF_NEST) != 0;
    if (s->compact) {
        ev->nargs = s->dec->nargs;
        memcpy(ev->args, s->dec->args, ev->nargs * 8);
    } else if ((ev->nargs = (h.size - hdr) / 8) <= 6) /* most: a fixed-size copy, inlined */
        memcpy(ev->args, s->buf + s->pos + hdr, 6 * 8);
    else
        memcpy(ev->args, s->buf + s->pos + hdr, ev->nargs * 8);
    ev->ticks = t;
    ev->pid = s->pid;
    ev->tid = s->tid;
    ev->serial = s->serial;
    ev->info = ptt_evinfo(ev->id);
    ev->offset = s->data_off + s->pos;
    s->pos += h.size;
    int call = ptt_decode_call(ev, &s->held); /* a whole call: its IN now, its OUT next */
    track_calls(r, s, ev);
    if (call) {
        track_calls(r, s, &s->held);
        s->has_held = 1;
        if ((int64_t)(s->held.ticks - s->last) > 0)
            s->last = s->held.ticks;
    }
    return 1;
}

static int before(const struct heapent *x, const struct heapent *y)
{
    if (x->ticks != y->ticks)
        return (int64_t)(x->ticks - y->ticks) < 0;
    return x->order < y->order;
}

static void sift_down(struct ptt_reader *r, size_t i)
{
    struct heapent *h = r->heap, e = h[i];
    for (;;) {
        size_t l = 2 * i + 1, m;
        if (l >= r->nheap)
            break;
        m = l + 1 < r->nheap && before(&h[l + 1], &h[l]) ? l + 1 : l;
        if (!before(&h[m], &e))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = e;
}

static void start(struct ptt_reader *r)
{
    r->started = 1;
    r->heap = malloc((r->nstreams + 1) * sizeof *r->heap);
    if (!r->heap)
        exit(2);
    for (size_t i = 0; i < r->nstreams; i++) {
        struct stream *s = &r->streams[i];
        if (advance(r, s))
            r->heap[r->nheap++] =
                (struct heapent){s->ev[s->cur].ticks, (uint64_t)(s->serial == 0) << 32 | i};
    }
    for (size_t i = r->nheap; i-- > 0;)
        sift_down(r, i);
}

void ptt_reader_skip(struct ptt_reader *r, int64_t from_ns, int (*keep)(uint16_t id))
{
    /* A tick or two less than from_ns: what is skipped is surely before it (the events just
     * before are decoded, for the caller to leave out). */
    long double k = (long double)from_ns / r->ns_per_tick - 2;
    if (r->started || !(k > 0) || k > 1.8e19L)
        return;
    r->skip_below = r->clk_first.ticks + (uint64_t)k;
    r->keep = keep;
    for (size_t i = 0; i < r->nstreams; i++)
        r->streams[i].skipping = 1;
}

const struct ptt_ev *ptt_reader_get(struct ptt_reader *r)
{
    if (!r->started)
        start(r);
    if (!r->nheap)
        return NULL;
    struct stream *s = &r->streams[(uint32_t)r->heap[0].order];
    struct ptt_ev *ev = &s->ev[s->cur];
    s->cur ^= 1;
    if (advance(r, s))
        r->heap[0].ticks = s->ev[s->cur].ticks;
    else
        r->heap[0] = r->heap[--r->nheap];
    sift_down(r, 0);
    ev->ns = to_ns(r, ev->ticks);
    return ev;
}

int ptt_reader_next(struct ptt_reader *r, struct ptt_ev *ev)
{
    const struct ptt_ev *e = ptt_reader_get(r);
    if (!e)
        return 0;
    /* The header and the recorded arguments: not the whole array. */
    memcpy(ev, e, offsetof(struct ptt_ev, args) + e->nargs * sizeof ev->args[0]);
    return 1;
}

const char *ptt_reader_error(const struct ptt_reader *r)
{
    return r->err[0] ? r->err : NULL;
}

const char *ptt_reader_info(const struct ptt_reader *r, const char *key)
{
    static char val[4096];
    size_t kl = strlen(key);
    for (const char *p = r->info; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > kl && !memcmp(p, key, kl) && p[kl] == '=') {
            size_t vl = n - kl - 1 < sizeof val - 1 ? n - kl - 1 : sizeof val - 1;
            memcpy(val, p + kl + 1, vl);
            val[vl] = 0;
            return val;
        }
        p = nl ? nl + 1 : p + n;
    }
    return NULL;
}

const struct ptt_rec_end *ptt_reader_end(const struct ptt_reader *r)
{
    return r->has_end ? &r->end : NULL;
}

uint64_t ptt_reader_nthreads(const struct ptt_reader *r)
{
    uint64_t n = 0;
    for (size_t i = 0; i < r->nstreams; i++)
        n += r->streams[i].serial != 0; /* serial 0: ptt trace's own events */
    return n;
}

void ptt_reader_close(struct ptt_reader *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nstreams; i++) {
        free(r->streams[i].chunks);
        free(r->streams[i].buf);
        free(r->streams[i].dec);
    }
    free(r->streams);
    free(r->hash);
    free(r->ends);
    free(r->heap);
    ptt_tracker_free(r->calls);
    free(r->info);
    free(r->path);
    close(r->fd);
    free(r);
}

void ptt_reader_progress(const struct ptt_reader *r, uint64_t *done, uint64_t *total)
{
    *done = *total = 0;
    for (size_t i = 0; i < r->nstreams; i++) {
        const struct stream *s = &r->streams[i];
        for (size_t k = 0; k < s->nchunks; k++) {
            *total += s->chunks[k].size;
            if (k < s->next_chunk)
                *done += s->chunks[k].size;
        }
    }
}
