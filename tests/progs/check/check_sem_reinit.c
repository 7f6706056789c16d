/* Expected findings:
 *   hang: object s (a semaphore initialized again, of value 0, that no one posts since: the
 *         posts of its first life at that address are not its); thread "main"; line
 *         check:wait.
 * Hangs. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

int main(void)
{
    put_tid("main");
    CHECK(sem_init(&s, 0, 0));
    for (int i = 0; i < 3; i++) {
        CHECK(sem_post(&s));
        CHECK(sem_wait(&s));
    }
    CHECK(sem_destroy(&s));
    CHECK(sem_init(&s, 0, 0));
    put_addr("s", &s);
    fflush(stdout);
    sem_wait(&s); /* check:wait */
    return 0;
}
