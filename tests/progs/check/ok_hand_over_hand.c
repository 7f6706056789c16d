/* Expected findings: none. Lock coupling down a list of 8 nodes (lock next, then unlock
 * current), by 3 threads, always from head to tail: every edge goes node[i] -> node[i + 1]. */
#include "../progs.h"

#define NODES 8

static pthread_mutex_t node[NODES];
static int visits[NODES];

static void *walk(void *arg)
{
    (void)arg;
    for (int r = 0; r < 20; r++) {
        pthread_mutex_lock(&node[0]);
        for (int i = 0; i < NODES - 1; i++) {
            visits[i]++;
            pthread_mutex_lock(&node[i + 1]);
            pthread_mutex_unlock(&node[i]);
        }
        visits[NODES - 1]++;
        pthread_mutex_unlock(&node[NODES - 1]);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    char key[16];
    for (int i = 0; i < NODES; i++) {
        CHECK(pthread_mutex_init(&node[i], NULL));
        snprintf(key, sizeof key, "node[%d]", i);
        put_addr(key, &node[i]);
    }
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, walk, NULL));
    for (int i = 0; i < 3; i++)
        CHECK(pthread_join(t[i], NULL));
    put_line("visits=%d", visits[NODES - 1]);
    return 0;
}
