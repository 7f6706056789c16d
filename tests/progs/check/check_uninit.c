/* Expected findings:
 *   misuse (use of an object never initialised): object heap (a mutex in malloc'd memory that
 *          no pthread_mutex_init reached); thread "main"; line check:lock_uninit.
 *   misuse (use of a destroyed object): object d; thread "main"; line check:lock_destroyed
 *          (glibc 2.36 returns EINVAL: reported as this misuse, not as an error).
 * Does not hang. */
#include "../progs.h"

static pthread_mutex_t d;

int main(void)
{
    /* Zeroed like PTHREAD_MUTEX_INITIALIZER, so that glibc locks it without harm, yet no
     * initialiser the trace can see. */
    pthread_mutex_t *volatile heap = calloc(1, sizeof *heap);
    if (!heap)
        return 99;
    put_tid("main");
    put_addr("heap", heap);
    put_addr("d", &d);
    pthread_mutex_lock(heap); /* check:lock_uninit */
    pthread_mutex_unlock(heap);
    CHECK(pthread_mutex_init(&d, NULL));
    CHECK(pthread_mutex_destroy(&d));
    pthread_mutex_lock(&d); /* check:lock_destroyed */
    free(heap);
    return 0;
}
