/* sig_count [self|N]: counts the SIGINTs and SIGTERMs it receives, as a program that says "press
 * Ctrl-C again to quit" does. Prints "@ready=1", waits for the first (the first N), then 500 ms
 * for another copy, and prints int=N term=M. self: first sends SIGINT to its own process group
 * (kill(0)). Prints "@got=K" after each of the first N. Exit status 0. */
#include <signal.h>

#include "progs.h"

static volatile sig_atomic_t ints, terms;

static void on_signal(int sig)
{
    if (sig == SIGINT)
        ints++;
    else
        terms++;
}

int main(int argc, char **argv)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    CHECK(pthread_mutex_lock(&m)); /* something traced */
    CHECK(pthread_mutex_unlock(&m));
    put_line("@ready=1");
    fflush(stdout);
    int self = argc > 1 && !strcmp(argv[1], "self"), want = argc > 1 && !self ? atoi(argv[1]) : 1;
    sigset_t both, open;
    sigemptyset(&both);
    sigaddset(&both, SIGINT);
    sigaddset(&both, SIGTERM);
    sigprocmask(SIG_BLOCK, &both, &open); /* taken only in sigsuspend: none slips past a test */
    if (self)
        kill(0, SIGINT);
    for (int got = 0; got < want;) {
        while (ints + terms == got)
            sigsuspend(&open);
        got = ints + terms;
        if (want > 1) {
            put_line("@got=%d", got);
            fflush(stdout);
        }
    }
    sigprocmask(SIG_SETMASK, &open, NULL);
    struct timespec rest = {0, 500000000};
    while (nanosleep(&rest, &rest))
        ;
    put_line("int=%d term=%d", (int)ints, (int)terms);
    return 0;
}
