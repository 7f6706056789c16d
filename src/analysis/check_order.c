/* The lock-order graph: an edge A -> B each time a thread asks for B, with a call that can block,
 * while it holds A; a cycle is an order that can deadlock, whether or not this run did.
 *
 * Readers: a rwlock held for reading does not stop another reader. The graph's nodes are a lock
 * and the mode it is asked in; an edge leaves a node only if the two modes conflict (the lock is
 * asked for writing, or it is held for writing). Gate locks: each edge keeps the exclusive locks
 * that were held every time it was made; a cycle whose edges all keep one of them cannot close.
 * Trylocks make no edge: they do not wait. One cycle is reported per strongly connected part of
 * the graph (Tarjan), the shortest through its first lock. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_int.h"
#include "util/util.h"

#define GUARDS 4

struct oedge {
    int32_t pid, tid;
    uint64_t from, to;
    int hmode, rmode; /* 1: read (held, asked) */
    uint64_t from_site, to_site;
    int64_t from_ns, ns;
    uint64_t guards[GUARDS];
    unsigned nguards;
};

struct check_order {
    struct ptt_hmap edges; /* (pid, from, to, modes) -> oedge */
};

struct check_order *check_order_new(void)
{
    return ptt_must(calloc(1, sizeof(struct check_order)));
}

void check_order_free(struct check_order *o)
{
    if (o)
        ptt_hmap_free(&o->edges, NULL);
    free(o);
}

static void new_edge(struct oedge *e, const struct cthread *th, const struct ptt_ev *ev,
                     const struct ptt_held *h, uint64_t lock, int shared)
{
    *e = (struct oedge){.pid = ev->pid,
                        .tid = th->tid,
                        .from = h->object,
                        .to = lock,
                        .hmode = h->shared,
                        .rmode = shared,
                        .from_site = h->site,
                        .to_site = check_site_of(ev),
                        .from_ns = h->ns,
                        .ns = ev->ns};
    for (unsigned k = 0; k < th->tt->nheld && e->nguards < GUARDS; k++) {
        const struct ptt_held *g = &th->tt->held[k];
        if (g != h && !g->shared && g->object != lock)
            e->guards[e->nguards++] = g->object;
    }
}

/* Keep the guards that are held this time too. */
static void keep_guards(struct oedge *e, const struct cthread *th)
{
    unsigned n = 0;
    for (unsigned i = 0; i < e->nguards; i++) {
        const struct ptt_held *g = ptt_tthread_holds(th->tt, e->guards[i]);
        if (g && !g->shared)
            e->guards[n++] = e->guards[i];
    }
    e->nguards = n;
}

void check_order_acquire(struct check_order *o, struct cthread *th, const struct ptt_ev *ev,
                         uint64_t lock, int shared)
{
    for (unsigned i = 0; i < th->tt->nheld; i++) {
        const struct ptt_held *h = &th->tt->held[i];
        if (h->object == lock || h->cls == PTT_CLASS_sem)
            continue;
        uint64_t key = ptt_key2(
            ptt_key2((uint32_t)ev->pid * 4ull + (unsigned)h->shared * 2u + (unsigned)shared,
                     h->object),
            lock);
        struct oedge *e = ptt_hmap_get(&o->edges, key, sizeof *e);
        if (!e->to)
            new_edge(e, th, ev, h, lock, shared);
        else if (e->nguards)
            keep_guards(e, th);
    }
}

/* ---- the graph at the end ---- */

struct graph {
    struct oedge **edges;
    size_t nedges;
    size_t nnodes;
    struct ptt_hmap node_of; /* (pid, lock, mode) -> index + 1 */
    size_t *first, *next;    /* transitions out of each node: a list through next */
    size_t *tedge, *tto;     /* each transition's edge and target node */
    size_t ntrans, tcap;
    size_t *scc; /* each node's part */
};

static uint64_t node_key(int32_t pid, uint64_t lock, int mode)
{
    return ptt_key2((uint32_t)pid * 2ull + (unsigned)mode, lock);
}

static size_t node(struct graph *g, int32_t pid, uint64_t lock, int mode, int make)
{
    size_t *v = ptt_hmap_get(&g->node_of, node_key(pid, lock, mode), make ? sizeof *v : 0);
    if (!v)
        return SIZE_MAX;
    if (!*v)
        *v = ++g->nnodes;
    return *v - 1;
}

static void add_trans(struct graph *g, size_t from, size_t to, size_t edge)
{
    if (g->ntrans == g->tcap) {
        g->tcap = g->tcap ? 2 * g->tcap : 64;
        g->next = ptt_must(realloc(g->next, g->tcap * sizeof *g->next));
        g->tedge = ptt_must(realloc(g->tedge, g->tcap * sizeof *g->tedge));
        g->tto = ptt_must(realloc(g->tto, g->tcap * sizeof *g->tto));
    }
    g->tedge[g->ntrans] = edge;
    g->tto[g->ntrans] = to;
    g->next[g->ntrans] = g->first[from];
    g->first[from] = g->ntrans++;
}

static void build(struct graph *g, struct check_order *o)
{
    g->edges = ptt_must(calloc(o->edges.n + 1, sizeof *g->edges));
    for (size_t i = 0; i < o->edges.cap; i++)
        if (ptt_hmap_slot(&o->edges, i))
            g->edges[g->nedges++] = ptt_hmap_slot(&o->edges, i);
    for (size_t i = 0; i < g->nedges; i++) /* a node per lock and mode asked */
        node(g, g->edges[i]->pid, g->edges[i]->to, g->edges[i]->rmode, 1);
    g->first = ptt_must(malloc((g->nnodes + 1) * sizeof *g->first));
    for (size_t i = 0; i <= g->nnodes; i++)
        g->first[i] = SIZE_MAX;
    for (size_t i = 0; i < g->nedges; i++) {
        const struct oedge *e = g->edges[i];
        size_t to = node(g, e->pid, e->to, e->rmode, 0);
        for (int in = 0; in < 2; in++) { /* asked for reading and held for reading: no wait */
            size_t from = node(g, e->pid, e->from, in, 0);
            if (from != SIZE_MAX && !(in && e->hmode))
                add_trans(g, from, to, i);
        }
    }
}

/* Tarjan's strongly connected parts, without recursion (a cycle may be thousands long). */
static void tarjan(struct graph *g)
{
    size_t n = g->nnodes, idx = 0, sp = 0, cp = 0, nscc = 0;
    size_t *index = ptt_must(malloc((n + 1) * sizeof *index)),
           *low = ptt_must(malloc((n + 1) * sizeof *low));
    size_t *stack = ptt_must(malloc((n + 1) * sizeof *stack)),
           *call = ptt_must(malloc((n + 1) * sizeof *call));
    size_t *it = ptt_must(malloc((n + 1) * sizeof *it));
    char *on = ptt_must(calloc(n + 1, 1));
    g->scc = ptt_must(malloc((n + 1) * sizeof *g->scc));
    for (size_t v = 0; v < n; v++)
        index[v] = SIZE_MAX;
    for (size_t root = 0; root < n; root++) {
        if (index[root] != SIZE_MAX)
            continue;
        call[cp++] = root;
        index[root] = low[root] = idx++;
        stack[sp++] = root;
        on[root] = 1;
        it[root] = g->first[root];
        while (cp) {
            size_t v = call[cp - 1], t = it[v];
            if (t != SIZE_MAX) {
                it[v] = g->next[t];
                size_t w = g->tto[t];
                if (index[w] == SIZE_MAX) {
                    index[w] = low[w] = idx++;
                    stack[sp++] = w;
                    on[w] = 1;
                    it[w] = g->first[w];
                    call[cp++] = w;
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                size_t w;
                do {
                    w = stack[--sp];
                    on[w] = 0;
                    g->scc[w] = nscc;
                } while (w != v);
                nscc++;
            }
            cp--;
            if (cp && low[v] < low[call[cp - 1]])
                low[call[cp - 1]] = low[v];
        }
    }
    free(index), free(low), free(stack), free(call), free(it), free(on);
}

/* The shortest cycle through node s inside its part: its first max edges, into path; its
 * length. */
static size_t shortest_cycle(struct graph *g, size_t s, size_t *path, size_t max)
{
    size_t n = g->nnodes, *prev = ptt_must(malloc(n * sizeof *prev)),
           *via = ptt_must(malloc(n * sizeof *via));
    size_t *queue = ptt_must(malloc(n * sizeof *queue)), qh = 0, qt = 0, found = SIZE_MAX;
    for (size_t v = 0; v < n; v++)
        prev[v] = SIZE_MAX;
    queue[qt++] = s;
    while (qh < qt && found == SIZE_MAX) {
        size_t v = queue[qh++];
        for (size_t t = g->first[v]; t != SIZE_MAX; t = g->next[t]) {
            size_t w = g->tto[t];
            if (g->scc[w] != g->scc[s])
                continue;
            if (w == s) {
                found = t;
                prev[s] = v;
                break;
            }
            if (prev[w] == SIZE_MAX) {
                prev[w] = v;
                via[w] = t;
                queue[qt++] = w;
            }
        }
    }
    size_t len = 0;
    if (found != SIZE_MAX) {
        len = 1;
        for (size_t v = prev[s]; v != s; v = prev[v])
            len++;
        /* Walked back from the end: edge i of the cycle is at len - 1 - i. */
        size_t i = len - 1, v = prev[s];
        if (i < max)
            path[i] = g->tedge[found];
        for (; v != s; v = prev[v])
            if (--i < max)
                path[i] = g->tedge[via[v]];
    }
    free(prev), free(via), free(queue);
    return len;
}

/* Whether the cycle's edges were all made under one exclusive lock (a gate). */
static int gated(struct graph *g, const size_t *path, size_t n)
{
    const struct oedge *e0 = g->edges[path[0]];
    for (unsigned k = 0; k < e0->nguards; k++) {
        size_t i = 1;
        for (; i < n; i++) {
            const struct oedge *e = g->edges[path[i]];
            unsigned j = 0;
            while (j < e->nguards && e->guards[j] != e0->guards[k])
                j++;
            if (j == e->nguards)
                break;
        }
        if (i == n)
            return 1;
    }
    return 0;
}

/* Whether a deadlock finding already shows these locks (it is the cycle that closed). */
static int deadlocked(struct ptt_check *c, struct graph *g, const size_t *path, size_t n)
{
    for (size_t i = 0; i < c->nf; i++) {
        const struct ptt_finding *f = c->f[i];
        if (f->kind != PTT_FK_DEADLOCK)
            continue;
        size_t k = 0;
        for (; k < n; k++) {
            unsigned j = 0;
            while (j < f->nobjects && !(f->objects[j].addr == g->edges[path[k]]->to &&
                                        f->objects[j].pid == g->edges[path[k]]->pid))
                j++;
            if (j == f->nobjects)
                break;
        }
        if (k == n)
            return 1;
    }
    return 0;
}

static int lock_cls(struct ptt_check *c, int32_t pid, uint64_t addr)
{
    struct cobj *o = check_obj_find(c, pid, addr);
    return o ? o->cls : PTT_CLASS_mutex;
}

/* A cycle of len locks, of which path holds the first n edges (all when len <= n). */
static void report(struct ptt_check *c, struct graph *g, const size_t *path, size_t n, size_t len)
{
    char s[400];
    int w = snprintf(s, sizeof s, "%zu locks are taken in an order that can deadlock: ", len);
    if (len > n) { /* too long to show whole: its first locks */
        for (size_t i = 0; i < 4; i++)
            w += snprintf(s + w, sizeof s - (size_t)w, "{o%zu} -> ", i);
        snprintf(s + w, sizeof s - (size_t)w, "... (the steps show the first %zu)", n);
    }
    for (size_t i = 0; len <= n && i <= n && w < (int)sizeof s; i++) {
        if (n > 8 && i == 4) {
            w += snprintf(s + w, sizeof s - (size_t)w, "... -> ");
            i = n - 2;
            continue;
        }
        w += snprintf(s + w, sizeof s - (size_t)w, i < n ? "{o%zu} -> " : "{o0}", i % n);
    }
    struct ptt_finding *f = check_add(c, PTT_FK_LOCK_ORDER, "lock-order cycle", 0, s);
    for (size_t i = 0; i < n; i++) {
        const struct oedge *e = g->edges[path[i]];
        check_fobject(f, e->pid, lock_cls(c, e->pid, e->from), e->from);
    }
    for (size_t i = 0; i < n; i++) {
        const struct oedge *e = g->edges[path[i]];
        check_fthread(f, e->pid, e->tid);
        int a = check_fobject(f, e->pid, lock_cls(c, e->pid, e->from), e->from);
        int b = check_fobject(f, e->pid, lock_cls(c, e->pid, e->to), e->to);
        check_fstep(f, e->pid, e->tid, 0, e->hmode ? "took for reading" : "took", a, e->from_site,
                    e->from_ns);
        check_fstep(f, e->pid, e->tid, 0, e->rmode ? "then asked for reading" : "then asked for", b,
                    e->to_site, e->ns);
    }
}

/* Start the cycle at its earliest edge: the order the run made them in. */
static void rotate(struct graph *g, size_t *path, size_t n)
{
    size_t first = 0, tmp[PTT_FIND_MAX];
    for (size_t i = 1; i < n; i++)
        if (g->edges[path[i]]->ns < g->edges[path[first]]->ns)
            first = i;
    for (size_t i = 0; i < n; i++)
        tmp[i] = path[(first + i) % n];
    memcpy(path, tmp, n * sizeof *path);
}

void check_order_end(struct ptt_check *c, struct check_order *o)
{
    struct graph g = {0};
    build(&g, o);
    if (g.nnodes) {
        tarjan(&g);
        char *done = ptt_must(calloc(g.nnodes, 1));
        size_t path[PTT_FIND_MAX];
        for (size_t v = 0; v < g.nnodes; v++) {
            if (done[g.scc[v]])
                continue;
            done[g.scc[v]] = 1;
            size_t len = shortest_cycle(&g, v, path, PTT_FIND_MAX / 2);
            size_t n = len < PTT_FIND_MAX / 2 ? len : PTT_FIND_MAX / 2;
            /* A cycle too long to keep whole is judged by its first edges. */
            if (n >= 2 && !gated(&g, path, n) && !deadlocked(c, &g, path, n)) {
                if (len == n)
                    rotate(&g, path, n);
                report(c, &g, path, n, len);
            }
        }
        free(done);
    }
    free(g.edges), free(g.first), free(g.next), free(g.tedge), free(g.tto), free(g.scc);
    ptt_hmap_free(&g.node_of, NULL);
}
