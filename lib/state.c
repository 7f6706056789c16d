/* What every part of libptt shares, and depends on nothing else of it: the thread's recording
 * state, the attached pool, the real routines found behind the interposers. init.c (start-up)
 * sits above the recorder (buffer.c) and the modules' records (module.c), which sit above this. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libptt.h"

__thread struct ptt_thread ptt_self __attribute__((tls_model("initial-exec")));
int ptt_active;
int ptt_clock_tsc;
static _Atomic uint64_t no_masks[2]; /* before the pool is attached: nothing */
_Atomic uint64_t *ptt_masks = no_masks;
struct ptt_pool *ptt_pool;
int ptt_pid;
static char pool_name[64];
int ptt_attached;

void ptt_masks_off(void)
{
    ptt_masks = no_masks;
}

#define PTT_DEFINE_REAL(ret, name, params) ret(*ptt_real_##name) params;
PTT_REAL_FUNCS(PTT_DEFINE_REAL)
#undef PTT_DEFINE_REAL

void ptt_resolve(void)
{
#define PTT_RESOLVE(ret, name, params) \
    if (!ptt_real_##name)              \
        *(void **)&ptt_real_##name = dlsym(RTLD_NEXT, #name);
    PTT_REAL_FUNCS(PTT_RESOLVE)
#undef PTT_RESOLVE
    /* glibc 2.34 and later keep pthread_yield only as a compat symbol of an older version. */
    if (!ptt_real_pthread_yield)
        *(void **)&ptt_real_pthread_yield = dlvsym(RTLD_NEXT, "pthread_yield", "GLIBC_2.2.5");
    if (!ptt_real_pthread_yield)
        ptt_real_pthread_yield = ptt_real_sched_yield;
}

/* Where glibc keeps a thread's tid in its thread descriptor (what pthread_self() returns): the
 * kernel writes it there at clone (and glibc at fork), so reading it costs no system call. Taken
 * from the description glibc exports for debuggers (libthread_db), and trusted only once it read
 * the caller's tid right; -1: unknown, ptt_gettid asks the kernel. */
static long tid_offset = -1;

void ptt_tid_init(void)
{
    const uint32_t *f = dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"); /* bits, count, offset */
    if (!f || f[0] != 32 || f[1] != 1 || f[2] > 4096 - sizeof(int32_t))
        return;
    const char *self = (const char *)pthread_self();
    int32_t tid;
    __builtin_memcpy(&tid, self + f[2], sizeof tid);
    if (tid == (int32_t)syscall(SYS_gettid))
        tid_offset = f[2];
}

long ptt_tid_offset(void)
{
    return tid_offset;
}

int32_t ptt_gettid(void)
{
    if (__builtin_expect(tid_offset < 0, 0))
        return (int32_t)syscall(SYS_gettid);
    return __atomic_load_n((const int32_t *)((const char *)pthread_self() + tid_offset),
                           __ATOMIC_RELAXED);
}

void ptt_forget_pool(void)
{
    if (pool_name[0])
        shm_unlink(pool_name);
}

void ptt_keep_pool_name(const char *name)
{
    snprintf(pool_name, sizeof pool_name, "%s", name);
}
