/* ptt trace -p: libptt was loaded into a running program with dlopen, where nothing binds to its
 * interposers. Each module's relocated slots (GOT entries of JUMP_SLOT and GLOB_DAT relocations)
 * that hold an interposed routine are pointed at libptt's, their old values kept, and put back
 * at detach (docs/attach.md). Modules loaded later are patched by libptt's dlopen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libptt.h"

/* The routines libptt interposes, by name, and its own definitions of them. */
static const char *const names[] = {
#define PTT_NAME(ret, name, params) #name,
    PTT_REAL_FUNCS(PTT_NAME)
#undef PTT_NAME
        "signal", /* libptt's own, on its sigaction */
};
#define NNAMES (sizeof names / sizeof names[0])
static void *ours[NNAMES];

struct slot {
    uintptr_t *at;
    uintptr_t old;
    uintptr_t relro_lo, relro_hi; /* the read-only-after-relocation pages it is in (or 0, 0) */
    uintptr_t module;             /* its module's key (see patch_module) */
};
#define PTT_SLOTS 8192
static struct slot slots[PTT_SLOTS];
static unsigned nslots;
static uintptr_t self_base;
static uintptr_t done[1024]; /* modules patched (their load address + dynamic section) */
static unsigned ndone;

/* libptt's own definitions: dlsym on its own handle (the global scope would find libc's). */
static int find_ours(void)
{
    Dl_info di;
    if (!dladdr((void *)find_ours, &di) || !di.dli_fname)
        return -1;
    void *self = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!self)
        return -1;
    self_base = (uintptr_t)di.dli_fbase;
    for (unsigned i = 0; i < NNAMES; i++)
        ours[i] = dlsym(self, names[i]);
    dlclose(self); /* RTLD_NOLOAD took a reference */
    return 0;
}

static int lookup(const char *name)
{
    for (unsigned i = 0; i < NNAMES; i++)
        if (ours[i] && !strcmp(names[i], name))
            return (int)i;
    return -1;
}

/* Write a slot, making its page writable for the while if it is in the RELRO range. */
static void put(const struct slot *s, uintptr_t v)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)s->at;
    int ro = a >= s->relro_lo && a < s->relro_hi;
    uintptr_t page = a & ~(uintptr_t)(pg - 1);
    if (ro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE))
        return;
    __atomic_store_n(s->at, v, __ATOMIC_RELEASE);
    if (ro)
        mprotect((void *)page, (size_t)pg, PROT_READ);
}

struct dyn {
    uintptr_t base, symtab, strtab, jmprel, rela;
    size_t pltrelsz, relasz;
    uintptr_t relro_lo, relro_hi;
};

/* A d_ptr of the dynamic section: ld.so made most absolute, not all (and not everywhere). */
static uintptr_t abs_ptr(uintptr_t base, uintptr_t p)
{
    return p < base ? base + p : p;
}

static int read_dyn(struct dl_phdr_info *info, struct dyn *d)
{
    const ElfW(Dyn) *dyn = 0;
    memset(d, 0, sizeof *d);
    d->base = info->dlpi_addr;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(d->base + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO) {
            long pg = sysconf(_SC_PAGESIZE);
            d->relro_lo = (d->base + ph->p_vaddr) & ~(uintptr_t)(pg - 1);
            d->relro_hi = (d->base + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)(pg - 1);
        }
    }
    if (!dyn)
        return -1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn->d_un.d_ptr;
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->symtab = abs_ptr(d->base, v); break;
        case DT_STRTAB: d->strtab = abs_ptr(d->base, v); break;
        case DT_JMPREL: d->jmprel = abs_ptr(d->base, v); break;
        case DT_RELA: d->rela = abs_ptr(d->base, v); break;
        case DT_PLTRELSZ: d->pltrelsz = dyn->d_un.d_val; break;
        case DT_RELASZ: d->relasz = dyn->d_un.d_val; break;
        }
    }
    return d->symtab && d->strtab ? 0 : -1;
}

/* Point the slots of relocations [r, r + size) that name an interposed routine at ours. */
static void patch_relocs(const struct dyn *d, uintptr_t key, uintptr_t r, size_t size)
{
    const ElfW(Rela) *rel = (const ElfW(Rela) *)r;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)d->symtab;
    for (size_t i = 0; r && i < size / sizeof *rel; i++) {
        unsigned type = ELF64_R_TYPE(rel[i].r_info), si = ELF64_R_SYM(rel[i].r_info);
        if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !si ||
            sym[si].st_shndx != SHN_UNDEF)
            continue;
        int k = lookup((const char *)d->strtab + sym[si].st_name);
        if (k < 0 || nslots == PTT_SLOTS)
            continue;
        struct slot *s = &slots[nslots];
        *s = (struct slot){(uintptr_t *)(d->base + rel[i].r_offset), 0, d->relro_lo, d->relro_hi,
                           key};
        s->old = __atomic_load_n(s->at, __ATOMIC_ACQUIRE);
        if (s->old == (uintptr_t)ours[k])
            continue;
        nslots++;
        put(s, (uintptr_t)ours[k]);
    }
}

/* Not libptt itself, nor the dynamic linker or the vDSO (no pthread calls, and ld.so's slots
 * serve dlopen itself). */
static int skipped(struct dl_phdr_info *info)
{
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    return info->dlpi_addr == self_base || strstr(n, "/ld-linux") || strstr(n, "linux-vdso") ||
           strstr(n, "/ld64.so");
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    struct dyn d;
    if (skipped(info) || read_dyn(info, &d))
        return 0;
    uintptr_t key = d.base ^ d.symtab;
    for (unsigned i = 0; i < ndone; i++)
        if (done[i] == key)
            return 0;
    if (ndone < sizeof done / sizeof done[0])
        done[ndone++] = key;
    patch_relocs(&d, key, d.jmprel, d.pltrelsz);
    patch_relocs(&d, key, d.rela, d.relasz);
    return 0;
}

int ptt_got_patch(void)
{
    if (!self_base && find_ours())
        return -1;
    dl_iterate_phdr(patch_module, 0);
    return 0;
}

/* The modules still loaded: a slot of one unloaded meanwhile is gone with it. */
static int mark_live(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    struct dyn d;
    if (skipped(info) || read_dyn(info, &d))
        return 0;
    for (unsigned i = 0; i < nslots; i++)
        if (slots[i].module == (d.base ^ d.symtab))
            slots[i].module = 0;
    return 0;
}

void ptt_got_restore(void)
{
    dl_iterate_phdr(mark_live, 0);
    for (unsigned i = nslots; i-- > 0;)
        if (!slots[i].module)
            put(&slots[i], slots[i].old);
    nslots = 0;
    ndone = 0;
}
