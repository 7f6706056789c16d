/* Expected findings:
 *   lock-order: objects locks[0] .. locks[24] (cycle locks[i] -> locks[(i + 1) % 25]);
 *               threads "t0" .. "t24" (thread i takes locks[i] then locks[i + 1]);
 *               line check:next (the inner lock).
 * Does not hang: each thread is joined before the next one starts. */
#include "../progs.h"

#define N 25

static pthread_mutex_t locks[N];

static void *step(void *arg)
{
    int i = (int)(intptr_t)arg;
    char name[8];
    snprintf(name, sizeof name, "t%d", i);
    put_tid(name);
    pthread_mutex_lock(&locks[i]);
    pthread_mutex_lock(&locks[(i + 1) % N]); /* check:next */
    pthread_mutex_unlock(&locks[(i + 1) % N]);
    pthread_mutex_unlock(&locks[i]);
    return NULL;
}

int main(void)
{
    char key[16];
    for (int i = 0; i < N; i++) {
        CHECK(pthread_mutex_init(&locks[i], NULL));
        snprintf(key, sizeof key, "locks[%d]", i);
        put_addr(key, &locks[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, step, (void *)(intptr_t)i));
        CHECK(pthread_join(t, NULL));
    }
    return 0;
}
