/* Expected findings: none (a bounded buffer: one mutex, two condvars, predicates tested). */
#include "../progs.h"

#define CAP 4
#define ITEMS 200

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static int buf[CAP], count, head;

static void *producer(void *arg)
{
    (void)arg;
    put_tid("producer");
    for (int i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (count == CAP)
            pthread_cond_wait(&not_full, &m);
        buf[(head + count++) % CAP] = i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    long sum = 0;
    put_tid("consumer");
    put_addr("m", &m);
    put_addr("not_full", &not_full);
    put_addr("not_empty", &not_empty);
    CHECK(pthread_create(&t, NULL, producer, NULL));
    for (int i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&m);
        while (count == 0)
            pthread_cond_wait(&not_empty, &m);
        sum += buf[head];
        head = (head + 1) % CAP;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&m);
    }
    CHECK(pthread_join(t, NULL));
    put_line("sum=%ld", sum);
    return 0;
}
