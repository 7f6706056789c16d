/* Expected findings:
 *   misuse (destroying a locked mutex): object m; thread "main"; line check:destroy
 *          (glibc returns EBUSY: reported as this misuse, not as an error).
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t m;

int main(void)
{
    put_tid("main");
    CHECK(pthread_mutex_init(&m, NULL));
    put_addr("m", &m);
    pthread_mutex_lock(&m);
    CALL("destroy", pthread_mutex_destroy(&m)); /* check:destroy */
    pthread_mutex_unlock(&m);
    return 0;
}
