/* A traced program that attacks ptt trace through the pool it shares: attached as root to this
 * (unprivileged) process, ptt trace gives it the pool, whose header it then rewrites (the layout
 * far out of range, every ready bit set) before it goes on locking. ptt trace must neither crash
 * nor touch memory outside the pool (tests/e2e/test_attach.py, docs/security.md).
 * Prints "pid N" and waits for a line on stdin; prints "tampered" once it has, then locks on
 * for the given number of iterations and exits 0 (if the header it broke lets it). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/pool.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

/* The pool mapped here: the mapping of /dev/shm/ptt-* whose first bytes are a pool header. */
static struct ptt_pool *find_pool(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    struct ptt_pool *p = NULL;
    while (f && !p && fgets(line, sizeof line, f)) {
        unsigned long lo;
        if (strstr(line, "/dev/shm/ptt-") && sscanf(line, "%lx", &lo) == 1 &&
            ((struct ptt_pool *)lo)->magic == PTT_POOL_MAGIC)
            p = (struct ptt_pool *)lo;
    }
    if (f)
        fclose(f);
    return p;
}

static void tamper(struct ptt_pool *p)
{
    _Atomic uint64_t *ready = ptt_pool_ready(p);
    uint32_t words = (p->nbufs + 63) / 64;
    for (uint32_t w = 0; w < words; w++)
        ready[w] = ~0ull; /* past the last sub-buffer too */
    p->data_offset += 1ull << 44;
    p->desc_offset += 1ull << 40;
    p->nbufs *= 1000;
    p->buf_size *= 16;
}

int main(int argc, char **argv)
{
    long after = argc > 1 ? atol(argv[1]) : 200000;
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    char go[16];
    if (!fgets(go, sizeof go, stdin))
        return 1;
    struct ptt_pool *p = NULL;
    for (long i = 0; !p; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        if (i % 1000 == 0)
            p = find_pool();
    }
    tamper(p);
    printf("tampered\n");
    fflush(stdout);
    for (long i = 0; i < after; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    return 0;
}
