/* Expected findings:
 *   hang: object s (a semaphore of sem_open, value 0, that no one posts, in a process alone:
 *         no other process could post it); thread "main"; line check:wait.
 * Hangs. */
#include "../progs.h"
#include <fcntl.h>
#include <semaphore.h>
#include <unistd.h>

int main(void)
{
    char name[64];
    snprintf(name, sizeof name, "/ptt-check-sem-open-%d", (int)getpid());
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED)
        return 99;
    sem_unlink(name);
    put_tid("main");
    put_addr("s", s);
    fflush(stdout);
    sem_wait(s); /* check:wait */
    return 0;
}
