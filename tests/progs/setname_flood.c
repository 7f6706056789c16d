/* Large events as fast as possible, for a trace over 4 GiB: setname_flood THREADS CALLS
 *   Each thread calls pthread_setname_np(self, NAME) CALLS times with a 200-byte NAME, which
 *   glibc refuses at once (ERANGE: 15 bytes at most) and libptt records whole (a 224-byte _IN
 *   event and a 16-byte _OUT). Prints the calls made and how many returned ERANGE. */
#include "progs.h"

#define MAXT 16

static long calls;
static long erange[MAXT];
static char name[201];

static void *flood(void *arg)
{
    long *bad = arg, n = 0;
    for (long k = 0; k < calls; k++)
        n += pthread_setname_np(pthread_self(), name) == ERANGE;
    *bad = n;
    return NULL;
}

int main(int argc, char **argv)
{
    int n;
    if (argc != 3 || (n = atoi(argv[1])) < 1 || n > MAXT || (calls = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: setname_flood THREADS CALLS\n");
        return 2;
    }
    memset(name, 'n', sizeof name - 1);
    pthread_t th[MAXT];
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&th[i], NULL, flood, &erange[i]));
    long total = 0;
    for (int i = 0; i < n; i++) {
        CHECK(pthread_join(th[i], NULL));
        total += erange[i];
    }
    put_line("calls=%ld", (long)n * calls);
    put_line("erange=%ld", total);
    return 0;
}
