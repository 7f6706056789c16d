/* Expected findings:
 *   deadlock: object m (a default mutex); thread "main" relocks it while holding it;
 *             line check:relock.
 * Hangs. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
    put_tid("main");
    put_addr("m", &m);
    fflush(stdout);
    pthread_mutex_lock(&m);
    pthread_mutex_lock(&m); /* check:relock */
    return 0;
}
