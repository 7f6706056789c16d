/* Symbols with libdwfl. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/symbols.h"
#include "util/hmap.h"

#if defined PTT_HAVE_LIBIBERTY
/* libiberty's demangler, the C++ ABI's (libstdc++'s __cxa_demangle is the same code), linked
 * statically: libstdc++ linked costs every start of ptt 2 ms, and loaded when first needed its
 * thread-local data would be allocated where an allocation that fails aborts the process. */
#include <libiberty/demangle.h>
#define PTT_DEMANGLE(name) cplus_demangle_v3(name, DMGL_PARAMS | DMGL_TYPES)
#elif defined PTT_HAVE_CXA_DEMANGLE
/* libstdc++'s demangler, linked when the build found it. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
static char *cxa_demangle(const char *name)
{
    int st = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &st);
    if (st != 0) {
        free(d);
        d = NULL;
    }
    return d;
}
#define PTT_DEMANGLE(name) cxa_demangle(name)
#endif

void ptt_symbols_demangle(const char *name, char *out, size_t len)
{
#ifdef PTT_DEMANGLE
    if (name[0] == '_' && name[1] == 'Z') {
        char *d = PTT_DEMANGLE(name);
        if (d) {
            snprintf(out, len, "%s", d);
            free(d);
            return;
        }
    }
#endif
    snprintf(out, len, "%s", name);
}

/* The matching opening bracket of the closing one at s[end], or -1. */
static long opening(const char *s, long end, char open, char close)
{
    int depth = 0;
    for (long i = end; i >= 0; i--) {
        if (s[i] == close)
            depth++;
        else if (s[i] == open && --depth == 0)
            return i;
    }
    return -1;
}

void ptt_symbols_strip_params(char *name)
{
    long l = (long)strlen(name);
    static const char *const tails[] = {" const", " volatile", " &&", " &", " noexcept"};
    for (int again = 1; again;) { /* qualifiers after the parameter list */
        again = 0;
        for (size_t k = 0; k < sizeof tails / sizeof *tails; k++) {
            long t = (long)strlen(tails[k]);
            if (l > t && !strcmp(name + l - t, tails[k]))
                name[l -= t] = 0, again = 1;
        }
    }
    if (l < 2 || name[l - 1] != ')')
        return;
    long o = opening(name, l - 1, '(', ')');
    if (o > 0) /* not a bare "(anonymous namespace)" or "(*)" */
        name[o] = 0;
}

const char *ptt_symbols_params(const char *name)
{
    long l = (long)strlen(name);
    long o = l > 1 && name[l - 1] == ')' ? opening(name, l - 1, '(', ')') : -1;
    return o > 0 ? name + o : NULL;
}

int ptt_symbols_system_file(const char *path)
{
    return path && (!strncmp(path, "/usr/include/", 13) || !strncmp(path, "/usr/lib/gcc/", 13) ||
                    !strncmp(path, "/usr/local/include/", 19) || strstr(path, "/include/c++/"));
}

#ifdef PTT_HAVE_LIBDW
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <unistd.h>

#include "analysis/dw.h"
#include "util/util.h"

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Global variables of a module, by address, from its DWARF: for member paths. */
struct gvar {
    uint64_t addr;
    Dwarf_Off die;
    Dwarf_Off scope; /* the function of a static local, else 0 */
};

struct module_vars {
    struct gvar *v;
    size_t n;
};

/* A binary, read once for every process that maps it: a Dwfl of its own with the binary at
 * bias 0, so that a process's address is looked up less the process's bias. Per process, a
 * program of a build (cc1, ld with libLLVM) cost ptt stat megabytes of symbol tables before. */
struct symfile {
    char *path;
    struct stat st; /* the file read (a binary rebuilt during a session is another) */
    int opened;     /* the Dwfl was tried (NULL: unreadable) */
    Dwfl *dwfl;     /* only this binary */
    Dwfl_Module *m; /* its module */
    int vars_read;
    struct module_vars vars;
    struct ptt_hmap info; /* address -> struct addrinfo: libdw scans every symbol per lookup */
    unsigned asked;       /* lookups libdw made */
    int nosym_built;
    struct nosym *nosym; /* made after a few lookups; NULL: none (out of memory, no symbols) */
};

/* Addresses no symbol is found for, told without libdw: dwfl_module_addrinfo scans the whole
 * symbol table per address, and most data addresses of a stripped library (a mutex in
 * libLLVM's .bss, say) have none: a build's ptt view spent 80% of 2.2 s there. The answer is
 * "none" only where libdw's own rule gives none: no sized symbol spans the address, and no
 * sizeless one lies between it and the end of the last named symbol below it (the assembly
 * label libdw falls back on). Any other address is asked of libdw. */
struct nosym {
    size_t n, nz;
    uint64_t *start;   /* the sized symbols' starts, sorted */
    uint64_t *any_end; /* the largest end of the sized symbols up to here */
    /* The same, of those libdw counts as bounding a label: named, in a section, not a section,
     * file or TLS symbol (fewer than any_end counts: a label is not ruled out by mistake) */
    uint64_t *named_end;
    uint64_t *zero; /* the sizeless symbols' addresses, sorted */
};

/* dwfl_module_addrinfo's answer for an address of the binary. */
struct addrinfo {
    int done;
    const char *name; /* NULL: none (the string is the Dwfl's) */
    GElf_Off off;
    GElf_Sym sym;
};

struct ptt_symfiles {
    struct symfile **f;
    size_t n, cap;
    struct ptt_hmap index; /* hash of the path -> 1 + index of the first with that hash */
};

/* A module of a process image: where it is mapped (bias, and its end from there). */
struct symmap {
    uint64_t base, size;
    struct symfile *file;
};

struct ptt_symbols {
    struct ptt_symfiles *files;
    struct symmap *m;
    size_t n;
};

struct span {
    uint64_t start, end;
    int named;
};

static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_value(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static void nosym_free(struct nosym *x)
{
    if (x) {
        free(x->start);
        free(x->any_end);
        free(x->named_end);
        free(x->zero);
        free(x);
    }
}

/* The spans of m's sized symbols (NULL-named ones, which libdw skips, aside) in sp, their
 * number; the addresses of its sizeless ones in x->zero. */
static size_t read_symbols(Dwfl_Module *m, int k, struct span *sp, struct nosym *x)
{
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        GElf_Sym sym;
        GElf_Addr v;
        const char *name = dwfl_module_getsym_info(m, i, &sym, &v, NULL, NULL, NULL);
        if (!name)
            continue;
        if (!sym.st_size) {
            x->zero[x->nz++] = v;
            continue;
        }
        int type = GELF_ST_TYPE(sym.st_info);
        uint64_t end = v + sym.st_size < v ? UINT64_MAX : v + sym.st_size;
        sp[n++] = (struct span){v, end,
                                name[0] && sym.st_shndx != SHN_UNDEF && type != STT_SECTION &&
                                    type != STT_FILE && type != STT_TLS};
    }
    return n;
}

/* The index of m's symbols; NULL without symbols or memory. */
static struct nosym *nosym_read(Dwfl_Module *m)
{
    int k = dwfl_module_getsymtab(m);
    struct nosym *x = k > 0 ? calloc(1, sizeof *x) : NULL;
    struct span *sp = x ? malloc((size_t)k * sizeof *sp) : NULL;
    if (sp) {
        x->zero = malloc((size_t)k * sizeof *x->zero);
        x->start = malloc((size_t)k * sizeof *x->start);
        x->any_end = malloc((size_t)k * sizeof *x->any_end);
        x->named_end = malloc((size_t)k * sizeof *x->named_end);
    }
    if (!sp || !x->zero || !x->start || !x->any_end || !x->named_end) {
        free(sp);
        nosym_free(x);
        return NULL;
    }
    x->n = read_symbols(m, k, sp, x);
    qsort(sp, x->n, sizeof *sp, by_start);
    qsort(x->zero, x->nz, sizeof *x->zero, by_value);
    uint64_t any = 0, named = 0;
    for (size_t i = 0; i < x->n; i++) {
        any = sp[i].end > any ? sp[i].end : any;
        named = sp[i].named && sp[i].end > named ? sp[i].end : named;
        x->start[i] = sp[i].start;
        x->any_end[i] = any;
        x->named_end[i] = named;
    }
    free(sp);
    return x;
}

/* Whether libdw surely finds no symbol for address a (struct nosym). */
static int nosym_has(const struct nosym *x, uint64_t a)
{
    size_t lo = 0, hi = x->n; /* the sized symbols starting at or below a: lo of them */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->start[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && x->any_end[lo - 1] > a)
        return 0; /* one spans it */
    uint64_t label = lo ? x->named_end[lo - 1] : 0;
    size_t zl = 0, zh = x->nz; /* the first sizeless symbol at or above label */
    while (zl < zh) {
        size_t mid = zl + (zh - zl) / 2;
        if (x->zero[mid] < label)
            zl = mid + 1;
        else
            zh = mid;
    }
    return zl == x->nz || x->zero[zl] > a;
}

static char *debuginfo_path;

/* Whether no one but root and this user can put a file in dir (or in its .debug and .dwz, where
 * libdw looks too): a FIFO planted where libdw looks for a debug file would make its open wait
 * for ever, a link to a device would open the device. */
static int dir_trusted(const char *dir)
{
    static const char *const sub[] = {"", "/.debug", "/.dwz"};
    uid_t me = geteuid();
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s%s", dir, sub[i]);
        if (stat(path, &st)) {
            if (i)
                continue; /* no such subdirectory: nothing there */
            return 0;
        }
        if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != me) ||
            (st.st_mode & (S_IWGRP | S_IWOTH)))
            return 0;
    }
    return 1;
}

/* Whether the places libdw searches for file's debug files are trusted: its directory, and its
 * real one (libdw looks where a link leads too). */
static int places_trusted(const char *file)
{
    char copy[4096], *real = realpath(file, NULL);
    int ok = strlen(file) < sizeof copy;
    if (ok) {
        strcpy(copy, file);
        ok = dir_trusted(dirname(copy));
    }
    if (ok && real) {
        snprintf(copy, sizeof copy, "%s", real);
        ok = dir_trusted(dirname(copy));
    }
    free(real);
    return ok;
}

/* fd of path if it is a regular file, opened without waiting and without acting on anything
 * else: O_PATH opens nothing, the file is opened again through /proc once known to be regular
 * (the same inode). Without /proc, opened by its path, O_NONBLOCK, and checked to be the same
 * file. -1 otherwise; *st its status. */
static int open_regular(const char *path, struct stat *st)
{
    int pfd = open(path, O_PATH | O_CLOEXEC), fd = -1;
    if (pfd < 0)
        return -1;
    if (!fstat(pfd, st) && S_ISREG(st->st_mode)) {
        char proc[64];
        struct stat again;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ENOENT &&
            (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) >= 0 &&
            (fstat(fd, &again) || again.st_dev != st->st_dev || again.st_ino != st->st_ino)) {
            close(fd);
            fd = -1;
        }
    }
    close(pfd);
    return fd;
}

/* Outside trusted places, only the debug file installed for the module's build ID. */
static int build_id_debuginfo(Dwfl_Module *mod, char **debuginfo_file_name)
{
    const unsigned char *id;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &id, &vaddr);
    if (n < 2 || n > 64)
        return -1;
    char path[200];
    int k = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (int i = 1; i < n; i++)
        k += snprintf(path + k, sizeof path - (size_t)k, "%02x", id[i]);
    snprintf(path + k, sizeof path - (size_t)k, ".debug");
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd >= 0 && !(*debuginfo_file_name = strdup(path))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* libdw's search for a separate debug file (and a dwz file's, libdw asking again with its name
 * as the link), where no one else can plant files; elsewhere, the build ID's file alone. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file,
                          GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    if (file_name && places_trusted(file_name))
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                            debuglink_crc, debuginfo_file_name);
    return debuglink_crc || !debuglink_file ? build_id_debuginfo(mod, debuginfo_file_name) : -1;
}

static Dwfl_Callbacks callbacks; /* libdw's own functions among them: set once it is loaded */

/* libdw loaded, on the first binary read (analysis/dw.h); 0 when it cannot be, said once:
 * addresses stay addresses, as in a build without it. Its thread-local error words (libdw's,
 * libelf's) are allocated now, by reading them, on the thread that reads symbols (the only one
 * that calls libdw): glibc aborts a process where the allocation of a loaded library's
 * thread-local data fails. So first a probe: without 64 KiB, out of memory as ptt says it;
 * with it, the few bytes asked next take memory just freed, which needs no system call. */
static int dw_loaded(void)
{
    static int said;
    if (!ptt_dynlib_load(&ptt_dw_lib)) {
        if (!said++)
            ptt_note("cannot load libdw, addresses are not named: %s", ptt_dw_lib.why);
        return 0;
    }
    if (!callbacks.find_elf) {
        free(ptt_must(malloc(1 << 16)));
        dwarf_errno();
        dwfl_errno();
        elf_errno();
        callbacks = (Dwfl_Callbacks){.find_elf = dwfl_build_id_find_elf,
                                     .find_debuginfo = find_debuginfo,
                                     .section_address = dwfl_offline_section_address,
                                     .debuginfo_path = &debuginfo_path};
    }
    return 1;
}

int ptt_symbols_available(void)
{
    return 1;
}

struct ptt_symfiles *ptt_symfiles_new(void)
{
    return calloc(1, sizeof(struct ptt_symfiles));
}

static int same_file(const struct symfile *f, const char *path, const struct stat *st)
{
    return !strcmp(f->path, path) && f->st.st_dev == st->st_dev && f->st.st_ino == st->st_ino &&
           f->st.st_size == st->st_size && f->st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
           f->st.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* The binary at path, made known (not yet read) the first time; NULL out of memory. The same
 * path is another binary once the file there changed: the hang watch names processes while
 * the session runs, a build may rebuild a program it runs. */
static struct symfile *file_of(struct ptt_symfiles *fs, const char *path)
{
    struct stat st = {0};
    if (stat(path, &st))
        memset(&st, 0, sizeof st); /* read as nothing, later */
    uint64_t key = ptt_key_str(path) ^ ptt_key2((uint64_t)st.st_ino, (uint64_t)st.st_mtim.tv_nsec);
    size_t *first = ptt_hmap_get(&fs->index, key, sizeof *first);
    if (*first && same_file(fs->f[*first - 1], path, &st))
        return fs->f[*first - 1];
    for (size_t i = *first; *first && i < fs->n; i++) /* another file with that hash */
        if (same_file(fs->f[i], path, &st))
            return fs->f[i];
    if (fs->n == fs->cap) {
        size_t c = fs->cap ? fs->cap * 2 : 16;
        struct symfile **nf = realloc(fs->f, c * sizeof *nf);
        if (!nf)
            return NULL;
        fs->f = nf;
        fs->cap = c;
    }
    struct symfile *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return NULL;
    }
    f->st = st;
    fs->f[fs->n++] = f;
    if (!*first)
        *first = fs->n;
    return f;
}

/* The binary opened for reading if it is the regular ELF file f->st says, whatever a trace names
 * (open_regular). Not compressed: libdw would inflate it whole in memory, and close fd itself. */
static int open_binary(const struct symfile *f)
{
    struct stat st;
    char magic[4];
    int fd = open_regular(f->path, &st);
    if (fd >= 0 && (!same_file(f, f->path, &st) || pread(fd, magic, 4, 0) != 4 ||
                    memcmp(magic, "\177ELF", 4))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The binary's module, its Dwfl made on first use; NULL if it cannot be read. */
static Dwfl_Module *file_module(struct symfile *f)
{
    if (!f->opened) {
        f->opened = 1;
        int fd = dw_loaded() ? open_binary(f) : -1;
        if (fd >= 0 && (f->dwfl = dwfl_begin(&callbacks))) {
            dwfl_report_begin(f->dwfl);
            f->m = dwfl_report_elf(f->dwfl, base_name(f->path), f->path, fd, 0, false);
            dwfl_report_end(f->dwfl, NULL, NULL);
        }
        if (fd >= 0 && !f->m)
            close(fd); /* taken by libdw only on success */
    }
    return f->m;
}

void ptt_symfiles_free(struct ptt_symfiles *fs)
{
    if (!fs)
        return;
    for (size_t i = 0; i < fs->n; i++) {
        free(fs->f[i]->vars.v);
        ptt_hmap_free(&fs->f[i]->info, NULL);
        nosym_free(fs->f[i]->nosym);
        if (fs->f[i]->dwfl)
            dwfl_end(fs->f[i]->dwfl);
        free(fs->f[i]->path);
        free(fs->f[i]);
    }
    free(fs->f);
    ptt_hmap_free(&fs->index, NULL);
    free(fs);
}

struct ptt_symbols *ptt_symbols_new(struct ptt_symfiles *files)
{
    struct ptt_symbols *s = files ? calloc(1, sizeof *s) : NULL;
    if (s)
        s->files = files;
    return s;
}

void ptt_symbols_add(struct ptt_symbols *s, uint64_t base, uint64_t size, const char *path)
{
    if (!s || !path || !*path || path[0] != '/')
        return; /* the vDSO and other anonymous objects have no file */
    struct symfile *f = file_of(s->files, path);
    struct symmap *m = f ? realloc(s->m, (s->n + 1) * sizeof *m) : NULL;
    if (!m)
        return;
    s->m = m;
    s->m[s->n++] = (struct symmap){base, size, f};
}

/* The binary holding a process's address (its module read), and *rel that address in the
 * binary (less the bias it is mapped with); NULL when none does. A module spans its bias to its
 * end (size from the bias); its binary's segments say whether the address is really in it. */
static struct symfile *file_at(struct ptt_symbols *s, uint64_t addr, uint64_t *rel)
{
    for (size_t i = s ? s->n : 0; i-- > 0;) { /* the newest first: one loaded where another was */
        const struct symmap *m = &s->m[i];
        if (addr < m->base || (m->size && addr - m->base >= m->size))
            continue;
        Dwfl_Module *mod = file_module(m->file);
        if (mod && dwfl_addrmodule(m->file->dwfl, addr - m->base) == mod) {
            *rel = addr - m->base;
            return m->file;
        }
    }
    return NULL;
}

/* After this many lookups of a binary, its index is made: a few lookups cost less than it. */
#define NOSYM_AFTER 32

/* The symbol at or before address rel of the binary (dwfl_module_addrinfo), asked once per
 * address: the same code is looked up for each process running the binary. */
static const char *addrinfo(struct symfile *f, uint64_t rel, GElf_Off *off, GElf_Sym *sym)
{
    /* mixed: aligned addresses would fill few of the map's slots */
    struct addrinfo *a = ptt_hmap_get(&f->info, ptt_key2(0, rel), sizeof *a);
    if (!a->done) {
        a->done = 1;
        if (f->asked >= NOSYM_AFTER && !f->nosym_built) {
            f->nosym_built = 1;
            f->nosym = nosym_read(f->m);
        }
        if (!f->nosym || !nosym_has(f->nosym, rel)) {
            a->name = dwfl_module_addrinfo(f->m, rel, &a->off, &a->sym, NULL, NULL, NULL);
            f->asked++;
        }
    }
    *off = a->off;
    *sym = a->sym;
    return a->name;
}

/* "module+0xOFFSET": the address in the file, what addr2line -e MODULE takes. */
static void module_offset(Dwfl_Module *m, uint64_t addr, char *out, size_t len)
{
    Dwarf_Addr start;
    const char *mn = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    Dwarf_Addr bias = 0;
    if (!dwfl_module_getelf(m, &bias))
        bias = start;
    snprintf(out, len, "%s+0x%llx", mn ? mn : "?", (unsigned long long)(addr - bias));
}

int ptt_symbols_code(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen, char *file,
                     size_t filelen, int *line)
{
    struct symfile *f = file_at(s, addr, &addr);
    if (!f)
        return -1;
    Dwfl_Module *m = f->m;
    GElf_Off off;
    GElf_Sym sym;
    /* .symtab, else .dynsym (dwfl reads whichever the file, or its debug file, has) */
    const char *name = addrinfo(f, addr, &off, &sym);
    if (name) {
        ptt_symbols_demangle(name, func, flen);
        ptt_symbols_strip_params(func);
    } else {
        module_offset(m, addr, func, flen);
    }
    *line = 0;
    file[0] = 0;
    Dwfl_Line *l = dwfl_module_getsrc(m, addr);
    const char *src = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
    if (src)
        snprintf(file, filelen, "%s", base_name(src));
    return 0;
}

int ptt_symbols_function(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen)
{
    struct symfile *f = addr ? file_at(s, addr, &addr) : NULL;
    GElf_Off off;
    GElf_Sym sym;
    const char *name = f ? addrinfo(f, addr, &off, &sym) : NULL;
    if (!name || off || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        return -1;
    ptt_symbols_demangle(name, func, flen);
    return 0;
}

/* The file of a DW_AT_call_file index in a CU's file table. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *inl, int *line)
{
    Dwarf_Attribute at;
    Dwarf_Word fi, ln;
    Dwarf_Files *files;
    size_t nfiles;
    if (!dwarf_attr(inl, DW_AT_call_file, &at) || dwarf_formudata(&at, &fi) ||
        !dwarf_attr(inl, DW_AT_call_line, &at) || dwarf_formudata(&at, &ln) ||
        dwarf_getsrcfiles(cu, &files, &nfiles) || fi >= nfiles)
        return NULL;
    *line = (int)ln;
    return dwarf_filesrc(files, fi, NULL, NULL);
}

/* Where the program's own source calls the code inlined at addr: walking the inlined
 * subroutines outward (std::mutex::lock in std::lock_guard in the program's function), the
 * first call made from a file that is not a system header. NULL when there is none. */
static const char *own_call(Dwfl_Module *m, uint64_t addr, int *line)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(m, addr, &bias);
    Dwarf_Die *scopes = NULL, inner;
    int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    /* dwarf_getscopes gives the innermost inlined instance, then its abstract definition's
     * scopes; the DIEs that physically contain that instance give the chain of calls. */
    int found = n > 0 && dwarf_tag(&scopes[0]) == DW_TAG_inlined_subroutine;
    if (found)
        inner = scopes[0];
    free(scopes);
    scopes = NULL;
    n = found ? dwarf_getscopes_die(&inner, &scopes) : 0;
    const char *r = NULL;
    for (int i = 0; i < n && !r; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        const char *f = call_file(cu, &scopes[i], line);
        if (f && !ptt_symbols_system_file(f))
            r = f;
    }
    free(scopes);
    return r;
}

int ptt_symbols_site(struct ptt_symbols *s, uint64_t addr, char *site, size_t len, char *detail,
                     size_t dlen)
{
    detail[0] = 0;
    struct symfile *f = file_at(s, addr, &addr);
    Dwfl_Module *m = f ? f->m : NULL;
    Dwfl_Line *l = m ? dwfl_module_getsrc(m, addr) : NULL;
    int line = 0;
    const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
    if (!src || !line)
        return -1;
    if (!ptt_symbols_system_file(src)) {
        snprintf(site, len, "%s:%d", base_name(src), line);
        return 0;
    }
    snprintf(detail, dlen, "%s:%d", base_name(src), line);
    int own_line;
    const char *own = own_call(m, addr, &own_line);
    if (!own) { /* the header's line, all there is (an out-of-line wrapper) */
        snprintf(site, len, "%s", detail);
        return 1;
    }
    snprintf(site, len, "%s:%d", base_name(own), own_line);
    return 1;
}

static int by_addr(const void *a, const void *b)
{
    const struct gvar *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void add_var(struct module_vars *mv, size_t *cap, uint64_t addr, Dwarf_Off die,
                    Dwarf_Off scope)
{
    if (mv->n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        struct gvar *g = realloc(mv->v, c * sizeof *g);
        if (!g)
            return;
        mv->v = g;
        *cap = c;
    }
    mv->v[mv->n++] = (struct gvar){addr, die, scope};
}

/* The variables with a fixed address (DW_OP_addr) among the children of die: at file scope, in
 * namespaces, and the static locals of functions (scope: their function). */
static void collect_vars(struct module_vars *mv, size_t *cap, Dwarf_Die *die, Dwarf_Addr bias,
                         Dwarf_Off scope, int depth)
{
    Dwarf_Die child;
    if (depth > 32 || dwarf_child(die, &child))
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_namespace || tag == DW_TAG_lexical_block) {
            collect_vars(mv, cap, &child, bias, scope, depth + 1);
        } else if (tag == DW_TAG_subprogram) { /* also an inlined one's abstract instance */
            collect_vars(mv, cap, &child, bias, dwarf_dieoffset(&child), depth + 1);
        } else if (tag == DW_TAG_variable) {
            Dwarf_Attribute at;
            Dwarf_Op *ops;
            size_t nops;
            if (dwarf_attr(&child, DW_AT_location, &at) && !dwarf_getlocation(&at, &ops, &nops) &&
                nops == 1 && ops[0].atom == DW_OP_addr)
                add_var(mv, cap, ops[0].number + bias, dwarf_dieoffset(&child), scope);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* The binary's variables with a fixed address, read once. */
static struct module_vars *vars_of(struct symfile *f, Dwfl_Module *m)
{
    struct module_vars *mv = &f->vars;
    if (f->vars_read)
        return mv;
    f->vars_read = 1;
    Dwarf_Addr bias;
    size_t cap = 0;
    for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(m, cu, &bias));)
        collect_vars(mv, &cap, cu, bias, 0, 0);
    if (mv->n) /* a binary without debug information has none: qsort wants an array */
        qsort(mv->v, mv->n, sizeof *mv->v, by_addr);
    return mv;
}

/* A function's name as the program writes it: its linkage name demangled, without the
 * parameters (bank::Account::deposit), else its DWARF name (C). */
static void die_function_name(Dwarf_Die *fn, char *out, size_t len)
{
    Dwarf_Attribute at;
    const char *ln = NULL;
    if (dwarf_attr_integrate(fn, DW_AT_linkage_name, &at) ||
        dwarf_attr_integrate(fn, DW_AT_MIPS_linkage_name, &at))
        ln = dwarf_formstring(&at);
    if (ln) {
        ptt_symbols_demangle(ln, out, len);
        ptt_symbols_strip_params(out);
        return;
    }
    const char *dn = dwarf_diename(fn);
    snprintf(out, len, "%s", dn ? dn : "?");
}

static int type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute at;
    return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, type) ? 0 : -1;
}

/* An identifier reserved to the implementation (_M_cond, __data, _Lock): the C++ library's
 * members, not the program's. */
static int reserved(const char *id)
{
    return id[0] == '_' &&
           (id[1] == '_' || (id[1] >= 'A' && id[1] <= 'Z') || !strncmp(id, "_M_", 3));
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
                if (mn && off == loc && reserved(mn))
                    return; /* a library's insides (std::condition_variable's _M_cond) */
                snprintf(name + l, len - l, ".%s", mn ? mn : "?");
                member_path(&mt, off - loc, name, len, depth + 1);
                return;
            }
        } while (dwarf_siblingof(&m, &m) == 0);
    }
}

/* A static local's demangled symbol without its function's parameters: "f1()::lock" ->
 * "f1::lock", as the debug information names it. */
static void local_static(char *name)
{
    char *c = strstr(name, ")::");
    for (char *n; c && (n = strstr(c + 1, ")::"));)
        c = n;
    long o = c ? opening(name, c - name, '(', ')') : -1;
    if (o > 0 && name[o - 1] != ':') /* a function's parameters, not "(anonymous namespace)" */
        memmove(name + o, c + 1, strlen(c + 1) + 1);
}

int ptt_symbols_data(struct ptt_symbols *s, uint64_t addr, char *name, size_t len)
{
    struct symfile *f = file_at(s, addr, &addr);
    if (!f)
        return -1;
    Dwfl_Module *m = f->m;
    GElf_Off off;
    GElf_Sym sym;
    const char *sn = addrinfo(f, addr, &off, &sym);
    if (!sn || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
        return -1;
    ptt_symbols_demangle(sn, name, len);
    local_static(name);
    struct module_vars *mv = vars_of(f, m);
    if (!mv || !mv->n)
        return 0;
    uint64_t start = addr - off;
    struct gvar key = {start, 0, 0};
    struct gvar *g = bsearch(&key, mv->v, mv->n, sizeof *mv->v, by_addr);
    if (!g)
        return 0;
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(m, &bias);
    Dwarf_Die var, type, fn;
    if (!dw || !dwarf_offdie(dw, g->die, &var))
        return 0;
    if (g->scope && dwarf_offdie(dw, g->scope, &fn)) { /* a static local: f1::lock */
        const char *vn = dwarf_diename(&var);
        char f[256];
        die_function_name(&fn, f, sizeof f);
        snprintf(name, len, "%s::%s", f, vn ? vn : "?");
    }
    if (!type_of(&var, &type))
        member_path(&type, off, name, len, 0);
    return 0;
}

/* The address of symbol name in the binary, 0 if it has none. */
static uint64_t lookup_module(Dwfl_Module *mod, const char *name)
{
    int k = dwfl_module_getsymtab(mod);
    for (int i = 0; i < k; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *sn = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
        if (sn && sym.st_shndx != SHN_UNDEF && !strcmp(sn, name))
            return addr;
    }
    return 0;
}

uint64_t ptt_symbols_lookup(struct ptt_symbols *s, const char *name)
{
    for (size_t i = 0; s && i < s->n; i++) {
        Dwfl_Module *mod = file_module(s->m[i].file);
        uint64_t a = mod ? lookup_module(mod, name) : 0;
        if (a)
            return a + s->m[i].base;
    }
    return 0;
}

void ptt_symbols_free(struct ptt_symbols *s)
{
    if (!s)
        return;
    free(s->m);
    free(s);
}

/* Address a of x's neighbourhoods: k of them at each sized symbol's start and the ends before
 * it, and at each sizeless symbol (0 past the last). */
static uint64_t probe_at(const struct nosym *x, size_t k)
{
    static const int64_t d[3] = {-1, 0, 1};
    size_t i = k / 9, j = k % 9;
    if (i < x->n) {
        const uint64_t *v = j < 3 ? x->start : j < 6 ? x->any_end : x->named_end;
        return v[i] + (uint64_t)d[j % 3];
    }
    i = k / 3 - x->n * 3;
    return i < x->nz ? x->zero[i] + (uint64_t)d[k % 3] : 0;
}

long ptt_symbols_check_index(const char *path, unsigned max, size_t *checked)
{
    *checked = 0;
    struct ptt_symfiles *fs = ptt_symfiles_new();
    struct symfile *f = fs ? file_of(fs, path) : NULL;
    struct nosym *x = f && file_module(f) ? nosym_read(f->m) : NULL;
    long wrong = x ? 0 : -1;
    size_t nprobe = x ? 9 * x->n + 3 * x->nz : 0, none = 0;
    for (size_t k = 0; k < nprobe; k++)
        none += nosym_has(x, probe_at(x, k));
    /* at most max of them asked of libdw, spread over the table */
    size_t step = none > max ? none / max + 1 : 1, seen = 0;
    for (size_t k = 0; k < nprobe; k++) {
        uint64_t a = probe_at(x, k);
        if (!nosym_has(x, a) || seen++ % step)
            continue;
        GElf_Off off;
        GElf_Sym sym;
        wrong += dwfl_module_addrinfo(f->m, a, &off, &sym, NULL, NULL, NULL) != NULL;
        ++*checked;
    }
    nosym_free(x);
    ptt_symfiles_free(fs);
    return wrong;
}

#else /* without libdw: addresses only */

struct ptt_symbols {
    int unused;
};

int ptt_symbols_available(void)
{
    return 0;
}

struct ptt_symfiles *ptt_symfiles_new(void)
{
    return NULL;
}

void ptt_symfiles_free(struct ptt_symfiles *fs)
{
    (void)fs;
}

struct ptt_symbols *ptt_symbols_new(struct ptt_symfiles *files)
{
    (void)files;
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

int ptt_symbols_function(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen)
{
    (void)s, (void)addr, (void)func, (void)flen;
    return -1;
}

int ptt_symbols_site(struct ptt_symbols *s, uint64_t addr, char *site, size_t len, char *detail,
                     size_t dlen)
{
    (void)s, (void)addr, (void)site, (void)len, (void)dlen;
    detail[0] = 0;
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

long ptt_symbols_check_index(const char *path, unsigned max, size_t *checked)
{
    (void)path, (void)max;
    *checked = 0;
    return -1;
}

#endif
