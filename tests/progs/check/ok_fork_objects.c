/* Expected findings: none. Objects initialised before a fork are initialised in the child: a
 * semaphore and a mutex on the heap, set up by the parent, used by a thread of the forked child (as
 * the Open POSIX Test Suite's pthread_create/14-1 does), must not be called "never initialised". */
#include "../progs.h"
#include <semaphore.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t sem;
static pthread_mutex_t *m;

/* A thread of the child: its own calls are all in the trace, as a new thread's are. */
static void *use(void *arg)
{
    (void)arg;
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
    sem_post(&sem);
    return NULL;
}

int main(void)
{
    m = malloc(sizeof *m);
    if (!m || sem_init(&sem, 0, 0))
        return 99;
    CHECK(pthread_mutex_init(m, NULL));
    pid_t pid = fork();
    if (pid < 0)
        return 99;
    if (pid == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, use, NULL) || pthread_join(t, NULL))
            _exit(1);
        sem_wait(&sem);
        _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return 97;
    CHECK(pthread_mutex_destroy(m));
    free(m);
    return sem_destroy(&sem) ? 96 : 0;
}
