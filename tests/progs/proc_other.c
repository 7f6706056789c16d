/* Another program that a traced process execs: proc_other CODE
 * OTHER_POSTS sem_post on an unnamed semaphore between its init and destroy, then print
 * "@pid_other=PID" and exit with CODE. */
#include <semaphore.h>

#include "progs.h"

#define OTHER_POSTS 4

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: proc_other CODE\n");
        return 2;
    }
    sem_t s;
    if (sem_init(&s, 0, 0))
        return 99;
    for (int i = 0; i < OTHER_POSTS; i++)
        sem_post(&s);
    sem_destroy(&s);
    put_line("@pid_other=%d", (int)getpid());
    put_line("@ppid_other=%d", (int)getppid());
    return atoi(argv[1]);
}
