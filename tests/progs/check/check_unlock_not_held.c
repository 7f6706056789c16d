/* Expected findings:
 *   misuse (unlock of a mutex not held): object m (a default mutex, never locked);
 *          thread "main"; line check:unlock.
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
    put_tid("main");
    put_addr("m", &m);
    pthread_mutex_unlock(&m); /* check:unlock */
    return 0;
}
