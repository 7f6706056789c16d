/* hang_sem_ended MODE: thread t takes semaphore s, made with the value 1 (a lock, as CPython's),
 * and ends without posting it; then main waits for s and hangs.
 *   both:   t also holds mutex m when it ends: s is still held by t.
 *   reinit: main destroys s and makes it again with the value 1, takes it, and waits for it again
 *           (a thread waiting for one it took itself and no taker posted): nobody holds it, t
 *           least of all. */
#include <semaphore.h>
#include <string.h>

#include "progs.h"

static sem_t s;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int both;

static void *t(void *arg)
{
    (void)arg;
    put_tid("t");
    fflush(stdout);
    if (both)
        pthread_mutex_lock(&m);
    sem_wait(&s);
    return NULL; /* s taken, and m if both */
}

int main(int argc, char **argv)
{
    both = argc > 1 && !strcmp(argv[1], "both");
    pthread_t x;
    put_tid("main");
    put_addr("s", &s);
    CHECK(sem_init(&s, 0, 1));
    fflush(stdout);
    CHECK(pthread_create(&x, NULL, t, NULL));
    CHECK(pthread_join(x, NULL));
    if (!both) {
        CHECK(sem_destroy(&s));
        CHECK(sem_init(&s, 0, 1));
        sem_wait(&s);
    }
    sem_wait(&s); /* site:wait */
    return 0;
}
