/* Trace reader: index pass over the records, then a heap merge of per-thread streams. */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <limits.h>
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
#include "trace/parts.h"
#include "trace/reader.h"
#include "trace/readahead.h"
#include "trace/decode.h"
#include "analysis/tracker.h"
#include "util/util.h"

#define MAX_CHUNK (1u << 30)
#define BUF_SLACK 64
/* A rare path out of the per-event one (a new chunk, a stream's end, skipping, a thread's end):
 * kept out of line, so that what every event runs stays short and in line. */
#define RARE __attribute__((cold, noinline))
/* The per-event path itself, in line whatever the compiler's estimate of its size. */
#define EVERY static inline __attribute__((always_inline))

struct chunkref {
    uint64_t offset; /* of the chunk record, in its part */
    uint32_t size;
    uint32_t seq;
    uint32_t part;  /* the file it is in: r->parts[part] */
    uint32_t carry; /* a carried chunk: before the stream's others */
};

/* A file the reader reads: the trace, or one part of a rotated trace (parts.h). */
struct part {
    char *path;
    int fd; /* -1: closed, opened again when a chunk is read from it */
    uint64_t size;
    uint64_t used; /* when last read: the least recently read is closed first */
    uint32_t header_size;
    unsigned number; /* N of FILE.N (its INFO's part key); 0: not a part */
    int continued;   /* not the last part of its set (its INFO's next_part key) */
};

/* Parts kept open at most: a long run may have thousands. */
#define MAX_OPEN_PARTS 256

/* A stream's events at hand: its next one, ev[cur], decoded; the other, the one ptt_reader_get
 * gave last (valid until the next call: no copy); one held back. 1.3 KB: only the streams being
 * read have one (a trace of a million short threads would hold one for each). */
struct cursor {
    struct ptt_ev ev[2];
    struct ptt_ev held; /* delivered after a synthesized event that must precede it */
};

struct stream {
    int32_t pid, tid;
    uint32_t serial;
    struct chunkref *chunks;
    size_t nchunks, cap, next_chunk;
    uint8_t *buf;
    size_t buf_cap, pos, len;
    uint64_t data_off; /* file offset of buf[0] */
    uint32_t part;     /* the file of its current chunk */
    uint64_t base, last;
    struct ptt_tthread *calls; /* its calls entered and not yet left (r->calls) */
    int done;
    int skipping; /* before r->skip_below still */
    unsigned cur; /* c->ev[cur]: its next event */
    int has_held;
    struct cursor *c; /* while it is read: from its first event to its last one's delivery */
    /* A call's one record of the compact encoding was delivered as its IN (ev[cur ^ 1] once it
     * is given): its OUT, of this id, comes next, made from the IN and dec's arguments. */
    const struct ptt_evinfo *call_out;
    /* Its chunk is of the compact encoding (format 2), decoded with dec (decode.h). */
    int compact;
    struct ptt_dec *dec;
};

/* A stream in the merge, with its next event's sort key: the heap compares these alone, not
 * the streams' events (far apart in memory). order: the stream's index, ptt trace's own
 * streams (serial 0: a process's end) after its threads' at the same time, with OPENED set
 * once the stream is being read. One not yet opened waits with the time of its first record (no
 * event of it comes before), and before the others at that time: it is opened when it comes
 * first, and goes back in with its first event's time, so that nothing changes the order. */
#define OPENED (1ull << 40)
struct heapent {
    uint64_t ticks;
    uint64_t order;
};

struct pid_end {
    int32_t pid;
    uint64_t ticks;
};

/* A program's start in a process: its main thread's first event, PROCESS_START (an exec's, when
 * the pid has older threads). serial: that thread's. */
struct image {
    int32_t pid;
    uint32_t serial;
    uint64_t ticks;
};

struct ptt_reader {
    struct part *parts; /* one, or the parts of a set read, in order */
    unsigned nparts, nopen;
    uint64_t used;
    int is_set;                    /* read from FILE's parts: errors name the part */
    unsigned seq_gaps;             /* streams with a chunk missing between two read */
    struct ptt_reader_parts pinfo; /* what parts were read (pinfo.nread 0: not a part) */
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
    struct image *images;
    size_t nimages, images_cap;
    int ends_sorted;      /* ends and images by pid then time, once a call is closed */
    struct heapent *heap; /* the streams in the merge, but top */
    size_t nheap;
    struct heapent top; /* the stream whose event comes next, if has_top */
    int has_top;
    struct stream *retired;    /* read to its end: what it holds goes at the next event */
    struct ptt_tracker *calls; /* each stream's calls entered and not yet left */
    int started;
    uint64_t skip_below; /* ptt_reader_skip: the events before are not decoded */
    /* By id: the events passed over before skip_below (the calls' IN and OUT the caller does not
     * keep); a table, not the caller's function: every skipped event is looked up. */
    uint64_t pass_over[(PTT_EV_ID_MASK + 1) / 64];
    struct ptt_evindex evx;
    /* By the index of a routine's IN in evx (its ord): the events of its one record (PTT_CALL),
     * and how many arguments that record has (none: 0), checked once, not for every record. */
    struct callrec {
        const struct ptt_evinfo *in, *out;
        unsigned nargs;
    } callrec[256];
    long double ns_per_tick;
    uint64_t tick_m; /* ns_per_tick = tick_m * 2^tick_e exactly, when long double is x87's */
    int tick_e;
    int tick_shift;      /* -tick_e - 64 when tick_e is in (-128, -64] (to_ns in line), else -1 */
    uint64_t fast_below; /* to_ns in line for a time 1 to this many ticks after the start */
    /* Bytes of the chunks read or passed over so far: written by the thread that merges, read by
     * the progress line (relaxed atomics: only a figure to show). */
    uint64_t bytes_done;
    struct ptt_readahead *ra; /* the merge on a thread of its own, or NULL */
    int ra_decided;
    char err[512];
};

static void count_chunk(struct ptt_reader *r, const struct chunkref *c)
{
    __atomic_store_n(&r->bytes_done, r->bytes_done + c->size, __ATOMIC_RELAXED);
}

static void set_err(struct ptt_reader *r, const char *fmt, ...)
{
    if (r->err[0])
        return; /* keep the first problem: the later ones usually follow from it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
}

/* The first problem, in part i (named when the reader reads a set). */
static void part_err(struct ptt_reader *r, uint32_t i, const char *fmt, ...)
{
    if (r->err[0])
        return;
    int k = r->is_set ? snprintf(r->err, sizeof r->err, "%s: ", r->parts[i].path) : 0;
    if (k < 0 || (size_t)k >= sizeof r->err / 2)
        k = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, sizeof r->err - (size_t)k, fmt, ap);
    va_end(ap);
}

/* Close the part read least recently (not part keep); 0 when none is open. */
static int close_lru(struct ptt_reader *r, uint32_t keep)
{
    struct part *lru = NULL;
    for (unsigned k = 0; k < r->nparts; k++)
        if (k != keep && r->parts[k].fd >= 0 && (!lru || r->parts[k].used < lru->used))
            lru = &r->parts[k];
    if (!lru)
        return 0;
    close(lru->fd);
    lru->fd = -1;
    r->nopen--;
    return 1;
}

/* The descriptor of part i, opened again if it was closed (the least recently read part closed
 * first when too many are open, or when the process may open no more). */
static int part_fd(struct ptt_reader *r, uint32_t i)
{
    struct part *p = &r->parts[i];
    p->used = ++r->used;
    if (p->fd >= 0)
        return p->fd;
    if (r->nopen >= MAX_OPEN_PARTS)
        close_lru(r, i);
    /* as probe_part: what replaced the part since is not waited for, nor read */
    while ((p->fd = open(p->path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0 &&
           (errno == EMFILE || errno == ENFILE) && close_lru(r, i)) {
    }
    struct stat st;
    if (p->fd >= 0 && (fstat(p->fd, &st) || !S_ISREG(st.st_mode))) {
        close(p->fd);
        p->fd = -1;
        errno = EINVAL;
    }
    r->nopen += p->fd >= 0;
    return p->fd;
}

static int read_at(struct ptt_reader *r, uint32_t part, void *buf, size_t len, uint64_t off)
{
    size_t got = 0;
    int fd = part_fd(r, part);
    if (fd < 0)
        return -1;
    while (got < len) {
        ssize_t k = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* p with room for need elements, doubled from first when it had none. */
static void *grow_from(void *p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : first;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) {
        ptt_out_of_memory();
    }
    *cap = n;
    return q;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    return grow_from(p, cap, need, elem, 16);
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
            ptt_out_of_memory();
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
 * process ended (calls still open in it are closed at that time). Carried ones have their own
 * times (ABS). */
static void note_daemon_chunk(struct ptt_reader *r, uint32_t part, const struct ptt_rec_chunk *c,
                              uint64_t off)
{
    size_t len = c->h.size - sizeof *c;
    if (len > 1u << 20)
        return;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf || read_at(r, part, buf, len, off + sizeof *c)) {
        free(buf);
        return;
    }
    uint64_t base = c->base_ts;
    for (size_t p = 0; p + 8 <= len;) {
        struct ptt_event h;
        memcpy(&h, buf + p, 8);
        if (h.size < 8 || h.size % 8 || p + h.size > len || ((h.id & PTT_EVF_ABS) && h.size < 16))
            break;
        uint64_t t = base + h.dts;
        if (h.id & PTT_EVF_ABS)
            memcpy(&t, buf + p + 8, 8);
        if ((h.id & PTT_EV_ID_MASK) == PTT_EV_PROCESS_EXIT) {
            r->ends = grow(r->ends, &r->ends_cap, r->nends + 1, sizeof *r->ends);
            r->ends[r->nends++] = (struct pid_end){c->pid, t};
        }
        base = t;
        p += h.size;
    }
    free(buf);
}

/* A stream's chunks: the carried ones first, then by seq; ptt trace's own chunks (all seq 0) in
 * the order of the parts and the file. */
static int by_seq(const void *a, const void *b)
{
    const struct chunkref *x = a, *y = b;
    if (x->carry != y->carry)
        return x->carry ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* INFO text of part i. A later part adds only keys the first did not have (the session's INFO
 * is in every part); next_part says the part is not its set's last. */
static void add_info(struct ptt_reader *r, uint32_t i, const char *text, size_t n)
{
    for (const char *p = text, *end = text + n; p < end && *p;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : strnlen(p, (size_t)(end - p));
        const char *eq = memchr(p, '=', l);
        char key[64];
        snprintf(key, sizeof key, "%.*s", eq ? (int)(eq - p) : 0, p);
        if (!strcmp(key, "next_part"))
            r->parts[i].continued = 1;
        else if (l && (i == 0 || (eq && !ptt_reader_info(r, key)))) {
            r->info = ptt_must(realloc(r->info, r->info_len + l + 2));
            memcpy(r->info + r->info_len, p, l);
            r->info_len += l;
            r->info[r->info_len++] = '\n';
            r->info[r->info_len] = 0;
        }
        p += l + (nl != NULL);
    }
}

/* A format 1 event at p (avail bytes), its time from base: its size, 0 when none whole. */
static int raw_event(const uint8_t *p, size_t avail, uint64_t base, struct ptt_event *h,
                     uint64_t *t)
{
    if (avail < 8)
        return 0;
    memcpy(h, p, 8);
    int abs = (h->id & PTT_EVF_ABS) != 0;
    if (h->size < (abs ? 16 : 8) || h->size % 8 || h->size > avail)
        return 0;
    *t = base + h->dts;
    if (abs)
        memcpy(t, p + 8, 8);
    return h->size;
}

/* Whether a chunk (header c at off of part i) begins with PROCESS_START, after meta events
 * only (a wait for the sub-buffer, a loss); *t: its time. */
static int starts_process(struct ptt_reader *r, uint32_t i, const struct ptt_rec_chunk *c,
                          uint64_t off, uint64_t *t)
{
    uint8_t buf[256];
    size_t len = c->h.size - sizeof *c < sizeof buf ? c->h.size - sizeof *c : sizeof buf, pos = 0;
    if (read_at(r, i, buf, len, off + sizeof *c))
        return 0;
    struct ptt_dec *dec = NULL;
    if ((c->flags & PTT_CHUNK_COMPACT) && !(dec = malloc(sizeof *dec)))
        return 0;
    if (dec)
        ptt_dec_start(dec, c->base_ts);
    uint64_t base = c->base_ts;
    int found = 0;
    for (unsigned n = 0; n < 8 && pos < len && !found; n++) {
        struct ptt_event h;
        int k = dec ? ptt_dec_next(dec, buf + pos, len - pos, &h, t)
                    : raw_event(buf + pos, len - pos, base, &h, t);
        if (k <= 0)
            break;
        pos += (size_t)k;
        base = *t;
        uint16_t id = h.id & PTT_EV_ID_MASK;
        const struct ptt_evinfo *in = ptt_evinfo(id);
        found = id == PTT_EV_PROCESS_START;
        if (!found && id != PTT_EV_TRACE_PAD && (!in || in->kind != PTT_KIND_META))
            break;
    }
    free(dec);
    return found;
}

/* A thread's first chunk: a process's main thread that starts with PROCESS_START starts a
 * program there (its first, or an exec's): the calls the process's older threads were left in
 * end at that time at the latest (synth_unfinished). */
static void note_image(struct ptt_reader *r, uint32_t i, const struct ptt_rec_chunk *c,
                       uint64_t off)
{
    uint64_t t;
    if (c->seq != 0 || c->tid != c->pid || (c->flags & PTT_CHUNK_DAEMON) ||
        !starts_process(r, i, c, off, &t))
        return;
    r->images = grow(r->images, &r->images_cap, r->nimages + 1, sizeof *r->images);
    r->images[r->nimages++] = (struct image){c->pid, c->serial, t};
}

/* A chunk record of part i at off: into its stream's index. Carried chunks only from the first
 * part read (the others carry what the parts before them hold). */
static int index_chunk(struct ptt_reader *r, uint32_t i, uint64_t off, uint32_t size)
{
    struct ptt_rec_chunk c;
    if (size < sizeof c || size > MAX_CHUNK || read_at(r, i, &c, sizeof c, off)) {
        part_err(r, i, "corrupt chunk record at offset %llu", (unsigned long long)off);
        return -1;
    }
    uint32_t carry = (c.flags & PTT_CHUNK_CARRY) != 0;
    if (carry && i != 0)
        return 0;
    struct stream *s =
        stream_for(r, c.pid, (c.flags & PTT_CHUNK_DAEMON) && !carry ? 0 : c.serial, c.tid);
    /* from one: most threads of a trace of many have a chunk or two */
    s->chunks = grow_from(s->chunks, &s->cap, s->nchunks + 1, sizeof *s->chunks, 1);
    s->chunks[s->nchunks++] = (struct chunkref){off, size, c.seq, i, carry};
    if (c.flags & PTT_CHUNK_DAEMON)
        note_daemon_chunk(r, i, &c, off);
    else
        note_image(r, i, &c, off);
    return 0;
}

/* The records of part i from off; the first problem ends it. */
static void index_file(struct ptt_reader *r, uint32_t i, uint64_t off)
{
    uint64_t size = r->parts[i].size;
    while (off < size) {
        struct ptt_record h;
        if (off + sizeof h > size) {
            part_err(r, i, "truncated record header at offset %llu", (unsigned long long)off);
            return;
        }
        if (read_at(r, i, &h, sizeof h, off)) {
            part_err(r, i, "cannot read at offset %llu: %s", (unsigned long long)off,
                     strerror(errno ? errno : EIO));
            return;
        }
        if (h.size < sizeof h || h.size % 8 || h.type == 0) {
            part_err(r, i, "corrupt record (type %u, size %u) at offset %llu", h.type, h.size,
                     (unsigned long long)off);
            return;
        }
        if (off + h.size > size) {
            part_err(r, i, "truncated record (type %u, %u bytes) at offset %llu", h.type, h.size,
                     (unsigned long long)off);
            return;
        }
        switch (h.type) {
        case PTT_REC_INFO: {
            size_t n = h.size - sizeof h;
            char *text = ptt_must(malloc(n + 1));
            if (read_at(r, i, text, n, off + sizeof h) == 0)
                add_info(r, i, text, n);
            free(text);
            break;
        }
        case PTT_REC_CLOCK: {
            struct ptt_rec_clock c;
            if (h.size < sizeof c || read_at(r, i, &c, sizeof c, off)) {
                part_err(r, i, "corrupt clock record at offset %llu", (unsigned long long)off);
                return;
            }
            if (!r->nclk++)
                r->clk_first = c;
            r->clk_last = c;
            break;
        }
        case PTT_REC_CHUNK:
            if (index_chunk(r, i, off, h.size))
                return;
            break;
        case PTT_REC_END:
            /* Minor 0's is shorter: what it lacks reads as 0. */
            memset(&r->end, 0, sizeof r->end);
            if (h.size >= PTT_REC_END_V0_SIZE &&
                read_at(r, i, &r->end, h.size < sizeof r->end ? h.size : sizeof r->end, off) == 0)
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
    r->tick_shift = -1;
    r->fast_below = 0;
#if LDBL_MANT_DIG == 64
    int e;
    long double f = frexpl(r->ns_per_tick, &e);
    if (!(f >= 0.5L && f < 1))
        return;
    r->tick_m = (uint64_t)ldexpl(f, 64);
    r->tick_e = e - 64;
    if (r->tick_e <= -64 && r->tick_e > -128) {
        r->tick_shift = -r->tick_e - 64;
        r->fast_below = (1ull << 62) - 1;
    }
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

static int64_t to_ns_any(const struct ptt_reader *r, uint64_t ticks)
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

/* The file header of fd (size bytes long): its header_size, or 0 with one line in err. */
static uint32_t check_header(int fd, uint64_t size, const char *path, char *err, size_t errlen)
{
    struct ptt_file_header fh;
    if (size < sizeof fh || pread(fd, &fh, sizeof fh, 0) != (ssize_t)sizeof fh) {
        snprintf(err, errlen, "%s: not a ptt trace (file too short: %llu bytes)", path,
                 (unsigned long long)size);
        return 0;
    }
    if (memcmp(fh.magic, PTT_FILE_MAGIC, 8)) {
        snprintf(err, errlen, "%s: not a ptt trace (bad magic at offset 0)", path);
        return 0;
    }
    if (fh.major < 1 || fh.major > PTT_FORMAT_MAJOR) {
        snprintf(err, errlen, "%s: trace format version %u.%u, this ptt reads versions 1.x to %u.x",
                 path, fh.major, fh.minor, PTT_FORMAT_MAJOR);
        return 0;
    }
    if (fh.header_size < sizeof fh || fh.header_size % 8 || fh.header_size > size) {
        snprintf(err, errlen, "%s: corrupt file header (size %u) at offset 8", path,
                 fh.header_size);
        return 0;
    }
    return fh.header_size;
}

/* A file path, its descriptor fd open, as r's next part; -1 (fd closed) with one line in err
 * when it is no trace. */
static int add_part(struct ptt_reader *r, const char *path, int fd, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    uint32_t hs = check_header(fd, (uint64_t)st.st_size, path, err, errlen);
    if (!hs) {
        close(fd);
        return -1;
    }
    r->parts = ptt_must(realloc(r->parts, (r->nparts + 1) * sizeof *r->parts));
    r->parts[r->nparts++] =
        (struct part){ptt_must(strdup(path)), fd, (uint64_t)st.st_size, 0, hs, 0, 0};
    r->nopen++;
    return 0;
}

/* What a part's first records say: its set and its number (its INFO's keys, written first). */
static void part_keys(int fd, uint32_t header_size, char *set, size_t setlen, unsigned *number)
{
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, header_size);
    *number = 0;
    set[0] = 0;
    for (ssize_t off = 0; n > 0 && off + 8 <= n;) {
        struct ptt_record h;
        memcpy(&h, buf + off, sizeof h);
        if (h.type == PTT_REC_CHUNK || h.size < 8 || h.size % 8 || off + h.size > n)
            break;
        if (h.type == PTT_REC_INFO) {
            char *text = buf + off + 8;
            char save = buf[off + h.size];
            buf[off + h.size] = 0;
            char *k;
            if ((k = strstr(text, "set=")) && (k == text || k[-1] == '\n'))
                snprintf(set, setlen, "%.*s", (int)strcspn(k + 4, "\n"), k + 4);
            if ((k = strstr(text, "part=")) && (k == text || k[-1] == '\n'))
                *number = (unsigned)strtoul(k + 5, NULL, 10);
            buf[off + h.size] = save;
        }
        off += h.size;
    }
}

/* Part name, looked at: its size, header size, set and number (0: not a part of a set). The
 * first problem into e, when it has room. */
struct probe {
    uint64_t size;
    uint32_t header_size;
    unsigned number;
    int present, left_out; /* the name exists; it is another user's, not read */
    uid_t owner;           /* the name's (a link's own, a FIFO's...) */
    char set[32];
};

static void probe_part(const char *name, struct probe *p, char *e, size_t elen)
{
    /* ptt trace writes a part as a regular file, never through a link: a FIFO is not waited for
     * (O_NONBLOCK: no effect on a regular file's reads), a link not followed, neither read */
    int fd = open(name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(e, elen, "%s: %s", name,
                 errno == ELOOP ? "a symbolic link, not a part" : strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(e, elen, "%s: not a regular file, not a part", name);
    } else {
        p->size = (uint64_t)st.st_size;
        p->header_size = check_header(fd, p->size, name, e, elen);
        if (p->header_size)
            part_keys(fd, p->header_size, p->set, sizeof p->set, &p->number);
    }
    if (fd >= 0)
        close(fd);
}

/* Whose parts are read: the user's own, when some are (another user may have put parts of a
 * higher number of their own beside them, in /tmp), else those of their one owner; parts of
 * other owners are left out (number 0). -1 with one line in err when the parts have several
 * owners, none of them the user. */
static int parts_owner(const char *path, struct probe *pr, const unsigned *nums, unsigned n,
                       char *err, size_t errlen)
{
    uid_t me = geteuid(), owner = me;
    int mine = 0, chosen = 0;
    unsigned other = 0, first = 0;
    for (unsigned k = 0; k < n; k++)
        mine |= pr[k].present && pr[k].owner == me;
    for (unsigned k = n; k-- > 0;) {
        if (!pr[k].present)
            continue;
        if (!mine && !chosen++)
            owner = pr[k].owner;    /* the highest-numbered part's */
        if (pr[k].owner != owner) { /* left out, whatever it is (junk, a FIFO, a link) */
            pr[k].left_out = 1;
            other++;
            first = k;
        }
    }
    if (other && !mine) {
        snprintf(err, errlen,
                 "%s: its parts %s.N belong to different users, none of them you: give the name "
                 "of one part",
                 path, path);
        return -1;
    }
    if (other)
        ptt_note("%s: %u part%s of another user left out (%s.%u, uid %u)", path, other,
                 other > 1 ? "s" : "", path, nums[first], (unsigned)pr[first].owner);
    return 0;
}

/* The set of the highest-numbered part that is a trace of a set: those of its parts that exist,
 * in order, into r (opened when read: a long run may have thousands). The first problem with a
 * part is kept for after the reading. -1 with one line in err when none is a trace. */
static int open_parts(struct ptt_reader *r, const char *path, const unsigned *nums, unsigned n,
                      char *err, size_t errlen)
{
    char name[PATH_MAX + 16], set[32] = "", e[PATH_MAX + 256] = "";
    struct probe *pr = ptt_must(calloc(n, sizeof *pr));
    struct stat st;
    for (unsigned k = n; k-- > 0;) /* whose each is, before anything is read */
        if (!ptt_part_name(name, sizeof name, path, nums[k]) && !lstat(name, &st))
            pr[k].present = 1, pr[k].owner = st.st_uid;
    if (parts_owner(path, pr, nums, n, err, errlen)) {
        free(pr);
        return -1;
    }
    for (unsigned k = n; k-- > 0;)
        if (pr[k].present && !pr[k].left_out && !ptt_part_name(name, sizeof name, path, nums[k]))
            probe_part(name, &pr[k], e + strlen(e), e[0] ? 0 : sizeof e);
    for (unsigned k = n; k-- > 0;) {
        if (pr[k].header_size && pr[k].set[0] && pr[k].number == nums[k] &&
            (!set[0] || !strcmp(set, pr[k].set)))
            snprintf(set, sizeof set, "%s", pr[k].set);
        else
            pr[k].number = 0; /* not of the set read */
    }
    for (unsigned k = 0; k < n; k++) {
        if (!pr[k].number)
            continue;
        ptt_part_name(name, sizeof name, path, nums[k]);
        r->parts = ptt_must(realloc(r->parts, (r->nparts + 1) * sizeof *r->parts));
        r->parts[r->nparts++] =
            (struct part){ptt_must(strdup(name)), -1, pr[k].size, 0, pr[k].header_size, nums[k], 0};
    }
    free(pr);
    if (!r->nparts) {
        snprintf(err, errlen, "%s: none of its parts %s.N is a part of a rotated trace%s%s", path,
                 path, e[0] ? ": " : "", e);
        return -1;
    }
    /* Both cut to their fields, as gcc's -O1 analysis asks to be told. */
    snprintf(r->pinfo.set, sizeof r->pinfo.set, "%.*s", (int)sizeof r->pinfo.set - 1, set);
    if (e[0])
        snprintf(r->err, sizeof r->err, "%.*s", (int)sizeof r->err - 1, e);
    return 0;
}

/* The parts read, those missing: the leading ones (deleted by --max-files) are said once on
 * stderr, one missing between two read is an error. */
static void describe_parts(struct ptt_reader *r, const char *path)
{
    struct ptt_reader_parts *pi = &r->pinfo;
    unsigned *nums = ptt_must(malloc(r->nparts * sizeof *nums));
    for (unsigned i = 0; i < r->nparts; i++)
        nums[i] = r->parts[i].number;
    pi->nread = r->nparts;
    pi->first = nums[0];
    pi->last = nums[r->nparts - 1];
    pi->before = pi->first - 1;
    pi->gaps = pi->last - pi->first + 1 - r->nparts;
    pi->continued = r->parts[r->nparts - 1].continued;
    ptt_parts_ranges(pi->read, sizeof pi->read, nums, r->nparts);
    /* described by ranges: a part number comes from a file name, it may be any */
    ptt_parts_missing(pi->missing, sizeof pi->missing, nums, r->nparts, 1);
    char gap[sizeof pi->missing];
    ptt_parts_missing(gap, sizeof gap, nums, r->nparts, pi->first);
    free(nums);
    if (pi->gaps && !r->err[0])
        snprintf(r->err, sizeof r->err, "part%s %s %s missing: the events %s held are not read",
                 pi->gaps > 1 ? "s" : "", gap, pi->gaps > 1 ? "are" : "is",
                 pi->gaps > 1 ? "they" : "it");
    static char *said; /* once per trace: a command may open it more than once */
    if (!pi->before || (said && !strcmp(said, path)))
        return;
    free(said);
    said = strdup(path);
    const char *mf = ptt_reader_info(r, "max_files");
    char why[64] = "deleted";
    if (mf && strtoul(mf, NULL, 10) > 0)
        snprintf(why, sizeof why, "deleted: --max-files=%s", mf);
    ptt_note("%s: part%s %.*s %s missing (%s): reading part%s %s", path, pi->before > 1 ? "s" : "",
             (int)strcspn(pi->missing, ","), pi->missing, pi->before > 1 ? "are" : "is", why,
             r->nparts > 1 ? "s" : "", pi->read);
}

/* Whether a chunk of stream s is missing between two it has (a file cut short: the drain writes
 * the sub-buffers in the pool's order, not in each thread's). ptt trace's own chunks are all
 * seq 0; carried ones come first, with seqs of their own. */
static int seq_gap(const struct stream *s)
{
    for (size_t k = 1; k < s->nchunks; k++) {
        const struct chunkref *a = &s->chunks[k - 1], *b = &s->chunks[k];
        if (!a->carry && b->seq != a->seq && b->seq != a->seq + 1)
            return 1;
    }
    return 0;
}

unsigned ptt_reader_seq_gaps(const struct ptt_reader *r)
{
    return r->seq_gaps;
}

/* The parts of a set what a single file is part of, from its INFO (read alone). */
static void single_part(struct ptt_reader *r)
{
    const char *part = ptt_reader_info(r, "part"); /* a static buffer: read before the next */
    unsigned n = part ? (unsigned)strtoul(part, NULL, 10) : 0;
    const char *set = ptt_reader_info(r, "set");
    if (!n || !set)
        return;
    struct ptt_reader_parts *pi = &r->pinfo;
    snprintf(pi->set, sizeof pi->set, "%s", set);
    pi->nread = 1;
    pi->first = pi->last = n;
    pi->before = n - 1;
    pi->continued = r->parts[0].continued;
    snprintf(pi->read, sizeof pi->read, "%u", n);
    if (n == 2)
        snprintf(pi->missing, sizeof pi->missing, "1");
    else if (n > 2)
        snprintf(pi->missing, sizeof pi->missing, "1-%u", n - 1);
}

/* path, or when no such file exists its parts (path.1, path.2, ...: a rotated trace). 1 when
 * read as a set. -1 with one line in err. */
static int open_files(struct ptt_reader *r, const char *path, char *err, size_t errlen)
{
    struct stat st;
    unsigned n = 0, *nums = NULL;
    if (strcmp(path, "-") && stat(path, &st) && errno == ENOENT)
        nums = ptt_parts_list(path, &n);
    if (n) {
        int ret = open_parts(r, path, nums, n, err, errlen);
        free(nums);
        return ret ? -1 : 1;
    }
    int fd = ptt_reader_fd(path, err, errlen);
    return fd < 0 || add_part(r, path, fd, err, errlen) ? -1 : 0;
}

static void reader_free(struct ptt_reader *r)
{
    for (unsigned i = 0; i < r->nparts; i++) {
        if (r->parts[i].fd >= 0)
            close(r->parts[i].fd);
        free(r->parts[i].path);
    }
    free(r->parts);
    free(r->info);
    free(r);
}

/* Ticks since the start in ns: to_ns_any, with scaled's common case in line (every event comes
 * here): a time after the start (by less than 2^62 ticks), a tick shorter than a ns (fast_below
 * is set with tick_shift), and a product whose rounding to 64 significant bits cannot carry out
 * of its low word. The rounding adds less than 2^sh, sh the bit length of the high word hi, so
 * at most 2 hi: lo <= ~(2 hi) is enough (the few others go the long way). */
static inline int64_t to_ns(const struct ptt_reader *r, uint64_t ticks)
{
    uint64_t d = ticks - r->clk_first.ticks;
    if (d - 1 < r->fast_below) { /* then hi <= d < 2^62, and v <= hi below 9.2e18 */
        unsigned __int128 p = (unsigned __int128)d * r->tick_m;
        uint64_t hi = (uint64_t)(p >> 64), lo = (uint64_t)p;
        if (hi && lo <= ~(hi << 1))
            return (int64_t)(hi >> r->tick_shift);
    }
    return to_ns_any(r, ticks);
}

/* r->callrec, from the table: the routines whose IN and OUT a one record holds, but those of
 * more than eight arguments (decode_call's fixed-size copies). */
static void call_records(struct ptt_reader *r)
{
    unsigned n;
    const struct ptt_evinfo *all = ptt_evinfo_all(&n);
    for (unsigned i = 0; i < n; i++) {
        const struct ptt_evinfo *in = ptt_evindex_get(r->evx, all[i].id);
        const struct ptt_evinfo *o =
            in && in->call_out ? ptt_evindex_get(r->evx, in->call_out) : NULL;
        if (o && in->nargs <= 8 && o->nargs <= 8)
            r->callrec[r->evx.ord[in->id]] = (struct callrec){in, o, 1u + in->nargs + o->nargs};
    }
}

struct ptt_reader *ptt_reader_open(const char *path, char *err, size_t errlen)
{
    struct ptt_reader *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    int set = open_files(r, path, err, errlen);
    if (set < 0) {
        reader_free(r);
        return NULL;
    }
    r->is_set = set;
    r->evx = ptt_evindex();
    call_records(r);
    r->calls = ptt_tracker_new(PTT_TRACK_SERIAL | PTT_TRACK_CALLS_ONLY);
    for (unsigned i = 0; i < r->nparts; i++)
        index_file(r, i, r->parts[i].header_size);
    if (set)
        describe_parts(r, path);
    else
        single_part(r);
    if (!r->nstreams && !r->has_end)
        set_err(r, "no events: %s (ptt trace ended before writing any)",
                r->parts[0].size == r->parts[0].header_size && r->nparts == 1
                    ? "nothing follows the file header"
                    : "no chunk and no END record");
    for (size_t i = 0; i < r->nstreams; i++) {
        struct stream *s = &r->streams[i];
        qsort(s->chunks, s->nchunks, sizeof(struct chunkref), by_seq);
        r->seq_gaps += seq_gap(s);
    }
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
}

/* Load the stream's next chunk; 0 when there is none (or it is unreadable). */
RARE static int load_chunk(struct ptt_reader *r, struct stream *s)
{
    if (s->next_chunk >= s->nchunks)
        return 0;
    struct chunkref *c = &s->chunks[s->next_chunk++];
    count_chunk(r, c);
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
    if (read_at(r, c->part, &h, sizeof h, c->offset) ||
        read_at(r, c->part, s->buf, len, c->offset + sizeof h)) {
        part_err(r, c->part, "cannot read chunk at offset %llu", (unsigned long long)c->offset);
        return 0;
    }
    s->part = c->part;
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

static int by_pid_end(const void *a, const void *b)
{
    const struct pid_end *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

static int by_pid_image(const void *a, const void *b)
{
    const struct image *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* The first of n entries of size `size` (sorted by pid, an int32_t first) with pid >= pid. */
static size_t first_of_pid(const void *v, size_t n, size_t size, int32_t pid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t p;
        memcpy(&p, (const char *)v + mid * size, sizeof p);
        if (p < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* When stream s's program ended after its last event: the first end of its process after it, or
 * the start of a later program of the process (an exec, which ends every thread of the old one);
 * 0: unknown. Looked up by pid: a trace may hold 250,000 processes, each with a call left. */
static uint64_t program_end_ticks(struct ptt_reader *r, const struct stream *s)
{
    if (!r->ends_sorted) {
        if (r->nends)
            qsort(r->ends, r->nends, sizeof *r->ends, by_pid_end);
        if (r->nimages)
            qsort(r->images, r->nimages, sizeof *r->images, by_pid_image);
        r->ends_sorted = 1;
    }
    uint64_t end = 0;
    for (size_t i = first_of_pid(r->ends, r->nends, sizeof *r->ends, s->pid);
         i < r->nends && r->ends[i].pid == s->pid; i++)
        if ((int64_t)(r->ends[i].ticks - s->last) >= 0) {
            end = r->ends[i].ticks;
            break;
        }
    for (size_t i = first_of_pid(r->images, r->nimages, sizeof *r->images, s->pid);
         i < r->nimages && r->images[i].pid == s->pid; i++)
        if (r->images[i].serial > s->serial && (int64_t)(r->images[i].ticks - s->last) >= 0 &&
            (!end || r->images[i].ticks < end)) {
            end = r->images[i].ticks;
            break;
        }
    return end;
}

/* Calls still open when the stream ended are closed by TRACE_UNFINISHED events, at the end of
 * its program when known (the process's end, an exec), else at the end of the trace. */
RARE static int synth_unfinished(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    struct ptt_open *call = s->calls ? ptt_tthread_call(s->calls) : NULL;
    if (!call)
        return 0;
    uint64_t t = program_end_ticks(r, s);
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

/* A thread's end. A cancelled thread was inside the innermost call it had not left: its end
 * (held back) is told just after a THREAD_CANCELLED naming it. */
RARE static void thread_end(struct stream *s, struct ptt_ev *ev)
{
    struct ptt_open *call = ptt_tthread_call(s->calls);
    uint16_t in = call ? call->in.id : 0;
    ptt_tracker_feed(s->calls, ev, NULL);
    if (in && ptt_ev_arg(ev, PTT_F(THREAD_END, how), 0) == 2) {
        s->c->held = *ev;
        s->has_held = 1;
        ev->id = PTT_EV_THREAD_CANCELLED;
        ev->info = ptt_evinfo(ev->id);
        ev->nargs = PTT_F(THREAD_CANCELLED, call) + 1;
        ev->args[PTT_F(THREAD_CANCELLED, call)] = in;
        ev->offset = 0;
    }
}

/* Follow the stream's calls (ev: of a known id, not nested). */
EVERY void track_calls(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    if (!s->calls)
        s->calls = ptt_tracker_get(r->calls, ev);
    if (ev->id == PTT_EV_THREAD_END)
        thread_end(s, ev);
    else
        ptt_tracker_calls(s->calls, ev);
}

/* After a corrupt event: the stream's chunks left in the same file are passed over; 1 when some
 * remain in the next parts (a set's), to read on from. */
static int skip_part(struct ptt_reader *r, struct stream *s)
{
    while (s->next_chunk < s->nchunks && s->chunks[s->next_chunk].part == s->part)
        count_chunk(r, &s->chunks[s->next_chunk++]);
    s->pos = s->len;
    return s->next_chunk < s->nchunks;
}

/* skipped() for a call's one record (entry t): passed over when it ended before skip_below too
 * (its OUT would be in the window) and its IN is one r->pass_over marks. */
static int call_skipped(struct ptt_reader *r, const struct stream *s, const struct ptt_event *h,
                        uint64_t t)
{
    uint16_t in = (h->id & PTT_EV_ID_MASK) & ~PTT_EV_CALL;
    uint64_t dur = 0;
    if (s->compact)
        dur = s->dec->nargs ? s->dec->args[0] : 0;
    else if (h->size >= ((h->id & PTT_EVF_ABS) ? 24 : 16))
        memcpy(&dur, s->buf + s->pos + ((h->id & PTT_EVF_ABS) ? 16 : 8), 8);
    if ((int64_t)(t + dur - r->skip_below) >= 0)
        return 0;
    return r->pass_over[in / 64] >> (in % 64) & 1;
}

/* Whether the event of header h and time t, in a stream still before r->skip_below, is passed
 * over: a call's IN or OUT event r->pass_over marks. Its call is followed still (from its
 * header: the calls left unfinished are told as if nothing was skipped). The stream stops
 * looking at its first event past skip_below. */
EVERY int skipped(struct ptt_reader *r, struct stream *s, const struct ptt_event *h, uint64_t t)
{
    if ((int64_t)(t - r->skip_below) >= 0) {
        s->skipping = 0;
        return 0;
    }
    uint16_t id = h->id & PTT_EV_ID_MASK;
    if (id & PTT_EV_CALL) /* a call's one record: entered and left, nothing to follow */
        return call_skipped(r, s, h, t);
    if (!(r->pass_over[id / 64] >> (id % 64) & 1))
        return 0;
    if (h->id & PTT_EVF_NEST) /* a signal handler's calls are not reported unfinished */
        return 1;
    struct ptt_ev ev; /* its header: no memset, every skipped event comes here */
    ev.ticks = t;
    ev.ns = 0;
    ev.pid = s->pid;
    ev.tid = s->tid;
    ev.serial = s->serial;
    ev.id = id;
    ev.nested = 0;
    ev.nargs = 0;
    ev.info = ptt_evindex_get(r->evx, id);
    ev.offset = 0;
    track_calls(r, s, &ev);
    return 1;
}

/* While skipping: the run of events of the chunk in hand that skipped() would pass over (and
 * padding), passed over in one loop, the stream's position and clock in registers. It stops,
 * leaving it to next_raw, at the chunk's end and at any other event: kept, at or past
 * skip_below, with an absolute time, or corrupt. */
static void skip_run(struct ptt_reader *r, struct stream *s)
{
    const uint8_t *buf = s->buf;
    size_t pos = s->pos, len = s->len;
    uint64_t base = s->base, last = s->last;
    struct ptt_ev ev; /* a passed-over call's header, for its tracker (no args: no memset) */
    ev.ns = 0;
    ev.pid = s->pid;
    ev.tid = s->tid;
    ev.serial = s->serial;
    ev.nested = 0;
    ev.nargs = 0;
    ev.offset = 0;
    while (len - pos >= 8) {
        struct ptt_event h;
        memcpy(&h, buf + pos, 8);
        uint16_t id = h.id & PTT_EV_ID_MASK;
        if (h.id & PTT_EVF_ABS || h.size - 8u > PTT_EVENT_MAX_ARGS * 8u || h.size % 8 ||
            h.size > len - pos || id == 0)
            break;
        uint64_t x = base + h.dts, t = (int64_t)(x - last) < 0 && last ? last : x;
        if (id != PTT_EV_TRACE_PAD) {
            if ((int64_t)(t - r->skip_below) >= 0 || !(r->pass_over[id / 64] >> (id % 64) & 1))
                break;
            if (!(h.id & PTT_EVF_NEST)) { /* a signal handler's calls are not followed */
                ev.ticks = t;
                ev.id = id;
                ev.info = ptt_evindex_get(r->evx, id);
                track_calls(r, s, &ev);
            }
        }
        base = x;
        last = t;
        pos += h.size;
    }
    s->pos = pos;
    s->base = base;
    s->last = last;
}

/* Whether a format-1 event header h, with avail bytes from it to its chunk's end, is corrupt.
 * Sizes are multiples of 8: one comparison says at least a header and at most the arguments an
 * event can have (shorter than its header, the difference wraps). */
static int v1_corrupt(const struct ptt_event *h, size_t avail)
{
    unsigned hdr = h->id & PTT_EVF_ABS ? 16 : 8;
    return h->size - hdr > PTT_EVENT_MAX_ARGS * 8u || h->size % 8 || h->size > avail ||
           (h->id & PTT_EV_ID_MASK) == 0;
}

/* The stream's next event to decode: its header h at s->buf + s->pos, its time into *t (the
 * stream's clock moved on); 0 at the stream's end, or at a corrupt event (the rest of the
 * stream dropped). Padding and the events skipped are passed over, not decoded. */
static int next_raw(struct ptt_reader *r, struct stream *s, struct ptt_event *h, uint64_t *t)
{
    for (;;) {
        if (s->skipping && !s->compact) /* a compact chunk's records are decoded in turn */
            skip_run(r, s);
        while (s->pos + (s->compact ? 1 : 8) > s->len) {
            if (s->pos != s->len)
                part_err(r, s->part, "corrupt event at offset %llu (chunk ends inside it)",
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
            part_err(r, s->part, "corrupt record at offset %llu",
                     (unsigned long long)(s->data_off + s->pos));
            if (!skip_part(r, s)) /* the rest of this thread in this file cannot be trusted */
                return 0;
            continue;
        }
        memcpy(h, s->buf + s->pos, 8);
        int abs = (h->id & PTT_EVF_ABS) != 0;
        if (v1_corrupt(h, s->len - s->pos)) {
            part_err(r, s->part, "corrupt event (id 0x%04x, size %u) at offset %llu", h->id,
                     h->size, (unsigned long long)(s->data_off + s->pos));
            if (!skip_part(r, s)) /* the rest of this thread in this file cannot be trusted */
                return 0;
            continue;
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

/* Eight arguments from src to dst (src has room past those recorded), in four 16-byte moves: a
 * memcpy of 64 bytes may become a rep movs, which costs more than the copy (GCC's choice at
 * -O2 for generic x86-64, where the event's header moves took the registers). */
EVERY void copy8(uint64_t *dst, const uint64_t *src)
{
    typedef uint64_t pair __attribute__((vector_size(16), aligned(8), may_alias));
    pair a = ((const pair *)src)[0], b = ((const pair *)src)[1], c = ((const pair *)src)[2],
         d = ((const pair *)src)[3];
    ((pair *)dst)[0] = a;
    ((pair *)dst)[1] = b;
    ((pair *)dst)[2] = c;
    ((pair *)dst)[3] = d;
}

/* The event of header h and time t at s->buf + s->pos into ev. Every member before args is set
 * (no memset: every event comes here); six arguments are copied whatever their number, in one
 * fixed-size move (the buffer has room after the events), more one by one. */
EVERY void decode(const struct ptt_reader *r, const struct stream *s, struct ptt_event h,
                  uint64_t t, struct ptt_ev *ev)
{
    unsigned hdr = (h.id & PTT_EVF_ABS) ? 16 : 8;
    const uint8_t *args = s->buf + s->pos + hdr;
    ev->ticks = t;
    ev->ns = 0;
    ev->pid = s->pid;
    ev->tid = s->tid;
    ev->serial = s->serial;
    ev->id = h.id & PTT_EV_ID_MASK;
    ev->nested = (h.id & PTT_EVF_NEST) != 0;
    ev->info = ptt_evindex_get(r->evx, ev->id);
    ev->offset = s->data_off + s->pos;
    if (s->compact) {                         /* its arguments decoded already (ptt_dec_next) */
        if ((ev->nargs = s->dec->nargs) <= 8) /* most: a fixed-size copy, inlined */
            copy8(ev->args, s->dec->args);
        else
            memcpy(ev->args, s->dec->args, ev->nargs * 8);
    } else if ((ev->nargs = (h.size - hdr) / 8) <= 6) {
        memcpy(ev->args, args, 6 * 8);
    } else {
        memcpy(ev->args, args, ev->nargs * 8);
    }
}

/* A call's one record (PTT_CALL) in ev: ev becomes its IN, its OUT is held back to follow it,
 * both followed (but a signal handler's). 0 when ev is no such record. */
static int split_call(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    if (!ptt_decode_call(ev, &s->c->held)) /* format 1's encoding only: decode_call does 2.0's */
        return 0;
    s->has_held = 1;
    if ((int64_t)(s->c->held.ticks - s->last) > 0) /* the stream's next events come after its end */
        s->last = s->c->held.ticks;
    if (!ev->nested) {
        track_calls(r, s, ev);
        track_calls(r, s, &s->c->held);
    }
    return 1;
}

/* Decode the stream's next event into ev[cur]; 0 at its end. Any event: one held back, the
 * stream's end, a new chunk, padding, an absolute time, skipping, a corrupt event. Out of line
 * (but not cold: it runs through every event skipped). */
__attribute__((noinline)) static int advance_any(struct ptt_reader *r, struct stream *s)
{
    struct ptt_ev *ev = &s->c->ev[s->cur];
    if (s->has_held) {
        s->has_held = 0;
        memcpy(ev, &s->c->held,
               offsetof(struct ptt_ev, args) + s->c->held.nargs * sizeof ev->args[0]);
        return 1;
    }
    struct ptt_event h;
    uint64_t t;
    if (s->done || !next_raw(r, s, &h, &t)) {
        s->done = 1; /* what is left: the calls it never left */
        return synth_unfinished(r, s, ev);
    }
    decode(r, s, h, t, ev);
    s->pos += h.size;
    if (ev->id & PTT_EV_CALL && split_call(r, s, ev))
        return 1;
    if (!ev->nested && ev->info) /* a signal handler's calls are not reported unfinished */
        track_calls(r, s, ev);
    return 1;
}

/* A call's one record of the compact encoding, of header h and entry t, straight from the
 * decoder into its IN (ev); its OUT follows (call_out), from the arguments the decoder keeps
 * until the stream's next record. Neither is followed: the reader's call tracker would push the
 * call and pop it at once (a PTT_CALL pairs an IN and an OUT of one routine, events.c). 0 when
 * its id or length is none of the table's. */
EVERY int decode_call(struct ptt_reader *r, struct stream *s, struct ptt_event h, uint64_t t,
                      struct ptt_ev *ev)
{
    const struct ptt_dec *d = s->dec;
    const struct callrec *c = &r->callrec[r->evx.ord[h.id & ~PTT_EV_CALL & PTT_EV_ID_MASK]];
    const struct ptt_evinfo *in = c->in, *o = c->out;
    if (d->nargs != c->nargs) /* a record's nargs is at least 1: its duration */
        return 0;
    ev->ticks = t;
    ev->ns = 0;
    ev->pid = s->pid;
    ev->tid = s->tid;
    ev->serial = s->serial;
    ev->id = in->id;
    ev->nested = (h.id & PTT_EVF_NEST) != 0;
    ev->nargs = in->nargs;
    ev->info = in;
    ev->offset = s->data_off + s->pos;
    copy8(ev->args, d->args + 1); /* d->args has room */
    s->pos += h.size;
    s->call_out = o;
    if ((int64_t)(t + d->args[0] - s->last) > 0) /* the stream's next events come after its end */
        s->last = t + d->args[0];
    return 1;
}

/* The OUT of the call whose IN was given last (decode_call), into ev[cur]. */
EVERY void deliver_out(struct stream *s)
{
    const struct ptt_ev *in = &s->c->ev[s->cur ^ 1];
    struct ptt_ev *out = &s->c->ev[s->cur];
    const struct ptt_dec *d = s->dec;
    memcpy(out, in, offsetof(struct ptt_ev, args));
    out->ticks = in->ticks + d->args[0];
    out->id = s->call_out->id;
    out->nargs = s->call_out->nargs;
    out->info = s->call_out;
    copy8(out->args, d->args + 1 + in->nargs); /* d->args has room */
    s->call_out = NULL;
}

/* advance for a stream in a chunk of the compact encoding: a record of the chunk in hand, not
 * padding, nothing skipped. Once a record is decoded (the chunk's dictionary and base moved), it
 * is delivered here: advance_any is left the cases that change nothing (end, padding, corrupt). */
EVERY int advance_compact(struct ptt_reader *r, struct stream *s)
{
    struct ptt_event h;
    uint64_t t;
    if (s->done | s->skipping || s->pos >= s->len)
        return advance_any(r, s);
    int k = ptt_dec_next(s->dec, s->buf + s->pos, s->len - s->pos, &h, &t);
    if (k <= 0 || (h.id & PTT_EV_ID_MASK) == PTT_EV_TRACE_PAD)
        return advance_any(r, s);
    if ((int64_t)(t - s->last) < 0 && s->last) /* as next_raw */
        t = s->last;
    s->last = t;
    struct ptt_ev *ev = &s->c->ev[s->cur];
    if (h.id & PTT_EV_CALL && decode_call(r, s, h, t, ev))
        return 1;
    decode(r, s, h, t, ev);
    s->pos += h.size;
    if (ev->id & PTT_EV_CALL && split_call(r, s, ev))
        return 1;
    if (!ev->nested && ev->info)
        track_calls(r, s, ev);
    return 1;
}

/* advance_any, with what nearly every event is done here, in line: a call's OUT due, a record
 * of a compact chunk (advance_compact), or a valid event of a chunk of format 1's encoding in
 * hand, its time relative to the last one's, not padding, nothing held back nor skipped. */
EVERY int advance(struct ptt_reader *r, struct stream *s)
{
    struct ptt_event h;
    if (s->call_out) { /* a call's OUT, mostly */
        deliver_out(s);
        return 1;
    }
    if (s->has_held) {
        struct ptt_ev *ev = &s->c->ev[s->cur];
        s->has_held = 0;
        if (s->c->held.nargs <= 8) /* fixed sizes, inlined */
            memcpy(ev, &s->c->held, offsetof(struct ptt_ev, args) + 8 * sizeof ev->args[0]);
        else
            memcpy(ev, &s->c->held,
                   offsetof(struct ptt_ev, args) + s->c->held.nargs * sizeof ev->args[0]);
        return 1;
    }
    if (s->compact)
        return advance_compact(r, s);
    if (s->done | s->skipping || s->len - s->pos < 8)
        return advance_any(r, s);
    memcpy(&h, s->buf + s->pos, 8);
    if (h.id & (PTT_EVF_ABS | PTT_EV_CALL) || (h.id & PTT_EV_ID_MASK) == PTT_EV_TRACE_PAD ||
        h.size - 8u > PTT_EVENT_MAX_ARGS * 8u || h.size % 8 || h.size > s->len - s->pos ||
        (h.id & PTT_EV_ID_MASK) == 0)
        return advance_any(r, s);
    uint64_t t = s->base + h.dts;
    s->base = t;
    if ((int64_t)(t - s->last) < 0 && s->last) /* as next_raw */
        t = s->last;
    s->last = t;
    struct ptt_ev *ev = &s->c->ev[s->cur];
    decode(r, s, h, t, ev);
    s->pos += h.size;
    if (!ev->nested && ev->info)
        track_calls(r, s, ev);
    return 1;
}

static int before(const struct heapent *x, const struct heapent *y)
{
    if (x->ticks != y->ticks)
        return (int64_t)(x->ticks - y->ticks) < 0;
    return x->order < y->order;
}

/* e into the heap at i, moved down to its place. e comes by value: written into h[i] first, then
 * read back whole, it would stall on the store of its part just written. */
EVERY void sift_down(struct ptt_reader *r, size_t i, struct heapent e)
{
    struct heapent *h = r->heap;
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

/* The first of the heap out of it, into r->top. */
static void pop_top(struct ptt_reader *r)
{
    r->has_top = r->nheap > 0;
    if (!r->has_top)
        return;
    r->top = r->heap[0];
    if (--r->nheap)
        sift_down(r, 0, r->heap[r->nheap]);
}

/* The time of the stream's first record, read from the start of its first chunk without
 * loading it. Its events come in a non-decreasing time (next_raw), those passed over too: none
 * comes before. 0 when unknown (padding first, a short read): the stream is opened at once. */
static int first_ticks(struct ptt_reader *r, const struct stream *s, uint64_t *t)
{
    struct ptt_rec_chunk h;
    uint8_t buf[sizeof h + PTT_CODEC_MAX + 16], *rec = buf + sizeof h; /* one read */
    const struct chunkref *c = s->nchunks ? &s->chunks[0] : NULL;
    size_t len = c && c->size > sizeof h ? c->size - sizeof h : 0; /* the chunk's records */
    size_t n = len < sizeof buf - sizeof h ? len : sizeof buf - sizeof h;
    if (!n || read_at(r, c->part, buf, sizeof h + n, c->offset))
        return 0;
    memcpy(&h, buf, sizeof h);
    struct ptt_event e;
    if (h.flags & PTT_CHUNK_COMPACT) { /* a record not decoded whole is -1 */
        struct ptt_dec d;
        ptt_dec_start(&d, h.base_ts);
        return ptt_dec_next(&d, rec, n, &e, t) > 0 && (e.id & PTT_EV_ID_MASK) != PTT_EV_TRACE_PAD;
    }
    if (n < 16)
        return 0;
    memcpy(&e, rec, 8);
    /* a record next_raw finds corrupt (it may then leave the part for the next, whose events
     * may come earlier than this record says) gives no time */
    if (v1_corrupt(&e, len) || (e.id & PTT_EV_ID_MASK) == PTT_EV_TRACE_PAD)
        return 0;
    if (e.id & PTT_EVF_ABS)
        memcpy(t, rec + 8, 8);
    else
        *t = h.base_ts + e.dts;
    return 1;
}

/* What a stream read to its end holds of its reading (its calls' tracker stays). */
static void retire(struct stream *s)
{
    free(s->c);
    s->c = NULL;
    free(s->buf);
    s->buf = NULL;
    s->buf_cap = 0;
    free(s->dec);
    s->dec = NULL;
}

/* Open stream i: its first event decoded, into the merge's key *e; 0 when it has none. */
static int open_stream(struct ptt_reader *r, size_t i, struct heapent *e)
{
    struct stream *s = &r->streams[i];
    if (!(s->c = calloc(1, sizeof *s->c)))
        ptt_out_of_memory();
    if (!advance(r, s)) {
        retire(s);
        return 0;
    }
    *e = (struct heapent){s->c->ev[s->cur].ticks, OPENED | (uint64_t)(s->serial == 0) << 32 | i};
    return 1;
}

static void start(struct ptt_reader *r)
{
    r->started = 1;
    r->heap = malloc((r->nstreams + 1) * sizeof *r->heap);
    if (!r->heap)
        ptt_out_of_memory();
    for (size_t i = 0; i < r->nstreams; i++) {
        uint64_t t;
        struct heapent e = {0, i};
        if (first_ticks(r, &r->streams[i], &t))
            e.ticks = t;
        else if (!open_stream(r, i, &e))
            continue;
        r->heap[r->nheap++] = e;
    }
    for (size_t i = r->nheap; i-- > 0;)
        sift_down(r, i, r->heap[i]);
    pop_top(r);
}

/* The stream first in the merge is one not opened yet: opened, and back in with its first
 * event's time, until the first is one being read. */
RARE static void settle(struct ptt_reader *r)
{
    while (r->has_top && !(r->top.order & OPENED)) {
        struct heapent e;
        if (!open_stream(r, (uint32_t)r->top.order, &e))
            pop_top(r);
        else if (r->nheap && before(&r->heap[0], &e)) {
            r->top = r->heap[0];
            sift_down(r, 0, e);
        } else
            r->top = e;
    }
}

void ptt_reader_skip(struct ptt_reader *r, int64_t from_ns, int (*keep)(uint16_t id))
{
    /* A tick or two less than from_ns: what is skipped is surely before it (the events just
     * before are decoded, for the caller to leave out). */
    long double k = (long double)from_ns / r->ns_per_tick - 2;
    if (r->ra_decided || r->started || !(k > 0) || k > 1.8e19L)
        return;
    r->skip_below = r->clk_first.ticks + (uint64_t)k;
    unsigned n;
    const struct ptt_evinfo *all = ptt_evinfo_all(&n);
    for (unsigned i = 0; i < n; i++)
        if ((all[i].kind == PTT_KIND_IN || all[i].kind == PTT_KIND_OUT) &&
            !(keep && keep(all[i].id)))
            r->pass_over[all[i].id / 64] |= 1ull << (all[i].id % 64);
    for (size_t i = 0; i < r->nstreams; i++)
        r->streams[i].skipping = 1;
}

/* The merge after ev of stream s (r->top) was given, its next event decoded, and ev's time in
 * ns. */
EVERY const struct ptt_ev *merge_step(struct ptt_reader *r, struct stream *s, struct ptt_ev *ev)
{
    struct heapent e = {s->c->ev[s->cur].ticks, r->top.order};
    if (r->nheap && before(&r->heap[0], &e)) {
        r->top = r->heap[0];
        sift_down(r, 0, e);
    } else
        r->top.ticks = e.ticks;
    ev->ns = to_ns(r, ev->ticks);
    return ev;
}

/* merge_step, out of line: what get_in does not do in line. */
__attribute__((noinline)) static const struct ptt_ev *merge_any(struct ptt_reader *r,
                                                                struct stream *s, struct ptt_ev *ev)
{
    return merge_step(r, s, ev);
}

/* Any event: the stream whose event comes next is r->top, out of the heap: while its next event
 * is still before the heap's first (a thread's events mostly come a few in a row), one
 * comparison and no move; else the two change places. */
__attribute__((noinline)) static const struct ptt_ev *get_any(struct ptt_reader *r)
{
    if (r->retired) { /* its last event was given by the call before */
        retire(r->retired);
        r->retired = NULL;
    }
    if (!r->started)
        start(r);
    if (!(r->top.order & OPENED))
        settle(r);
    if (!r->has_top) /* the end */
        return NULL;
    struct stream *s = &r->streams[(uint32_t)r->top.order];
    struct ptt_ev *ev = &s->c->ev[s->cur];
    s->cur ^= 1;
    if (advance(r, s))
        return merge_step(r, s, ev);
    pop_top(r);
    r->retired = s;
    ev->ns = to_ns(r, ev->ticks);
    return ev;
}

/* The merge itself: the IN of a call's one record, its OUT made next (deliver_out), the stream
 * staying first and its time to_ns's in-line case: in a few registers, no call (half the
 * events of most traces). The rest: get_any, merge_any. */
EVERY const struct ptt_ev *merge_get(struct ptt_reader *r)
{
    struct stream *s;
    if (!r->has_top || !(s = &r->streams[(uint32_t)r->top.order])->call_out)
        return get_any(r);
    struct ptt_ev *ev = &s->c->ev[s->cur];
    s->cur ^= 1;
    deliver_out(s);
    struct heapent e = {s->c->ev[s->cur].ticks, r->top.order};
    uint64_t d = ev->ticks - r->clk_first.ticks;
    if ((r->nheap && before(&r->heap[0], &e)) || d - 1 >= r->fast_below)
        return merge_any(r, s, ev);
    unsigned __int128 p = (unsigned __int128)d * r->tick_m; /* as to_ns */
    uint64_t hi = (uint64_t)(p >> 64), lo = (uint64_t)p;
    if (!hi || lo > ~(hi << 1))
        return merge_any(r, s, ev);
    r->top.ticks = e.ticks;
    ev->ns = (int64_t)(hi >> r->tick_shift);
    return ev;
}

/* merge_get for the read-ahead thread. */
static const struct ptt_ev *merge_get_fn(struct ptt_reader *r)
{
    return merge_get(r);
}

static int ahead_asked = 1;

void ptt_reader_set_ahead(int on)
{
    ahead_asked = on;
}

/* At the first event: the merge goes to a thread of its own where a second CPU can run it. */
RARE static const struct ptt_ev *first_get(struct ptt_reader *r)
{
    r->ra_decided = 1;
    if (ptt_readahead_wanted(ahead_asked) && (r->ra = ptt_readahead_start(r, merge_get_fn, r->err)))
        return ptt_readahead_get(r->ra);
    return merge_get(r);
}

const struct ptt_ev *ptt_reader_get(struct ptt_reader *r)
{
    if (r->ra)
        return ptt_readahead_get(r->ra);
    if (!r->ra_decided)
        return first_get(r);
    return merge_get(r);
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
    if (r->ra && !ptt_readahead_err_seen(r->ra))
        return NULL; /* not met yet by the events taken: the thread's may be on its way */
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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The threads, by pid and tid: a thread that execs goes on in a stream of the new program. */
uint64_t ptt_reader_nthreads(const struct ptt_reader *r)
{
    uint64_t *keys = ptt_must(malloc((r->nstreams + 1) * sizeof *keys)), n = 0, k = 0;
    for (size_t i = 0; i < r->nstreams; i++)
        if (r->streams[i].serial != 0) /* serial 0: ptt trace's own events */
            keys[k++] = (uint64_t)(uint32_t)r->streams[i].pid << 32 | (uint32_t)r->streams[i].tid;
    qsort(keys, k, sizeof *keys, cmp_u64);
    for (uint64_t i = 0; i < k; i++)
        n += !i || keys[i] != keys[i - 1];
    free(keys);
    return n;
}

void ptt_reader_close(struct ptt_reader *r)
{
    if (!r)
        return;
    ptt_readahead_stop(r->ra);
    for (size_t i = 0; i < r->nstreams; i++) {
        free(r->streams[i].chunks);
        retire(&r->streams[i]);
    }
    free(r->streams);
    free(r->hash);
    free(r->ends);
    free(r->images);
    free(r->heap);
    ptt_tracker_free(r->calls);
    reader_free(r);
}

void ptt_reader_progress(const struct ptt_reader *r, uint64_t *done, uint64_t *total)
{
    /* The index is not changed by the merge: only bytes_done is. */
    *total = 0;
    for (size_t i = 0; i < r->nstreams; i++) {
        const struct stream *s = &r->streams[i];
        for (size_t k = 0; k < s->nchunks; k++)
            *total += s->chunks[k].size;
    }
    *done = __atomic_load_n(&r->bytes_done, __ATOMIC_RELAXED);
}

const struct ptt_reader_parts *ptt_reader_parts(const struct ptt_reader *r)
{
    return r->pinfo.nread ? &r->pinfo : NULL;
}

const char *ptt_reader_path(const struct ptt_reader *r)
{
    return r->parts[0].path;
}
