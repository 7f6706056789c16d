/* Symbols with libdwfl. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/symbols.h"

#ifdef PTT_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

/* Global variables of a module, by address, from its DWARF: for member paths. */
struct gvar {
    uint64_t addr;
    Dwarf_Off die;
};

struct module_vars {
    Dwfl_Module *mod;
    struct gvar *v;
    size_t n;
};

struct ptt_symbols {
    Dwfl *dwfl;
    struct module_vars *vars;
    size_t nvars;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

int ptt_symbols_available(void)
{
    return 1;
}

struct ptt_symbols *ptt_symbols_new(void)
{
    struct ptt_symbols *s = calloc(1, sizeof *s);
    if (s && !(s->dwfl = dwfl_begin(&callbacks))) {
        free(s);
        return NULL;
    }
    return s;
}

void ptt_symbols_add(struct ptt_symbols *s, uint64_t base, uint64_t size, const char *path)
{
    (void)size;
    if (!s || !path || !*path || path[0] != '/')
        return; /* the vDSO and other anonymous objects have no file */
    dwfl_report_begin_add(s->dwfl);
    const char *base_name = strrchr(path, '/');
    dwfl_report_elf(s->dwfl, base_name ? base_name + 1 : path, path, -1, base, false);
    dwfl_report_end(s->dwfl, NULL, NULL);
}

int ptt_symbols_code(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen, char *file,
                     size_t filelen, int *line)
{
    if (!s)
        return -1;
    Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
    if (!m)
        return -1;
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
    if (!name)
        return -1;
    snprintf(func, flen, "%s", name);
    *line = 0;
    file[0] = 0;
    Dwfl_Line *l = dwfl_module_getsrc(m, addr);
    const char *src = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
    if (src) {
        const char *b = strrchr(src, '/');
        snprintf(file, filelen, "%s", b ? b + 1 : src);
    }
    return 0;
}

static int by_addr(const void *a, const void *b)
{
    const struct gvar *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The module's global variables with a fixed address (DW_OP_addr), read once. */
static struct module_vars *vars_of(struct ptt_symbols *s, Dwfl_Module *m)
{
    for (size_t i = 0; i < s->nvars; i++)
        if (s->vars[i].mod == m)
            return &s->vars[i];
    struct module_vars *nv = realloc(s->vars, (s->nvars + 1) * sizeof *nv);
    if (!nv)
        return NULL;
    s->vars = nv;
    struct module_vars *mv = &s->vars[s->nvars++];
    memset(mv, 0, sizeof *mv);
    mv->mod = m;
    Dwarf_Addr bias;
    size_t cap = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(m, cu, &bias));) {
        Dwarf_Die child;
        if (dwarf_child(cu, &child))
            continue;
        do {
            if (dwarf_tag(&child) != DW_TAG_variable)
                continue;
            Dwarf_Attribute at;
            Dwarf_Op *ops;
            size_t nops;
            if (!dwarf_attr(&child, DW_AT_location, &at) || dwarf_getlocation(&at, &ops, &nops) ||
                nops != 1 || ops[0].atom != DW_OP_addr)
                continue;
            if (mv->n == cap) {
                cap = cap ? cap * 2 : 64;
                struct gvar *g = realloc(mv->v, cap * sizeof *g);
                if (!g)
                    break;
                mv->v = g;
            }
            mv->v[mv->n++] = (struct gvar){ops[0].number + bias, dwarf_dieoffset(&child)};
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (mv->n) /* a binary without debug information has none: qsort wants an array */
        qsort(mv->v, mv->n, sizeof *mv->v, by_addr);
    return mv;
}

static int type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute at;
    return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, type) ? 0 : -1;
}

/* Append to name the member or element path that reaches off inside type. */
static void member_path(Dwarf_Die *type, uint64_t off, char *name, size_t len, int depth)
{
    Dwarf_Die t = *type;
    while (depth < 16) {
        int tag = dwarf_tag(&t);
        const char *tn = tag == DW_TAG_typedef ? dwarf_diename(&t) : NULL;
        if (tn && (!strncmp(tn, "pthread_", 8) || !strcmp(tn, "sem_t")))
            return; /* a POSIX object: the name reaches it, not its insides */
        if (tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
            tag == DW_TAG_atomic_type) {
            if (type_of(&t, &t))
                return;
            continue;
        }
        break;
    }
    int tag = dwarf_tag(&t);
    size_t l = strlen(name);
    if (tag == DW_TAG_array_type) {
        Dwarf_Die elem;
        Dwarf_Word esz;
        if (type_of(&t, &elem) || dwarf_aggregate_size(&elem, &esz) || !esz)
            return;
        snprintf(name + l, len - l, "[%llu]", (unsigned long long)(off / esz));
        if (off % esz)
            member_path(&elem, off % esz, name, len, depth + 1);
    } else if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
               tag == DW_TAG_class_type) {
        Dwarf_Die m;
        if (dwarf_child(&t, &m))
            return;
        do {
            if (dwarf_tag(&m) != DW_TAG_member)
                continue;
            Dwarf_Attribute at;
            Dwarf_Word loc = 0, msz;
            if (dwarf_attr(&m, DW_AT_data_member_location, &at) && dwarf_formudata(&at, &loc))
                continue;
            Dwarf_Die mt;
            if (type_of(&m, &mt) || dwarf_aggregate_size(&mt, &msz))
                continue;
            if (off >= loc && off < loc + msz) {
                const char *mn = dwarf_diename(&m);
                snprintf(name + l, len - l, ".%s", mn ? mn : "?");
                member_path(&mt, off - loc, name, len, depth + 1);
                return;
            }
        } while (dwarf_siblingof(&m, &m) == 0);
    }
}

int ptt_symbols_data(struct ptt_symbols *s, uint64_t addr, char *name, size_t len)
{
    if (!s)
        return -1;
    Dwfl_Module *m = dwfl_addrmodule(s->dwfl, addr);
    if (!m)
        return -1;
    GElf_Off off;
    GElf_Sym sym;
    const char *sn = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
    if (!sn || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
        return -1;
    snprintf(name, len, "%s", sn);
    struct module_vars *mv = vars_of(s, m);
    if (!mv || !mv->n)
        return 0;
    uint64_t start = addr - off;
    struct gvar key = {start, 0};
    struct gvar *g = bsearch(&key, mv->v, mv->n, sizeof *mv->v, by_addr);
    if (!g)
        return 0;
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(m, &bias);
    Dwarf_Die var, type;
    if (dw && dwarf_offdie(dw, g->die, &var) && !type_of(&var, &type))
        member_path(&type, off, name, len, 0);
    return 0;
}

struct lookup {
    const char *name;
    uint64_t addr;
};

static int lookup_module(Dwfl_Module *mod, void **user, const char *mname, Dwarf_Addr start,
                         void *arg)
{
    (void)user, (void)mname, (void)start;
    struct lookup *c = arg;
    int k = dwfl_module_getsymtab(mod);
    for (int i = 0; i < k; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *sn = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
        if (sn && sym.st_shndx != SHN_UNDEF && !strcmp(sn, c->name)) {
            c->addr = addr;
            return DWARF_CB_ABORT;
        }
    }
    return DWARF_CB_OK;
}

uint64_t ptt_symbols_lookup(struct ptt_symbols *s, const char *name)
{
    if (!s)
        return 0;
    struct lookup c = {name, 0};
    dwfl_getmodules(s->dwfl, lookup_module, &c, 0);
    return c.addr;
}

void ptt_symbols_free(struct ptt_symbols *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nvars; i++)
        free(s->vars[i].v);
    free(s->vars);
    dwfl_end(s->dwfl);
    free(s);
}

#else /* without libdw: addresses only */

struct ptt_symbols {
    int unused;
};

int ptt_symbols_available(void)
{
    return 0;
}

struct ptt_symbols *ptt_symbols_new(void)
{
    return NULL;
}

void ptt_symbols_add(struct ptt_symbols *s, uint64_t base, uint64_t size, const char *path)
{
    (void)s, (void)base, (void)size, (void)path;
}

int ptt_symbols_code(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen, char *file,
                     size_t filelen, int *line)
{
    (void)s, (void)addr, (void)func, (void)flen, (void)file, (void)filelen, (void)line;
    return -1;
}

int ptt_symbols_data(struct ptt_symbols *s, uint64_t addr, char *name, size_t len)
{
    (void)s, (void)addr, (void)name, (void)len;
    return -1;
}

uint64_t ptt_symbols_lookup(struct ptt_symbols *s, const char *name)
{
    (void)s, (void)name;
    return 0;
}

void ptt_symbols_free(struct ptt_symbols *s)
{
    (void)s;
}

#endif
