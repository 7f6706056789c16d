/* Expected findings:
 *   deadlock: object rw; thread "main" holds the read lock and asks the write lock;
 *             line check:upgrade.
 * Hangs. */
#include "../progs.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

int main(void)
{
    put_tid("main");
    put_addr("rw", &rw);
    fflush(stdout);
    pthread_rwlock_rdlock(&rw);
    pthread_rwlock_wrlock(&rw); /* check:upgrade */
    return 0;
}
