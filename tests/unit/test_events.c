/* The decoder's event table (common/events.def through src/trace/events.c): its rules hold for
 * every event, so that a new event that breaks one fails here rather than in a trace. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "src/trace/events.h"
#include "src/trace/reader.h"
#include "src/trace/decode.h"
#include "src/export/textfmt.h"
#include "ptt_fields.h"

static const struct ptt_evinfo *all(unsigned *n)
{
    const struct ptt_evinfo *t = ptt_evinfo_all(n);
    assert_non_null(t);
    assert_true(*n > 10);
    return t;
}

static int field_is(const struct ptt_field *f, const char *name)
{
    return f->name_len == (int)strlen(name) && !memcmp(f->name, name, strlen(name));
}

/* Fields: one per fixed argument, plus an optional last string; the spec has that many words. */
static void test_fields_match_nargs(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned e = 0; e < n; e++) {
        const struct ptt_evinfo *ev = &t[e];
        unsigned words = 0;
        for (const char *p = ev->fields_spec; *p;) {
            while (*p == ' ')
                p++;
            if (!*p)
                break;
            words++;
            while (*p && *p != ' ')
                p++;
        }
        /* A string or frames come last, after the fixed arguments. */
        int str = ev->nfields && (ev->fields[ev->nfields - 1].type == PTT_F_STR ||
                                  ev->fields[ev->nfields - 1].type == PTT_F_FRAMES);
        if (ev->nfields != words || ev->nargs + (unsigned)str != ev->nfields)
            fail_msg("%s: nargs %u, %u fields parsed, %u in the spec", ev->name, ev->nargs,
                     ev->nfields, words);
        assert_true(ev->nfields <= PTT_EVENT_MAX_ARGS);
        for (unsigned i = 0; i < ev->nfields; i++) {
            const struct ptt_field *f = &ev->fields[i];
            assert_non_null(f->name);
            assert_true(f->name_len > 0);
            for (int c = 0; c < f->name_len; c++)
                if (!islower((unsigned char)f->name[c]) && f->name[c] != '_')
                    fail_msg("%s: field name %.*s", ev->name, f->name_len, f->name);
            for (unsigned j = 0; j < i; j++)
                if (f->name_len == ev->fields[j].name_len &&
                    !memcmp(f->name, ev->fields[j].name, (size_t)f->name_len))
                    fail_msg("%s: field %.*s twice", ev->name, f->name_len, f->name);
            assert_string_not_equal(ptt_ftype_name(f->type), "?");
            if (f->type == PTT_F_STR)
                assert_int_equal(i, ev->nfields - 1); /* a string comes last */
        }
    }
}

static void test_names_and_ids_unique(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned e = 0; e < n; e++) {
        for (unsigned f = 0; f < e; f++) {
            if (!strcmp(t[e].name, t[f].name))
                fail_msg("name %s twice", t[e].name);
            if (t[e].id == t[f].id)
                fail_msg("id 0x%04x twice (%s, %s)", t[e].id, t[e].name, t[f].name);
        }
        for (const char *p = t[e].name; *p; p++)
            if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
                fail_msg("%s: not an upper-case name", t[e].name);
        assert_true(t[e].id <= PTT_EV_ID_MASK); /* the flag bits stay free */
        assert_ptr_equal(ptt_evinfo(t[e].id), &t[e]);
    }
    assert_int_equal(t[0].id, PTT_EV_TRACE_INVALID); /* id 0 means "no event" */
    assert_null(ptt_evinfo(0x3fff));
    assert_null(ptt_evinfo(0x0100 | 0xff));
    assert_null(ptt_evinfo(PTT_EV_MUTEX_LOCK_IN | PTT_EVF_ABS));
}

/* Class number == id >> 8, and the class named in the entry has that number. */
static void test_classes(void **state)
{
    (void)state;
    unsigned n, nc;
    const struct ptt_evinfo *t = all(&n);
    const struct ptt_classinfo *c = ptt_classes(&nc);
    assert_true(nc >= 5);
    for (unsigned i = 0; i < nc; i++) {
        assert_int_equal(ptt_class_number(c[i].name), c[i].number);
        assert_true(c[i].number < 64); /* a bit of the class mask */
        assert_true(strlen(c[i].description) > 0);
        for (unsigned j = 0; j < i; j++) {
            assert_int_not_equal(c[i].number, c[j].number);
            assert_string_not_equal(c[i].name, c[j].name);
        }
    }
    assert_int_equal(ptt_class_number("nonexistent"), -1);
    assert_int_equal(ptt_class_number("mutex"), PTT_CLASS_mutex);
    for (unsigned e = 0; e < n; e++) {
        int k = ptt_class_number(t[e].cls);
        if (k < 0 || (unsigned)k != PTT_CLASS_OF(t[e].id))
            fail_msg("%s: id 0x%04x in class %s (number %d)", t[e].name, t[e].id, t[e].cls, k);
    }
    /* the recorder's enum agrees with the decoder */
    assert_int_equal(PTT_CLASS_OF(PTT_EV_COND_WOKEN), PTT_CLASS_cond);
    assert_int_equal(PTT_NARGS_THREAD_START, ptt_evinfo(PTT_EV_THREAD_START)->nargs);
}

/* Whether the first word of a routine's name after pthread_ names an object (its class, or
 * another object type: pthread_mutexattr_init) rather than being the operation itself
 * (pthread_create, pthread_tryjoin_np). */
static int object_word(const char *rest, const char *cls)
{
    static const char *objects[] = {"rwlock", "spin", "key", "once", "attr"};
    size_t l = strcspn(rest, "_");
    if (!rest[l])
        return 0;
    if (l == strlen(cls) && !strncmp(rest, cls, l))
        return 1;
    if (l > 4 && !strncmp(rest + l - 4, "attr", 4))
        return 1;
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++)
        if (l == strlen(objects[i]) && !strncmp(rest, objects[i], l))
            return 1;
    return 0;
}

/* The name an IN or OUT event must have for its routine (see common/events.def). */
static void expected_name(const struct ptt_evinfo *ev, char *buf, size_t len)
{
    const char *r = ev->routine, *rest, *suffix = ev->kind == PTT_KIND_IN ? "_IN" : "_OUT";
    char prefix[32] = "";
    if (!strncmp(r, "pthread_", 8)) {
        rest = r + 8;
        if (!object_word(rest, ev->cls))
            snprintf(prefix, sizeof prefix, "THREAD_");
    } else if (!strncmp(r, "sig", 3) && r[3] != '_') {
        rest = r + 3; /* sig<op>: sigwait, sigtimedwait */
        snprintf(prefix, sizeof prefix, "SIGNAL_");
    } else {
        rest = r; /* sem_<op>, mq_<op>, timer_<op>, sched_<op>: the prefix is the object */
    }
    size_t o = (size_t)snprintf(buf, len, "%s", prefix);
    for (; *rest && o + 1 < len; rest++)
        buf[o++] = (char)toupper((unsigned char)*rest);
    snprintf(buf + o, len - o, "%s", suffix);
}

static void test_naming_rule(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    unsigned checked = 0;
    for (unsigned e = 0; e < n; e++) {
        const struct ptt_evinfo *ev = &t[e];
        if (ev->kind != PTT_KIND_IN && ev->kind != PTT_KIND_OUT) {
            /* STATE and META events have a sentence and no routine */
            assert_string_equal(ev->routine, "");
            assert_true(strlen(ev->human) > 0);
            size_t l = strlen(ev->name);
            assert_false(l > 3 && !strcmp(ev->name + l - 3, "_IN"));
            assert_false(l > 4 && !strcmp(ev->name + l - 4, "_OUT"));
            continue;
        }
        assert_string_equal(ev->human, ""); /* generated */
        assert_true(strlen(ev->routine) > 0);
        char want[128];
        expected_name(ev, want, sizeof want);
        if (strcmp(ev->name, want))
            fail_msg("%s: routine %s gives %s", ev->name, ev->routine, want);
        checked++;
    }
    assert_true(checked > 20);
    /* the rule itself, on the cases events.def names */
    char b[64];
    struct ptt_evinfo x = {.cls = "mutex", .kind = PTT_KIND_IN, .routine = "pthread_mutex_lock"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "MUTEX_LOCK_IN");
    x = (struct ptt_evinfo){.cls = "thread", .kind = PTT_KIND_OUT, .routine = "pthread_create"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "THREAD_CREATE_OUT");
    x = (struct ptt_evinfo){.cls = "thread", .kind = PTT_KIND_IN, .routine = "pthread_tryjoin_np"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "THREAD_TRYJOIN_NP_IN");
    x = (struct ptt_evinfo){.cls = "sem", .kind = PTT_KIND_IN, .routine = "sem_wait"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "SEM_WAIT_IN");
    x = (struct ptt_evinfo){
        .cls = "mutex", .kind = PTT_KIND_IN, .routine = "pthread_mutexattr_init"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "MUTEXATTR_INIT_IN");
    x = (struct ptt_evinfo){.cls = "signal", .kind = PTT_KIND_OUT, .routine = "sigtimedwait"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "SIGNAL_TIMEDWAIT_OUT");
    x = (struct ptt_evinfo){.cls = "key", .kind = PTT_KIND_IN, .routine = "pthread_setspecific"};
    expected_name(&x, b, sizeof b);
    assert_string_equal(b, "THREAD_SETSPECIFIC_IN");
}

/* Routines without a return value, and pthread_ routines that return something other than an
 * error number: their OUT events cannot have a ret:ret field. */
static int returns_void(const char *routine)
{
    return !strcmp(routine, "pthread_testcancel");
}

static int returns_value(const char *routine)
{
    return !strcmp(routine, "pthread_getspecific");
}

/* OUT events: the first field is ret; of type ret (an error number) for the pthread_ routines,
 * which return one; otherwise (-1 or NULL and errno) errno, if recorded, comes second. Each OUT
 * event has an IN event of the same routine; only an IN event without one is noreturn. */
static void test_in_out_pairs(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned e = 0; e < n; e++) {
        const struct ptt_evinfo *ev = &t[e];
        for (unsigned i = 0; i < ev->nfields; i++)
            if (!strcmp(ptt_ftype_name(ev->fields[i].type), "errno") &&
                (ev->kind != PTT_KIND_OUT || i != 1 || ev->fields[0].type == PTT_F_RET))
                fail_msg("%s: an errno field is the second of an OUT event whose ret is not an "
                         "error number",
                         ev->name);
        if (ev->kind != PTT_KIND_IN && ev->kind != PTT_KIND_OUT)
            continue;
        const struct ptt_evinfo *pair = NULL;
        for (unsigned f = 0; f < n; f++)
            if (f != e && !strcmp(t[f].routine, ev->routine) &&
                ((ev->kind == PTT_KIND_IN && t[f].kind == PTT_KIND_OUT) ||
                 (ev->kind == PTT_KIND_OUT && t[f].kind == PTT_KIND_IN))) {
                if (pair)
                    fail_msg("%s: two events pair with it", ev->name);
                pair = &t[f];
            }
        if (ev->kind == PTT_KIND_IN) {
            assert_int_equal(ev->noreturn, pair == NULL);
            continue;
        }
        if (!pair)
            fail_msg("%s: no IN event for %s", ev->name, ev->routine);
        assert_int_equal(PTT_CLASS_OF(pair->id), PTT_CLASS_OF(ev->id));
        if (returns_void(ev->routine)) {
            assert_int_equal(ev->nfields, 0);
            continue;
        }
        if (!ev->nfields || !field_is(&ev->fields[0], "ret"))
            fail_msg("%s: the first field must be ret", ev->name);
        if (!strncmp(ev->routine, "pthread_", 8) && !returns_value(ev->routine) &&
            ev->fields[0].type != PTT_F_RET)
            fail_msg("%s: %s returns an error number: ret:ret", ev->name, ev->routine);
    }
    assert_true(ptt_evinfo(PTT_EV_THREAD_EXIT_IN)->noreturn);
    assert_false(ptt_evinfo(PTT_EV_MUTEX_LOCK_IN)->noreturn);
}

/* Every {name} in a sentence is a field of the event. */
static void test_sentences(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned e = 0; e < n; e++) {
        for (const char *p = t[e].human; (p = strchr(p, '{'));) {
            const char *close = strchr(p, '}');
            if (!close)
                fail_msg("%s: unclosed { in its sentence", t[e].name);
            unsigned i;
            for (i = 0; i < t[e].nfields; i++)
                if (t[e].fields[i].name_len == close - p - 1 &&
                    !memcmp(t[e].fields[i].name, p + 1, (size_t)(close - p - 1)))
                    break;
            if (i == t[e].nfields)
                fail_msg("%s: {%.*s} is not a field", t[e].name, (int)(close - p - 1), p + 1);
            p = close;
        }
    }
}

static void test_names_of_kinds_and_types(void **state)
{
    (void)state;
    assert_string_equal(ptt_kind_name(PTT_KIND_IN), "IN");
    assert_string_equal(ptt_kind_name(PTT_KIND_META), "META");
    assert_string_equal(ptt_ftype_name(PTT_F_RET), "ret");
    assert_string_equal(ptt_ftype_name(PTT_F_STR), "str");
    assert_string_equal(ptt_ftype_name((enum ptt_ftype)999), "?");
}

/* The field formatters (src/export/textfmt.c) on the values they must name. */
static void test_field_formats(void **state)
{
    (void)state;
    char b[128];
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_RET, ETIMEDOUT, 1), "ETIMEDOUT (110)");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_RET, ETIMEDOUT, 0), "110");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_RET, 0, 1), "0");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_INT, (uint64_t)-5, 0), "-5");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_OBJ, 0xabc, 0), "0xabc");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_ABSTIME, 3000000005ull, 0), "3.000000005");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_WSTATUS, 3 << 8, 0), "exit=3");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_WSTATUS, 3 << 8, 1),
                        "exited with status 3");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_WSTATUS, 9, 0), "signal=9");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_WSTATUS, 9, 1),
                        "killed by signal 9 (SIGKILL)");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_EVID, PTT_EV_MUTEX_LOCK_IN, 0),
                        "MUTEX_LOCK_IN");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_EVID, PTT_EV_MUTEX_LOCK_IN, 1),
                        "pthread_mutex_lock");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_EVID, 0x3f01, 1), "0x3f01");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_ENDHOW, 2, 0), "cancel");
    assert_string_equal(ptt_fmt_field(b, sizeof b, PTT_F_ENDHOW, 7, 1), "?");
    /* small buffers are cut, not overrun */
    char s[4];
    assert_string_equal(ptt_fmt_field(s, sizeof s, PTT_F_UINT, 123456, 0), "123");
}

/* Both text formats for every event of the table, with all, some and none of its arguments:
 * one line each, never a crash. */
static void test_print_every_event(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    unsigned lines = 0;
    for (unsigned e = 0; e < n; e++)
        for (unsigned k = 0; k <= t[e].nargs + 2 && k <= PTT_EVENT_MAX_ARGS; k++) {
            struct ptt_ev ev;
            memset(&ev, 0, sizeof ev);
            ev.id = t[e].id;
            ev.info = &t[e];
            ev.ns = 1234567;
            ev.pid = 10;
            ev.tid = 11;
            ev.nargs = k;
            for (unsigned i = 0; i < k; i++)
                ev.args[i] = 0x4142434445464748ull + i; /* also a string "HGFEDCBA..." */
            ptt_print_raw(f, &ev);
            ptt_print_human(f, &ev);
            ev.nested = 1;
            ptt_print_human(f, &ev);
            lines += 3;
        }
    fclose(f);
    unsigned nl = 0;
    for (size_t i = 0; i < len; i++)
        nl += text[i] == '\n';
    assert_int_equal(nl, lines);
    assert_non_null(strstr(text, "0.001234567:MUTEX_LOCK_IN : 10 : 11 : 0x4142434445464748\n"));
    assert_non_null(strstr(text, "0.001234 : Pid 10, Thread 11 enters function pthread_mutex_lock "
                                 "(mutex 0x4142434445464748).\n"));
    assert_non_null(strstr(text, " [in a signal handler]\n"));
    free(text);
}

/* Whether some IN event of class cls has role r (and the flag, if any). */
static int call_with_role(const struct ptt_evinfo *t, unsigned n, const char *cls, enum ptt_role r,
                          unsigned flag)
{
    for (unsigned e = 0; e < n; e++)
        if (t[e].kind == PTT_KIND_IN && !strcmp(t[e].cls, cls) && t[e].role == r &&
            (t[e].rflags & flag) == flag)
            return 1;
    return 0;
}

/* The roles the analyses rely on: every event that acts on an object names it, every state a
 * call reports comes inside a call of its class that can report it, every OUT event's status is
 * its ret field. */
static void test_roles(void **state)
{
    (void)state;
    unsigned n;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned e = 0; e < n; e++) {
        const struct ptt_evinfo *x = &t[e];
        int obj = x->rfield[PTT_RF_OBJECT];
        switch (x->role) {
        case PTT_ROLE_ACQUIRE:
        case PTT_ROLE_RELEASE:
        case PTT_ROLE_SIGNAL:
        case PTT_ROLE_CONTENDED:
        case PTT_ROLE_ACQUIRED:
        case PTT_ROLE_WOKEN:
        case PTT_ROLE_THREAD_START:
            if (x->kind != PTT_KIND_OUT && obj < 0)
                fail_msg("%s: role %s without an object", x->name, ptt_role_name(x->role));
            break;
        case PTT_ROLE_WAIT:
            if (x->kind == PTT_KIND_IN && (x->rflags & PTT_ROLEF_BLOCKS) && obj < 0)
                fail_msg("%s: a blocking wait without an object", x->name);
            break;
        default: break;
        }
        if (x->kind == PTT_KIND_STATE &&
            (x->role == PTT_ROLE_CONTENDED || x->role == PTT_ROLE_ACQUIRED) &&
            !call_with_role(t, n, x->cls, PTT_ROLE_ACQUIRE, PTT_ROLEF_BLOCKS))
            fail_msg("%s: no blocking ACQUIRE call of class %s", x->name, x->cls);
        if (x->kind == PTT_KIND_STATE && x->role == PTT_ROLE_WOKEN &&
            !call_with_role(t, n, x->cls, PTT_ROLE_WAIT, PTT_ROLEF_BLOCKS))
            fail_msg("%s: no blocking WAIT call of class %s", x->name, x->cls);
        if (x->kind == PTT_KIND_OUT && x->nfields)
            assert_int_equal(x->rfield[PTT_RF_STATUS], 0); /* ret */
        if (x->kind == PTT_KIND_IN && x->nfields && x->fields[0].type == PTT_F_OBJ && obj < 0)
            fail_msg("%s: acts on an object and has no role naming it", x->name);
        if (obj >= 0)
            assert_true((unsigned)obj < x->nargs);
    }
    /* a few by name, as the table says */
    const struct ptt_evinfo *w = ptt_evinfo(PTT_EV_MUTEX_WAIT);
    assert_int_equal(w->role, PTT_ROLE_CONTENDED);
    assert_true(field_is(&w->fields[(int)w->rfield[PTT_RF_OWNER]], "owner"));
    const struct ptt_evinfo *c = ptt_evinfo(PTT_EV_COND_WAIT_IN);
    assert_int_equal(c->role, PTT_ROLE_WAIT);
    assert_true(c->rflags & PTT_ROLEF_BLOCKS);
    assert_true(field_is(&c->fields[(int)c->rfield[PTT_RF_LOCK]], "mutex"));
    assert_int_equal(ptt_evinfo(PTT_EV_COND_WAIT_OUT)->role, PTT_ROLE_WAIT); /* its call's */
    assert_int_equal(ptt_evinfo(PTT_EV_RWLOCK_TRYRDLOCK_IN)->rflags, PTT_ROLEF_SHARED);
    assert_string_equal(ptt_role_name(PTT_ROLE_FRAME_END), "FRAME_END");
}

/* PTT_F(EVENT, field), generated at build time, is the field's index in the table. */
static void test_field_constants(void **state)
{
    (void)state;
    const struct ptt_evinfo *s = ptt_evinfo(PTT_EV_THREAD_START);
    assert_true(field_is(&s->fields[PTT_F(THREAD_START, self)], "self"));
    assert_true(field_is(&s->fields[PTT_F(THREAD_START, creator)], "creator"));
    assert_int_equal(PTT_F(THREAD_START, self), 3);
    const struct ptt_evinfo *m = ptt_evinfo(PTT_EV_MODULE_LOAD);
    assert_int_equal(PTT_F(MODULE_LOAD, path), m->nargs); /* the string after the fixed ones */
    assert_int_equal(PTT_F(HANG_BLOCKED, since), 4);
}

/* A call with a one-record form (PTT_CALL): an IN whose OUT is of the same routine, neither with
 * a string (the record holds fixed fields only), its record id known to no event; a routine
 * that may block without a CONTENDED event first (a WAIT from its start) has none, unless it
 * waits only when busy; and the decoder makes the record IN and OUT again. */
static void test_calls(void **state)
{
    (void)state;
    unsigned n, ncalls = 0;
    const struct ptt_evinfo *t = all(&n);
    for (unsigned i = 0; i < n; i++) {
        const struct ptt_evinfo *in = &t[i], *out = ptt_evinfo(in->call_out);
        if (!in->call_out)
            continue;
        ncalls++;
        assert_int_equal(in->kind, PTT_KIND_IN);
        assert_non_null(out);
        assert_int_equal(out->kind, PTT_KIND_OUT);
        assert_string_equal(in->routine, out->routine);
        assert_int_equal(in->nfields, in->nargs);
        assert_int_equal(out->nfields, out->nargs);
        assert_null(ptt_evinfo((uint16_t)(in->id | PTT_EV_CALL)));
        if (in->role == PTT_ROLE_WAIT && (in->rflags & PTT_ROLEF_BLOCKS)) /* pthread_once */
            assert_true(ptt_role_has(in, PTT_RF_BUSY)); /* one record only when not busy */
        struct ptt_ev ev, o;
        memset(&ev, 0, sizeof ev);
        ev.id = (uint16_t)(in->id | PTT_EV_CALL);
        ev.ticks = 1000;
        ev.nargs = 1 + in->nargs + out->nargs;
        ev.args[0] = 25;
        for (unsigned k = 1; k < ev.nargs; k++)
            ev.args[k] = 100 + k;
        assert_int_equal(ptt_decode_call(&ev, &o), 1);
        assert_int_equal(ev.id, in->id);
        assert_ptr_equal(ev.info, in);
        assert_int_equal(ev.ticks, 1000);
        assert_int_equal(ev.nargs, in->nargs);
        for (unsigned k = 0; k < in->nargs; k++)
            assert_int_equal(ev.args[k], 101 + k);
        assert_int_equal(o.id, out->id);
        assert_ptr_equal(o.info, out);
        assert_int_equal(o.ticks, 1025);
        assert_int_equal(o.nargs, out->nargs);
        for (unsigned k = 0; k < out->nargs; k++)
            assert_int_equal(o.args[k], 101 + in->nargs + k);
        ev.id = (uint16_t)(in->id | PTT_EV_CALL);
        ev.info = NULL;
        ev.nargs = in->nargs + out->nargs; /* no duration: not a record of this table */
        assert_int_equal(ptt_decode_call(&ev, &o), 0);
        assert_int_equal(ev.id, in->id | PTT_EV_CALL);
    }
    assert_true(ncalls > 40);
    assert_int_equal(ptt_evinfo(PTT_EV_MUTEX_LOCK_IN)->call_out, PTT_EV_MUTEX_LOCK_OUT);
    assert_int_equal(ptt_evinfo(PTT_EV_COND_WAIT_IN)->call_out, 0);
    assert_int_equal(ptt_evinfo(PTT_EV_BARRIER_DESTROY_IN)->call_out, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_match_nargs),
        cmocka_unit_test(test_names_and_ids_unique),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_naming_rule),
        cmocka_unit_test(test_in_out_pairs),
        cmocka_unit_test(test_sentences),
        cmocka_unit_test(test_names_of_kinds_and_types),
        cmocka_unit_test(test_field_formats),
        cmocka_unit_test(test_print_every_event),
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_field_constants),
        cmocka_unit_test(test_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
