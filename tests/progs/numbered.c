/* A known numbered sequence of events: numbered N1 N2
 *   N1 sem_post on one semaphore (no waiter: the K-th post records the value K in its
 *   SEM_POST_OUT), then "@phase1=1"; if N2 > 0, wait for a line on stdin, then N2 more posts. */
#include <semaphore.h>

#include "progs.h"

int main(int argc, char **argv)
{
    long n1, n2;
    if (argc != 3 || (n1 = atol(argv[1])) < 0 || (n2 = atol(argv[2])) < 0) {
        fprintf(stderr, "usage: numbered N1 N2\n");
        return 2;
    }
    sem_t s;
    CHECK(sem_init(&s, 0, 0) ? errno : 0);
    put_addr("sem", &s);
    for (long k = 0; k < n1; k++)
        sem_post(&s);
    put_line("@phase1=1");
    fflush(stdout);
    if (n2) {
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            return 99;
        for (long k = 0; k < n2; k++)
            sem_post(&s);
    }
    int v = -1;
    sem_getvalue(&s, &v);
    put_line("value=%d", v);
    return 0;
}
