/* libfailalloc.so, preloaded into a ptt command by tests/e2e/test_readahead.py: the allocation
 * numbered PTT_TEST_FAIL_ALLOC (from 1) made by a thread other than the process's first fails,
 * as do all that thread's later ones, so that only a reader's second thread runs out of memory.
 * glibc's own entry points do the work; nothing here allocates. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long fail_at = -1, count;

__attribute__((constructor)) static void init(void)
{
    const char *s = getenv("PTT_TEST_FAIL_ALLOC");
    fail_at = s ? atol(s) : -1;
}

/* Whether this allocation fails: counted on threads other than the first only. */
static int fails(void)
{
    if (fail_at < 1 || gettid() == getpid())
        return 0;
    if (__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) < fail_at)
        return 0;
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n)
{
    return fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    return fails() ? NULL : __libc_realloc(p, n);
}
