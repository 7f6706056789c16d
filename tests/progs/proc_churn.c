/* Many short processes, as fast as they come: proc_churn BRANCHES PROCESSES [wait]
 *   BRANCHES processes (forked by the first) each create their share of PROCESSES processes, one
 *   after another, in four ways in turn: fork and _exit; fork and exec /bin/true; system() (a
 *   shell, reaped by glibc where no interposer sees); a child that forks a grandchild and
 *   _exits at once (the grandchild, orphaned, is reaped by ptt trace, a subreaper). Each way
 *   ends with a status of its own, and every process is waited for. Prints the number of
 *   processes created, the branches and the first included (a system() counts its shell).
 *   With "wait": prints @ready=1 first and waits for a line on stdin (the test stops ptt trace
 *   meanwhile: announcements pile up), then @pN=1 each time N more processes were made, by
 *   thousands. */
#include <sys/mman.h>
#include <sys/wait.h>

#include "progs.h"

static int wait_for(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

/* One process of the given way; returns the processes it made, -1 if one failed. */
static int one(int way)
{
    if (way == 2) {
        int st = system("exit 5");
        return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 1 : -1;
    }
    pid_t c = fork();
    if (c < 0)
        return -1;
    if (c == 0) {
        if (way == 1) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        if (way == 3 && fork() < 0) /* the grandchild _exits at once, an orphan */
            _exit(126);
        _exit(way == 0 ? 3 : 4);
    }
    int st = wait_for(c);
    int want = way == 1 ? 0 : way == 0 ? 3 : 4;
    if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != want)
        return -1;
    return way == 3 ? 2 : 1;
}

int main(int argc, char **argv)
{
    long branches, total;
    if (argc < 3 || argc > 4 || (branches = atol(argv[1])) < 1 ||
        (total = atol(argv[2])) < branches || (argc == 4 && strcmp(argv[3], "wait"))) {
        fprintf(stderr, "usage: proc_churn BRANCHES PROCESSES [wait]\n");
        return 2;
    }
    if (argc == 4) {
        char line[16];
        put_line("@ready=1");
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin))
            return 1;
    }
    /* Counted in shared memory: each branch adds what it made. */
    long *made =
        mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (made == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pid_t b[64];
    if (branches > 64)
        branches = 64;
    for (long i = 0; i < branches; i++) {
        b[i] = fork();
        if (b[i] < 0) {
            perror("fork");
            return 1;
        }
        if (b[i] == 0) {
            long n = 0;
            for (long k = i; n < total / branches; k++) {
                int r = one((int)(k % 4));
                if (r < 0) {
                    fprintf(stderr, "proc_churn: way %ld failed\n", k % 4);
                    _exit(1);
                }
                n += r;
                __atomic_fetch_add(&made[1], r, __ATOMIC_RELAXED);
            }
            __atomic_fetch_add(made, n, __ATOMIC_RELAXED);
            exit(0);
        }
    }
    if (argc == 4) /* progress, by thousands, until the branches are done */
        for (long next = 1000, idle = 0; next <= total / branches * branches && idle < 120000;) {
            if (__atomic_load_n(&made[1], __ATOMIC_RELAXED) >= next) {
                put_line("@p%ld=1", next);
                fflush(stdout);
                next += 1000;
                idle = 0;
            } else {
                idle++;
                struct timespec d = {0, 1000000};
                nanosleep(&d, NULL);
            }
        }
    int bad = 0;
    for (long i = 0; i < branches; i++) {
        int st = wait_for(b[i]);
        bad |= st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    put_line("@processes=%ld", *made + branches + 1);
    fflush(stdout);
    return bad;
}
