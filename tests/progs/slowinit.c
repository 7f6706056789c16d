/* A library whose constructor holds the dynamic linker's lock a while (tests/e2e: test_attach's
 * test_killed_inside_a_call): it prints "ctor=1", then sleeps SLOWINIT_MS milliseconds (default
 * 3000). attach_loop loads it with its "slowload" command; a dlopen ptt trace -p makes meanwhile
 * waits for it. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void slow_init(void)
{
    const char *ms = getenv("SLOWINIT_MS");
    long n = ms ? atol(ms) : 3000;
    struct timespec d = {n / 1000, n % 1000 * 1000000L};
    static const char line[] = "ctor=1\n";
    if (write(1, line, sizeof line - 1) < 0)
        return;
    while (nanosleep(&d, &d) && errno == EINTR)
        ;
}
