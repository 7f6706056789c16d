/* ptt trace -p on x86-64: every thread of the process stopped with PTRACE_SEIZE and
 * PTRACE_INTERRUPT, one of them made to call dlopen(libptt) and libptt's ptt_attach_start, with
 * its registers (and vector state) saved before and put back after. The call returns into the C
 * library's rt_sigreturn with a signal frame of the thread's state below it, so that a thread
 * whose ptt trace was killed meanwhile goes on as it was; ptt trace stops it at that system
 * call's entry and puts its registers back itself (docs/attach.md). */
#define _GNU_SOURCE
#include "session/attach.h"

#include <dirent.h>
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/attach.h"
#include "util/util.h"

#define MAX_TIDS 4096
#define NO_RESULT INT64_MIN /* what libptt's entry points have not overwritten with theirs */

struct stopped {
    pid_t pid;
    int restorer_looked;
    uint64_t restorer; /* the C library's rt_sigreturn (call_in), 0 if not found */
    int n;
    pid_t tids[MAX_TIDS];
    int sig[MAX_TIDS]; /* a signal it was stopped with, delivered when it runs again */
    /* Where it was stopped, as it was then: a call made in the thread ends with the registers
     * put back and the system call it was in about to be made again (put_back). */
    struct ptt_stopped_thread at[MAX_TIDS];
};

/* The signal of a signal-delivery stop (0: a stop of ptrace's own, an interrupt or group stop). */
static int stop_signal(int status)
{
    return WIFSTOPPED(status) && (status >> 16) == 0 ? WSTOPSIG(status) : 0;
}

static __attribute__((format(printf, 3, 4))) int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A file of /proc opened for reading, or NULL when it is not there. Out of memory is not "not
 * there": it would be reported as what the file says is missing (no C library, no dlopen). */
static FILE *proc_open(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f && errno == ENOMEM)
        ptt_out_of_memory();
    return f;
}

/* /proc/PID/maps, opened for reading (NULL: see proc_open). */
static FILE *maps_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    return proc_open(path);
}

/* A line "Key:\tvalue" of /proc/PID/status, as a number (-1: none). */
static long status_field(pid_t pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = proc_open(path);
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* The lowest address where a file whose path ends with one of the names is mapped, and its path
 * (0: none). */
static uint64_t map_base(pid_t pid, const char *const *ends, char *path, size_t len)
{
    char line[4096 + 128];
    FILE *f = maps_of(pid);
    uint64_t best = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo;
        int off = 0;
        if (sscanf(line, "%llx-%*x %*s %*x %*s %*u %n", &lo, &off) != 1 || !off || line[off] != '/')
            continue;
        char *p = line + off;
        p[strcspn(p, "\n")] = 0;
        const char *base = strrchr(p, '/') + 1;
        for (const char *const *e = ends; *e; e++) {
            size_t el = strlen(*e), pl = strlen(base);
            int match = (*e)[el - 1] == '*' ? !strncmp(base, *e, el - 1) : !strcmp(base, *e);
            (void)pl;
            if (match && (!best || lo < best)) {
                best = lo;
                snprintf(path, len, "%s", p);
            }
        }
    }
    if (f)
        fclose(f);
    return best;
}

/* The value of a defined dynamic symbol of an ELF file (0: none), and its machine. */
static uint64_t elf_sym(const char *file, const char *name, int *machine)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char *m = ptt_must(malloc((size_t)st.st_size));
    ssize_t got = pread(fd, m, (size_t)st.st_size, 0);
    close(fd);
    uint64_t v = 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (got != st.st_size || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size) {
        free(m);
        return 0;
    }
    if (machine)
        *machine = eh->e_machine;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && !v; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
            str->sh_offset + str->sh_size > (uint64_t)st.st_size)
            break;
        const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
            if (sym[k].st_shndx != SHN_UNDEF && sym[k].st_value && sym[k].st_name < str->sh_size &&
                !strcmp(m + str->sh_offset + sym[k].st_name, name)) {
                v = sym[k].st_value;
                break;
            }
    }
    free(m);
    return v;
}

static int machine_of(pid_t pid)
{
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    ssize_t n = fd >= 0 ? pread(fd, &eh, sizeof eh, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n < (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        return -1;
    return eh.e_ident[EI_CLASS] == ELFCLASS64 ? eh.e_machine : 0;
}

static const char *const libc_names[] = {"libc.so.6", "libc-2.*", NULL};

int ptt_attach_check(pid_t pid, char *err, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    struct stat st;
    if (pid <= 0 || stat(path, &st))
        return fail(err, len, "no process %d", (int)pid);
    if (pid == getpid())
        return fail(err, len, "process %d is ptt trace itself", (int)pid);
#ifndef __x86_64__
    return fail(err, len, "attaching is supported on x86-64 only");
#endif
    if (getuid() != 0 && st.st_uid != getuid())
        return fail(err, len,
                    "process %d belongs to another user (uid %u): ptt trace -p attaches to your "
                    "own processes (any, as root)",
                    (int)pid, (unsigned)st.st_uid);
    long tracer = status_field(pid, "TracerPid");
    if (tracer > 0)
        return fail(err, len, "process %d is already traced (by process %ld)", (int)pid, tracer);
    int mach = machine_of(pid);
    if (mach < 0)
        return fail(err, len, "cannot read the program of process %d: %s", (int)pid,
                    strerror(errno ? errno : EACCES));
    if (mach != EM_X86_64)
        return fail(err, len,
                    "process %d is not an x86-64 program: attaching is supported on "
                    "x86-64 only",
                    (int)pid);
    char lc[PATH_MAX];
    if (!map_base(pid, libc_names, lc, sizeof lc))
        return fail(err, len,
                    "process %d has no shared C library (statically linked?): libptt cannot be "
                    "loaded into it; run it under ptt trace -- PROGRAM",
                    (int)pid);
    return 0;
}

static int list_tids(pid_t pid, pid_t *tids, int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d && errno == ENOMEM) /* not "no thread left" */
        ptt_out_of_memory();
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max)
        if (e->d_name[0] != '.')
            tids[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    return n;
}

static const char *why_refused(int e)
{
    if (e != EPERM)
        return strerror(e);
    FILE *f = proc_open("/proc/sys/kernel/yama/ptrace_scope");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 3)
        return "ptrace is disabled by Yama (kernel.yama.ptrace_scope = 3): no process can be "
               "attached to until the next boot; run the program under ptt trace -- PROGRAM";
    if (scope >= 1 && getuid() != 0)
        return "ptrace is forbidden by Yama (kernel.yama.ptrace_scope >= 1: run as root, or set "
               "it to 0)";
    return "ptrace is not permitted (another user's process, a setuid program, or no "
           "CAP_SYS_PTRACE here)";
}

/* Wait for a thread's stop (ptrace-stop of any kind); 0 once stopped, -1 if it is gone. */
static int wait_stop(pid_t tid, int *status)
{
    for (;;) {
        pid_t r = waitpid(tid, status, __WALL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || WIFEXITED(*status) || WIFSIGNALED(*status))
            return -1;
        if (WIFSTOPPED(*status))
            return 0;
    }
}

static void resume_all(struct stopped *s)
{
    for (int i = 0; i < s->n; i++)
        ptrace(PTRACE_DETACH, s->tids[i], 0, (void *)(intptr_t)s->sig[i]);
    s->n = 0;
}

/* Where stopped thread i is (s->at), read as it stopped. */
static void where(struct stopped *s, int i)
{
    struct user_regs_struct r;
    if (ptrace(PTRACE_GETREGS, s->tids[i], 0, &r))
        r.orig_rax = (uint64_t)-1;
    s->at[i] = (struct ptt_stopped_thread){.tid = s->tids[i],
                                           .rsp = r.rsp,
                                           .nr = r.orig_rax,
                                           .a0 = r.rdi,
                                           .a1 = r.rsi,
                                           .a2 = r.rdx,
                                           .fs_base = r.fs_base};
}

/* Seize and stop every thread, again until no thread appeared meanwhile. */
static int stop_all(struct stopped *s, pid_t pid, char *err, size_t len)
{
    s->pid = pid;
    s->n = 0;
    s->restorer_looked = 0;
    for (int added = 1; added;) {
        pid_t tids[MAX_TIDS];
        int n = list_tids(pid, tids, MAX_TIDS);
        added = 0;
        for (int i = 0; i < n; i++) {
            int k = 0;
            while (k < s->n && s->tids[k] != tids[i])
                k++;
            if (k < s->n || s->n == MAX_TIDS)
                continue;
            if (ptrace(PTRACE_SEIZE, tids[i], 0, 0)) {
                if (errno == ESRCH)
                    continue; /* it ended meanwhile */
                int e = errno;
                resume_all(s);
                return fail(err, len, "cannot attach to process %d: %s", (int)pid, why_refused(e));
            }
            int st;
            if (ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) || wait_stop(tids[i], &st)) {
                ptrace(PTRACE_DETACH, tids[i], 0, 0);
                continue;
            }
            s->sig[s->n] = stop_signal(st);
            s->tids[s->n] = tids[i];
            where(s, s->n++);
            added = 1;
        }
    }
    if (!s->n)
        return fail(err, len, "process %d has no thread left to attach to", (int)pid);
    return 0;
}

static int mem_io(pid_t pid, uint64_t addr, void *buf, size_t n, int write)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = write ? pwrite(fd, buf, n, (off_t)addr) : pread(fd, buf, n, (off_t)addr);
    close(fd);
    return r == (ssize_t)n ? 0 : -1;
}

struct saved {
    struct user_regs_struct regs;
    _Alignas(64) char xstate[16384];
    struct iovec xv;
    uint64_t sigmask;
    int have_mask; /* PTRACE_GETSIGMASK (Linux 3.11) gave it: a frame can be made */
};

static int save_regs(pid_t tid, struct saved *sv)
{
    sv->xv = (struct iovec){sv->xstate, sizeof sv->xstate};
    if (ptrace(PTRACE_GETREGS, tid, 0, &sv->regs))
        return -1;
    sv->have_mask = !ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof sv->sigmask, &sv->sigmask);
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &sv->xv)) {
        sv->xv.iov_len = sizeof(struct user_fpregs_struct);
        if (ptrace(PTRACE_GETFPREGS, tid, 0, sv->xstate))
            return -1;
        sv->xv.iov_base = NULL; /* only the legacy state: put back with SETFPREGS */
    }
    return 0;
}

static void restore_regs(pid_t tid, struct saved *sv)
{
    ptrace(PTRACE_SETREGS, tid, 0, &sv->regs);
    if (sv->xv.iov_base)
        ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &sv->xv);
    else
        ptrace(PTRACE_SETFPREGS, tid, 0, sv->xstate);
}

/* Let the other threads run (with the signals they were stopped with), or stop them again. */
static void others(struct stopped *s, pid_t tid, int run)
{
    for (int i = 0; i < s->n; i++) {
        int st;
        if (s->tids[i] == tid)
            continue;
        if (run) {
            ptrace(PTRACE_CONT, s->tids[i], 0, (void *)(intptr_t)s->sig[i]);
            s->sig[i] = 0;
        } else if (!ptrace(PTRACE_INTERRUPT, s->tids[i], 0, 0) && !wait_stop(s->tids[i], &st)) {
            s->sig[i] = stop_signal(st);
            where(s, i); /* it ran */
        } else {
            s->at[i].nr = (uint64_t)-1; /* ended meanwhile: nothing of it to follow */
        }
    }
}

/* What rt_sigreturn reads: the kernel's x86-64 signal frame (struct rt_sigframe). */
struct k_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
    uint64_t eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
};
struct k_sigframe {
    uint64_t pretcode; /* the call's return address: the C library's rt_sigreturn */
    uint64_t uc_flags, uc_link;
    uint64_t ss_sp; /* the alternate signal stack: ss_flags invalid, left as it is */
    int32_t ss_flags, ss_pad;
    uint64_t ss_size;
    struct k_sigcontext mc;
    uint64_t sigmask;
    uint8_t info[128];
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "the kernel's struct sigcontext");
_Static_assert(sizeof(struct k_sigframe) == 440, "the kernel's struct rt_sigframe");

enum { UC_FLAGS = 1 | 2 | 4 };    /* UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS */
enum { XSAVE_SW = 464 };          /* the software bytes of the FXSAVE area (struct _fpx_sw_bytes) */
enum { FP_MAGIC1 = 0x46505853u }; /* in them: the state is XSAVE's */
enum { FP_MAGIC2 = 0x46505845u }; /* after the state, where their xstate_size says */
/* AMX's tile state, which a thread has only with a permission (arch_prctl): left out */
#define XFEATURES_DYNAMIC ((1ull << 17) | (1ull << 18))
static const uint8_t restore_rt[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};

/* Where the bytes of restore_rt are in [lo, hi) of process pid's memory, or 0. */
static uint64_t scan_for(pid_t pid, uint64_t lo, uint64_t hi)
{
    static uint8_t b[65536];
    const size_t k = sizeof restore_rt;
    for (uint64_t at = lo; at + k <= hi; at += sizeof b - k + 1) {
        size_t n = hi - at < sizeof b ? (size_t)(hi - at) : sizeof b;
        if (mem_io(pid, at, b, n, 0))
            return 0;
        for (size_t i = 0; i + k <= n; i++)
            if (b[i] == restore_rt[0] && !memcmp(b + i, restore_rt, k))
                return at + i;
    }
    return 0;
}

/* The C library's signal return (glibc's __restore_rt: mov $15,%rax; syscall) in process pid:
 * the address of its first instruction, or 0. */
static uint64_t find_restorer(pid_t pid)
{
    char libc[PATH_MAX], line[4096 + 128];
    if (!map_base(pid, libc_names, libc, sizeof libc))
        return 0;
    FILE *f = maps_of(pid);
    uint64_t at = 0;
    while (f && !at && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char perm[8];
        int off = 0;
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "%llx-%llx %7s %*x %*s %*u %n", &lo, &hi, perm, &off) == 3 && off &&
            perm[2] == 'x' && !strcmp(line + off, libc))
            at = scan_for(pid, lo, hi);
    }
    if (f)
        fclose(f);
    return at;
}

/* The registers of a thread stopped in a system call (orig_rax), adjusted as the kernel would
 * for its restart after a signal without handler: rax its number again and rip on its
 * instruction, or for one to be continued from the thread's restart block, restart_syscall
 * (cont: that block intact) or EINTR. A call that completed keeps its result. */
static void restart(struct user_regs_struct *r, int cont)
{
    int64_t ax = (int64_t)r->rax;
    if ((int64_t)r->orig_rax < 0)
        return;
    if (ax == -512 || ax == -513 || ax == -514) { /* ERESTARTSYS, NOINTR, NOHAND */
        r->rax = r->orig_rax;
        r->rip -= 2;                 /* the syscall instruction */
    } else if (ax == -516 && cont) { /* ERESTART_RESTARTBLOCK */
        r->rax = SYS_restart_syscall;
        r->rip -= 2;
    } else if (ax == -516) {
        r->rax = (uint64_t)-EINTR;
    }
}

/* The thread's registers as rt_sigreturn is to give them back: as saved, a system call it was
 * stopped in restarted (restart), but one the kernel would have continued from its restart
 * block, which rt_sigreturn clears (a relative sleep, a poll with a timeout), returns EINTR. */
static void frame_regs(struct k_sigcontext *c, const struct user_regs_struct *saved)
{
    struct user_regs_struct r = *saved;
    restart(&r, 0);
    *c = (struct k_sigcontext){.r8 = r.r8,
                               .r9 = r.r9,
                               .r10 = r.r10,
                               .r11 = r.r11,
                               .r12 = r.r12,
                               .r13 = r.r13,
                               .r14 = r.r14,
                               .r15 = r.r15,
                               .rdi = r.rdi,
                               .rsi = r.rsi,
                               .rbp = r.rbp,
                               .rbx = r.rbx,
                               .rdx = r.rdx,
                               .rax = r.rax,
                               .rcx = r.rcx,
                               .rsp = r.rsp,
                               .rip = r.rip,
                               .eflags = r.eflags,
                               .cs = (uint16_t)r.cs,
                               .ss = (uint16_t)r.ss};
}

/* The size of the standard-format XSAVE area up to the last of features (CPUID leaf 0xD), or
 * 0 without XSAVE: what the kernel's signal frames hold, a thread's default features. */
static uint32_t xsave_size(uint64_t features)
{
    unsigned a, b, c, d;
    if (!(features & 3) || !__get_cpuid_count(0xd, 0, &a, &b, &c, &d))
        return 0;
    uint32_t size = 512 + 64; /* the legacy area and the header */
    for (unsigned i = 2; i < 63; i++)
        if (features >> i & 1 && __get_cpuid_count(0xd, i, &a, &b, &c, &d) && a + b > size)
            size = a + b;
    return size;
}

/* Below area, the signal frame the call returns through (its vector state first, 64-byte
 * aligned); *sp: the frame, where the call's return address is. 0, or -1 if it cannot be written
 * (the call then returns to address 0, as before such frames). */
static int put_frame(pid_t pid, const struct saved *sv, uint64_t restorer, uint64_t area,
                     uint64_t *sp)
{
    static _Alignas(64) char fp[sizeof sv->xstate + 64];
    size_t n = sv->xv.iov_len;
    if (n > sizeof sv->xstate || n < 512)
        return -1;
    memcpy(fp, sv->xstate, n);
    uint64_t xcr0 = 0; /* where ptrace's image has it; a signal frame has its sizes there */
    memcpy(&xcr0, fp + XSAVE_SW, 8);
    uint64_t feat = xcr0 & ~XFEATURES_DYNAMIC;
    uint32_t size = sv->xv.iov_base ? xsave_size(feat) : 0;
    memset(fp + XSAVE_SW, 0, 48);
    if (size && size <= n) { /* the kernel restores the XSAVE state of these features */
        struct {
            uint32_t magic1, extended_size;
            uint64_t xfeatures;
            uint32_t xstate_size, pad[7];
        } sw = {FP_MAGIC1, size + 4, feat, size, {0}};
        uint32_t m2 = FP_MAGIC2;
        memcpy(fp + XSAVE_SW, &sw, sizeof sw);
        memcpy(fp + size, &m2, 4);
        n = size + 4;
    } else {
        n = 512; /* FXSAVE's state only */
    }
    uint64_t fpat = (area - n) & ~(uint64_t)63;
    struct k_sigframe f = {
        .pretcode = restorer, .uc_flags = UC_FLAGS, .ss_flags = 3, .sigmask = sv->sigmask};
    frame_regs(&f.mc, &sv->regs);
    f.mc.fpstate = fpat;
    *sp = ((fpat - sizeof f) & ~(uint64_t)15) - 8; /* as after a call: rsp + 8 aligned on 16 */
    return mem_io(pid, fpat, fp, n, 1) || mem_io(pid, *sp, &f, sizeof f, 1) ? -1 : 0;
}

/* How a call ends: with a frame, the thread's entry into rt_sigreturn at the restorer with the
 * stack pointer just above the frame (not a handler's return); else its fault at address 0. */
struct ending {
    uint64_t restorer; /* 0: no frame */
    uint64_t sp;       /* the frame: the stack pointer at the entry is sp + 8 */
    const struct saved *sv;
};

/* At the end of a call through a frame, the thread stopped at the entry of its rt_sigreturn:
 * its registers put back there, that system call not made (orig_rax -1), and the one it was
 * stopped in restarted as the kernel would have (restart): the thread goes on from that state
 * whenever it runs, ptt trace alive or not. The vector state first: a thread let go between the
 * two (ptt trace killed) returns through the frame, which has it too. */
static int put_back(pid_t tid, const struct saved *sv)
{
    struct user_regs_struct r = sv->regs;
    restart(&r, 1);
    r.orig_rax = (uint64_t)-1;
    struct iovec xv = sv->xv;
    if (xv.iov_base ? ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &xv)
                    : ptrace(PTRACE_SETFPREGS, tid, 0, sv->xstate))
        return -1;
    return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -1 : 0;
}

/* Whether the thread's stop is the end of the call: 1 (with a frame, its registers put back
 * already); 0 it is not (ptrace's own stops are passed over, the program's signals delivered);
 * -1 the call failed. */
static int call_done(pid_t tid, int status, const struct ending *e)
{
    struct user_regs_struct r;
    if (WIFEXITED(status) || WIFSIGNALED(status) || ptrace(PTRACE_GETREGS, tid, 0, &r))
        return -1;
    int go = e->restorer ? PTRACE_SYSCALL : PTRACE_CONT;
    if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)) { /* a system call */
        if (e->restorer && r.orig_rax == SYS_rt_sigreturn &&
            r.rip == e->restorer + sizeof restore_rt && r.rsp == e->sp + 8)
            return put_back(tid, e->sv) ? -1 : 1;
        return ptrace(go, tid, 0, 0) ? -1 : 0;
    }
    int sig = stop_signal(status);
    if (sig == SIGSEGV && r.rip == 0 && !e->restorer)
        return 1;
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
        return -1; /* a fault in the call: not delivered (the registers are put back) */
    return ptrace(go, tid, 0, (void *)(intptr_t)sig) ? -1 : 0;
}

/* Wait for the call's end, woken by SIGCHLD at each of the thread's stops (a call through a
 * frame stops at each of its system calls). After a second, the other threads run too: one of
 * them may hold a lock the call needs. (ptt trace -p has no child of its own whose SIGCHLD this
 * could take.) */
static int wait_call(struct stopped *s, pid_t tid, const struct ending *e, int *status)
{
    struct timespec t0, now, d = {0, 1000000};
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int others_run = 0, done = 0, rc = 0;
    while (!done) {
        pid_t r = waitpid(tid, status, __WALL | WNOHANG);
        if (r == tid && (done = call_done(tid, *status, e)) < 0)
            break;
        if (r < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!others_run && now.tv_sec - t0.tv_sec >= 1) {
            others(s, tid, 1);
            others_run = 1;
        }
        if (!done && r != tid)
            sigtimedwait(&chld, NULL, &d);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (others_run) /* stopped again, as they were */
        others(s, tid, 0);
    return rc || done <= 0 ? -1 : 0;
}

/* Make thread tid call fn(a[0], a[1]) with data copied below its stack (a[i] is an offset into
 * the data where bit i of rel is set); the data (results) are read back. The call returns
 * through a signal frame (put_frame), which leaves its rax to nobody: its results are in the
 * data. With want_rax (or where no frame can be made) it returns to address 0 instead, a ptt
 * trace killed meanwhile leaving the thread to fault there; *ret: the call's rax then, else 0. */
static int call_in(struct stopped *s, pid_t tid, uint64_t fn, const uint64_t a[2], unsigned rel,
                   void *data, size_t n, int want_rax, int64_t *ret, char *err, size_t len)
{
    static struct saved sv;
    if (save_regs(tid, &sv))
        return fail(err, len, "cannot read the registers of thread %d: %s", (int)tid,
                    strerror(errno));
    struct user_regs_struct r = sv.regs;
    uint64_t area = ((sv.regs.rsp - 1024 - n) & ~(uint64_t)15); /* below the red zone */
    uint64_t sp = area - 16, zero = 0;                          /* the return address: 0 */
    if (n && mem_io(s->pid, area, data, n, 1))
        return fail(err, len, "cannot write into process %d: %s", (int)s->pid, strerror(errno));
    if (!s->restorer_looked) {
        s->restorer = find_restorer(s->pid);
        s->restorer_looked = 1;
    }
    /* A thread stopped with a signal ends the call at a signal's stop, where the signal can be
     * given back to it when it is let go (resume_all): not at a system call's. One under a
     * seccomp filter too: the filter would judge the system call skipped at the end (put_back),
     * number -1, which it may refuse, kill or trap. */
    int k = 0;
    while (k < s->n && s->tids[k] != tid)
        k++;
    int frame = !want_rax && s->restorer && sv.have_mask && (k == s->n || !s->sig[k]) &&
                status_field(tid, "Seccomp") != 2;
    struct ending e = {0, 0, &sv};
    if (frame && !put_frame(s->pid, &sv, s->restorer, area, &sp) &&
        !ptrace(PTRACE_SETOPTIONS, tid, 0, PTRACE_O_TRACESYSGOOD))
        e.restorer = s->restorer, e.sp = sp;
    else if (sp = area - 16, mem_io(s->pid, sp + 8, &zero, 8, 1))
        return fail(err, len, "cannot write into process %d: %s", (int)s->pid, strerror(errno));
    else
        sp += 8;
    r.rsp = sp; /* as after a call: rsp + 8 aligned on 16 */
    r.rip = fn;
    r.rdi = a[0] + (rel & 1 ? area : 0);
    r.rsi = a[1] + (rel & 2 ? area : 0);
    r.rax = 0;
    r.orig_rax = (uint64_t)-1; /* no system call to restart under our call */
    int st = 0;
    if (ptrace(PTRACE_SETREGS, tid, 0, &r) ||
        ptrace(e.restorer ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, 0)) {
        restore_regs(tid, &sv);
        return fail(err, len, "the call in process %d failed: %s", (int)s->pid, strerror(errno));
    }
    int ok = !wait_call(s, tid, &e, &st);
    struct user_regs_struct after = {0};
    ptrace(PTRACE_GETREGS, tid, 0, &after);
    if (!ok || !e.restorer) /* through a frame, put back at its end (put_back) */
        restore_regs(tid, &sv);
    if (ok && n)
        mem_io(s->pid, area, data, n, 0);
    if (!ok)
        return fail(err, len, "the call in process %d stopped at 0x%llx (signal %d)", (int)s->pid,
                    (unsigned long long)after.rip, WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
    *ret = want_rax ? (int64_t)after.rax : 0;
    return 0;
}

/* The thread to run calls in: the main one if it is there. */
static pid_t caller(const struct stopped *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->tids[i] == s->pid)
            return s->pid;
    return s->tids[0];
}

/* Address of symbol name of libptt in the process (libptt mapped at a->lib_base). */
static uint64_t lib_sym(const struct ptt_attach *a, const char *name)
{
    uint64_t v = elf_sym(a->lib, name, NULL);
    return v ? a->lib_base + v : 0;
}

static const char *const ld_names[] = {"ld-linux-x86-64.so.2", "ld-2.*", NULL};

/* Whether the mapping of process pid that starts at addr is of file st (its device and inode,
 * as /proc/PID/maps gives them). */
static int maps_file_at(pid_t pid, uint64_t addr, const struct stat *st)
{
    char line[4096 + 128];
    FILE *f = maps_of(pid);
    int same = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo, ino;
        unsigned maj, mnr;
        if (sscanf(line, "%llx-%*x %*s %*x %x:%x %llu", &lo, &maj, &mnr, &ino) == 4 && lo == addr) {
            same = maj == major(st->st_dev) && mnr == minor(st->st_dev) && ino == st->st_ino;
            break;
        }
    }
    if (f)
        fclose(f);
    return same;
}

/* dlopen's handle of the library loaded at bias in process pid (glibc's: its struct link_map,
 * in the dynamic linker's list, _r_debug.r_map), or 0. By its bias, not its name (a preloaded
 * libptt has the name it was preloaded by), and the file mapped there must be path's: another
 * libptt.so left loaded does not answer for a dlopen that failed. */
static uint64_t loaded_handle(pid_t pid, uint64_t bias, const char *path)
{
    char ld[PATH_MAX];
    struct stat want;
    if (stat(path, &want) || !maps_file_at(pid, bias, &want))
        return 0;
    uint64_t base = map_base(pid, ld_names, ld, sizeof ld);
    uint64_t rd = base ? elf_sym(ld, "_r_debug", NULL) : 0, lm = 0;
    if (!rd || mem_io(pid, base + rd + 8, &lm, sizeof lm, 0)) /* r_map, after r_version */
        return 0;
    for (int i = 0; lm && i < 65536; i++) {
        uint64_t l[4]; /* l_addr, l_name, l_ld, l_next */
        if (mem_io(pid, lm, l, sizeof l, 0))
            return 0;
        if (l[0] == bias)
            return lm;
        lm = l[3];
    }
    return 0;
}

static int load_lib(struct ptt_attach *a, struct stopped *s, char *err, size_t len)
{
    char libc[PATH_MAX];
    uint64_t base = map_base(a->pid, libc_names, libc, sizeof libc);
    uint64_t dl = base ? elf_sym(libc, "dlopen", NULL) : 0;
    if (!dl && base)
        dl = elf_sym(libc, "__libc_dlopen_mode", NULL);
    if (!dl)
        return fail(err, len, "cannot find dlopen in %s", base ? libc : "the process");
    int64_t h;
    uint64_t args[2] = {0, 2 /* RTLD_NOW */};
    if (call_in(s, caller(s), base + dl, args, 1, a->lib, strlen(a->lib) + 1, 0, &h, err, len))
        return -1;
    const char *slash = strrchr(a->lib, '/');
    const char *names[] = {slash ? slash + 1 : a->lib, NULL};
    char mapped[PATH_MAX];
    a->lib_base = map_base(a->pid, names, mapped, sizeof mapped);
    if (!a->lib_base || !(h = (int64_t)loaded_handle(a->pid, a->lib_base, a->lib))) {
        char why[256] = "";
        uint64_t de = elf_sym(libc, "dlerror", NULL), none[2] = {0, 0};
        int64_t msg = 0;
        if (de && !call_in(s, caller(s), base + de, none, 0, NULL, 0, 1, &msg, err, len) && msg)
            mem_io(a->pid, (uint64_t)msg, why, sizeof why - 1, 0);
        return fail(err, len, "process %d could not load %s%s%s", (int)a->pid, a->lib,
                    why[0] ? ": " : "", why);
    }
    a->handle = (uint64_t)h;
    a->libc_base = base;
    snprintf(a->libc, sizeof a->libc, "%s", libc);
    return 0;
}

/* libptt's entry points in the process, and its start there. */
static int start_lib(struct ptt_attach *a, struct stopped *s, const char *env, char *err,
                     size_t len)
{
    uint64_t start = lib_sym(a, "ptt_attach_start");
    a->stop_fn = lib_sym(a, "ptt_attach_stop");
    a->release_fn = lib_sym(a, "ptt_attach_release");
    if (!start || !a->stop_fn || !a->release_fn)
        return fail(err, len, "%s has no ptt_attach_start (another version of libptt?)", a->lib);
    struct {
        int64_t out[4]; /* libptt's state's place in the TLS (3), its result */
        char env[256];
    } d = {{0, 0, 0, NO_RESULT}, ""};
    snprintf(d.env, sizeof d.env, "%s", env);
    uint64_t args[2] = {offsetof(__typeof__(d), env), 0};
    int64_t r;
    if (call_in(s, caller(s), start, args, 3, &d, sizeof d, 0, &r, err, len))
        return -1;
    memcpy(a->tls, d.out, sizeof a->tls);
    if ((r = d.out[3]) == NO_RESULT)
        return fail(err, len, "%s gave no result (another version of libptt?)", a->lib);
    if ((int)r == -2)
        return -2;
    if ((int)r != 0)
        return fail(err, len, "libptt could not start in process %d (traced by ptt trace already?)",
                    (int)a->pid);
    return 0;
}

/* The end of the mapping of process pid that holds address a (0: none). */
static uint64_t mapping_end(pid_t pid, uint64_t a)
{
    char line[4096 + 128];
    FILE *f = maps_of(pid);
    uint64_t end = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && a >= lo && a < hi) {
            end = hi;
            break;
        }
    }
    if (f)
        fclose(f);
    return end;
}

/* What libptt is told of the stopped threads inside a futex system call (the calls in progress
 * it may follow, or has followed), at most max. */
static int64_t describe(const struct stopped *s, struct ptt_stopped_thread *t, int64_t max)
{
    int64_t n = 0;
    for (int i = 0; i < s->n && n < max; i++) {
        if (s->at[i].nr != SYS_futex)
            continue;
        t[n] = s->at[i];
        t[n].stack_hi = mapping_end(s->pid, t[n].rsp);
        n++;
    }
    return n;
}

/* Whether a thread of the process runs with a shadow stack (x86 CET, Linux 6.6 and later): a
 * return address replaced on the stack would fault there. */
static int shadow_stack(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = proc_open(path);
    int on = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "x86_Thread_features:", 20) && strstr(line, "shstk"))
            on = 1;
    if (f)
        fclose(f);
    return on;
}

/* The calls the threads are blocked in, followed by libptt (lib/inflight.c): its return is
 * recorded. Nothing is lost when it cannot: those calls are not seen, as before. */
static void follow_inflight(struct ptt_attach *a, struct stopped *s)
{
    static struct ptt_stopped_thread t[256];
    if (shadow_stack(a->pid))
        return;
    uint64_t fn = lib_sym(a, "ptt_attach_inflight");
    int64_t n = describe(s, t, 256), r;
    uint64_t args[2] = {0, (uint64_t)n};
    char err[256];
    if (fn && n)
        call_in(s, caller(s), fn, args, 1, t, (size_t)n * sizeof *t, 0, &r, err, sizeof err);
}

/* Before the stop: the calls followed and not returned get their return addresses back. */
static void unfollow_inflight(struct ptt_attach *a, struct stopped *s)
{
    static struct ptt_stopped_thread t[256];
    uint64_t fn = lib_sym(a, "ptt_attach_inflight_stop");
    int64_t n = describe(s, t, 256), r;
    uint64_t args[2] = {0, (uint64_t)n};
    char err[256];
    if (fn && n) /* libptt keeps the entries of the threads not told of */
        call_in(s, caller(s), fn, args, 1, t, (size_t)n * sizeof *t, 0, &r, err, sizeof err);
}

/* libptt loaded but not started: unloaded again, the process as it was. */
static void unload(struct ptt_attach *a, struct stopped *s)
{
    uint64_t dc = elf_sym(a->libc, "dlclose", NULL), args[2] = {a->handle, 0};
    int64_t r;
    char err[256];
    if (dc)
        call_in(s, caller(s), a->libc_base + dc, args, 0, NULL, 0, 0, &r, err, sizeof err);
}

int ptt_attach(struct ptt_attach *a, pid_t pid, const char *lib, const char *env,
               void (*started)(void *arg), void *arg, char *err, size_t len)
{
    static struct stopped s;
    memset(a, 0, sizeof *a);
    a->pid = pid;
    if (!realpath(lib, a->lib))
        return fail(err, len, "cannot find %s: %s", lib, strerror(errno));
    if (stop_all(&s, pid, err, len))
        return -1;
    int r = load_lib(a, &s, err, len);
    if (!r && (r = start_lib(a, &s, env, err, len)) == -2) {
        /* A killed ptt trace's libptt still attached: taken out first, then started afresh. */
        resume_all(&s);
        if (ptt_attach_stop(a, err, len) || ptt_attach_release(a, err, len) ||
            stop_all(&s, pid, err, len))
            return -1;
        r = start_lib(a, &s, env, err, len);
    }
    if (r) {
        unload(a, &s);
    } else {
        if (started)
            started(arg);
        follow_inflight(a, &s);
    }
    resume_all(&s);
    return r ? -1 : 0;
}

/* Whether libptt is still where it was loaded: a process that executed another program since
 * has nothing of it left (and its addresses mean nothing there). */
static int still_loaded(const struct ptt_attach *a)
{
    const char *slash = strrchr(a->lib, '/');
    const char *names[] = {slash ? slash + 1 : a->lib, NULL};
    char mapped[PATH_MAX];
    return map_base(a->pid, names, mapped, sizeof mapped) == a->lib_base;
}

/* Calls libptt's routine fn (no argument) in the stopped process, then resumes it; a result
 * other than 0 fails with "libptt in process PID <what>". */
static int call_resume(const struct ptt_attach *a, struct stopped *s, uint64_t fn, const char *what,
                       char *err, size_t len)
{
    uint64_t args[2] = {0, 0};
    int64_t r = NO_RESULT, unused;
    int rc = call_in(s, caller(s), fn, args, 1, &r, sizeof r, 0, &unused, err, len);
    resume_all(s);
    if (!rc && r)
        rc = fail(err, len, "libptt in process %d %s", (int)a->pid, what);
    return rc;
}

int ptt_attach_stop(struct ptt_attach *a, char *err, size_t len)
{
    static struct stopped s;
    if (stop_all(&s, a->pid, err, len))
        return -1;
    if (!still_loaded(a)) {
        resume_all(&s);
        a->exec = 1;
        return 0;
    }
    unfollow_inflight(a, &s);
    return call_resume(a, &s, a->stop_fn, "was not recording", err, len);
}

/* Whether a thread is inside libptt now: in an event (its nest count), or its code. */
static int busy(const struct ptt_attach *a, pid_t pid, pid_t tid, uint64_t lib_lo, uint64_t lib_hi)
{
    struct user_regs_struct r;
    uint32_t nest = 0;
    if (ptrace(PTRACE_GETREGS, tid, 0, &r))
        return 0;
    if (r.rip >= lib_lo && r.rip < lib_hi)
        return 1;
    mem_io(pid, r.fs_base + (uint64_t)a->tls[0] + (uint64_t)a->tls[2], &nest, sizeof nest, 0);
    return nest != 0;
}

/* Clear a thread's recording state: it starts afresh at the next attach. */
static void clear(const struct ptt_attach *a, pid_t pid, pid_t tid)
{
    struct user_regs_struct r;
    char zero[1024] = {0};
    if (!ptrace(PTRACE_GETREGS, tid, 0, &r) && a->tls[1] > 0 && a->tls[1] <= (int64_t)sizeof zero)
        mem_io(pid, r.fs_base + (uint64_t)a->tls[0], zero, (size_t)a->tls[1], 1);
}

/* The end of libptt's mapping that starts at its base. */
static uint64_t lib_end(const struct ptt_attach *a)
{
    char line[4096 + 128];
    FILE *f = maps_of(a->pid);
    uint64_t end = a->lib_base;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && strstr(line, a->lib) && hi > end)
            end = hi;
    }
    if (f)
        fclose(f);
    return end;
}

int ptt_attach_release(struct ptt_attach *a, char *err, size_t len)
{
    static struct stopped s;
    if (a->exec)
        return 0; /* nothing of libptt left to release */
    uint64_t hi = lib_end(a);
    for (int tries = 0;; tries++) {
        if (stop_all(&s, a->pid, err, len))
            return -1;
        int any = 0;
        for (int i = 0; i < s.n && !any; i++)
            any = busy(a, a->pid, s.tids[i], a->lib_base, hi);
        if (!any)
            break;
        resume_all(&s);
        if (tries == 100)
            return fail(err, len,
                        "a thread of process %d stays inside libptt: its pool stays "
                        "mapped",
                        (int)a->pid);
        struct timespec d = {0, 10000000};
        nanosleep(&d, NULL);
    }
    for (int i = 0; i < s.n; i++)
        clear(a, a->pid, s.tids[i]);
    return call_resume(a, &s, a->release_fn, "had no pool to release", err, len);
}
