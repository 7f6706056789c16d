/* A field's value by its type alone (fieldfmt.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "trace/fieldfmt.h"
#include "util/obuf.h"
#include "util/util.h"

static const char *errno_name(int e)
{
    const char *n = e > 0 ? strerrorname_np(e) : NULL;
    return n;
}

/* Enumerations: raw prints the number, human the name. */
static const char *enum_name(enum ptt_ftype type, uint64_t v)
{
    static const char *clocks[] = {"CLOCK_REALTIME",           "CLOCK_MONOTONIC",
                                   "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
                                   "CLOCK_MONOTONIC_RAW",      "CLOCK_REALTIME_COARSE",
                                   "CLOCK_MONOTONIC_COARSE",   "CLOCK_BOOTTIME"};
    static const char *policies[] = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR",      "SCHED_BATCH",
                                     "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE"};
    static const char *mtypes[] = {"normal", "recursive", "errorcheck", "adaptive"};
    static const char *mprotos[] = {"none", "inherit", "protect"};
    static const char *rwmodes[] = {"read", "write"};
    static const char *once[] = {"not run", "running", "done"};
    static const char *cstate[] = {"enable", "disable"};
    static const char *ctype[] = {"deferred", "asynchronous"};
    static const char *hows[] = {"SIG_BLOCK", "SIG_UNBLOCK", "SIG_SETMASK"};
    static const char *sigevs[] = {"SIGEV_SIGNAL", "SIGEV_NONE", "SIGEV_THREAD", "?",
                                   "SIGEV_THREAD_ID"};
    static const char *dumps[] = {"the session ended", "ptt ctl dump", "a hang"};
#define PTT_PICK(t, a) \
    case t: return v < sizeof a / sizeof a[0] ? a[v] : NULL
    switch (type) {
        PTT_PICK(PTT_F_CLOCKID, clocks);
        PTT_PICK(PTT_F_POLICY, policies);
        PTT_PICK(PTT_F_MTYPE, mtypes);
        PTT_PICK(PTT_F_MPROTO, mprotos);
        PTT_PICK(PTT_F_RWMODE, rwmodes);
        PTT_PICK(PTT_F_ONCESTATE, once);
        PTT_PICK(PTT_F_CANCELSTATE, cstate);
        PTT_PICK(PTT_F_CANCELTYPE, ctype);
        PTT_PICK(PTT_F_SIGHOW, hows);
        PTT_PICK(PTT_F_SIGEV, sigevs);
        PTT_PICK(PTT_F_DUMPWHY, dumps);
    default: return NULL;
    }
#undef PTT_PICK
}

/* The fields of the multi-line cases of ptt_fmt_field: each writes buf. */
static void fmt_errno(char *buf, size_t len, uint64_t v, int human)
{
    const char *n = human && v ? errno_name((int)v) : NULL;
    if (n)
        snprintf(buf, len, "%s", n);
    else
        snprintf(buf, len, "%" PRId64, (int64_t)v);
}

static void fmt_signo(char *buf, size_t len, uint64_t v, int human)
{
    const char *sn = human ? sigabbrev_np((int)v) : NULL;
    if (sn)
        snprintf(buf, len, "SIG%s", sn);
    else
        snprintf(buf, len, "%" PRId64, (int64_t)v);
}

static void fmt_ret(char *buf, size_t len, uint64_t v, int human)
{
    int r = (int)(int64_t)v;
    const char *n = human ? errno_name(r) : NULL;
    if (n)
        snprintf(buf, len, "%s (%d)", n, r);
    else
        snprintf(buf, len, "%d", r);
}

static void fmt_wstatus(char *buf, size_t len, uint64_t v, int human)
{
    int st = (int)v;
    if (WIFEXITED(st))
        snprintf(buf, len, human ? "exited with status %d" : "exit=%d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) {
        const char *sn = sigabbrev_np(WTERMSIG(st));
        if (human)
            snprintf(buf, len, "killed by signal %d (SIG%s)%s", WTERMSIG(st), sn ? sn : "?",
                     WCOREDUMP(st) ? ", core dumped" : "");
        else
            snprintf(buf, len, "signal=%d", WTERMSIG(st));
    } else
        snprintf(buf, len, "status=0x%x", st);
}

static void fmt_evid(char *buf, size_t len, uint64_t v, int human)
{
    const struct ptt_evinfo *e = ptt_evinfo((uint16_t)v);
    if (e && human && e->routine[0])
        snprintf(buf, len, "%s", e->routine);
    else if (e)
        snprintf(buf, len, "%s", e->name);
    else
        snprintf(buf, len, "0x%04" PRIx64, v);
}

static void fmt_endhow(char *buf, size_t len, uint64_t v, int human)
{
    static const char *raw[] = {"return", "exit", "cancel"};
    static const char *hum[] = {"returned", "called pthread_exit", "cancelled"};
    snprintf(buf, len, "%s", v < 3 ? (human ? hum : raw)[v] : "?");
}

/* The fields that are one number, as the switch of ptt_fmt_field writes them, formatted by hand
 * (buf: 24 bytes at least): ptt view, the exports print millions. NULL for the others. */
static const char *fmt_number(char *buf, enum ptt_ftype type, uint64_t v, int human)
{
    size_t n;
    switch (type) {
    case PTT_F_CLASSES:
    case PTT_F_SIGSET:
    case PTT_F_CPUSET:
        if (human)
            return NULL;
        /* fall through */
    case PTT_F_HEX:
    case PTT_F_STR:
    case PTT_F_FRAMES:
    case PTT_F_SITE:
    case PTT_F_OBJ:
    case PTT_F_PTR:
    case PTT_F_SYM:
    case PTT_F_PTHREAD:
        buf[0] = '0';
        buf[1] = 'x';
        n = 2 + ptt_fmt_x64(buf + 2, v);
        break;
    case PTT_F_BOOL:
    case PTT_F_NS:
        if (human)
            return NULL;
        /* fall through */
    case PTT_F_UINT:
    case PTT_F_COUNT: n = ptt_fmt_u64(buf, v); break;
    case PTT_F_INT: n = ptt_fmt_i64(buf, (int64_t)v); break;
    case PTT_F_RET:
        if (human)
            return NULL;
        /* fall through */
    case PTT_F_TID: n = ptt_fmt_i64(buf, (int)(int64_t)v); break;
    default: return NULL;
    }
    buf[n] = 0;
    return buf;
}

int ptt_ftype_raw_hex(enum ptt_ftype t)
{
    switch (t) {
    case PTT_F_HEX:
    case PTT_F_SITE:
    case PTT_F_OBJ:
    case PTT_F_PTR:
    case PTT_F_SYM:
    case PTT_F_PTHREAD:
    case PTT_F_CLASSES:
    case PTT_F_SIGSET:
    case PTT_F_CPUSET: return 1;
    default: return 0;
    }
}

const char *ptt_fmt_field(char *buf, size_t len, enum ptt_ftype type, uint64_t v, int human)
{
    const char *num = len >= 24 ? fmt_number(buf, type, v, human) : NULL;
    if (num)
        return num;
    const char *name = human ? enum_name(type, v) : NULL;
    if (name) {
        snprintf(buf, len, "%s", name);
        return buf;
    }
    switch (type) {
    default: /* enumerations (ptt_ftype_is_enum): their numbers */
        snprintf(buf, len, "%" PRId64, (int64_t)v);
        break;
    case PTT_F_CLASSES:
        if (human)
            ptt_class_list(buf, len, v);
        else
            snprintf(buf, len, "0x%" PRIx64, v);
        break;
    case PTT_F_BOOL: snprintf(buf, len, human ? (v ? "yes" : "no") : "%" PRIu64, v); break;
    case PTT_F_HEX: snprintf(buf, len, "0x%" PRIx64, v); break;
    case PTT_F_OCT: snprintf(buf, len, "0%" PRIo64, v); break;
    case PTT_F_ERRNO: fmt_errno(buf, len, v, human); break;
    case PTT_F_NS:
        if (human)
            snprintf(buf, len, "%" PRIu64 ".%09" PRIu64 " s", v / 1000000000u, v % 1000000000u);
        else
            snprintf(buf, len, "%" PRIu64, v);
        break;
    case PTT_F_SIGNO: fmt_signo(buf, len, v, human); break;
    case PTT_F_SIGSET:
    case PTT_F_CPUSET:
        if (human)
            ptt_mask_list(buf, len, v, type == PTT_F_SIGSET ? 1 : 0);
        else
            snprintf(buf, len, "0x%" PRIx64, v);
        break;
    case PTT_F_STR:    /* needs the whole event: ptt_fmt_ev_field */
    case PTT_F_FRAMES: /* likewise */
    case PTT_F_SITE:
    case PTT_F_OBJ:
    case PTT_F_PTR:
    case PTT_F_SYM:
    case PTT_F_PTHREAD: snprintf(buf, len, "0x%" PRIx64, v); break;
    case PTT_F_INT: snprintf(buf, len, "%" PRId64, (int64_t)v); break;
    case PTT_F_UINT:
    case PTT_F_COUNT: snprintf(buf, len, "%" PRIu64, v); break;
    case PTT_F_RET: fmt_ret(buf, len, v, human); break;
    case PTT_F_TID: snprintf(buf, len, "%d", (int)(int64_t)v); break;
    case PTT_F_ABSTIME:
        snprintf(buf, len, "%" PRIu64 ".%09" PRIu64, v / 1000000000u, v % 1000000000u);
        break;
    case PTT_F_WSTATUS: fmt_wstatus(buf, len, v, human); break;
    case PTT_F_EVID: fmt_evid(buf, len, v, human); break;
    case PTT_F_ENDHOW: fmt_endhow(buf, len, v, human); break;
    }
    return buf;
}

const char *ptt_fmt_waits_on(char *buf, size_t len, const struct ptt_evinfo *in, uint64_t v)
{
    if (!in || !in->nfields)
        return NULL;
    const struct ptt_field *f =
        &in->fields[in->rfield[PTT_RF_OBJECT] >= 0 ? in->rfield[PTT_RF_OBJECT] : 0];
    if (f->type == PTT_F_OBJ || f->type == PTT_F_PTHREAD)
        return NULL;
    char s[256];
    ptt_fmt_field(s, sizeof s, f->type, v, 1);
    snprintf(buf, len, "%.*s %s", f->name_len, f->name, s);
    return buf;
}
