/* CPython's Condition.wait, in C: the waiter makes a semaphore with the value 1, takes it, and
 * waits on it again until the notifier posts it. Then a waiter that the program leaves waiting
 * when it exits (a daemon thread in queue.get()). No finding: a semaphore taken and waited for by
 * one thread, never posted by it, is no relock. */
#include "../progs.h"
#include <semaphore.h>

static sem_t waiter, idle;
static int waiting;

static void *notifier(void *arg)
{
    wait_flag(&waiting);
    sem_post(&waiter);
    return arg;
}

static void *daemon_waiter(void *arg)
{
    sem_wait(&idle);
    set_flag(&waiting);
    sem_wait(&idle); /* for ever: the program exits meanwhile */
    return arg;
}

int main(void)
{
    pthread_t t;
    CHECK(sem_init(&waiter, 0, 1));
    sem_wait(&waiter);
    CHECK(pthread_create(&t, NULL, notifier, NULL));
    set_flag(&waiting);
    sem_wait(&waiter);
    CHECK(pthread_join(t, NULL));
    CHECK(sem_destroy(&waiter));
    waiting = 0;
    CHECK(sem_init(&idle, 0, 1));
    CHECK(pthread_create(&t, NULL, daemon_waiter, NULL));
    wait_flag(&waiting);
    usleep(50000); /* it is in its second wait, or about to be */
    return 0;
}
