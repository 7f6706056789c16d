/* many_mutexes N: N mutexes, each initialized, locked and unlocked once, as a table of per-row
 * locks would be: a trace of many objects each used a few times. Prints mutexes=N. */
#include "progs.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    pthread_mutex_t *m = calloc((size_t)n, sizeof *m);
    if (!m)
        return 1;
    for (long i = 0; i < n; i++) {
        pthread_mutex_init(&m[i], NULL);
        pthread_mutex_lock(&m[i]);
        pthread_mutex_unlock(&m[i]);
    }
    printf("mutexes=%ld\n", n);
    free(m);
    return 0;
}
