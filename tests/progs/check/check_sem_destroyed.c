/* Expected findings:
 *   misuse: object s, posted after its sem_destroy; thread "main"; line check:post.
 *   misuse: object s, destroyed a second time; thread "main"; line check:again. */
#include "../progs.h"
#include <semaphore.h>

static sem_t s;

int main(void)
{
    put_tid("main");
    put_addr("s", &s);
    CHECK(sem_init(&s, 0, 1));
    sem_wait(&s);
    sem_post(&s);
    CHECK(sem_destroy(&s));
    sem_post(&s);    /* check:post */
    sem_destroy(&s); /* check:again */
    return 0;
}
