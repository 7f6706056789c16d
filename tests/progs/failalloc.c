/* libfailalloc.so, preloaded into a ptt command by the tests: the allocation numbered
 * PTT_TEST_FAIL_ALLOC (from 1) fails, and every later one. Counted on the threads other than the
 * process's first only (a reader's second thread: test_readahead.py), or on all of them with
 * PTT_TEST_FAIL_ALLOC_ALL=1 (test_out_of_memory.py); with PTT_TEST_FAIL_ALLOC_ONCE=1, that one
 * only (a failure the command may get over, or must say). Allocations made by elfutils' libraries
 * themselves are left alone: libdw crashes when they fail (dwfl_module_getsymtab), which ptt
 * cannot mend. So are the dynamic loader's: it aborts the process when it cannot allocate a
 * loaded library's thread-local data, which ptt asks for only after a probe allocation it could
 * make and freed (src/analysis/symbols.c, dw_loaded), where memory does not run out between the
 * two as this file's failures do. glibc's own entry points do the work; nothing here allocates. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long fail_at = -1, count;
static int all_threads, once;

__attribute__((constructor)) static void init(void)
{
    const char *s = getenv("PTT_TEST_FAIL_ALLOC");
    fail_at = s ? atol(s) : -1;
    s = getenv("PTT_TEST_FAIL_ALLOC_ALL");
    all_threads = s && *s == '1';
    s = getenv("PTT_TEST_FAIL_ALLOC_ONCE");
    once = s && *s == '1';
}

/* Whether the code at ra is elfutils' (libdw, libelf) or the dynamic loader's. */
static int elfutils(const void *ra)
{
    Dl_info d;
    return dladdr(ra, &d) && d.dli_fname &&
           (strstr(d.dli_fname, "/libdw") || strstr(d.dli_fname, "/libelf") ||
            strstr(d.dli_fname, "/ld-linux"));
}

/* Whether this allocation, called from ra, fails. */
static int fails(const void *ra)
{
    if (fail_at < 1 || (!all_threads && gettid() == getpid()) || elfutils(ra))
        return 0;
    long k = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    if (k < fail_at || (once && k > fail_at))
        return 0;
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    return fails(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}
