/* Expected findings:
 *   misuse (recursive mutex unlocked more than locked): object m; thread "main";
 *          line check:third_unlock (it returns EPERM: reported as this misuse, not as an error).
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t m;

int main(void)
{
    pthread_mutexattr_t a;
    put_tid("main");
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
    CHECK(pthread_mutex_init(&m, &a));
    put_addr("m", &m);
    pthread_mutex_lock(&m);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&m);
    CALL("third_unlock", pthread_mutex_unlock(&m)); /* check:third_unlock */
    return 0;
}
