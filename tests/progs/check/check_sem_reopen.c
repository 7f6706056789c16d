/* Expected findings:
 *   hang: object s (a semaphore of sem_open, posted once and taken, opened again by its name,
 *         which gives the same semaphore with its post: "1 posts in all"); thread "main"; line
 *         check:wait.
 * Hangs. */
#include "../progs.h"
#include <fcntl.h>
#include <semaphore.h>
#include <unistd.h>

int main(void)
{
    char name[64];
    snprintf(name, sizeof name, "/ptt-check-sem-reopen-%d", (int)getpid());
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED)
        return 99;
    CHECK(sem_post(s));
    CHECK(sem_wait(s));
    sem_t *again = sem_open(name, 0);
    sem_unlink(name);
    if (again != s)
        return 98; /* glibc maps a name once per process */
    put_tid("main");
    put_addr("s", s);
    fflush(stdout);
    sem_wait(again); /* check:wait */
    return 0;
}
