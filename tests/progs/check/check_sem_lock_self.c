/* Expected findings:
 *   deadlock: object s (a semaphore made with the value 1 and used as a lock: taken and posted by
 *             main before); thread "main" waits for it while it holds it (a non-reentrant lock
 *             taken twice, as a CPython threading.Lock acquired twice); lines check:take,
 *             check:again.
 * Hangs. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

int main(void)
{
    put_tid("main");
    CHECK(sem_init(&s, 0, 1));
    put_addr("s", &s);
    fflush(stdout);
    sem_wait(&s);
    sem_post(&s);
    sem_wait(&s); /* check:take */
    sem_wait(&s); /* check:again */
    return 0;
}
