/* The demo: the paper's producer/consumer over a bounded queue guarded by a mutex and two
 * condition variables, with a barrier to start the workers together. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define QUEUE 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t start;
static int queue[QUEUE], head, count;
static int items = 20;

static void *producer(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i = 1; i <= items; i++) {
        pthread_mutex_lock(&lock);
        while (count == QUEUE)
            pthread_cond_wait(&not_full, &lock);
        queue[(head + count++) % QUEUE] = i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    long sum = 0;
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < items; i++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&not_empty, &lock);
        sum += queue[head];
        head = (head + 1) % QUEUE;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        items = atoi(argv[1]);
    pthread_t p, c;
    void *sum;
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, &sum);
    pthread_barrier_destroy(&start);
    printf("consumed %d items, sum %ld\n", items, (long)sum);
    return 0;
}
