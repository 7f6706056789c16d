#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../../common/pool.h"
#include "util/json.h"
#include "util/obuf.h"
#include "util/util.h"
#include "analysis/names.h"
#include "analysis/tracker.h"
#include "export/textfmt.h"
#include "ptt_fields.h"
#include "util/term.h"

const char *ptt_ev_name(const struct ptt_ev *ev, char *buf, size_t len)
{
    if (ev->info)
        return ev->info->name;
    snprintf(buf, len, "UNKNOWN_0x%04x", ev->id);
    return buf;
}

/* A string argument: quoted, with anything unprintable, quotes and backslashes escaped, so that
 * it never breaks a raw line apart. */
static const char *fmt_str(char *buf, size_t len, const struct ptt_ev *ev, unsigned from)
{
    const char *s = (const char *)&ev->args[from];
    size_t max = from < ev->nargs ? (ev->nargs - from) * 8 : 0, o = 0;
    buf[o++] = '"';
    for (size_t i = 0; i < max && s[i] && o + 6 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, len - o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o++] = '"';
    buf[o] = 0;
    return buf;
}

/* A string field as text, not quoted: only what a terminal must not be given (ptt_term_char) as
 * \xNN. */
static const char *fmt_text(char *buf, size_t len, const struct ptt_ev *ev, unsigned from)
{
    const char *s = (const char *)&ev->args[from];
    ptt_term_escape(buf, len, s, from < ev->nargs ? strnlen(s, (ev->nargs - from) * 8) : 0);
    return buf;
}

int ptt_ev_has_field(const struct ptt_ev *ev, unsigned i)
{
    if (!ev->info || i >= ev->info->nfields)
        return 0;
    return i < ev->info->nargs ? i < ev->nargs : ev->nargs > ev->info->nargs;
}

static const struct ptt_names *names; /* for the human format, when a command has them */

void ptt_textfmt_names(const struct ptt_names *n)
{
    names = n;
}

static struct ptt_tracker *tracker; /* likewise, for who holds what */

void ptt_textfmt_tracker(struct ptt_tracker *t)
{
    tracker = t;
}

const char *ptt_fmt_thread(char *buf, size_t len, const struct ptt_names *n, int32_t pid,
                           int32_t tid)
{
    const char *name = n ? ptt_names_thread(n, pid, tid) : NULL;
    if (name)
        snprintf(buf, len, "%s (%d)", name, tid);
    else
        snprintf(buf, len, "%d", tid);
    return buf;
}

const char *ptt_fmt_readers(char *buf, size_t len, const struct ptt_names *n, struct ptt_tracker *t,
                            int32_t pid, uint64_t object, uint64_t count)
{
    enum { MAX = 16 };
    int32_t tids[MAX];
    unsigned k = t ? ptt_tracker_readers(t, pid, object, tids, MAX) : 0, shown = k < MAX ? k : MAX;
    size_t o = 0;
    buf[0] = 0;
    if (!k)
        return buf;
    o += (size_t)snprintf(buf, len, "held for reading by thread%s ", k > 1 ? "s" : "");
    for (unsigned i = 0; i < shown && o < len; i++) {
        char tb[300];
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
                              ptt_fmt_thread(tb, sizeof tb, n, pid, tids[i]));
    }
    uint64_t all = count > k ? count : k, more = all - shown;
    if (more && o < len)
        snprintf(buf + o, len - o, ", and %llu more", (unsigned long long)more);
    return buf;
}

/* The rwlock a wait is for, when the sentence should say who reads it: a wait to lock it
 * (count: the readers it recorded), or a hang report of a call blocked on it. */
static int rwlock_waited(const struct ptt_ev *ev, uint64_t *object, uint64_t *count)
{
    const struct ptt_evinfo *e = ev->info;
    *count = 0;
    if (e->role == PTT_ROLE_CONTENDED && e->okind == PTT_CLASS_rwlock) {
        *count = ptt_ev_role(ev, PTT_RF_COUNT, 0);
        return ptt_ev_role_get(ev, PTT_RF_OBJECT, object);
    }
    if (ev->id != PTT_EV_HANG_BLOCKED)
        return 0;
    const struct ptt_evinfo *call =
        ptt_evinfo((uint16_t)ptt_ev_arg(ev, PTT_F(HANG_BLOCKED, call), 0));
    *object = ptt_ev_arg(ev, PTT_F(HANG_BLOCKED, object), 0);
    return call && call->okind == PTT_CLASS_rwlock && *object;
}

/* Return addresses: raw, in hex; human, each as file:line where known. */
static const char *fmt_frames(char *buf, size_t len, const struct ptt_ev *ev, unsigned from,
                              int human)
{
    size_t o = 0;
    buf[0] = 0;
    for (unsigned k = from; k < ev->nargs && o + 24 < len; k++) {
        const char *n = human && names ? ptt_names_site(names, ev->pid, ev->args[k]) : NULL;
        const char *sep = k > from ? (human ? " < " : ",") : "";
        if (n)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", sep, n);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s0x%" PRIx64, sep, ev->args[k]);
    }
    return buf;
}

/* A hang report's blocked call waits on what its IN's object field holds, as the hang report
 * said it; NULL for an object. */
static const char *hang_waits_on(char *buf, size_t len, const struct ptt_ev *ev)
{
    return ptt_fmt_waits_on(buf, len,
                            ptt_evinfo((uint16_t)ptt_ev_arg(ev, PTT_F(HANG_BLOCKED, call), 0)),
                            ev->args[PTT_F(HANG_BLOCKED, object)]);
}

const char *ptt_fmt_ev_field(char *buf, size_t len, const struct ptt_ev *ev, unsigned i, int human)
{
    enum ptt_ftype t = ev->info->fields[i].type;
    const char *w = human && ev->id == PTT_EV_HANG_BLOCKED && i == PTT_F(HANG_BLOCKED, object)
                        ? hang_waits_on(buf, len, ev)
                        : NULL;
    if (w)
        return w;
    if (t == PTT_F_STR)
        return fmt_str(buf, len, ev, i);
    if (t == PTT_F_FRAMES)
        return fmt_frames(buf, len, ev, i, human);
    const char *n = NULL;
    if (human && names && ev->args[i]) {
        if (t == PTT_F_OBJ)
            n = ptt_names_object(names, ev->pid, ev->args[i]);
        else if (t == PTT_F_SYM)
            n = ptt_names_code(names, ev->pid, ev->args[i]);
        else if (t == PTT_F_TID)
            n = ptt_names_thread(names, ev->pid, (int32_t)ev->args[i]);
        else if (t == PTT_F_SITE)
            n = ptt_names_site(names, ev->pid, ev->args[i]);
    }
    const char *via =
        n && t == PTT_F_SITE ? ptt_names_site_detail(names, ev->pid, ev->args[i]) : NULL;
    if (via) { /* a call inlined from a system header: the program's line, then the header's */
        snprintf(buf, len, "%s (via %s)", n, via);
        return buf;
    }
    if (n)
        return n;
    return ptt_fmt_field(buf, len, t, ev->args[i], human);
}

void ptt_print_raw(FILE *f, const struct ptt_ev *ev)
{
    char nb[32], vb[1100], line[1024];
    struct ptt_obuf b; /* the line, then one write: not a printf per field */
    ptt_obuf_on(&b, f, line, sizeof line);
    ptt_obuf_fixed(&b, ev->ns, 9);
    ptt_obuf_putc(&b, ':');
    ptt_obuf_puts(&b, ptt_ev_name(ev, nb, sizeof nb));
    ptt_obuf_write(&b, " : ", 3);
    ptt_obuf_i64(&b, ev->pid);
    ptt_obuf_write(&b, " : ", 3);
    ptt_obuf_i64(&b, ev->tid);
    for (unsigned i = 0; ev->info ? ptt_ev_has_field(ev, i) : i < ev->nargs; i++) {
        ptt_obuf_write(&b, " : ", 3);
        if (!ev->info) /* unknown event: its words in hex */
            ptt_obuf_x64(&b, ev->args[i]);
        else
            ptt_obuf_puts(&b, ptt_fmt_ev_field(vb, sizeof vb, ev, i, 0));
    }
    ptt_obuf_putc(&b, '\n');
    ptt_obuf_flush(&b);
}

/* "name value, name value" for the fields from index from on. */
static void print_fields(struct ptt_obuf *b, const struct ptt_ev *ev, unsigned from)
{
    char vb[1100];
    int n = 0;
    for (unsigned i = from; ptt_ev_has_field(ev, i); i++) {
        const struct ptt_field *fd = &ev->info->fields[i];
        if (fd->type == PTT_F_ERRNO && !ev->args[i])
            continue; /* errno only says something when the call failed */
        if (fd->type == PTT_F_SITE)
            continue; /* said after: "at file:line" */
        if (n++)
            ptt_obuf_write(b, ", ", 2);
        ptt_obuf_write(b, fd->name, strnlen(fd->name, (size_t)fd->name_len));
        ptt_obuf_putc(b, ' ');
        ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, i, 1));
    }
}

static void print_template(struct ptt_obuf *b, const struct ptt_ev *ev)
{
    char vb[1100];
    for (const char *p = ev->info->human; *p; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        unsigned i;
        if (close) {
            for (i = 0; i < ev->info->nfields; i++) {
                const struct ptt_field *fd = &ev->info->fields[i];
                if (fd->name_len == close - p - 1 && !memcmp(fd->name, p + 1, (size_t)fd->name_len))
                    break;
            }
            if (ptt_ev_has_field(ev, i)) {
                ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, i, 1));
                p = close;
                continue;
            }
        }
        ptt_obuf_putc(b, *p);
    }
}

static int32_t attached_pid; /* ptt trace -p's process, whose start is no start */

void ptt_textfmt_attached(int32_t pid)
{
    attached_pid = pid;
}

/* An exec's PROCESS_START, the attached process's, the command line, and the MODULE_LOAD of a
 * process's program, said as such; 0 for another event. */
static int print_process(struct ptt_obuf *b, const struct ptt_ev *ev)
{
    char vb[1100];
    enum ptt_names_what w = names ? ptt_names_meant(names, ev) : PTT_NAMES_NONE;
    const char *said = NULL;
    unsigned field = 0;
    if (ev->id == PTT_EV_PROCESS_START && attached_pid && ev->pid == attached_pid &&
        w == PTT_NAMES_NONE && ptt_ev_has_field(ev, PTT_F(PROCESS_START, ppid))) {
        attached_pid = 0; /* its first start only: an exec after is one */
        said = "was running when ptt trace attached to it (-p; parent ";
        field = PTT_F(PROCESS_START, ppid);
    } else if (w == PTT_NAMES_EXEC && ptt_ev_has_field(ev, PTT_F(PROCESS_START, ppid))) {
        said = "execs a new program (parent ";
        field = PTT_F(PROCESS_START, ppid);
    } else if (ev->id == PTT_EV_PROCESS_ARGS && ptt_ev_has_field(ev, PTT_F(PROCESS_ARGS, args))) {
        ptt_obuf_puts(b, "runs the command line: "); /* as a shell reads it: not quoted again */
        ptt_obuf_puts(b, fmt_text(vb, sizeof vb, ev, PTT_F(PROCESS_ARGS, args)));
        return 1;
    } else if (w == PTT_NAMES_PROGRAM && ptt_ev_has_field(ev, PTT_F(MODULE_LOAD, path))) {
        ptt_obuf_puts(b, "runs program ");
        ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, PTT_F(MODULE_LOAD, path), 1));
        ptt_obuf_puts(b, ", mapped at ");
        ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, PTT_F(MODULE_LOAD, base), 1));
        return 1;
    }
    if (!said)
        return 0;
    ptt_obuf_puts(b, said);
    ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, field, 1));
    ptt_obuf_putc(b, ')');
    return 1;
}

/* "VERB function NAME", the name in colour */
static void print_routine(struct ptt_obuf *b, const char *verb, enum ptt_color color,
                          const char *routine)
{
    ptt_obuf_puts(b, verb);
    ptt_obuf_puts(b, " function ");
    ptt_obuf_puts(b, ptt_c(color));
    ptt_obuf_puts(b, routine);
    ptt_obuf_puts(b, ptt_c(PTT_C_RESET));
}

/* "enters function NAME (fields) at SITE" */
static void print_in(struct ptt_obuf *b, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    char vb[1100];
    print_routine(b, "enters", PTT_C_CYAN, e->routine);
    if (ptt_ev_has_field(ev, 0) && e->fields[0].type != PTT_F_SITE) {
        ptt_obuf_write(b, " (", 2);
        print_fields(b, ev, 0);
        ptt_obuf_putc(b, ')');
    }
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++)
        if (e->fields[i].type == PTT_F_SITE) {
            ptt_obuf_write(b, " at ", 4);
            ptt_obuf_puts(b, ptt_fmt_ev_field(vb, sizeof vb, ev, i, 1));
        }
}

/* "leaves function NAME, returning VALUE (fields)" */
static void print_out(struct ptt_obuf *b, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *e = ev->info;
    char vb[1100];
    print_routine(b, "leaves", PTT_C_GREEN, e->routine);
    ptt_obuf_puts(b, ", returning ");
    ptt_obuf_puts(b,
                  ptt_ev_has_field(ev, 0) ? ptt_fmt_ev_field(vb, sizeof vb, ev, 0, 1) : "nothing");
    if (ptt_ev_has_field(ev, 1) &&
        !(e->nfields == 2 && e->fields[1].type == PTT_F_ERRNO && !ev->args[1])) {
        ptt_obuf_write(b, " (", 2);
        print_fields(b, ev, 1);
        ptt_obuf_putc(b, ')');
    }
}

/* "TIME : Pid P, Thread NAME (TID) " */
static void print_who(struct ptt_obuf *b, const struct ptt_ev *ev)
{
    uint64_t m = ev->ns < 0 ? -(uint64_t)ev->ns : (uint64_t)ev->ns; /* INT64_MIN too */
    if (ev->ns < 0)
        ptt_obuf_putc(b, '-');
    ptt_obuf_fixed(b, (int64_t)(m / 1000), 6);
    ptt_obuf_puts(b, " : Pid ");
    ptt_obuf_i64(b, ev->pid);
    if (ev->id == PTT_EV_HANG_BLOCKED) { /* in the process's stream, but ptt trace's report */
        ptt_obuf_puts(b, ", ptt trace ");
        return;
    }
    ptt_obuf_puts(b, ", Thread ");
    const char *tn = names ? ptt_names_thread(names, ev->pid, ev->tid) : NULL;
    if (tn) {
        ptt_obuf_puts(b, tn);
        ptt_obuf_write(b, " (", 2);
        ptt_obuf_i64(b, ev->tid);
        ptt_obuf_write(b, ") ", 2);
    } else {
        ptt_obuf_i64(b, ev->tid);
        ptt_obuf_putc(b, ' ');
    }
}

/* One line, built in a buffer and written at once: a printf per piece was most of view's time. */
void ptt_print_human(FILE *f, const struct ptt_ev *ev)
{
    char line[2048], nb[16];
    struct ptt_obuf b;
    ptt_obuf_on(&b, f, line, sizeof line);
    print_who(&b, ev);
    const struct ptt_evinfo *e = ev->info;
    if (!e) {
        snprintf(nb, sizeof nb, "0x%04x", ev->id);
        ptt_obuf_puts(&b, "records an event unknown to this ptt (id ");
        ptt_obuf_puts(&b, nb);
        ptt_obuf_puts(&b, ").\n");
        ptt_obuf_flush(&b);
        return;
    }
    if (e->kind == PTT_KIND_IN)
        print_in(&b, ev);
    else if (e->kind == PTT_KIND_OUT)
        print_out(&b, ev);
    else {
        ptt_obuf_puts(&b, ptt_c(PTT_C_YELLOW)); /* what happens inside a call, or in the trace */
        if (!print_process(&b, ev))
            print_template(&b, ev);
        ptt_obuf_puts(&b, ptt_c(PTT_C_RESET));
    }
    uint64_t object, count;
    if (tracker && rwlock_waited(ev, &object, &count)) {
        char rb[1100];
        if (*ptt_fmt_readers(rb, sizeof rb, names, tracker, ev->pid, object, count)) {
            ptt_obuf_write(&b, "; ", 2);
            ptt_obuf_puts(&b, rb);
        }
    }
    ptt_obuf_puts(&b, ev->nested ? " [in a signal handler]\n" : ".\n");
    ptt_obuf_flush(&b);
}

void ptt_print_json(FILE *f, const struct ptt_ev *ev)
{
    char nb[32], vb[1100];
    uint64_t m = ev->ns < 0 ? -(uint64_t)ev->ns : (uint64_t)ev->ns;
    fprintf(f, "{\"time\":%s%" PRIu64 ".%09" PRIu64 ",\"event\":", ev->ns < 0 ? "-" : "",
            m / 1000000000, m % 1000000000);
    ptt_json_str(f, ptt_ev_name(ev, nb, sizeof nb));
    if (ev->info)
        fprintf(f, ",\"class\":\"%s\",\"kind\":\"%s\"", ev->info->cls,
                ptt_kind_name(ev->info->kind));
    fprintf(f, ",\"pid\":%d,\"tid\":%d", ev->pid, ev->tid);
    const char *tn = names ? ptt_names_thread(names, ev->pid, ev->tid) : NULL;
    if (tn) {
        fputs(",\"thread\":", f);
        ptt_json_str(f, tn);
    }
    fputs(",\"fields\":{", f);
    int named = 0;
    for (unsigned i = 0; ptt_ev_has_field(ev, i); i++) {
        const struct ptt_field *fd = &ev->info->fields[i];
        fprintf(f, "%s\"%.*s\":", i ? "," : "", fd->name_len, fd->name);
        if (fd->type == PTT_F_STR) { /* the bytes recorded, in the words from its own on */
            ptt_json_strn(f, (const char *)&ev->args[i], i < ev->nargs ? (ev->nargs - i) * 8 : 0,
                          0);
        } else if (fd->type == PTT_F_FRAMES) {
            ptt_json_str(f, fmt_frames(vb, sizeof vb, ev, i, 0));
        } else if (ptt_ftype_json_number(fd->type)) {
            fprintf(f, "%s", ptt_fmt_field(vb, sizeof vb, fd->type, ev->args[i], 0));
        } else {
            ptt_json_str(f, ptt_fmt_field(vb, sizeof vb, fd->type, ev->args[i], 0));
        }
        named |= fd->type == PTT_F_OBJ || fd->type == PTT_F_SYM || fd->type == PTT_F_TID ||
                 fd->type == PTT_F_SITE;
    }
    fputc('}', f);
    if (named && names) { /* the names of addresses and thread ids, where known */
        int n = 0;
        for (unsigned i = 0; ptt_ev_has_field(ev, i) && i < ev->info->nargs; i++) {
            const struct ptt_field *fd = &ev->info->fields[i];
            const char *v = NULL;
            if (fd->type == PTT_F_OBJ)
                v = ptt_names_object(names, ev->pid, ev->args[i]);
            else if (fd->type == PTT_F_SYM)
                v = ptt_names_code(names, ev->pid, ev->args[i]);
            else if (fd->type == PTT_F_TID)
                v = ptt_names_thread(names, ev->pid, (int32_t)ev->args[i]);
            else if (fd->type == PTT_F_SITE)
                v = ptt_names_site(names, ev->pid, ev->args[i]);
            if (!v)
                continue;
            fprintf(f, "%s\"%.*s\":", n++ ? "," : ",\"names\":{", fd->name_len, fd->name);
            ptt_json_str(f, v);
            const char *via =
                fd->type == PTT_F_SITE ? ptt_names_site_detail(names, ev->pid, ev->args[i]) : NULL;
            if (via) { /* the system header's line of an inlined call: "site_detail" */
                fprintf(f, ",\"%.*s_detail\":", fd->name_len, fd->name);
                ptt_json_str(f, via);
            }
        }
        if (n)
            fputc('}', f);
    }
    fputs("}\n", f);
}

const char *ptt_lost_text(char *buf, size_t len, uint64_t lost, const uint64_t *why,
                          uint64_t unmarked)
{
    static const char *const because[PTT_LOST_NWHY] = {
        [PTT_LOST_DISCARD] = "the pool was full (--overflow=discard)",
        [PTT_LOST_STARVED] = ("no sub-buffer came free in 10 s (more live threads than "
                              "sub-buffers)"),
        [PTT_LOST_DAEMON] = "ptt trace was gone",
        [PTT_LOST_HANDLER] = "a signal handler found no room",
    };
    size_t n = 0;
#define PUT(...) \
    (n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__))
    if (!lost) {
        PUT("no event was dropped");
        return buf;
    }
    PUT("%" PRIu64 " event%s dropped", lost, lost == 1 ? " was" : "s were");
    if (!why) {
        PUT(" (why is not recorded in this trace)");
    } else {
        const char *sep = ": ";
        for (int i = 0; i < PTT_LOST_NWHY; i++)
            if (why[i]) {
                PUT("%s%" PRIu64 " because %s", sep, why[i], because[i]);
                sep = ", ";
            }
        PUT("; %" PRIu64 " marked by TRACE_LOST events where they were dropped, %" PRIu64
            " marked nowhere (the thread ended first)",
            lost - (unmarked < lost ? unmarked : lost), unmarked);
    }
#undef PUT
    return buf;
}
