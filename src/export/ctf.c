/* Exporter: a CTF 1.8 trace (Common Trace Format) for babeltrace2 and Trace Compass.
 *
 * DIR/metadata: the TSDL description, in plain text: the trace (little endian, a uuid), its
 * environment (the INFO records), one clock (nanoseconds since the trace started, its offset
 * the real time of that start when the trace recorded it), one stream class, and every event of
 * the table with its fields, generated from the table and the field types.
 * DIR/pid_PID: one binary stream per process, its events in time order, in packets of at most
 * PACKET_MAX bytes. A packet: the header (magic, uuid, stream class, the pid as instance), the
 * context (first and last time, sizes), then events: id, time, pid and tid, the fields.
 *
 * Everything is byte-aligned and little endian; every field keeps the recorder's 64 bits, but
 * return values and thread ids, which ptt view shows as C ints. Field names get a leading '_'
 * (which readers remove) so that none is taken for a TSDL keyword ("clock", "event"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "util/hmap.h"
#include "util/outdir.h"
#include "export/textfmt.h"
#include "analysis/timeline.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define PACKET_MAX (64 * 1024)
#define PREAMBLE 64       /* packet header (32 bytes) and context (32 bytes) */
#define ID_UNKNOWN 0x4000 /* an event this ptt does not know: table ids have 14 bits */
#define STREAM_PREFIX "pid_"

struct stream {
    int32_t pid;
    int created; /* its file was created by this export */
    uint8_t *buf;
    size_t len, cap;
    uint64_t first, last; /* times of the packet's first and last events */
};

struct ctf {
    const char *dir;
    uint8_t uuid[16];
    struct ptt_hmap streams;
    char err[600]; /* the first write error */
};

/* ---- the TSDL metadata ---- */

/* The TSDL type of a field type (NULL for those written specially: strings, frames, enums). */
static const char *tsdl_type(enum ptt_ftype t)
{
    if (ptt_ftype_is_enum(t) || t == PTT_F_ENDHOW)
        return NULL; /* an enumeration: enum_of() */
    switch (t) {
    case PTT_F_OBJ:
    case PTT_F_PTR:
    case PTT_F_SYM:
    case PTT_F_PTHREAD:
    case PTT_F_HEX:
    case PTT_F_SIGSET:
    case PTT_F_CPUSET:
    case PTT_F_CLASSES:
    case PTT_F_SITE: return "ptt_hex_t";
    case PTT_F_OCT: return "ptt_oct_t";
    case PTT_F_INT:
    case PTT_F_ERRNO:
    case PTT_F_WSTATUS: return "int64_t";
    case PTT_F_UINT:
    case PTT_F_COUNT:
    case PTT_F_NS:
    case PTT_F_BOOL:
    case PTT_F_ABSTIME: return "uint64_t";
    case PTT_F_RET:
    case PTT_F_TID: return "int32_t"; /* ptt view shows them as C ints */
    case PTT_F_EVID: return "ptt_evid_t";
    case PTT_F_SIGNO: return NULL; /* an enumeration too (SIGUSR1...) */
    default: return NULL;          /* enumerations, above */
    case PTT_F_STR: return "string";
    case PTT_F_FRAMES: return NULL; /* a sequence */
    }
    return "ptt_hex_t";
}

/* Bytes a fixed field takes in a stream. */
static unsigned field_size(enum ptt_ftype t)
{
    return t == PTT_F_RET || t == PTT_F_TID ? 4 : 8;
}

/* Whether s is a number as ptt view prints one (then it is no enumeration label). */
static int numeric(const char *s)
{
    if (*s == '-')
        s++;
    return !*s || strspn(s, "0123456789") == strlen(s) || !strncmp(s, "0x", 2) || !strcmp(s, "?");
}

static void tsdl_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else
            fputc(c < 0x20 || c >= 0x7f ? '?' : c, f);
    }
    fputc('"', f);
}

/* An enumeration type's declaration: the labels ptt view's formats give its values (the raw
 * format's when it names them, else the human format's). */
static void declare_enum(FILE *f, enum ptt_ftype t)
{
    char raw[128], human[128];
    fputs("typealias enum : int64_t {", f);
    int n = 0;
    for (uint64_t v = 0; v < 64; v++) {
        ptt_fmt_field(raw, sizeof raw, t, v, 0);
        ptt_fmt_field(human, sizeof human, t, v, 1);
        const char *label = !numeric(raw) ? raw : !numeric(human) ? human : NULL;
        if (!label)
            continue;
        fputs(n++ ? ",\n\t" : "\n\t", f);
        tsdl_str(f, label);
        fprintf(f, " = %" PRIu64, v);
    }
    fprintf(f, "\n} := ptt_%s_t;\n\n", ptt_ftype_name(t));
}

static void declare_field(FILE *f, const struct ptt_field *fd)
{
    const char *type = tsdl_type(fd->type);
    if (fd->type == PTT_F_FRAMES)
        fprintf(f, "\t\tuint32_t __%.*s_count;\n\t\tptt_hex_t _%.*s[__%.*s_count];\n", fd->name_len,
                fd->name, fd->name_len, fd->name, fd->name_len, fd->name);
    else if (type)
        fprintf(f, "\t\t%s _%.*s;\n", type, fd->name_len, fd->name);
    else
        fprintf(f, "\t\tptt_%s_t _%.*s;\n", ptt_ftype_name(fd->type), fd->name_len, fd->name);
}

static void uuid_str(char *s, const uint8_t *u)
{
    for (int i = 0, o = 0; i < 16; i++)
        o += sprintf(s + o, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* The metadata's parts, in the order of the file: the types and the trace's layout. */
static void meta_trace(FILE *f, const char *uuid)
{
    fputs("/* CTF 1.8 */\n\n"
          "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
          "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
          "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
          "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
          "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
          "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
          "typealias integer { size = 64; align = 8; signed = false; base = 16; } := ptt_hex_t;\n"
          "typealias integer { size = 64; align = 8; signed = false; base = 8; } := ptt_oct_t;\n\n",
          f);
    fprintf(f,
            "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
            "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
            "\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
            uuid);
}

static void meta_env(FILE *f, const struct ptt_reader *r)
{
    /* The environment: what the trace's INFO records say. */
    static const char *keys[][2] = {{"host", "hostname"},
                                    {"command", "command"},
                                    {"start_time", "start_time"},
                                    {"clock", "trace_clock"},
                                    {"kernel", "kernel"},
                                    {"ptt_version", "ptt_version"},
                                    {"pid", "pid"}};
    fprintf(f, "env {\n\tdomain = \"ptt\";\n\ttracer_name = \"ptt\";\n");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = ptt_reader_info(r, keys[i][0]);
        if (!v)
            continue;
        fprintf(f, "\t%s = ", keys[i][1]);
        tsdl_str(f, v);
        fputs(";\n", f);
    }
    fputs("};\n\n", f);
}

/* The clock, and the stream's packet and event headers stamped with it. */
static void meta_clock(FILE *f, const char *uuid, int have_real, uint64_t real_ns)
{
    fprintf(f,
            "clock {\n\tname = \"ptt\";\n\tuuid = \"%s\";\n"
            "\tdescription = \"ptt trace time: nanoseconds since the trace started%s\";\n"
            "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %" PRIu64 ";\n"
            "\toffset = %" PRIu64 ";\n%s};\n\n",
            uuid, have_real ? ", offset by its real time" : "", real_ns / 1000000000,
            real_ns % 1000000000, have_real ? "\tabsolute = TRUE;\n" : "");
    fputs("typealias integer { size = 64; align = 8; signed = false; map = clock.ptt.value; } "
          ":= ptt_clock_t;\n\n"
          "stream {\n\tid = 0;\n"
          "\tpacket.context := struct {\n\t\tptt_clock_t timestamp_begin;\n"
          "\t\tptt_clock_t timestamp_end;\n\t\tuint64_t content_size;\n"
          "\t\tuint64_t packet_size;\n\t};\n"
          "\tevent.header := struct {\n\t\tuint16_t id;\n\t\tptt_clock_t timestamp;\n\t};\n"
          "\tevent.context := struct {\n\t\tint32_t _pid;\n\t\tint32_t _tid;\n\t};\n};\n\n",
          f);
}

static void meta_events(FILE *f)
{
    /* The enumerations: event ids, and the field types ptt view names the values of. */
    unsigned nev;
    const struct ptt_evinfo *all = ptt_evinfo_all(&nev);
    fputs("typealias enum : uint64_t {", f);
    for (unsigned i = 0; i < nev; i++)
        fprintf(f, "%s\"%s\" = %u", i ? ",\n\t" : "\n\t", all[i].name, all[i].id);
    fputs("\n} := ptt_evid_t;\n\n", f);
    uint64_t declared = 0; /* enum types by ftype number */
    for (unsigned i = 0; i < nev; i++)
        for (unsigned k = 0; k < all[i].nfields; k++) {
            enum ptt_ftype t = all[i].fields[k].type;
            if (tsdl_type(t) || t == PTT_F_FRAMES || t >= 64 || ((declared >> t) & 1))
                continue;
            declared |= 1ull << t;
            declare_enum(f, t);
        }
    /* The events. */
    for (unsigned i = 0; i < nev; i++) {
        fprintf(f, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n", all[i].name,
                all[i].id);
        fputs("\tfields := struct {\n", f);
        for (unsigned k = 0; k < all[i].nfields; k++)
            declare_field(f, &all[i].fields[k]);
        fputs("\t};\n};\n\n", f);
    }
    fprintf(f,
            "event {\n\tname = \"UNKNOWN\";\n\tid = %u;\n\tstream_id = 0;\n"
            "\tfields := struct {\n\t\tuint16_t _id;\n\t\tuint32_t __args_count;\n"
            "\t\tptt_hex_t _args[__args_count];\n\t};\n};\n",
            ID_UNKNOWN);
}

static int write_metadata(struct ctf *c, const struct ptt_reader *r, int have_real,
                          uint64_t real_ns)
{
    char path[4096], uuid[40];
    snprintf(path, sizeof path, "%s/metadata", c->dir);
    FILE *f = ptt_outdir_fopen(path, 0);
    if (!f) {
        snprintf(c->err, sizeof c->err, "%.400s: %s", path, ptt_outdir_strerror(errno));
        return -1;
    }
    uuid_str(uuid, c->uuid);
    meta_trace(f, uuid);
    meta_env(f, r);
    meta_clock(f, uuid, have_real, real_ns);
    meta_events(f);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        snprintf(c->err, sizeof c->err, "%.400s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

/* ---- the streams ---- */

static void put(struct stream *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->len + n)
            cap *= 2;
        uint8_t *b = realloc(s->buf, cap);
        if (!b) {
            fprintf(stderr, "ptt: out of memory\n");
            exit(2);
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

/* Little endian, whatever the host. */
static void put_le(struct stream *s, uint64_t v, unsigned bytes)
{
    uint8_t b[8];
    for (unsigned i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    put(s, b, bytes);
}

static void set_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Write the stream's packet (if it holds an event) to its file. */
static void flush(struct ctf *c, struct stream *s)
{
    if (s->len <= PREAMBLE)
        return;
    uint8_t *p = s->buf;
    set_le(p, CTF_MAGIC, 4);
    memcpy(p + 4, c->uuid, 16);
    set_le(p + 20, 0, 4);                    /* stream class */
    set_le(p + 24, (uint32_t)s->pid, 8);     /* stream instance: the process */
    set_le(p + 32, s->first, 8);             /* timestamp_begin */
    set_le(p + 40, s->last, 8);              /* timestamp_end */
    set_le(p + 48, (uint64_t)s->len * 8, 8); /* content_size, in bits */
    set_le(p + 56, (uint64_t)s->len * 8, 8); /* packet_size */
    size_t len = s->len;
    s->len = 0;
    if (c->err[0])
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/" STREAM_PREFIX "%d", c->dir, s->pid);
    int fd = s->created ? ptt_outdir_append(path) : ptt_outdir_create(path);
    if (fd < 0) {
        snprintf(c->err, sizeof c->err, "%.400s: %s", path, ptt_outdir_strerror(errno));
        return;
    }
    s->created = 1;
    for (size_t o = 0; o < len;) {
        ssize_t w = write(fd, p + o, len - o);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(c->err, sizeof c->err, "%.400s: %s", path,
                     w < 0 ? strerror(errno) : "short write");
            break;
        }
        o += (size_t)w;
    }
    if (close(fd) && !c->err[0])
        snprintf(c->err, sizeof c->err, "%.400s: %m", path);
}

static void on_event(void *arg, const struct ptt_ev *ev)
{
    struct ctf *c = arg;
    struct stream *s = ptt_hmap_get(&c->streams, (uint64_t)(uint32_t)ev->pid, sizeof *s);
    s->pid = ev->pid;
    /* A stream's times never go back (the merge gives them in order; a reader rejects less). */
    uint64_t ts = ev->ns > 0 ? (uint64_t)ev->ns : 0;
    if (ts < s->last)
        ts = s->last;
    /* An event takes at most 2 + 8 + 8 + 8 per word + 4 + 2 (a string's end, a count). */
    if (s->len > PREAMBLE && s->len + 32 + 8 * PTT_EVENT_MAX_ARGS > PACKET_MAX)
        flush(c, s);
    if (!s->len) {
        uint8_t zero[PREAMBLE] = {0};
        put(s, zero, sizeof zero);
        s->first = ts;
    }
    s->last = ts;
    const struct ptt_evinfo *info = ev->info;
    put_le(s, info ? info->id : ID_UNKNOWN, 2);
    put_le(s, ts, 8);
    put_le(s, (uint32_t)ev->pid, 4);
    put_le(s, (uint32_t)ev->tid, 4);
    if (!info) { /* its id and its words */
        put_le(s, ev->id, 2);
        put_le(s, ev->nargs, 4);
        for (unsigned i = 0; i < ev->nargs; i++)
            put_le(s, ev->args[i], 8);
        return;
    }
    /* The words after the fixed arguments: a string, or return addresses. */
    unsigned extra = ev->nargs > info->nargs ? ev->nargs - info->nargs : 0;
    for (unsigned i = 0; i < info->nfields; i++) {
        enum ptt_ftype t = info->fields[i].type;
        if (t == PTT_F_STR) {
            const char *str = (const char *)&ev->args[info->nargs];
            put(s, str, strnlen(str, extra * 8));
            put(s, "", 1);
        } else if (t == PTT_F_FRAMES) {
            put_le(s, extra, 4);
            for (unsigned k = 0; k < extra; k++)
                put_le(s, ev->args[info->nargs + k], 8);
        } else {
            /* A field the event lacks (an older recorder) reads as 0. */
            put_le(s, i < ev->nargs ? ev->args[i] : 0, field_size(t));
        }
    }
}

/* A process ended: its packet goes out, and its buffer is freed. */
static void on_process(void *arg, int32_t pid, int64_t ns, int begin)
{
    struct ctf *c = arg;
    (void)ns;
    if (begin)
        return;
    struct stream *s = ptt_hmap_get(&c->streams, (uint64_t)(uint32_t)pid, 0);
    if (!s)
        return;
    flush(c, s);
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

static void free_stream(void *p)
{
    free(((struct stream *)p)->buf);
}

/* The directory: created private, or emptied of an earlier export's files (the user's own,
 * none a link); anything else in it is not ours, and a CTF reader would take it for a stream. */
static int prepare_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (ptt_outdir_make(dir)) {
        snprintf(err, errlen, "%s: %s", dir, ptt_outdir_strerror(errno));
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %m", dir);
        return -1;
    }
    struct dirent *e;
    int r = 0;
    while (!r && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (strcmp(e->d_name, "metadata") &&
            strncmp(e->d_name, STREAM_PREFIX, strlen(STREAM_PREFIX))) {
            snprintf(err, errlen,
                     "%s: not empty (%s is not from a CTF export): give a new directory", dir,
                     e->d_name);
            r = -1;
        } else if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
            snprintf(err, errlen, "%s/%s: %m", dir, e->d_name);
            r = -1;
        } else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            int k = S_ISLNK(st.st_mode) ? ELOOP : EPERM;
            snprintf(err, errlen, "%s/%s: %s", dir, e->d_name, ptt_outdir_strerror(k));
            r = -1;
        }
    }
    rewinddir(d);
    while (!r && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && unlinkat(dirfd(d), e->d_name, 0)) {
            snprintf(err, errlen, "%s/%s: %m", dir, e->d_name);
            r = -1;
        }
    }
    closedir(d);
    return r;
}

/* The first CLOCK record: the real time of the trace's time 0 (the reader keeps it to itself). */
static int first_clock(const char *path, uint64_t *real_ns)
{
    char err[8];
    int fd = ptt_reader_fd(path, err, sizeof err); /* standard input: its copy */
    if (fd < 0)
        return 0;
    struct ptt_file_header fh;
    int found = 0;
    if (pread(fd, &fh, sizeof fh, 0) == (ssize_t)sizeof fh && fh.header_size >= sizeof fh) {
        uint64_t off = fh.header_size;
        /* It comes before the program starts: among the first records. */
        for (int i = 0; i < 64 && !found; i++) {
            struct ptt_rec_clock rec;
            ssize_t n = pread(fd, &rec, sizeof rec, (off_t)off);
            if (n < (ssize_t)sizeof rec.h || rec.h.size < sizeof rec.h || rec.h.size % 8)
                break;
            if (rec.h.type == PTT_REC_CLOCK && n == (ssize_t)sizeof rec &&
                rec.h.size >= sizeof rec && rec.real_ns) {
                *real_ns = rec.real_ns;
                found = 1;
            }
            off += rec.h.size;
        }
    }
    close(fd);
    return found;
}

/* A uuid of the trace: the same trace gives the same uuid (a hash of its first records). */
static void make_uuid(const char *path, uint8_t *u)
{
    uint8_t buf[4096];
    ssize_t n = 0;
    char err[8];
    int fd = ptt_reader_fd(path, err, sizeof err);
    if (fd >= 0) {
        n = pread(fd, buf, sizeof buf, 0);
        close(fd);
    }
    uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
    for (int k = 0; k < 2; k++)
        for (ssize_t i = 0; i < n; i++)
            h[k] = (h[k] ^ buf[i]) * 0x100000001b3ull; /* FNV-1a, two seeds */
    for (int i = 0; i < 16; i++)
        u[i] = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x80); /* version 8: custom */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC variant */
}

int ptt_export_ctf(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    struct ctf c = {.dir = o->out};
    struct ptt_reader *r = ptt_reader_open(o->in, err, errlen);
    if (!r)
        return -1;
    uint64_t real_ns = 0; /* from the first file read: the trace, or its first part read */
    int have_real = first_clock(ptt_reader_path(r), &real_ns);
    make_uuid(ptt_reader_path(r), c.uuid);
    int ret = prepare_dir(o->out, err, errlen);
    if (!ret && write_metadata(&c, r, have_real, real_ns)) {
        snprintf(err, errlen, "%s", c.err);
        ret = -1;
    }
    ptt_reader_close(r);
    if (ret)
        return -1;
    const struct ptt_tl_callbacks cb = {.event = on_event, .process = on_process};
    ret = ptt_timeline_run(o->in, o->names, &cb, &c, err, errlen);
    for (size_t i = 0; i < c.streams.cap; i++) {
        struct stream *s = ptt_hmap_slot(&c.streams, i);
        if (s)
            flush(&c, s);
    }
    ptt_hmap_free(&c.streams, free_stream);
    if (c.err[0]) { /* a write error says more than a damaged input */
        snprintf(err, errlen, "%s", c.err);
        ret = -1;
    }
    return ret;
}
