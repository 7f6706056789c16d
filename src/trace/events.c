/* The decoder's event table, built from common/events.def. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/events.h"

static struct ptt_evinfo table[] = {
/* Laid out by hand: clang-format 14 gives a braced list in a macro a column per field. */
// clang-format off
#define PTT_EVENT(name, id, class, kind, routine, nargs, fields, human)                         \
    {id, #name, #class, PTT_KIND_##kind, routine, nargs, 0, fields, human, {{0}}, 0, 0, 0, 0, \
     {0}, NULL, -1, 0},
// clang-format on
#include "../../common/events.def"
};
#define NEVENTS (sizeof table / sizeof table[0])

enum {
#define PTT_EVENT(name, ...) PTT_ORD_##name,
#include "../../common/events.def"
};

/* The roles, by the event's order in the table: a role line naming no event fails to compile,
 * and a second line for one event is an override -Werror rejects. */
static const struct {
    enum ptt_role role;
    const char *spec;
} roles[NEVENTS] = {
#define PTT_ROLE(name, role, spec) [PTT_ORD_##name] = {PTT_ROLE_##role, spec},
#include "../../common/events.def"
};

/* The calls with a one-record form: IN and OUT. */
static const struct {
    uint16_t in, out;
} calls[] = {
#define PTT_CALL(in, out) {PTT_EV_##in, PTT_EV_##out},
#include "../../common/events.def"
};

static const struct ptt_classinfo classes[] = {
#define PTT_CLASS(name, number, description) {#name, number, description},
#include "../../common/events.def"
};

/* Index of an id in the table; a switch, so that a duplicate id fails to compile (and a second
 * PTT_CALL line for a call, whose one-record id is listed too, as -2). */
static int index_of(uint16_t id)
{
    switch (id) {
        /* clang-format off */
#define PTT_EVENT(name, id, ...) case id: return PTT_ORD_##name;
#define PTT_CALL(in, out) case PTT_EV_##in | PTT_EV_CALL: return -2;
#include "../../common/events.def"
        /* clang-format on */
    default: return -1;
    }
}

static const struct {
    const char *name;
    enum ptt_ftype type;
} ftypes[] = {
    {"obj", PTT_F_OBJ},
    {"ptr", PTT_F_PTR},
    {"sym", PTT_F_SYM},
    {"int", PTT_F_INT},
    {"uint", PTT_F_UINT},
    {"count", PTT_F_COUNT},
    {"ret", PTT_F_RET},
    {"tid", PTT_F_TID},
    {"pthread", PTT_F_PTHREAD},
    {"abstime", PTT_F_ABSTIME},
    {"wstatus", PTT_F_WSTATUS},
    {"evid", PTT_F_EVID},
    {"endhow", PTT_F_ENDHOW},
    {"str", PTT_F_STR},
    {"bool", PTT_F_BOOL},
    {"hex", PTT_F_HEX},
    {"oct", PTT_F_OCT},
    {"errno", PTT_F_ERRNO},
    {"ns", PTT_F_NS},
    {"clockid", PTT_F_CLOCKID},
    {"policy", PTT_F_POLICY},
    {"mtype", PTT_F_MTYPE},
    {"mproto", PTT_F_MPROTO},
    {"rwmode", PTT_F_RWMODE},
    {"oncestate", PTT_F_ONCESTATE},
    {"cancelstate", PTT_F_CANCELSTATE},
    {"canceltype", PTT_F_CANCELTYPE},
    {"signo", PTT_F_SIGNO},
    {"sighow", PTT_F_SIGHOW},
    {"classes", PTT_F_CLASSES},
    {"site", PTT_F_SITE},
    {"frames", PTT_F_FRAMES},
    {"dumpwhy", PTT_F_DUMPWHY},
    {"sigset", PTT_F_SIGSET},
    {"sigev", PTT_F_SIGEV},
    {"cpuset", PTT_F_CPUSET},
};

const char *ptt_ftype_name(enum ptt_ftype t)
{
    for (size_t i = 0; i < sizeof ftypes / sizeof ftypes[0]; i++)
        if (ftypes[i].type == t)
            return ftypes[i].name;
    return "?";
}

static int parsed;
/* Index + 1 in the table of every id (0: none): ptt_evinfo is called for every event read. */
static uint8_t ord_of[PTT_EV_ID_MASK + 1];
_Static_assert(NEVENTS < 255, "ord_of holds the index in a byte");

static const char *role_names[] = {
    "NONE",       "USE",           "CREATE",      "DESTROY",     "ACQUIRE",   "CONTENDED",
    "ACQUIRED",   "RELEASE",       "WAIT",        "WOKEN",       "SIGNAL",    "THREAD_START",
    "THREAD_END", "PROCESS_START", "PROCESS_END", "FRAME_BEGIN", "FRAME_END",
};

const char *ptt_role_name(enum ptt_role r)
{
    return (unsigned)r < sizeof role_names / sizeof role_names[0] ? role_names[r] : "?";
}

static void bad_role(const struct ptt_evinfo *ev, const char *what, int len)
{
    fprintf(stderr, "ptt: %s: bad role spec (%.*s)\n", ev->name, len, what);
    abort();
}

/* The index of the field named name[0..len-1], -1 if none. */
static int field_named(const struct ptt_evinfo *ev, const char *name, int len)
{
    for (unsigned i = 0; i < ev->nfields; i++)
        if (ev->fields[i].name_len == len && !memcmp(ev->fields[i].name, name, (size_t)len))
            return (int)i;
    return -1;
}

/* One word of a role spec: a flag, or key=field. */
static void role_word(struct ptt_evinfo *ev, const char *w, int len)
{
    static const char *flags[] = {"blocks", "shared", "counted", "wakes"};
    static const char *keys[PTT_RF_N] = {"object", "lock",  "owner",  "by",
                                         "value",  "count", "status", "busy"};
    for (unsigned f = 0; f < sizeof flags / sizeof flags[0]; f++)
        if ((int)strlen(flags[f]) == len && !memcmp(flags[f], w, (size_t)len)) {
            ev->rflags |= 1u << f;
            return;
        }
    const char *eq = memchr(w, '=', (size_t)len);
    int kl = eq ? (int)(eq - w) : len, vl = len - kl - 1;
    if (eq && kl == 4 && !memcmp(w, "kind", 4)) {
        char cls[32];
        snprintf(cls, sizeof cls, "%.*s", vl, eq + 1);
        if ((ev->okind = ptt_class_number(cls)) < 0)
            bad_role(ev, w, len);
        return;
    }
    for (unsigned k = 0; eq && k < PTT_RF_N; k++)
        if ((int)strlen(keys[k]) == kl && !memcmp(keys[k], w, (size_t)kl)) {
            int i = field_named(ev, eq + 1, vl);
            if (i < 0 || (unsigned)i >= ev->nargs)
                bad_role(ev, w, len); /* no such fixed field */
            ev->rfield[k] = (signed char)i;
            return;
        }
    bad_role(ev, w, len);
}

/* The role of event e (parsed fields): its line, or for an OUT event without one its IN's. */
static void parse_role(size_t e)
{
    struct ptt_evinfo *ev = &table[e];
    ev->role = roles[e].role;
    ev->role_spec = roles[e].spec ? roles[e].spec : "";
    ev->okind = ptt_class_number(ev->cls);
    memset(ev->rfield, -1, sizeof ev->rfield);
    for (const char *s = ev->role_spec; *s;) {
        size_t n = strcspn(s, " ");
        if (n)
            role_word(ev, s, (int)n);
        s += n + (s[n] == ' ');
    }
    if (ev->kind == PTT_KIND_OUT && ev->rfield[PTT_RF_STATUS] < 0)
        ev->rfield[PTT_RF_STATUS] = (signed char)field_named(ev, "ret", 3);
    if (ev->kind != PTT_KIND_OUT || roles[e].spec)
        return;
    for (size_t i = 0; i < NEVENTS; i++)
        if (table[i].kind == PTT_KIND_IN && !strcmp(table[i].routine, ev->routine) &&
            roles[i].spec) {
            ev->role = roles[i].role;
            ev->okind = ptt_class_number(table[i].cls);
        }
}

/* Parse the field specs once; a malformed table is a build bug, caught by the unit tests. */
static void parse_table(void)
{
    for (size_t e = 0; e < NEVENTS; e++) {
        struct ptt_evinfo *ev = &table[e];
        const char *s = ev->fields_spec;
        unsigned n = 0;
        while (*s) {
            while (*s == ' ')
                s++;
            if (!*s)
                break;
            const char *colon = strchr(s, ':');
            const char *end = strchr(s, ' ');
            if (!end)
                end = s + strlen(s);
            if (!colon || colon > end || n >= PTT_EVENT_MAX_ARGS) {
                fprintf(stderr, "ptt: bad field spec for %s\n", ev->name);
                abort();
            }
            ev->fields[n].name = s;
            ev->fields[n].name_len = (int)(colon - s);
            size_t tl = (size_t)(end - colon - 1);
            size_t k;
            for (k = 0; k < sizeof ftypes / sizeof ftypes[0]; k++)
                if (strlen(ftypes[k].name) == tl && !memcmp(ftypes[k].name, colon + 1, tl))
                    break;
            if (k == sizeof ftypes / sizeof ftypes[0]) {
                fprintf(stderr, "ptt: bad field type for %s\n", ev->name);
                abort();
            }
            ev->fields[n].type = ftypes[k].type;
            if (ftypes[k].type == PTT_F_SITE && ev->site < 0)
                ev->site = (signed char)n;
            n++;
            s = end;
        }
        ev->nfields = n;
        if (n && (ev->fields[n - 1].type == PTT_F_STR || ev->fields[n - 1].type == PTT_F_FRAMES))
            n--; /* a string or frames follow the fixed arguments */
        for (unsigned k = 0; k < n; k++)
            if (ev->fields[k].type == PTT_F_STR || ev->fields[k].type == PTT_F_FRAMES) {
                fprintf(stderr, "ptt: %s: a str or frames field must be the last\n", ev->name);
                abort();
            }
        if (n != ev->nargs) {
            fprintf(stderr, "ptt: %s declares %u arguments and %u fields\n", ev->name, ev->nargs,
                    n);
            abort();
        }
        if (ev->kind == PTT_KIND_IN) {
            ev->noreturn = 1;
            for (size_t o = 0; o < NEVENTS; o++)
                if (table[o].kind == PTT_KIND_OUT && !strcmp(table[o].routine, ev->routine))
                    ev->noreturn = 0;
        }
    }
    for (size_t e = 0; e < NEVENTS; e++)
        parse_role(e);
    for (unsigned id = 0; id <= PTT_EV_ID_MASK; id++)
        ord_of[id] = (uint8_t)(index_of((uint16_t)id) >= 0 ? index_of((uint16_t)id) + 1 : 0);
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        struct ptt_evinfo *in = &table[ord_of[calls[c].in] - 1];
        const struct ptt_evinfo *out = &table[ord_of[calls[c].out] - 1];
        /* The reader leaves a one-record call out of its call tracker: it enters and leaves. */
        if (in->kind != PTT_KIND_IN || out->kind != PTT_KIND_OUT ||
            strcmp(in->routine, out->routine)) {
            fprintf(stderr, "ptt: PTT_CALL(%s, %s) is not an IN and an OUT of one routine\n",
                    in->name, out->name);
            abort();
        }
        in->call_out = calls[c].out;
    }
    parsed = 1;
}

const struct ptt_evinfo *ptt_evinfo(uint16_t id)
{
    if (!parsed)
        parse_table();
    unsigned i = id <= PTT_EV_ID_MASK ? ord_of[id] : 0;
    return i ? &table[i - 1] : NULL;
}

struct ptt_evindex ptt_evindex(void)
{
    if (!parsed)
        parse_table();
    return (struct ptt_evindex){table, ord_of};
}

const struct ptt_evinfo *ptt_evinfo_all(unsigned *n)
{
    if (!parsed)
        parse_table();
    *n = NEVENTS;
    return table;
}

const struct ptt_classinfo *ptt_classes(unsigned *n)
{
    *n = sizeof classes / sizeof classes[0];
    return classes;
}

int ptt_class_number(const char *name)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (!strcmp(classes[i].name, name))
            return (int)classes[i].number;
    return -1;
}

const char *ptt_kind_name(enum ptt_kind k)
{
    static const char *names[] = {"IN", "OUT", "STATE", "META"};
    return names[k];
}

uint64_t ptt_all_classes(void)
{
    uint64_t all = 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        all |= 1ull << classes[i].number;
    return all;
}

const char *ptt_class_list(char *buf, size_t len, uint64_t mask)
{
    size_t o = 0, n = sizeof classes / sizeof classes[0];
    uint64_t all = ptt_all_classes();
    buf[0] = 0;
    if ((mask & all) == all)
        return snprintf(buf, len, "all"), buf;
    for (size_t i = 0; i < n && o < len; i++)
        if ((mask >> classes[i].number) & 1)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", classes[i].name);
    if (!o)
        snprintf(buf, len, "none");
    return buf;
}

int ptt_parse_classes(const char *list, uint64_t *mask, char *bad, size_t badlen)
{
    *mask = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(n < 31 ? n : 31), p);
        if (!strcmp(name, "all"))
            *mask = ~0ull;
        else if (ptt_class_number(name) >= 0)
            *mask |= 1ull << ptt_class_number(name);
        else if (n) {
            snprintf(bad, badlen, "%s", name);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

int ptt_ftype_is_enum(enum ptt_ftype t)
{
    switch (t) {
    case PTT_F_CLOCKID:
    case PTT_F_POLICY:
    case PTT_F_MTYPE:
    case PTT_F_MPROTO:
    case PTT_F_RWMODE:
    case PTT_F_ONCESTATE:
    case PTT_F_CANCELSTATE:
    case PTT_F_CANCELTYPE:
    case PTT_F_SIGHOW:
    case PTT_F_SIGEV:
    case PTT_F_DUMPWHY: return 1;
    default: return 0;
    }
}

int ptt_ftype_json_number(enum ptt_ftype t)
{
    switch (t) {
    case PTT_F_INT:
    case PTT_F_UINT:
    case PTT_F_COUNT:
    case PTT_F_RET:
    case PTT_F_TID:
    case PTT_F_BOOL:
    case PTT_F_ERRNO:
    case PTT_F_NS:
    case PTT_F_SIGNO: return 1;
    default: return ptt_ftype_is_enum(t);
    }
}
