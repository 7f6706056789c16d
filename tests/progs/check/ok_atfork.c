/* Expected findings: none. The pthread_atfork pattern: the prepare handler locks m, the parent
 * and child handlers unlock it; the child unlocks a lock its parent's thread took before the
 * fork (the trace of the child does not show that lock, and must not call the unlock a misuse).
 * The child then execs /bin/true: its objects are the new program's. */
#include "../progs.h"
#include <sys/wait.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void prepare(void)
{
    pthread_mutex_lock(&m);
}

static void release(void)
{
    pthread_mutex_unlock(&m);
}

int main(void)
{
    CHECK(pthread_atfork(prepare, release, release));
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pid_t pid = fork();
    if (pid < 0)
        return 99;
    if (pid == 0) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        execl("/bin/true", "true", (char *)NULL);
        _exit(98);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return 97;
    return 0;
}
