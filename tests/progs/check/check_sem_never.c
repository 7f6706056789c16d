/* Expected findings:
 *   hang: object s (a semaphore of value 0 that no one posts); thread "main";
 *         line check:wait.
 * Hangs. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

int main(void)
{
    put_tid("main");
    CHECK(sem_init(&s, 0, 0));
    put_addr("s", &s);
    fflush(stdout);
    sem_wait(&s); /* check:wait */
    return 0;
}
