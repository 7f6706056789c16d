/* Event filters. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/filter.h"
#include "analysis/names.h"
#include "util/util.h"

#define MAXV 64

struct ptt_filter {
    int npid, ntid, nobj, nevent;
    int32_t pids[MAXV];
    int32_t tids[MAXV];
    char *tid_names[MAXV]; /* thread names, matched through names */
    uint64_t objs[MAXV];
    char *obj_names[MAXV];
    char *events[MAXV];     /* names or globs */
    char *not_events[MAXV]; /* !NAME: left out */
    int nnot;
    uint64_t kinds;   /* classes; 0: any */
    int64_t from, to; /* ns; to < 0: none */
    const struct ptt_names *names;
    int any;        /* an option was given */
    uint64_t *hits; /* bit k of [0]: tids[k] or tid_names[k] matched an event; of [1]: objs[k] */
};

struct ptt_filter *ptt_filter_new(void)
{
    struct ptt_filter *f = ptt_must(calloc(1, sizeof *f));
    f->to = -1;
    f->hits = ptt_must(calloc(2, sizeof *f->hits)); /* apart: a match counts through a const f */
    return f;
}

void ptt_filter_names(struct ptt_filter *f, const struct ptt_names *names)
{
    f->names = names;
}

static int seconds(const char *v, int64_t *ns)
{
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s >= 0 && s <= 9e9)) /* NaN too */
        return -1;
    *ns = (int64_t)(s * 1e9 + 0.5);
    return 0;
}

int ptt_filter_add(struct ptt_filter *f, const char *what, const char *value, char *err,
                   size_t errlen)
{
    if (!value[strspn(value, ", ")]) {
        snprintf(err, errlen, "--%s=%s: give a value", what, value);
        return -1;
    }
    if (!strcmp(what, "from") || !strcmp(what, "to")) {
        int64_t ns;
        if (seconds(value, &ns)) {
            snprintf(err, errlen, "--%s=%s: give seconds since the start of the trace", what,
                     value);
            return -1;
        }
        *(what[0] == 'f' ? &f->from : &f->to) = ns;
        return 0;
    }
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long long n = strtoll(tok, &end, 0);
        int numeric = *tok && !*end;
        if (!strcmp(what, "pid")) {
            if (!numeric || f->npid == MAXV)
                goto bad;
            f->pids[f->npid++] = (int32_t)n;
        } else if (!strcmp(what, "tid")) {
            if (f->ntid == MAXV)
                goto bad;
            f->tids[f->ntid] = numeric ? (int32_t)n : 0;
            f->tid_names[f->ntid++] = numeric ? NULL : strdup(tok);
        } else if (!strcmp(what, "object")) {
            if (f->nobj == MAXV)
                goto bad;
            f->objs[f->nobj] = numeric ? (uint64_t)strtoull(tok, NULL, 0) : 0;
            f->obj_names[f->nobj++] = numeric ? NULL : strdup(tok);
        } else if (!strcmp(what, "event")) {
            int not = tok[0] == '!';
            const char *glob = tok + not ;
            if ((not ? f->nnot : f->nevent) == MAXV)
                goto bad;
            int known = 0;
            unsigned ne;
            const struct ptt_evinfo *all = ptt_evinfo_all(&ne);
            for (unsigned i = 0; i < ne && !known; i++)
                known = !fnmatch(glob, all[i].name, 0);
            if (!known) {
                snprintf(err, errlen, "--event=%s: no event is named so (docs/events.md)", tok);
                return -1;
            }
            if (not )
                f->not_events[f->nnot++] = strdup(glob);
            else
                f->events[f->nevent++] = strdup(glob);
        } else if (!strcmp(what, "kind")) {
            int c = ptt_class_number(tok);
            if (c < 0) {
                snprintf(err, errlen, "--kind=%s: not an object kind ('ptt trace --list')", tok);
                return -1;
            }
            f->kinds |= 1ull << c;
        } else {
            snprintf(err, errlen, "unknown filter --%s", what);
            return -1;
        }
    }
    return 0;
bad:
    snprintf(err, errlen, "--%s=%s: give %s (at most %d, comma-separated)", what, value,
             !strcmp(what, "pid") ? "process ids" : "values", MAXV);
    return -1;
}

/* Whether an object field of the event is one of the filter's objects. */
static int object_match(const struct ptt_filter *f, const struct ptt_ev *ev)
{
    if (!ev->info)
        return 0;
    for (unsigned i = 0; i < ev->info->nargs && i < ev->nargs; i++) {
        if (ev->info->fields[i].type != PTT_F_OBJ)
            continue;
        for (int k = 0; k < f->nobj; k++) {
            if (f->obj_names[k]) {
                const char *n = f->names ? ptt_names_object(f->names, ev->pid, ev->args[i]) : NULL;
                if (n && !strcmp(n, f->obj_names[k]))
                    return !!(f->hits[1] |= 1ull << k);
            } else if (ev->args[i] == f->objs[k]) {
                return !!(f->hits[1] |= 1ull << k);
            }
        }
    }
    return 0;
}

int ptt_filter_option(struct ptt_filter *f, const char *cmd, int c, const char *arg)
{
    static const char *const what[] = {"pid", "tid", "object", "event", "kind", "from", "to"};
    if (c < PTT_FOPT_PID || c > PTT_FOPT_TO)
        return 0;
    char err[600];
    if (ptt_filter_add(f, what[c - PTT_FOPT_PID], arg, err, sizeof err)) {
        ptt_warn(cmd, "%s", err);
        return -1;
    }
    f->any = 1;
    return 1;
}

int ptt_filter_any(const struct ptt_filter *f)
{
    return f && f->any;
}

int ptt_filter_selects(const struct ptt_filter *f)
{
    return f && (f->ntid || f->nobj || f->nevent || f->nnot || f->kinds);
}

int64_t ptt_filter_from(const struct ptt_filter *f)
{
    return f ? f->from : 0;
}

int64_t ptt_filter_to(const struct ptt_filter *f)
{
    return f ? f->to : -1;
}

int ptt_filter_keep_before(uint16_t id)
{
    const struct ptt_evinfo *e = ptt_evinfo(id);
    if (!e)
        return 0;
    switch (id) {
    case PTT_EV_PROCESS_START:
    case PTT_EV_PROCESS_EXIT:
    case PTT_EV_PROCESS_ARGS:
    case PTT_EV_MODULE_LOAD:
    case PTT_EV_THREAD_START:
    case PTT_EV_THREAD_SETNAME_NP_IN:
    case PTT_EV_THREAD_SETNAME_NP_OUT:
    case PTT_EV_PRCTL_IN:
    case PTT_EV_PRCTL_OUT:
    case PTT_EV_SEM_OPEN_OUT:
    case PTT_EV_THREAD_CREATE_OUT:
    case PTT_EV_OBJECT_NAME:
    case PTT_EV_THREAD_ATTACHED:
    case PTT_EV_THREAD_RUNNING: return 1;
    default: return e->kind == PTT_KIND_IN && e->role == PTT_ROLE_CREATE;
    }
}

struct ptt_reader *ptt_filter_open(const struct ptt_filter *f, const char *path, int skip,
                                   char *err, size_t errlen)
{
    struct ptt_reader *r = ptt_reader_open(path, err, errlen);
    if (r && skip && ptt_filter_from(f) > 0)
        ptt_reader_skip(r, ptt_filter_from(f), ptt_filter_keep_before);
    return r;
}

int ptt_filter_match(const struct ptt_filter *f, const struct ptt_ev *ev)
{
    if (ev->ns < f->from || (f->to >= 0 && ev->ns > f->to))
        return 0;
    return ptt_filter_select(f, ev);
}

/* Whether the event's thread is one of the filter's (its number or its name then). */
static int tid_match(const struct ptt_filter *f, const struct ptt_ev *ev)
{
    for (int k = 0; k < f->ntid; k++) {
        int ok = 0;
        if (!f->tid_names[k])
            ok = ev->tid == f->tids[k];
        else if (f->names) {
            const char *n = ptt_names_thread(f->names, ev->pid, ev->tid);
            ok = n && !strcmp(n, f->tid_names[k]);
        }
        if (ok)
            return !!(f->hits[0] |= 1ull << k);
    }
    return 0;
}

int ptt_filter_select(const struct ptt_filter *f, const struct ptt_ev *ev)
{
    /* The thread and the object first, whatever else holds: a value no event matches is one
     * ptt_filter_unmatched tells of, not one left out by the other criteria. */
    int tid_ok = !f->ntid || tid_match(f, ev), obj_ok = !f->nobj || object_match(f, ev);
    if (f->kinds && !((f->kinds >> PTT_CLASS_OF(ev->id)) & 1))
        return 0;
    if (f->npid) {
        int ok = 0;
        for (int k = 0; k < f->npid && !ok; k++)
            ok = ev->pid == f->pids[k];
        if (!ok)
            return 0;
    }
    if (!tid_ok)
        return 0;
    if (f->nevent || f->nnot) {
        int ok = !f->nevent;
        char nb[32];
        const char *name =
            ev->info ? ev->info->name : (snprintf(nb, sizeof nb, "UNKNOWN_0x%04x", ev->id), nb);
        for (int k = 0; k < f->nevent && !ok; k++)
            ok = !fnmatch(f->events[k], name, 0);
        for (int k = 0; k < f->nnot && ok; k++)
            ok = fnmatch(f->not_events[k], name, 0) != 0;
        if (!ok)
            return 0;
    }
    return obj_ok;
}

int ptt_filter_done(const struct ptt_filter *f, int64_t ns)
{
    return f->to >= 0 && ns > f->to;
}

void ptt_filter_unmatched(const struct ptt_filter *f, const char *cmd)
{
    for (int k = 0; f && k < f->ntid; k++) {
        if ((f->hits[0] >> k) & 1)
            continue;
        if (f->tid_names[k])
            ptt_warn(cmd,
                     "--tid=%s: no thread of that name in the events read (a thread's name is the "
                     "one ptt view shows; the kernel keeps the first 15 bytes of a name)",
                     f->tid_names[k]);
        else
            ptt_warn(cmd, "--tid=%d: no event of that thread was read", (int)f->tids[k]);
    }
    for (int k = 0; f && k < f->nobj; k++) {
        if ((f->hits[1] >> k) & 1)
            continue;
        if (f->obj_names[k])
            ptt_warn(cmd, "--object=%s: no object of that name in the events read",
                     f->obj_names[k]);
        else
            ptt_warn(cmd, "--object=0x%" PRIx64 ": no event on that object was read", f->objs[k]);
    }
}

void ptt_filter_free(struct ptt_filter *f)
{
    if (!f)
        return;
    free(f->hits);
    for (int k = 0; k < f->ntid; k++)
        free(f->tid_names[k]);
    for (int k = 0; k < f->nobj; k++)
        free(f->obj_names[k]);
    for (int k = 0; k < f->nevent; k++)
        free(f->events[k]);
    for (int k = 0; k < f->nnot; k++)
        free(f->not_events[k]);
    free(f);
}
