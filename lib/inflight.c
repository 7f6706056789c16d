/* ptt trace -p: the calls a thread was already blocked in at the attach (pthread_cond_wait,
 * pthread_join, pthread_mutex_lock, sem_wait and their timed forms). They entered the C library
 * directly: libptt finds, on the blocked thread's stack, the return address of the program's call
 * to the routine and puts in its place the address of a stub of its own, one per entry of its
 * table; the routine's return then comes through the stub, which records the call's OUT event
 * and jumps back. At the attach, CALL_BEFORE_ATTACH and the call's IN event are written into the
 * thread's stream. At the detach, a slot still waiting gets its return address back. Each stub
 * has a frame description for an unwinder (a thread cancelled in its call). docs/attach.md.
 * x86-64 only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/attach.h"
#include "libptt.h"

enum kind { K_COND, K_JOIN, K_MUTEX, K_SEM };

static const struct routine {
    const char *name;
    enum kind kind;
    uint16_t in, out;
    uint8_t nin, nout;
} routines[] = {
#define CALL(n) PTT_EV_##n##_IN, PTT_EV_##n##_OUT, PTT_NARGS_##n##_IN, PTT_NARGS_##n##_OUT
    {"pthread_cond_wait", K_COND, CALL(COND_WAIT)},
    {"pthread_cond_timedwait", K_COND, CALL(COND_TIMEDWAIT)},
    {"pthread_cond_clockwait", K_COND, CALL(COND_CLOCKWAIT)},
    {"pthread_join", K_JOIN, CALL(THREAD_JOIN)},
    {"pthread_timedjoin_np", K_JOIN, CALL(THREAD_TIMEDJOIN_NP)},
    {"pthread_mutex_lock", K_MUTEX, CALL(MUTEX_LOCK)},
    {"sem_wait", K_SEM, CALL(SEM_WAIT)},
    {"sem_timedwait", K_SEM, CALL(SEM_TIMEDWAIT)},
    {"sem_clockwait", K_SEM, CALL(SEM_CLOCKWAIT)},
#undef CALL
};
#define NROUTINES (sizeof routines / sizeof routines[0])

/* A return address replaced: the slot on the thread's stack, what it held. */
struct entry {
    uintptr_t *slot;
    uintptr_t orig;
    uint64_t object, lock; /* the mutex of a condvar wait, 0 if not known */
    const struct routine *r;
    int64_t tid;
    _Atomic int live;
};
#define PTT_INFLIGHT 256
static struct entry table[PTT_INFLIGHT];

/* One stub per entry (entry i at ptt_inflight_stubs + 16 i + 1, after a byte an unwinder looking
 * up its return address - 1 finds in its frame description), entered by the routine's ret (rsp:
 * the slot + 8; rax and rdx: its result): the entry's number in r11, to the common part, which
 * gives the C function the number, the result and that rsp, and jumps where it says. The
 * caller-saved registers but rax and rdx are the routine's to clobber anyway. */
void ptt_inflight_stubs(void);
uintptr_t ptt_inflight_back(unsigned i, uint64_t ret, uintptr_t sp);
__asm__(".text\n"
        ".balign 16\n"
        ".globl ptt_inflight_stubs\n"
        ".hidden ptt_inflight_stubs\n"
        "ptt_inflight_stubs:\n"
        ".set ptt_stub_i, 0\n"
        ".rept 256\n"
        "    nop\n"
        "    movl $ptt_stub_i, %r11d\n"
        "    jmp ptt_inflight_common\n"
        "    .balign 16\n"
        "    .set ptt_stub_i, ptt_stub_i + 1\n"
        ".endr\n"
        "ptt_inflight_common:\n"
        "    push %rax\n"
        "    push %rdx\n"
        "    push %rbx\n"
        "    mov %r11d, %edi\n"
        "    mov %rax, %rsi\n"
        "    lea 24(%rsp), %rdx\n"
        "    mov %rsp, %rbx\n"
        "    and $-16, %rsp\n"
        "    call ptt_inflight_back\n"
        "    mov %rax, %r11\n"
        "    mov %rbx, %rsp\n"
        "    pop %rbx\n"
        "    pop %rdx\n"
        "    pop %rax\n"
        "    jmp *%r11\n");

static uintptr_t stub(unsigned i)
{
    return (uintptr_t)ptt_inflight_stubs + 16 * i + 1;
}

/* The frame description of each stub, for an unwinder (a thread cancelled in its call): the
 * caller's stack pointer is rsp, its return address the one replaced (a constant). Registered
 * with the C++ runtime's unwinder (libgcc's __register_frame), when the process has one. */
static unsigned char fde[PTT_INFLIGHT][80] __attribute__((aligned(8)));
static void (*reg_frame)(void *), (*dereg_frame)(void *);
static unsigned char registered[PTT_INFLIGHT];

static unsigned char *put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

static unsigned char *put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

/* A CIE ("zR", absolute pointers, CFA = rsp), then the FDE of stub i, then the end. */
static void make_fde(unsigned i, uintptr_t orig)
{
    static const unsigned char cie[] = {
        0,    0,    0,   0, /* its id */
        1,    'z',  'R', 0, /* version, augmentation */
        1,    0x78, 16,     /* code alignment 1, data alignment -8, return address: column 16 */
        1,    0x00,         /* augmentation data: pointers are absolute */
        0x0c, 7,    0,      /* DW_CFA_def_cfa rsp, 0 */
        0,    0,    0,   0, /* DW_CFA_nop to a multiple of 8 */
    };
    unsigned char *p = fde[i], *f;
    p = put32(p, sizeof cie);
    memcpy(p, cie, sizeof cie);
    p += sizeof cie;
    f = p;
    p = put32(p, 40);                     /* the FDE's length, after this word */
    p = put32(p, (uint32_t)(p - fde[i])); /* back to the CIE */
    p = put64(p, stub(i) - 1);            /* the code it covers */
    p = put64(p, 16);
    *p++ = 0;    /* no augmentation data */
    *p++ = 0x16; /* DW_CFA_val_expression */
    *p++ = 16;   /* the return address */
    *p++ = 9;    /* is DW_OP_const8u orig */
    *p++ = 0x0e;
    p = put64(p, orig);
    while ((p - f) % 8 != 4)
        *p++ = 0; /* DW_CFA_nop */
    put32(p, 0);  /* the end */
}

static void describe_stub(unsigned i, uintptr_t orig)
{
    if (!reg_frame) {
        reg_frame = (void (*)(void *))(uintptr_t)dlsym(RTLD_DEFAULT, "__register_frame");
        dereg_frame = (void (*)(void *))(uintptr_t)dlsym(RTLD_DEFAULT, "__deregister_frame");
        if (!reg_frame || !dereg_frame)
            reg_frame = dereg_frame = 0;
    }
    if (registered[i] && dereg_frame)
        dereg_frame(fde[i]);
    registered[i] = 0;
    if (!reg_frame)
        return;
    make_fde(i, orig);
    reg_frame(fde[i]);
    registered[i] = 1;
}

/* Write an event of the table for thread t, if its class and kind are recorded. */
static void put(struct ptt_thread *t, uint16_t id, int state, unsigned n, const uint64_t *a)
{
    if ((atomic_load_explicit(&ptt_masks[state], memory_order_relaxed) >> PTT_CLASS_OF(id)) & 1)
        ptt_write(t, id, n, a);
}

uintptr_t ptt_inflight_back(unsigned i, uint64_t ret, uintptr_t sp)
{
    if (i >= PTT_INFLIGHT)
        __builtin_trap();
    struct entry *e = &table[i];
    if (!atomic_load(&e->live) || (uintptr_t)e->slot != sp - 8)
        __builtin_trap(); /* cannot be: the slot was this entry's */
    uintptr_t orig = e->orig;
    const struct routine *r = e->r;
    uint64_t obj = e->object, lock = e->lock, a[3] = {(uint64_t)(int64_t)(int)ret, 0, 0};
    atomic_store(&e->live, 0);
    if (!ptt_on())
        return orig;
    int err = errno, ok = (int)ret == 0 || (int)ret == EOWNERDEAD;
    if (r->kind == K_COND && ((int)ret == 0 || (int)ret == ETIMEDOUT)) {
        uint64_t w[3] = {obj, lock, a[0]};
        put(&ptt_self, PTT_EV_COND_WOKEN, PTT_STATE_COND_WOKEN, 3, w);
    } else if (r->kind == K_MUTEX && ok) {
        put(&ptt_self, PTT_EV_MUTEX_ACQUIRED, PTT_STATE_MUTEX_ACQUIRED, 1, &obj);
    } else if (r->kind == K_SEM) { /* ret, errno, the value after */
        int v = 0;
        if ((int)ret == 0)
            put(&ptt_self, PTT_EV_SEM_ACQUIRED, PTT_STATE_SEM_ACQUIRED, 1, &obj);
        a[1] = (int)ret == -1 ? (uint64_t)err : 0;
        REAL(sem_getvalue)((sem_t *)obj, &v);
        a[2] = PTT_I(v);
    }
    put(&ptt_self, r->out, 0, r->nout, a);
    errno = err;
    return orig;
}

/* Read n bytes at a, which may not be mapped: 0, or -1. */
static int peek(uintptr_t a, void *buf, size_t n)
{
    struct iovec l = {buf, n}, r = {(void *)a, n};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The mutex of a condvar wait: glibc (2.25 and later) keeps, in the waiter's frame, a cleanup
 * buffer for a cancellation (wseq, cond, mutex, private), below the return address. 0: none. */
static uint64_t mutex_of(const struct ptt_stopped_thread *s, uintptr_t cond, const uintptr_t *slot)
{
    for (const uintptr_t *w = (const uintptr_t *)(s->rsp & ~(uintptr_t)7); w + 3 <= slot; w++) {
        uint32_t private = (uint32_t)w[2];
        int m[5]; /* __lock, __count, __owner, __nusers, __kind */
        if (w[0] != cond || !w[1] || w[1] % 8 || w[1] == cond || (private && private != 128) ||
            peek(w[1], m, sizeof m))
            continue;
        /* a mutex this thread let go of: not its owner, of a kind glibc knows */
        return m[2] != (int)s->tid && !(m[4] & ~0x3f3) ? w[1] : 0;
    }
    return 0;
}

/* The object the thread waits for, from the futex it sleeps on (0: not what it should be). */
static uint64_t object_of(const struct routine *r, const struct ptt_stopped_thread *s)
{
    uintptr_t f = (uintptr_t)s->a0;
    unsigned op = (unsigned)s->a1 & 127;
    int v;
    if ((op != 0 && op != 9) || f % 4 || peek(f, &v, sizeof v)) /* FUTEX_WAIT(_BITSET) */
        return 0;
    if (r->kind == K_COND) {
        /* glibc 2.25 and later wait on __g_signals[g], at 40 or 44 in the condvar (8-aligned);
         * a waiter is counted in __wrefs (at 36, from bit 3). */
        uintptr_t c = f % 8 ? f - 44 : f - 40;
        unsigned wrefs;
        return !peek(c + 36, &wrefs, sizeof wrefs) && wrefs >> 3 ? c : 0;
    }
    if (r->kind == K_MUTEX)
        return f % 8 == 0 && v == (int)s->a2 ? f : 0;
    if (r->kind == K_SEM) /* glibc waits on the value (the low half of the 64-bit word), at 0 */
        return f % 8 == 0 && v == 0 && s->a2 == 0 ? f : 0;
    /* a join sleeps on the joined thread's tid in its descriptor, which points at itself */
    long off = ptt_tid_offset();
    uintptr_t pd = f - (uintptr_t)off, self[3];
    if (off <= 0 || v <= 0 || v != (int)s->a2 || peek(pd, self, sizeof self))
        return 0;
    return self[0] == pd && self[2] == pd ? pd : 0;
}

/* The innermost return address on the stack into a patched module's call of an interposed
 * routine: its slot, and the routine (NULL: none, or another routine). *inside: a return
 * address into libptt came first: the call went through its interposer (entered while attached
 * before), which records the return itself. */
static uintptr_t *find_call(const struct ptt_stopped_thread *s, const struct routine **r,
                            int *inside)
{
    uintptr_t lo = (uintptr_t)s->rsp & ~(uintptr_t)7, hi = (uintptr_t)s->stack_hi;
    if (hi > lo + 16384)
        hi = lo + 16384;
    *inside = 0;
    for (uintptr_t *w = (uintptr_t *)lo; (uintptr_t)(w + 1) <= hi; w++) {
        if (ptt_got_ours(*w))
            *inside = 1;
        const char *name = ptt_got_callee(*w);
        if (!name)
            continue;
        for (unsigned i = 0; i < NROUTINES; i++)
            if (!strcmp(routines[i].name, name)) {
                *r = &routines[i];
                return w;
            }
        return NULL; /* blocked in another routine: not followed */
    }
    return NULL;
}

static struct entry *free_entry(uintptr_t *slot)
{
    struct entry *e = NULL;
    for (unsigned i = 0; i < PTT_INFLIGHT; i++) {
        if (atomic_load(&table[i].live) && table[i].slot == slot)
            return &table[i]; /* a stale one (its thread is gone) */
        if (!e && !atomic_load(&table[i].live))
            e = &table[i];
    }
    return e;
}

/* CALL_BEFORE_ATTACH and the call's IN event, in the stopped thread's stream (its state: its
 * thread pointer plus ours), as of now. */
static int record_in(const struct ptt_stopped_thread *s, const struct routine *r, uint64_t obj,
                     uint64_t lock, uintptr_t site, uint64_t owner)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    struct ptt_thread *t = (struct ptt_thread *)(s->fs_base + ((uintptr_t)&ptt_self - tp));
    if (!s->fs_base || t->nest || t->guard)
        return -1;
    if (!t->serial) { /* its number, as its first event would take it (identify in buffer.c) */
        t->tid = (int32_t)s->tid;
        t->serial = atomic_fetch_add(&ptt_pool->next_serial, 1) + 1;
    }
    /* after the object: a condvar's mutex (or 0), a semaphore's value (0: it waits) */
    uint64_t mark = r->in, a[8] = {obj, lock};
    a[r->nin - 1] = site;
    if (!((atomic_load_explicit(&ptt_masks[0], memory_order_relaxed) >> PTT_CLASS_OF(r->in)) & 1))
        return -1; /* its class is not recorded */
    put(t, PTT_EV_CALL_BEFORE_ATTACH, 0, 1, &mark);
    put(t, r->in, 0, r->nin, a);
    if (r->kind == K_MUTEX) {
        uint64_t w[2] = {obj, owner};
        put(t, PTT_EV_MUTEX_WAIT, PTT_STATE_MUTEX_WAIT, 2, w);
    } else if (r->kind == K_SEM) {
        put(t, PTT_EV_SEM_BLOCK, PTT_STATE_SEM_BLOCK, 1, &obj);
    }
    return 0;
}

/* ptt trace, the threads stopped, just after ptt_attach_start: the calls in progress followed.
 * Returns how many. */
PTT_EXPORT int ptt_attach_inflight(const struct ptt_stopped_thread *s, int64_t n)
{
    int found = 0;
    if (!ptt_attached)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        const struct routine *r = NULL;
        if (s[i].nr != SYS_futex || !s[i].stack_hi || s[i].rsp >= s[i].stack_hi)
            continue;
        int inside;
        uintptr_t *slot = find_call(&s[i], &r, &inside);
        uint64_t obj = slot ? object_of(r, &s[i]) : 0;
        struct entry *e = obj && !inside ? free_entry(slot) : NULL;
        if (!obj || (!inside && !e))
            continue;
        uint64_t owner = 0, lock = r->kind == K_COND ? mutex_of(&s[i], obj, slot) : 0;
        if (r->kind == K_MUTEX)
            memcpy(&owner, (const void *)(obj + 8), 4); /* __owner */
        if (record_in(&s[i], r, obj, lock, *slot, owner) || inside)
            continue; /* the interposer records the return */
        *e = (struct entry){slot, *slot, obj, lock, r, s[i].tid, 0};
        describe_stub((unsigned)(e - table), e->orig);
        atomic_store(&e->live, 1);
        *slot = stub((unsigned)(e - table));
        found++;
    }
    return found;
}

/* ptt trace, the threads stopped, before ptt_attach_stop, with those blocked in a system call:
 * a slot its thread has not returned through yet (on its stack, at or above its rsp) gets its
 * return address back. A thread past its slot is inside the trampoline, which finds its entry
 * still; one not told of keeps the trampoline, which only jumps back once recording is off. */
PTT_EXPORT int ptt_attach_inflight_stop(const struct ptt_stopped_thread *s, int64_t n)
{
    int restored = 0;
    for (unsigned i = 0; i < PTT_INFLIGHT; i++) {
        struct entry *e = &table[i];
        uintptr_t at = (uintptr_t)e->slot;
        if (!atomic_load(&e->live))
            continue;
        int64_t k = 0;
        while (k < n && s[k].tid != e->tid)
            k++;
        if (k == n || s[k].rsp > at || at >= s[k].stack_hi)
            continue;
        if (*e->slot == stub(i)) {
            *e->slot = e->orig;
            restored++;
            atomic_store(&e->live, 0);
        } /* else its thread went through the slot (and is in a handler on the same stack, say):
           * it comes back to the trampoline, which needs its entry */
    }
    return restored;
}
