/* Expected findings: none. A pool of one worker process, as Python's multiprocessing makes: a
 * named semaphore (sem_open) counts the jobs, shared with the forked worker. The parent posts
 * one job; the worker takes it, says so on a second shared semaphore and waits for the next;
 * the parent then terminates it (SIGTERM) while it waits. The posts the worker waits for are the
 * parent's, on the same semaphore mapped in another process: its wait is no hang nobody posts. */
#include "../progs.h"
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t *shared(const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "/ptt-ok-sem-%s-%d", what, (int)getpid());
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED)
        exit(99);
    sem_unlink(name);
    return s;
}

int main(void)
{
    sem_t *jobs = shared("jobs"), *done = shared("done");
    pid_t pid = fork();
    if (pid < 0)
        return 99;
    if (pid == 0) {
        for (;;) {
            sem_wait(jobs);
            sem_post(done);
        }
    }
    CHECK(sem_post(jobs) ? errno : 0);
    CHECK(sem_wait(done) ? errno : 0);
    usleep(50000); /* let the worker wait for the next job */
    int st;
    if (kill(pid, SIGTERM) || waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st))
        return 97;
    return 0;
}
