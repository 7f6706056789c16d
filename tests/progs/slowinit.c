/* A library whose constructor holds the dynamic linker's lock a while (tests/e2e: test_attach's
 * test_killed_inside_a_call, test_signal_inside_a_call): it prints "ctor=1", then waits until
 * the file SLOWINIT_GATE names exists (looking every 10 ms, 30 s at most). attach_loop loads it
 * with its "slowload" command; a dlopen ptt trace -p makes meanwhile waits for it. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((constructor)) static void slow_init(void)
{
    const char *gate = getenv("SLOWINIT_GATE");
    static const char line[] = "ctor=1\n";
    if (write(1, line, sizeof line - 1) < 0 || !gate)
        return;
    for (int i = 0; i < 3000 && access(gate, F_OK); i++) {
        struct timespec d = {0, 10000000};
        nanosleep(&d, NULL);
    }
}
