/* Producers and consumers over a bounded queue (a mutex, two condvars): prodcons P C N Q
 * P producers put N items each, C consumers take P*N/C items each, the queue holds Q items.
 * Prints the sum of the items taken, and how many times each condvar was waited on (which
 * changes from run to run: the trace must count as many waits). */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long *queue, head, count, size;
static long items, per_consumer, waits_full, waits_empty;

static void *producer(void *arg)
{
    long base = (long)(intptr_t)arg * items;
    for (long i = 1; i <= items; i++) {
        CHECK(pthread_mutex_lock(&m));
        while (count == size) {
            waits_full++;
            CHECK(pthread_cond_wait(&not_full, &m));
        }
        queue[(head + count++) % size] = base + i;
        CHECK(pthread_cond_signal(&not_empty));
        CHECK(pthread_mutex_unlock(&m));
    }
    return NULL;
}

static void *consumer(void *arg)
{
    long sum = 0;
    (void)arg;
    for (long i = 0; i < per_consumer; i++) {
        CHECK(pthread_mutex_lock(&m));
        while (count == 0) {
            waits_empty++;
            CHECK(pthread_cond_wait(&not_empty, &m));
        }
        sum += queue[head];
        head = (head + 1) % size;
        count--;
        CHECK(pthread_cond_signal(&not_full));
        CHECK(pthread_mutex_unlock(&m));
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    long np, nc;
    if (argc != 5 || (np = atol(argv[1])) < 1 || (nc = atol(argv[2])) < 1 ||
        (items = atol(argv[3])) < 1 || (size = atol(argv[4])) < 1 || np * items % nc ||
        np + nc > 64) {
        fprintf(stderr, "usage: prodcons P C N Q (C divides P*N, P+C <= 64)\n");
        return 2;
    }
    per_consumer = np * items / nc;
    queue = calloc((size_t)size, sizeof *queue);
    pthread_t th[64];
    put_line("@pid=%d", (int)getpid());
    put_addr("m", &m);
    put_addr("not_full", &not_full);
    put_addr("not_empty", &not_empty);
    put_fn("producer", producer);
    put_fn("consumer", consumer);
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
    put_line("@waits_full=%ld", waits_full);
    put_line("@waits_empty=%ld", waits_empty);
    free(queue);
    return 0;
}
