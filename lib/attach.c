/* ptt trace -p's entry points into libptt, which it loaded into a running process with dlopen:
 * start recording (the pool attached, the modules' slots patched), stop (the slots and signal
 * handlers put back), release (the pool unmapped). docs/attach.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>

#include "libptt.h"

/* Stopped, the pool still mapped until the release: by ptt trace -p, not a preloaded libptt. */
static int stopped;

/* ptt trace -p calls these three in the running program, one thread of it running the call, the
 * others stopped (src/session/attach.c, docs/attach.md). Start: attach the pool env names
 * ("/NAME:SECRET", as PTT_SHM), record, patch the modules. out[0..2]: where ptt_self is from the
 * thread pointer, its size and where its nest count is, for ptt trace to check and clear each
 * thread's state at release. 0, or -1 (nothing changed), or -2: a ptt trace that was killed left
 * libptt attached here, or stopped and not released (ptt trace stops and releases that first).
 * Each also stores its result in memory (out[3], *res): the call returns through a signal frame,
 * which leaves nothing of its registers for ptt trace to read.
 * x86-64 only. Each of the three leaves errno as it was: the thread that runs it was stopped
 * anywhere, perhaps between a failed call of the program's and its look at errno. */
static int start(const char *env, int64_t *out);

PTT_EXPORT int ptt_attach_start(const char *env, int64_t *out)
{
    int e = errno, r = start(env, out);
    errno = e;
    out[3] = r;
    return r;
}

static int start(const char *env, int64_t *out)
{
    uintptr_t tp = 0;
#if defined(__x86_64__)
    __asm__("mov %%fs:0, %0" : "=r"(tp));
#else
    return -1;
#endif
    out[0] = (int64_t)((uintptr_t)&ptt_self - tp);
    out[1] = (int64_t)sizeof ptt_self;
    out[2] = (int64_t) __builtin_offsetof(struct ptt_thread, nest);
    /* Left by a ptt trace that was killed: attached, or stopped and not released yet (killed
     * within its detach); taken out first (ptt trace stops and releases it), unless its session
     * lives on: a second ptt trace, or the first still detaching. Its ptt trace lives unless
     * kill says ESRCH (EPERM: root's ptt trace, attached to another user's process). */
    if (ptt_pool && (ptt_attached || stopped) &&
        ((ptt_attached && !ptt_active) || atomic_load(&ptt_pool->abandoned) ||
         (kill(ptt_pool->daemon_pid, 0) != 0 && errno == ESRCH)))
        return -2;
    if (ptt_pool || ptt_active)
        return -1; /* preloaded, or attached already */
    ptt_resolve();
    if (!(ptt_pool = ptt_pool_attach(env)))
        return -1;
    ptt_attached = 1;
    ptt_start();
    if (ptt_got_patch()) { /* libptt cannot find itself: as it was (ptt trace unloads it) */
        ptt_active = 0;
        ptt_masks_off();
        ptt_attached = 0;
        munmap(ptt_pool, (size_t)ptt_pool->total_size);
        ptt_pool = 0;
        ptt_modules_forget();
        return -1;
    }
    return 0;
}

/* Stop: the slots put back, nothing recorded any more (a thread inside an interposer leaves it
 * without recording). The pool stays mapped until the release. */
static int stop(void);

PTT_EXPORT int ptt_attach_stop(int64_t *res)
{
    int r = stop();
    if (res)
        *res = r;
    return r;
}

static int stop(void)
{
    if (!ptt_attached) /* stopped already, not released (a ptt trace killed while detaching) */
        return stopped && ptt_pool ? 0 : -1;
    int e = errno;
    ptt_got_restore();
    ptt_signals_restore();
    ptt_masks_off();
    ptt_active = 0;
    ptt_attached = 0;
    stopped = 1;
    errno = e;
    return 0;
}

/* Release: the pool unmapped (ptt trace has drained it and cleared every thread's state). */
PTT_EXPORT int ptt_attach_release(int64_t *res)
{
    int r = -1;
    if (!ptt_attached && ptt_pool) {
        int e = errno;
        munmap(ptt_pool, (size_t)ptt_pool->total_size);
        ptt_pool = 0;
        stopped = 0;
        ptt_modules_forget();
        errno = e;
        r = 0;
    }
    if (res)
        *res = r;
    return r;
}
