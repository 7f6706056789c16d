/* hang_readers WORKERS HOLDERS PAIRS: threads that each fill several sub-buffers (PAIRS lock and
 * unlock pairs of a mutex) while they read-lock rwlock RW: WORKERS, eight at a time, unlock it
 * before they end; then HOLDERS, all at once, take it before and end holding it. main then
 * write-locks RW and blocks: a hang where exactly the holders read RW, whatever order the drain
 * meets their sub-buffers in. Prints the pid and each holder's tid, flushed before main blocks. */
#include "progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long pairs;

static void fill(void)
{
    for (long i = 0; i < pairs; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
}

static void *worker(void *arg)
{
    pthread_rwlock_rdlock(&rw);
    fill();
    pthread_rwlock_unlock(&rw);
    return arg;
}

static void *holder(void *arg)
{
    *(int *)arg = (int)gettid();
    pthread_rwlock_rdlock(&rw);
    fill();
    return NULL; /* still reading rw */
}

int main(int argc, char **argv)
{
    long workers = argc > 1 ? atol(argv[1]) : 24, holders = argc > 2 ? atol(argv[2]) : 12;
    pairs = argc > 3 ? atol(argv[3]) : 600;
    pthread_t th[16];
    int tids[16];
    if (holders > 16)
        holders = 16;
    put_line("@pid=%d", (int)getpid());
    for (long i = 0; i < workers; i += 8) {
        for (int k = 0; k < 8; k++)
            CHECK(pthread_create(&th[k], NULL, worker, NULL));
        for (int k = 0; k < 8; k++)
            CHECK(pthread_join(th[k], NULL));
    }
    for (long k = 0; k < holders; k++)
        CHECK(pthread_create(&th[k], NULL, holder, &tids[k]));
    for (long k = 0; k < holders; k++) {
        CHECK(pthread_join(th[k], NULL));
        put_line("@holder%ld=%d", k, tids[k]);
    }
    fflush(stdout);
    pthread_rwlock_wrlock(&rw); /* never returns */
    return 1;
}
