/* Expected findings:
 *   misuse (double unlock): object m (a default mutex); thread "main"; line check:second_unlock.
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
    put_tid("main");
    put_addr("m", &m);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&m); /* check:second_unlock */
    return 0;
}
