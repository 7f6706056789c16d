/* A semaphore made with the value 1 used as a lock by four threads in turn, and one made with 0
 * used as a signal: no finding. */
#include "../progs.h"
#include <semaphore.h>

static sem_t lock, done;
static long counter;

static void *worker(void *arg)
{
    for (int i = 0; i < 1000; i++) {
        sem_wait(&lock);
        counter++;
        sem_post(&lock);
    }
    sem_post(&done);
    return arg;
}

int main(void)
{
    pthread_t t[4];
    CHECK(sem_init(&lock, 0, 1));
    CHECK(sem_init(&done, 0, 0));
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, worker, NULL));
    for (int i = 0; i < 4; i++)
        sem_wait(&done);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(t[i], NULL));
    put_line("counter=%ld", counter);
    CHECK(sem_destroy(&lock));
    CHECK(sem_destroy(&done));
    return 0;
}
