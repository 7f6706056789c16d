/* Names of threads and objects, learned from the events as they are read. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/util.h"
#include "analysis/names.h"
#include "ptt_fields.h"
#include "analysis/symbols.h"

/* The tables: a string (or a number) by key (hmap.h). */
struct entry {
    char *str;
    uint64_t num;
    uint64_t aux;
};

static struct entry *map_get(struct ptt_hmap *m, uint64_t key, int add)
{
    return ptt_hmap_get(m, key, add ? sizeof(struct entry) : 0);
}

static void map_set(struct ptt_hmap *m, uint64_t key, const char *s)
{
    struct entry *e = map_get(m, key, 1);
    free(e->str);
    e->str = s ? strdup(s) : NULL;
}

static void release(void *e)
{
    free(((struct entry *)e)->str);
}

static void map_free(struct ptt_hmap *m)
{
    ptt_hmap_free(m, release);
}

struct module {
    uint64_t base, size;
    char *path;
};

struct proc {
    int32_t pid, ppid;
    int fresh;        /* started (fork or exec) and no module seen since */
    int running;      /* a PROCESS_START seen, and no PROCESS_EXIT since */
    size_t last_obj;  /* 1 + the index in order of its last object first seen, 0: none */
    int64_t start_ns; /* its last PROCESS_START */
    struct module *mods;
    size_t nmods;
    struct ptt_symbols *sym; /* built on first use */
    char *cmd;               /* its program's command line (PROCESS_ARGS), NULL: none seen */
    char *forked_prog;       /* a process that started: its parent's program then (a fork's) */
};

struct user_name {
    uint64_t addr; /* 0: by symbol */
    char *symbol;
    char *name;
};

/* An object, in the order the trace first shows it. */
struct seen_obj {
    int32_t pid;
    uint32_t prev; /* 1 + the index of the process's object before, 0: none since its exec */
    uint64_t addr;
    int64_t ns; /* its first use */
};

struct ptt_names {
    struct ptt_names_head head; /* first: ptt_names_event reads it */
    struct proc *procs;
    size_t nprocs;
    struct ptt_hmap proc_index; /* pid -> 1 + its index in procs (a trace may hold 250,000) */
    struct ptt_hmap threads;    /* (pid, tid) -> name */
    struct ptt_hmap objects;    /* (pid, addr) -> the name the program gave (OBJECT_NAME) */
    struct ptt_hmap derived;    /* (pid, addr) -> --names', else symbol or site#N, also "no name" */
    struct ptt_hmap dups;       /* (pid, name hash) -> objects derived that name so far */
    struct seen_obj *order;     /* objects by first use (born), named in that order */
    size_t norder, caporder, named;
    struct ptt_hmap code;     /* (pid, addr) -> "func (file:line)" */
    struct ptt_hmap sites;    /* (pid, addr) -> "file:line", num: in a system header */
    struct ptt_hmap details;  /* (pid, addr) -> the header line of an inlined call site */
    struct ptt_hmap pthreads; /* (pid, pthread_t) -> tid */
    struct ptt_hmap starts;   /* (pid, name hash) -> threads that had that name (name_thread) */
    struct ptt_hmap setname;  /* (pid, tid) -> pending name of a pthread_setname_np (num: target) */
    struct ptt_hmap early;    /* (pid, pthread_t) -> the name set before that thread started */
    struct ptt_hmap opening;  /* (pid, tid) -> the name of a sem_open under way */
    struct ptt_hmap created;  /* (pid, pthread_t) of the threads pthread_create made */
    struct ptt_hmap selves;   /* (pid, tid) of the threads whose pthread_t is known (started) */
    struct ptt_hmap attached; /* pids of the processes whose threads' pthread_t are not all known
                                 (ptt trace -p, a ptt ctl start) */
    struct ptt_hmap born;     /* (pid, addr) -> where it was initialized or first used: str "class",
                            num the site, aux its place in order + 1 */
    struct user_name *user;
    size_t nuser;
    struct ptt_symfiles *files;     /* every process's binaries, each read once */
    struct ptt_names_moment moment; /* what the last PROCESS_START or MODULE_LOAD meant */
    int raw;                        /* names as recorded, not as shown on a terminal */
    struct ptt_hmap shown;          /* (hash of a name with control characters) -> "name\0shown" */
};

#define NAMES_NAMES PTT_NAMES_NAMES /* it names a process, module, thread or object */
#define NAMES_BORN PTT_NAMES_BORN   /* an IN event on an object, with a call site: born() */

struct ptt_names *ptt_names_new(void)
{
    struct ptt_names *n = ptt_must(calloc(1, sizeof(struct ptt_names)));
    n->files = ptt_symfiles_new(); /* NULL without libdw, or out of memory: no symbols */
    static const uint16_t naming[] = {
        PTT_EV_PROCESS_START,         PTT_EV_PROCESS_EXIT,   PTT_EV_PROCESS_ARGS,
        PTT_EV_MODULE_LOAD,           PTT_EV_THREAD_START,   PTT_EV_THREAD_SETNAME_NP_IN,
        PTT_EV_THREAD_SETNAME_NP_OUT, PTT_EV_PRCTL_IN,       PTT_EV_PRCTL_OUT,
        PTT_EV_THREAD_ATTACHED,       PTT_EV_THREAD_RUNNING, PTT_EV_OBJECT_NAME,
        PTT_EV_SEM_OPEN_IN,           PTT_EV_SEM_OPEN_OUT,   PTT_EV_THREAD_CREATE_OUT};
    for (size_t i = 0; i < sizeof naming / sizeof naming[0]; i++)
        n->head.does[naming[i]] |= NAMES_NAMES;
    unsigned count;
    const struct ptt_evinfo *all = ptt_evinfo_all(&count);
    for (unsigned i = 0; i < count; i++) {
        int obj = all[i].rfield[PTT_RF_OBJECT];
        if (all[i].kind == PTT_KIND_IN && obj >= 0 && all[i].fields[obj].type == PTT_F_OBJ &&
            all[i].site > 0) {
            n->head.does[all[i].id] |= NAMES_BORN;
            n->head.obj[all[i].id] = (uint8_t)obj;
            n->head.site[all[i].id] = (uint8_t)all[i].site;
        }
    }
    return n;
}

int ptt_names_have_symbols(void)
{
    return ptt_symbols_available();
}

static struct proc *proc_of(struct ptt_names *n, int32_t pid, int add)
{
    size_t *i = ptt_hmap_get(&n->proc_index, (uint32_t)pid + 1ull, add ? sizeof *i : 0);
    if (i && *i)
        return &n->procs[*i - 1];
    if (!add)
        return NULL;
    struct proc *p = realloc(n->procs, (n->nprocs + 1) * sizeof *p);
    if (!p)
        return NULL;
    n->procs = p;
    p = &n->procs[n->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    *i = n->nprocs;
    return p;
}

/* The symbols of a process: its own modules, or its parent's (a forked child maps the same). */
static struct ptt_symbols *symbols_of(struct ptt_names *n, int32_t pid)
{
    for (int depth = 0; depth < 32; depth++) {
        struct proc *p = proc_of(n, pid, 0);
        if (!p)
            return NULL;
        if (p->nmods) {
            if (!p->sym && (p->sym = ptt_symbols_new(n->files)))
                for (size_t i = 0; i < p->nmods; i++)
                    ptt_symbols_add(p->sym, p->mods[i].base, p->mods[i].size, p->mods[i].path);
            return p->sym;
        }
        pid = p->ppid;
    }
    return NULL;
}

static const char *arg_str(const struct ptt_ev *ev, unsigned from, char *buf, size_t len)
{
    size_t max = from < ev->nargs ? (ev->nargs - from) * 8 : 0;
    size_t l = strnlen((const char *)&ev->args[from], max < len - 1 ? max : len - 1);
    memcpy(buf, &ev->args[from], l);
    buf[l] = 0;
    return buf;
}

static void derive(struct ptt_names *n, int32_t pid, uint64_t addr);
static const char *program_of(struct ptt_names *n, int32_t pid);
static struct entry *site_of(struct ptt_names *n, int32_t pid, uint64_t ret);

static void moment(struct ptt_names *n, const struct ptt_ev *ev, enum ptt_names_what what)
{
    n->moment = (struct ptt_names_moment){what, ev->id, ev->pid, ev->tid, ev->ns};
}

enum ptt_names_what ptt_names_meant(const struct ptt_names *n, const struct ptt_ev *ev)
{
    const struct ptt_names_moment *m = &n->moment;
    int same = m->id == ev->id && m->pid == ev->pid && m->tid == ev->tid && m->ns == ev->ns;
    return same ? m->what : PTT_NAMES_NONE;
}

/* An exec: the objects of the program it replaces, first used before the exec's start, named
 * now while its symbols (its own, or its parent's after a fork) are there, in the order of their
 * first use. The others stay for the new program (the hang watch learns the threads' events in
 * the order it drains them, not in time order). */
static void settle_image(struct ptt_names *n, struct proc *p)
{
    size_t k = 0;
    for (size_t i = p->last_obj; i; i = n->order[i - 1].prev)
        k++;
    size_t *idx = k ? malloc(k * sizeof *idx) : NULL;
    if (!idx)
        return;
    size_t j = k;
    for (size_t i = p->last_obj; i; i = n->order[i - 1].prev)
        idx[--j] = i - 1;
    uint32_t last = 0;
    for (j = 0; j < k; j++) {
        struct seen_obj *o = &n->order[idx[j]];
        if (o->ns < p->start_ns) {
            derive(n, p->pid, o->addr);
            continue;
        }
        o->prev = last; /* kept: the new program's */
        last = (uint32_t)idx[j] + 1;
    }
    p->last_obj = last;
    free(idx);
}

/* A module a process maps: for the names of its code and data. */
static void module_load(struct ptt_names *n, const struct ptt_ev *ev)
{
    char s[300];
    struct proc *p = proc_of(n, ev->pid, 1);
    if (!p || ev->nargs <= PTT_F(MODULE_LOAD, path))
        return;
    moment(n, ev, p->fresh ? PTT_NAMES_PROGRAM : PTT_NAMES_NONE);
    if (p->fresh) { /* an exec'd image: its own modules */
        settle_image(n, p);
        for (size_t i = 0; i < p->nmods; i++)
            free(p->mods[i].path);
        p->nmods = 0;
        ptt_symbols_free(p->sym);
        p->sym = NULL;
        p->fresh = 0;
    }
    struct module *m = realloc(p->mods, (p->nmods + 1) * sizeof *m);
    if (!m)
        return;
    p->mods = m;
    uint64_t base = ev->args[PTT_F(MODULE_LOAD, base)], size = ev->args[PTT_F(MODULE_LOAD, size)];
    p->mods[p->nmods++] =
        (struct module){base, size, strdup(arg_str(ev, PTT_F(MODULE_LOAD, path), s, sizeof s))};
    if (p->sym)
        ptt_symbols_add(p->sym, base, size, p->mods[p->nmods - 1].path);
}

/* Where a thread's name came from (its entry's num in threads): the program (pthread_setname_np,
 * prctl), its start routine (or "main"), or the kernel's name as ptt trace read it. */
enum { NAME_FROM_PROGRAM, NAME_FROM_ROUTINE, NAME_FROM_KERNEL };

/* Name thread (pid, tid) after base: base itself, or base#K when K-1 threads of the process had it
 * before (set by the program, or from their start routine), so that no two threads show the
 * same name. A thread named again after the base it has keeps its name. */
static void name_thread(struct ptt_names *n, int32_t pid, int32_t tid, const char *base, int from)
{
    char s[300];
    uint64_t key = ptt_key2((uint64_t)pid, (uint64_t)tid), h = ptt_key_str(base);
    struct entry *e = map_get(&n->threads, key, 0);
    if (e && e->str && e->aux == h) {
        e->num = (uint64_t)from;
        return;
    }
    struct entry *cnt = map_get(&n->starts, ptt_key2((uint64_t)pid, h), 1);
    uint64_t k = cnt ? ++cnt->num : 1;
    if (k > 1)
        snprintf(s, sizeof s, "%s#%llu", base, (unsigned long long)k);
    else
        snprintf(s, sizeof s, "%s", base);
    map_set(&n->threads, key, s);
    if ((e = map_get(&n->threads, key, 0))) {
        e->aux = h;
        e->num = (uint64_t)from;
    }
}

/* What a std::thread runs, from its _State object's vtable (THREAD_START's callable):
 * "vtable for std::thread::_State_impl<std::thread::_Invoker<std::tuple<F, ARGS...> > >" names
 * the callable's type F: a lambda (main::{lambda()#1}), a class (Worker) or, for a function
 * pointer, its type (void (*)(int)). 1 when named. */
static int callable_name(struct ptt_symbols *sym, uint64_t vtable, char *out, size_t len)
{
    char v[512];
    static const char pre[] = "vtable for std::thread::_State_impl<", tup[] = "std::tuple<";
    if (!vtable || ptt_symbols_data(sym, vtable, v, sizeof v) || strncmp(v, pre, sizeof pre - 1))
        return 0;
    const char *t = strstr(v, tup);
    if (!t)
        return 0;
    t += sizeof tup - 1;
    int depth = 0;
    size_t l = 0;
    for (; t[l] && (depth || (t[l] != ',' && t[l] != '>')); l++)
        depth += (t[l] == '<' || t[l] == '(') - (t[l] == '>' || t[l] == ')');
    if (!l || !t[l])
        return 0;
    snprintf(out, len, "%.*s", (int)l, t);
    return 1;
}

/* std::thread(f, args...) with f a pointer to a function or member function: the callable's
 * type is only f's ("void (*)(int)"), shared by every such function, but f is one of the words
 * of the _State object after its vtable (THREAD_START's word_one to word_three: after the
 * arguments, in memory). The word that is the start of a function with f's parameters names it
 * ("worker"), else the first that starts a function whose symbol has no parameters (a C
 * function). 1 when named. */
static int function_called(struct ptt_symbols *sym, const struct ptt_ev *ev, const char *type,
                           char *out, size_t len)
{
    /* The declarator's "*)(" outside any template's arguments: std::async's member function is
     * "void (std::__future_base::_Async_state_impl<...<int (*)(int), int> >, int>::*)()". */
    const char *star = NULL;
    for (int angle = 0; *type && !star; type++)
        if (*type == '<' || *type == '>')
            angle += *type == '<' ? 1 : -1;
        else if (!angle && !strncmp(type, "*)(", 3))
            star = type;
    if (!star)
        return 0;
    char want[256], f[256];
    snprintf(want, sizeof want, "%s", star + 2);
    size_t wl = strlen(want);
    if (wl > 9 && !strcmp(want + wl - 9, " noexcept"))
        want[wl - 9] = 0;
    static const unsigned words[] = {PTT_F(THREAD_START, word_one), PTT_F(THREAD_START, word_two),
                                     PTT_F(THREAD_START, word_three)};
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
            if (ptt_symbols_function(sym, ptt_ev_arg(ev, words[i], 0), f, sizeof f))
                continue;
            const char *params = ptt_symbols_params(f);
            if (pass == 0 ? params && !strcmp(params, want) : !strchr(f, '(')) {
                ptt_symbols_strip_params(f);
                snprintf(out, len, "%s", f);
                return 1;
            }
        }
    return 0;
}

/* What a std::thread runs: its callable's type, or the function it was given. 1 when named. */
static int std_thread_name(struct ptt_symbols *sym, const struct ptt_ev *ev, char *out, size_t len)
{
    char type[256];
    if (!callable_name(sym, ptt_ev_arg(ev, PTT_F(THREAD_START, callable), 0), type, sizeof type))
        return 0;
    if (!function_called(sym, ev, type, out, len))
        snprintf(out, len, "%s", type);
    return 1;
}

/* A thread starts: named by its creator (before it ran), else by its start routine. */
static void thread_start(struct ptt_names *n, const struct ptt_ev *ev)
{
    if (ev->nargs <= PTT_F(THREAD_START, self))
        return;
    uint64_t self = ev->args[PTT_F(THREAD_START, self)];
    struct entry *e = map_get(&n->pthreads, ptt_key2((uint64_t)ev->pid, self), 1);
    if (e)
        e->num = (uint64_t)ev->tid;
    map_get(&n->selves, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), 1);
    uint64_t key = ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid);
    struct entry *early = map_get(&n->early, ptt_key2((uint64_t)ev->pid, self), 0);
    if (early && early->str) { /* its creator named it before it ran */
        name_thread(n, ev->pid, ev->tid, early->str, NAME_FROM_PROGRAM);
        free(early->str);
        early->str = NULL;
        return;
    }
    if (map_get(&n->threads, key, 0))
        return; /* named already (a thread id reused: keep the first name) */
    char func[256], file[128];
    int line;
    struct ptt_symbols *sym = symbols_of(n, ev->pid);
    if (!std_thread_name(sym, ev, func, sizeof func) &&
        ptt_symbols_code(sym, ev->args[PTT_F(THREAD_START, start)], func, sizeof func, file,
                         sizeof file, &line))
        return;
    name_thread(n, ev->pid, ev->tid, func, NAME_FROM_ROUTINE); /* producer, producer#2, ... */
}

/* An object's place (+ 1) in the order objects are first used, 0 when out of memory. */
static uint64_t remember(struct ptt_names *n, int32_t pid, uint64_t addr, int64_t ns)
{
    if (n->norder == n->caporder) {
        size_t c = n->caporder ? n->caporder * 2 : 256;
        struct seen_obj *o = realloc(n->order, c * sizeof *o);
        if (!o)
            return 0;
        n->order = o;
        n->caporder = c;
    }
    struct proc *p = proc_of(n, pid, 1);
    n->order[n->norder++] = (struct seen_obj){pid, p ? (uint32_t)p->last_obj : 0, addr, ns};
    if (p)
        p->last_obj = n->norder;
    return n->norder;
}

/* Where an object was initialized (a CREATE call's site), else first used: its born entry b
 * set. Out of line: its buffer would weigh on every event. */
__attribute__((noinline)) static void born_set(struct ptt_names *n, const struct ptt_ev *ev,
                                               struct entry *b, uint64_t addr, uint64_t site,
                                               int init)
{
    if (!b->aux)
        b->aux = remember(n, ev->pid, addr, ev->ns);
    if (!b->str || (init && b->str[0] != '!')) {
        free(b->str); /* '!' marks an init: it wins over a first use */
        char cls[40];
        snprintf(cls, sizeof cls, "%s%s", init ? "!" : "", ev->info->cls);
        b->str = strdup(cls);
        b->num = site;
    }
}

/* born() of an object not settled yet, or of an init: its entry looked up, set if need be.
 * Out of line: the per-event path stays free of its registers. */
__attribute__((noinline)) static void born_entry(struct ptt_names *n, const struct ptt_ev *ev,
                                                 struct ptt_names_settled *known, uint64_t addr,
                                                 uint64_t site, int init)
{
    struct entry *b = map_get(&n->born, ptt_key2((uint64_t)ev->pid, addr), 1);
    if (b && (!b->aux || !b->str || (init && b->str[0] != '!')))
        born_set(n, ev, b, addr, site, init);
    if (b && b->aux && b->str)
        *known = (struct ptt_names_settled){1, ev->pid, addr};
}

/* An IN event on an object, with its call site (NAMES_BORN): the object's born entry, set if
 * need be. */
static inline void born(struct ptt_names *n, const struct ptt_ev *ev)
{
    const struct ptt_evinfo *info = ev->info;
    int obj = info ? info->rfield[PTT_RF_OBJECT] : -1;
    unsigned site = info ? (unsigned)info->site : 0;
    if (obj < 0 || (unsigned)obj >= ev->nargs || !site || site >= ev->nargs)
        return;
    int init = info->role == PTT_ROLE_CREATE;
    uint64_t addr = ev->args[obj];
    struct ptt_names_settled *known = &n->head.settled[(addr >> 4 ^ addr >> 12) % 64];
    if (!init && known->used && known->addr == addr && known->pid == ev->pid)
        return; /* a use of an object whose first use is known */
    born_entry(n, ev, known, addr, ev->args[site], init);
}

/* pthread_setname_np(th) by a thread started past pthread_create (jemalloc's background
 * threads): no THREAD_START gave its pthread_t, nor th's; it names itself, most likely. Not the
 * main thread, whose pthread_t no event gives either (it names other threads as often), nor in
 * a process attached to, whose threads already there have no THREAD_START. */
static int self_named(struct ptt_names *n, const struct ptt_ev *ev, uint64_t th)
{
    return ev->tid != ev->pid && !map_get(&n->created, th, 0) &&
           !map_get(&n->selves, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), 0) &&
           !map_get(&n->attached, (uint64_t)(uint32_t)ev->pid + 1, 0);
}

/* The events that name processes, modules and threads (not every event: this keeps the
 * per-event path free of its buffer). */
static void process_or_thread(struct ptt_names *n, const struct ptt_ev *ev)
{
    char s[300];
    switch (ev->id) {
    case PTT_EV_PROCESS_START: {
        struct proc *p = proc_of(n, ev->pid, 1);
        if (p) {
            p->ppid = (int32_t)ptt_ev_arg(ev, PTT_F(PROCESS_START, ppid), 0);
            p->fresh = 1;
            /* Started again and never ended: its program exec'd another (a pid reused follows
             * the end of the process that had it). */
            moment(n, ev, p->running ? PTT_NAMES_EXEC : PTT_NAMES_NONE);
            /* A new program records its own command line next; a forked child runs its parent's,
             * as it is now (the parent may exec another later). */
            const struct proc *pp = p->running ? NULL : proc_of(n, p->ppid, 0);
            const char *prog = pp ? program_of(n, p->ppid) : NULL;
            free(p->cmd);
            p->cmd = pp && pp->cmd ? strdup(pp->cmd) : NULL;
            free(p->forked_prog);
            p->forked_prog = prog ? strdup(prog) : NULL;
            p->running = 1;
            p->start_ns = ev->ns;
        }
        /* A new program, or a new process of a pid: all its threads' starts are to come. */
        free(ptt_hmap_del(&n->attached, (uint64_t)(uint32_t)ev->pid + 1));
        /* The pthread_t of the thread that starts it (format 2.1): what a pthread_setname_np
         * names it by. */
        uint64_t self = ptt_ev_arg(ev, PTT_F(PROCESS_START, self), 0);
        struct entry *th = self ? map_get(&n->pthreads, ptt_key2((uint64_t)ev->pid, self), 1) : 0;
        if (th)
            th->num = (uint64_t)ev->tid;
        if (ev->tid == ev->pid) { /* "main" again after an exec, whatever it was named */
            struct entry *cnt =
                map_get(&n->starts, ptt_key2((uint64_t)ev->pid, ptt_key_str("main")), 1);
            if (cnt && !cnt->num)
                cnt->num = 1;
            uint64_t key = ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid);
            map_set(&n->threads, key, "main");
            struct entry *e = map_get(&n->threads, key, 0);
            e->aux = ptt_key_str("main");
            e->num = NAME_FROM_ROUTINE;
        }
        break;
    }
    case PTT_EV_MODULE_LOAD: module_load(n, ev); break;
    case PTT_EV_PROCESS_ARGS: {
        struct proc *p = proc_of(n, ev->pid, 1);
        if (p) {
            free(p->cmd);
            p->cmd = strdup(arg_str(ev, PTT_F(PROCESS_ARGS, args), s, sizeof s));
        }
        break;
    }
    case PTT_EV_PROCESS_EXIT: {
        struct proc *p = proc_of(n, ev->pid, 0);
        if (p)
            p->running = 0;
        break;
    }
    case PTT_EV_THREAD_START: thread_start(n, ev); break;
    case PTT_EV_THREAD_SETNAME_NP_IN: {
        /* Taken when it succeeds (the OUT event); the target thread by its pthread_t. */
        struct entry *e = map_get(&n->setname, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), 1);
        if (e) {
            free(e->str);
            e->str = strdup(arg_str(ev, PTT_F(THREAD_SETNAME_NP_IN, name), s, sizeof s));
            e->num = ptt_ev_arg(ev, PTT_F(THREAD_SETNAME_NP_IN, thread), 0);
        }
        break;
    }
    case PTT_EV_THREAD_SETNAME_NP_OUT: {
        struct entry *e = map_get(&n->setname, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), 0);
        if (!e || !e->str)
            break;
        if (ptt_ev_arg(ev, PTT_F(THREAD_SETNAME_NP_OUT, ret), 1) == 0) {
            uint64_t th = ptt_key2((uint64_t)ev->pid, e->num);
            struct entry *t = map_get(&n->pthreads, th, 0);
            if (t) /* the target, by its pthread_t */
                name_thread(n, ev->pid, (int32_t)t->num, e->str, NAME_FROM_PROGRAM);
            else if (self_named(n, ev, th))
                name_thread(n, ev->pid, ev->tid, e->str, NAME_FROM_PROGRAM);
            else /* not started yet: named when it starts */
                map_set(&n->early, th, e->str);
        }
        free(e->str);
        e->str = NULL;
        break;
    }
    case PTT_EV_THREAD_CREATE_OUT: {
        uint64_t th = ptt_ev_arg(ev, PTT_F(THREAD_CREATE_OUT, thread), 0);
        if (ptt_ev_arg(ev, PTT_F(THREAD_CREATE_OUT, ret), 1) == 0)
            map_get(&n->created, ptt_key2((uint64_t)ev->pid, th), 1);
        break;
    }
    case PTT_EV_PRCTL_IN: /* PR_SET_NAME: the calling thread, when it succeeds */
        if (ptt_ev_arg(ev, PTT_F(PRCTL_IN, option), 0) == 15)
            map_set(&n->setname, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid),
                    arg_str(ev, PTT_F(PRCTL_IN, name), s, sizeof s));
        break;
    case PTT_EV_PRCTL_OUT: {
        struct entry *e = map_get(&n->setname, ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid), 0);
        if (e && e->str && ptt_ev_arg(ev, PTT_F(PRCTL_OUT, ret), 1) == 0)
            name_thread(n, ev->pid, ev->tid, e->str, NAME_FROM_PROGRAM);
        if (e) {
            free(e->str);
            e->str = NULL;
        }
        break;
    }
    default: break;
    }
}

/* Whether THREAD_RUNNING's name replaces the name thread e has: one the kernel gave before (the
 * thread renamed itself since); not one the trace recorded the program giving, nor its start
 * routine's (a thread's kernel name differs from its start routine's from the start: the trace
 * cannot tell a rename while nothing was recorded from the name its creator had). */
static int renamed(const struct entry *e)
{
    return !e || !e->str || e->num == NAME_FROM_KERNEL;
}

/* ptt trace -p: a thread that was there at the attach; main keeps its name, as in a traced
 * start. THREAD_RUNNING, a thread there when recording started: the same, but a thread the trace
 * named otherwise keeps that name (renamed). A thread whose start is not in the trace makes its
 * process one whose pthread_t values are not all known (attached: no guess at who a
 * pthread_setname_np names). */
static void thread_attached(struct ptt_names *n, const struct ptt_ev *ev)
{
    _Static_assert(PTT_F(THREAD_ATTACHED, thread) == PTT_F(THREAD_RUNNING, thread) &&
                       PTT_F(THREAD_ATTACHED, name) == PTT_F(THREAD_RUNNING, name),
                   "THREAD_RUNNING has THREAD_ATTACHED's fields");
    char s[300];
    uint64_t tid = ptt_ev_arg(ev, PTT_F(THREAD_ATTACHED, thread), 0);
    if (!tid || ev->nargs <= PTT_F(THREAD_ATTACHED, name))
        return;
    const char *name = arg_str(ev, PTT_F(THREAD_ATTACHED, name), s, sizeof s);
    uint64_t key = ptt_key2((uint64_t)ev->pid, (uint64_t)(int32_t)tid);
    if (ev->id == PTT_EV_THREAD_ATTACHED ||
        ((int32_t)tid != ev->pid && !map_get(&n->selves, key, 0)))
        map_get(&n->attached, (uint64_t)(uint32_t)ev->pid + 1, 1);
    if ((int32_t)tid == ev->pid) /* main keeps its name */
        return;
    if (ev->id == PTT_EV_THREAD_RUNNING && !renamed(map_get(&n->threads, key, 0)))
        return;
    name_thread(n, ev->pid, (int32_t)tid, name, NAME_FROM_KERNEL);
}

static void object_name(struct ptt_names *n, const struct ptt_ev *ev)
{
    char s[300];
    if (ev->nargs > PTT_F(OBJECT_NAME, name))
        map_set(&n->objects, ptt_key2((uint64_t)ev->pid, ev->args[PTT_F(OBJECT_NAME, object)]),
                arg_str(ev, PTT_F(OBJECT_NAME, name), s, sizeof s));
}

/* A named semaphore is named by its name ("/jobs"), which sem_open's IN holds and its OUT
 * gives the address of: the program chose it, and every process that opens it says it. */
static void sem_open_name(struct ptt_names *n, const struct ptt_ev *ev)
{
    char s[300];
    uint64_t key = ptt_key2((uint64_t)ev->pid, (uint64_t)ev->tid);
    if (ev->id == PTT_EV_SEM_OPEN_IN) {
        map_set(&n->opening, key, arg_str(ev, PTT_F(SEM_OPEN_IN, name), s, sizeof s));
        return;
    }
    struct entry *e = map_get(&n->opening, key, 0);
    uint64_t sem = ptt_ev_arg(ev, PTT_F(SEM_OPEN_OUT, ret), 0);
    if (e && e->str && e->str[0] && sem && sem != UINT64_MAX)
        map_set(&n->objects, ptt_key2((uint64_t)ev->pid, sem), e->str);
    if (e) {
        free(e->str);
        e->str = NULL;
    }
}

/* The events that name something (NAMES_NAMES). Out of line: rare. */
__attribute__((noinline)) static void names_of(struct ptt_names *n, const struct ptt_ev *ev)
{
    switch (ev->id) {
    case PTT_EV_THREAD_ATTACHED:
    case PTT_EV_THREAD_RUNNING: thread_attached(n, ev); break;
    case PTT_EV_OBJECT_NAME: object_name(n, ev); break;
    case PTT_EV_SEM_OPEN_IN:
    case PTT_EV_SEM_OPEN_OUT: sem_open_name(n, ev); break;
    default: process_or_thread(n, ev); break;
    }
}

/* What ptt_names_event does with an event whose id does something (NAMES_...). */
void ptt_names_learn(struct ptt_names *n, const struct ptt_ev *ev, unsigned does)
{
    if (does & NAMES_NAMES)
        names_of(n, ev);
    if (does & NAMES_BORN)
        born(n, ev);
}

int ptt_names_load(struct ptt_names *n, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int no = 0;
    while (fgets(line, sizeof line, f)) {
        no++;
        char *c = strchr(line, '#');
        if (c)
            *c = 0;
        char key[512], name[512];
        int k = sscanf(line, "%511s %511[^\n]", key, name);
        if (k <= 0)
            continue;
        if (k != 2) {
            snprintf(err, errlen, "%s:%d: give 'ADDRESS NAME' or 'SYMBOL NAME'", path, no);
            fclose(f);
            return -1;
        }
        size_t l = strlen(name);
        while (l && (name[l - 1] == ' ' || name[l - 1] == '\t' || name[l - 1] == '\r'))
            name[--l] = 0;
        struct user_name *u = realloc(n->user, (n->nuser + 1) * sizeof *u);
        if (!u)
            break;
        n->user = u;
        char *end;
        uint64_t a = strtoull(key, &end, 0);
        u[n->nuser++] = (struct user_name){*end ? 0 : a, *end ? strdup(key) : NULL, strdup(name)};
    }
    fclose(f);
    return 0;
}

void ptt_names_raw(struct ptt_names *n, int raw)
{
    n->raw = raw;
}

/* name as it is shown: the same string when it holds nothing a terminal must not be given
 * (ptt_term_char), else a copy (kept as long as n) with each such byte as \xNN, as ptt view
 * shows a string field's. */
static const char *shown(const struct ptt_names *cn, const char *name)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    size_t len = name ? strlen(name) : 0, esc = name ? ptt_term_escape(NULL, 0, name, len) : 0;
    if (esc == len || n->raw)
        return name;
    struct entry *e = map_get(&n->shown, ptt_key_str(name), 1);
    if (e->str)
        return strcmp(e->str, name) ? "?" : e->str + len + 1; /* "?": two names, one hash */
    char *t = ptt_must(malloc(len + 1 + esc + 1));
    memcpy(t, name, len + 1);
    ptt_term_escape(t + len + 1, esc + 1, name, len);
    e->str = t;
    return t + len + 1;
}

const char *ptt_names_thread(const struct ptt_names *cn, int32_t pid, int32_t tid)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    struct entry *e = map_get(&n->threads, ptt_key2((uint64_t)pid, (uint64_t)tid), 0);
    return e ? shown(n, e->str) : NULL;
}

void ptt_names_forget_thread(struct ptt_names *n, int32_t pid, int32_t tid)
{
    struct entry *e = ptt_hmap_del(&n->threads, ptt_key2((uint64_t)pid, (uint64_t)tid));
    if (e) {
        release(e);
        free(e);
    }
}

/* The file name of process pid's program, as recorded: its own first module since it started
 * or exec'd; a forked child's, its parent's when it forked. */
static const char *program_of(struct ptt_names *n, int32_t pid)
{
    for (int depth = 0; depth < 32; depth++) {
        struct proc *p = proc_of(n, pid, 0);
        if (!p)
            return NULL;
        if (p->fresh && p->forked_prog) /* no module of its own since it started */
            return p->forked_prog;
        if (p->nmods) {
            const char *b = p->mods[0].path ? strrchr(p->mods[0].path, '/') : NULL;
            return b ? b + 1 : p->mods[0].path;
        }
        pid = p->ppid; /* a process of a trace older than forked_prog */
    }
    return NULL;
}

const char *ptt_names_program(const struct ptt_names *cn, int32_t pid)
{
    return shown(cn, program_of((struct ptt_names *)cn, pid));
}

const char *ptt_names_command(const struct ptt_names *cn, int32_t pid)
{
    const struct proc *p = proc_of((struct ptt_names *)cn, pid, 0);
    return p && p->cmd ? shown(cn, p->cmd) : NULL;
}

int32_t ptt_names_pthread(const struct ptt_names *cn, int32_t pid, uint64_t pthread)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    struct entry *e = map_get(&n->pthreads, ptt_key2((uint64_t)pid, pthread), 0);
    return e ? (int32_t)e->num : 0;
}

/* NAME, or NAME#K for the K-th object of the process that came to the same name. */
static void numbered(struct ptt_names *n, int32_t pid, char *name, size_t len)
{
    struct entry *cnt = map_get(&n->dups, ptt_key2((uint64_t)pid, ptt_key_str(name)), 1);
    uint64_t k = cnt ? ++cnt->num : 1;
    size_t l = strlen(name);
    if (k > 1)
        snprintf(name + l, len - l, "#%llu", (unsigned long long)k);
}

/* An object's name but the program's own (OBJECT_NAME): one from --names as it is, else its
 * symbol or where it was born, numbered when an object before it came to the same name. */
static void derive(struct ptt_names *n, int32_t pid, uint64_t addr)
{
    uint64_t key = ptt_key2((uint64_t)pid, addr);
    if (map_get(&n->derived, key, 0))
        return;
    char s[512];
    const char *name = NULL;
    struct ptt_symbols *sym = symbols_of(n, pid);
    for (size_t i = 0; i < n->nuser && !name; i++) {
        struct user_name *u = &n->user[i];
        if ((u->addr && u->addr == addr) ||
            (u->symbol && sym && ptt_symbols_lookup(sym, u->symbol) == addr))
            name = u->name;
    }
    if (!name && !ptt_symbols_data(sym, addr, s, sizeof s)) {
        numbered(n, pid, s, sizeof s);
        name = s;
    }
    struct entry *b = name ? NULL : map_get(&n->born, key, 0);
    if (!name && (!b || !b->str))
        return; /* not used with a call site yet (an OUT or a state first): asked again */
    const char *site = b ? site_of(n, pid, b->num)->str : NULL;
    if (site) { /* mutex@queue.c:42 */
        snprintf(s, sizeof s, "%s@%s", b->str + (b->str[0] == '!'), site);
        numbered(n, pid, s, sizeof s);
        name = s;
    }
    map_set(&n->derived, key, name); /* also "no name": asked once */
}

const char *ptt_names_object(const struct ptt_names *cn, int32_t pid, uint64_t addr)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    uint64_t key = ptt_key2((uint64_t)pid, addr);
    struct entry *e = map_get(&n->objects, key, 0);
    if (e && e->str)
        return shown(n, e->str);
    /* Objects are named in the order the trace first uses them, whatever order a command asks
     * in: the same object gets the same #K in every command. */
    struct entry *b = map_get(&n->born, key, 0);
    for (; b && n->named < b->aux; n->named++)
        derive(n, n->order[n->named].pid, n->order[n->named].addr);
    derive(n, pid, addr);
    e = map_get(&n->derived, key, 0);
    return e ? shown(n, e->str) : NULL;
}

/* A code address's name, cached: "function (file:line)". */
const char *ptt_names_code(const struct ptt_names *cn, int32_t pid, uint64_t addr)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    uint64_t key = ptt_key2((uint64_t)pid, addr);
    struct entry *e = map_get(&n->code, key, 0);
    if (e)
        return shown(n, e->str);
    char func[256], file[128], s[512];
    int line;
    const char *r = NULL;
    if (addr &&
        !ptt_symbols_code(symbols_of(n, pid), addr, func, sizeof func, file, sizeof file, &line)) {
        if (line)
            snprintf(s, sizeof s, "%s (%s:%d)", func, file, line);
        else
            snprintf(s, sizeof s, "%s", func);
        r = s;
    }
    map_set(&n->code, key, r); /* "no name" too: asked once */
    return shown(n, map_get(&n->code, key, 0)->str);
}

/* A call site, cached: the return address - 1 is inside the call. */
static struct entry *site_of(struct ptt_names *n, int32_t pid, uint64_t ret)
{
    uint64_t key = ptt_key2((uint64_t)pid, ret);
    struct entry *e = map_get(&n->sites, key, 0);
    if (e)
        return e;
    char site[256], detail[256], file[128];
    int line, k = -1;
    struct ptt_symbols *sym = symbols_of(n, pid);
    if (ret)
        k = ptt_symbols_site(sym, ret - 1, site, sizeof site, detail, sizeof detail);
    if (k < 0 && ret && ptt_symbols_code(sym, ret - 1, site, sizeof site, file, sizeof file, &line))
        site[0] = 0; /* no line: the function, else nothing */
    map_set(&n->sites, key, ret && site[0] ? site : NULL);
    e = map_get(&n->sites, key, 0);
    e->num = k == 1;
    if (k == 1 && strcmp(site, detail))
        map_set(&n->details, key, detail);
    return e;
}

const char *ptt_names_site(const struct ptt_names *cn, int32_t pid, uint64_t ret)
{
    return shown(cn, site_of((struct ptt_names *)cn, pid, ret)->str);
}

const char *ptt_names_site_detail(const struct ptt_names *cn, int32_t pid, uint64_t ret)
{
    struct ptt_names *n = (struct ptt_names *)cn;
    site_of(n, pid, ret);
    struct entry *e = map_get(&n->details, ptt_key2((uint64_t)pid, ret), 0);
    return e ? shown(n, e->str) : NULL;
}

int ptt_names_site_in_system_header(const struct ptt_names *cn, int32_t pid, uint64_t ret)
{
    return (int)site_of((struct ptt_names *)cn, pid, ret)->num;
}

void ptt_names_free(struct ptt_names *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->nprocs; i++) {
        for (size_t k = 0; k < n->procs[i].nmods; k++)
            free(n->procs[i].mods[k].path);
        free(n->procs[i].mods);
        free(n->procs[i].cmd);
        free(n->procs[i].forked_prog);
        ptt_symbols_free(n->procs[i].sym);
    }
    free(n->procs);
    ptt_hmap_free(&n->proc_index, NULL);
    map_free(&n->threads);
    map_free(&n->objects);
    map_free(&n->derived);
    map_free(&n->dups);
    free(n->order);
    map_free(&n->code);
    map_free(&n->sites);
    map_free(&n->details);
    map_free(&n->pthreads);
    map_free(&n->starts);
    map_free(&n->setname);
    map_free(&n->opening);
    map_free(&n->created);
    map_free(&n->selves);
    map_free(&n->attached);
    map_free(&n->born);
    map_free(&n->early);
    map_free(&n->shown);
    for (size_t i = 0; i < n->nuser; i++) {
        free(n->user[i].symbol);
        free(n->user[i].name);
    }
    free(n->user);
    ptt_symfiles_free(n->files);
    free(n);
}
