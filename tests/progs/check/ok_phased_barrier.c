/* Expected findings: none (3 threads through 5 phases of one barrier, then destroyed). */
#include "../progs.h"

#define N 3

static pthread_barrier_t b;
static int work[N];

static void *phases(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int p = 0; p < 5; p++) {
        work[i] += p;
        pthread_barrier_wait(&b);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    CHECK(pthread_barrier_init(&b, NULL, N));
    put_addr("b", &b);
    for (int i = 0; i < N; i++)
        CHECK(pthread_create(&t[i], NULL, phases, (void *)(intptr_t)i));
    for (int i = 0; i < N; i++)
        CHECK(pthread_join(t[i], NULL));
    CHECK(pthread_barrier_destroy(&b));
    return 0;
}
