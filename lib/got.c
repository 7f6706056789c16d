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

/* The executable segments of the modules patched (the code ptt_got_callee reads), gathered as
 * they are patched, and libptt's own. */
static struct {
    uintptr_t lo, hi;
} code[1024];
static unsigned ncode;
static uintptr_t self_lo, self_hi;

static int add_code(struct dl_phdr_info *info, size_t size, void *arg);

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    struct dyn d;
    add_code(info, size, arg); /* for ptt_got_callee */
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
    ncode = 0;
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

/* ---- call sites (lib/inflight.c) ---- */

static int add_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    int self = info->dlpi_addr == self_base;
    if (skipped(info) && !self)
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum && ncode < sizeof code / sizeof code[0]; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (self)
            self_lo = lo, self_hi = hi;
        else
            code[ncode].lo = lo, code[ncode++].hi = hi;
    }
    return 0;
}

/* Whether [a, a + n) is code of a patched module (then it can be read). */
static int in_code(uintptr_t a, size_t n)
{
    for (unsigned i = 0; i < ncode; i++)
        if (a >= code[i].lo && a + n <= code[i].hi && a + n > a)
            return 1;
    return 0;
}

static int32_t rel32(uintptr_t at)
{
    int32_t v;
    memcpy(&v, (const void *)at, 4);
    return v;
}

/* The GOT slot a PLT entry jumps through: jmp *d(%rip), with or without endbr64 and bnd. */
static uintptr_t plt_slot(uintptr_t e)
{
    const unsigned char *p = (const unsigned char *)e;
    if (!in_code(e, 11))
        return 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) /* endbr64 */
        p += 4;
    if (p[0] == 0xf2) /* bnd */
        p++;
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    uintptr_t next = (uintptr_t)p + 6;
    return next + (uintptr_t)(intptr_t)rel32((uintptr_t)p + 2);
}

/* The interposed routine ret returns from, by name (NULL: ret is no return address of a call
 * through a slot patched): a call rel32 to a PLT entry, or a call *d(%rip) (-fno-plt). */
const char *ptt_got_callee(uintptr_t ret)
{
    uintptr_t slot = 0;
    if (in_code(ret - 6, 6) && ((const unsigned char *)ret)[-6] == 0xff &&
        ((const unsigned char *)ret)[-5] == 0x15)
        slot = ret + (uintptr_t)(intptr_t)rel32(ret - 4);
    else if (in_code(ret - 5, 5) && ((const unsigned char *)ret)[-5] == 0xe8)
        slot = plt_slot(ret + (uintptr_t)(intptr_t)rel32(ret - 4));
    if (!slot)
        return NULL;
    for (unsigned i = 0; i < nslots; i++)
        if ((uintptr_t)slots[i].at == slot) {
            uintptr_t v = __atomic_load_n(slots[i].at, __ATOMIC_ACQUIRE);
            for (unsigned k = 0; k < NNAMES; k++)
                if (ours[k] && v == (uintptr_t)ours[k])
                    return names[k];
        }
    return NULL;
}

/* Whether a is in libptt's own code. */
int ptt_got_ours(uintptr_t a)
{
    return a >= self_lo && a < self_hi;
}
