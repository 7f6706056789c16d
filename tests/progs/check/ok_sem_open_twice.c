/* A named semaphore opened twice by one process: glibc maps the name once and counts the opens,
 * so closing one handle leaves the other valid. No finding. */
#include "../progs.h"
#include <fcntl.h>
#include <semaphore.h>

int main(void)
{
    char name[64];
    snprintf(name, sizeof name, "/ptt_ok_sem_open_twice_%d", (int)getpid());
    sem_t *a = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
    if (a == SEM_FAILED)
        return 1;
    sem_t *b = sem_open(name, 0);
    if (b == SEM_FAILED)
        return 1;
    sem_unlink(name);
    CHECK(sem_close(a));
    sem_wait(b);
    sem_post(b);
    CHECK(sem_close(b));
    return 0;
}
