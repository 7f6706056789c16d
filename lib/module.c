/* The binaries mapped in the process (MODULE_LOAD: path and load address), recorded at start
 * and after each dlopen, so that the tools can name functions and variables at decode time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include "libptt.h"

/* Load addresses already recorded: a module is recorded once. A forked child inherits the
 * table with the mappings; an exec'd image starts afresh. */
#define PTT_MODULES 1024
static uint64_t seen[PTT_MODULES];
static unsigned nseen;

/* Where libstdc++ is mapped: a thread start routine in it is std::thread's, whose argument is
 * a polymorphic object (std::thread::_State) that names what the thread runs. */
static uint64_t cxx_lo, cxx_hi;

int ptt_in_libstdcxx(uint64_t addr)
{
    return addr >= cxx_lo && addr < cxx_hi;
}

static void note_libstdcxx(const char *path, uint64_t lo, uint64_t hi)
{
    const char *b = path;
    for (const char *c = path; *c; c++)
        if (*c == '/')
            b = c + 1;
    static const char want[] = "libstdc++.so";
    for (unsigned i = 0; i < sizeof want - 1; i++)
        if (b[i] != want[i])
            return;
    cxx_lo = lo;
    cxx_hi = hi;
}

static int record(struct dl_phdr_info *info, size_t size, void *first)
{
    (void)size;
    uint64_t end = 0, start = UINT64_MAX;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            if (info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz > end)
                end = info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
            if (info->dlpi_phdr[i].p_vaddr < start)
                start = info->dlpi_phdr[i].p_vaddr;
        }
    uint64_t base = info->dlpi_addr;
    for (unsigned i = 0; i < nseen; i++)
        if (seen[i] == base + end)
            return 0;
    if (nseen < PTT_MODULES)
        seen[nseen++] = base + end;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (!path || !*path) { /* the program itself comes first, unnamed */
        if (!*(int *)first)
            return 0;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    *(int *)first = 0;
    if (start < end)
        note_libstdcxx(path, base + start, base + end);
    PTT_REC_STR(MODULE_LOAD, path, base, end);
    return 0;
}

void ptt_modules_forget(void)
{
    nseen = 0;
}

void ptt_record_modules(void)
{
    int first = 1;
    dl_iterate_phdr(record, &first);
}

PTT_EXPORT void *dlopen(const char *file, int mode)
{
    void *h = REAL(dlopen)(file, mode);
    if (h && ptt_on()) {
        ptt_record_modules();
        if (ptt_attached) /* libptt came with dlopen itself: nothing binds to it */
            ptt_got_patch();
    }
    return h;
}

/* <ptt.h>'s ptt_name: the program names an object (OBJECT_NAME). */
PTT_EXPORT void ptt_name_object(const void *object, const char *name)
{
    if (ptt_on())
        PTT_REC_STR(OBJECT_NAME, name, PTT_U(object));
}

/* --backtrace=N: the frames of the program's call, innermost first (f[0] is here, f[1] in the
 * interposer). backtrace() is warmed up at start (ptt_backtrace_init): its first call loads
 * the unwinder, which allocates. */
#define PTT_MAX_FRAMES 32
unsigned ptt_backtrace_depth;

void ptt_record_backtrace(void)
{
    void *f[PTT_MAX_FRAMES + 2];
    ptt_self.guard |= PTT_GUARD_UNWIND; /* the unwinder's own calls are not the program's */
    int n = backtrace(f, (int)ptt_backtrace_depth + 2);
    ptt_self.guard &= ~PTT_GUARD_UNWIND;
    uint64_t a[PTT_MAX_FRAMES];
    unsigned k = 0;
    for (int i = 2; i < n && k < PTT_MAX_FRAMES; i++)
        a[k++] = PTT_U(f[i]);
    if (k && PTT_RECORDS(BACKTRACE))
        ptt_write(&ptt_self, PTT_EV_BACKTRACE, k, a);
}

void ptt_backtrace_init(unsigned depth)
{
    void *f[4];
    if (!depth)
        return;
    ptt_self.guard |= PTT_GUARD_UNWIND; /* loads libgcc_s: its calls are not the program's */
    backtrace(f, 4);
    ptt_self.guard &= ~PTT_GUARD_UNWIND;
    ptt_backtrace_depth = depth > PTT_MAX_FRAMES ? PTT_MAX_FRAMES : depth;
}
