/* Producers and consumers over a bounded queue, with semaphores only (the paper's self-test):
 * prodcons_sem P C N Q. P producers put N items each, C consumers take P*N/C items each; the
 * semaphore empty counts free slots (Q), full the items queued, lock (binary) guards the queue.
 * Prints the sum of the items taken. */
#include <semaphore.h>

#include "progs.h"

static sem_t empty, full, lock;
static long *queue, head, count, size;
static long items, per_consumer;

static void *producer(void *arg)
{
    long base = (long)(intptr_t)arg * items;
    for (long i = 1; i <= items; i++) {
        CHECK(sem_wait(&empty) ? errno : 0);
        CHECK(sem_wait(&lock) ? errno : 0);
        queue[(head + count++) % size] = base + i;
        CHECK(sem_post(&lock) ? errno : 0);
        CHECK(sem_post(&full) ? errno : 0);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    long sum = 0;
    (void)arg;
    for (long i = 0; i < per_consumer; i++) {
        CHECK(sem_wait(&full) ? errno : 0);
        CHECK(sem_wait(&lock) ? errno : 0);
        sum += queue[head];
        head = (head + 1) % size;
        count--;
        CHECK(sem_post(&lock) ? errno : 0);
        CHECK(sem_post(&empty) ? errno : 0);
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    long np, nc;
    if (argc != 5 || (np = atol(argv[1])) < 1 || (nc = atol(argv[2])) < 1 ||
        (items = atol(argv[3])) < 1 || (size = atol(argv[4])) < 1 || np * items % nc ||
        np + nc > 64) {
        fprintf(stderr, "usage: prodcons_sem P C N Q (C divides P*N, P+C <= 64)\n");
        return 2;
    }
    per_consumer = np * items / nc;
    queue = calloc((size_t)size, sizeof *queue);
    pthread_t th[64];
    put_line("@pid=%d", (int)getpid());
    put_addr("empty", &empty);
    put_addr("full", &full);
    put_addr("lock", &lock);
    put_fn("producer", producer);
    put_fn("consumer", consumer);
    CHECK(sem_init(&empty, 0, (unsigned)size) ? errno : 0);
    CHECK(sem_init(&full, 0, 0) ? errno : 0);
    CHECK(sem_init(&lock, 0, 1) ? errno : 0);
    for (long i = 0; i < nc; i++)
        CHECK(pthread_create(&th[i], NULL, consumer, NULL));
    for (long i = 0; i < np; i++)
        CHECK(pthread_create(&th[nc + i], NULL, producer, (void *)(intptr_t)i));
    long sum = 0;
    for (long i = 0; i < nc + np; i++) {
        void *v;
        CHECK(pthread_join(th[i], &v));
        if (i < nc)
            sum += (long)(intptr_t)v;
    }
    put_line("sum=%ld", sum);
    CHECK(sem_destroy(&empty) ? errno : 0);
    CHECK(sem_destroy(&full) ? errno : 0);
    CHECK(sem_destroy(&lock) ? errno : 0);
    free(queue);
    return 0;
}
