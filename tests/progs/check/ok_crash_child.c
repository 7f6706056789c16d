/* Expected findings: none. A forked child crashes (SIGSEGV, as the Open POSIX Test Suite's
 * pthread_create/1-5 does on purpose) while its main thread waits in pthread_join: the child
 * died, it did not hang, and the join it was in is not a hang. */
#include "../progs.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void *crash(void *arg)
{
    (void)arg;
    usleep(50000); /* let main enter pthread_join */
    raise(SIGSEGV);
    return NULL;
}

int main(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 99;
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, crash, NULL));
        pthread_join(t, NULL);
        _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV)
        return 97;
    return 0;
}
