/* Large events as fast as possible, for a trace over 4 GiB: setname_flood THREADS CALLS
 *   Each thread calls pthread_setname_np(self, NAME) CALLS times with a 200-byte NAME, which
 *   glibc refuses at once (ERANGE: 15 bytes at most) and libptt records whole. NAME changes at
 *   every call, each of its 8-byte words a value not seen before (its last letter the word's
 *   number, the others counting the calls), so that the compact encoding writes them all out:
 *   about 260 bytes of records a call. Prints the calls made and how many returned ERANGE. */
#include "progs.h"

#define MAXT 16
#define WORDS 25

static long calls;
static long erange[MAXT];

/* The next call's name: the count in letters 0..6 of every word, one more. */
static void bump(char *name)
{
    for (int j = 0; j < WORDS; j++)
        for (int i = 0; i < 7; i++) {
            char *c = &name[8 * j + i];
            if (*c < 'z') {
                ++*c;
                break;
            }
            *c = 'a';
        }
}

static void *flood(void *arg)
{
    long *bad = arg, n = 0;
    char name[8 * WORDS + 1];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = 0;
    for (int j = 0; j < WORDS; j++)
        name[8 * j + 7] = (char)('a' + j); /* the words of one name differ */
    for (long k = 0; k < calls; k++) {
        n += pthread_setname_np(pthread_self(), name) == ERANGE;
        bump(name);
    }
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
