/* Expected findings: none. "forward" takes a then b; "backward" holds b and only tries a,
 * releasing b and starting again when a is busy: a trylock edge closes no lock-order cycle, and
 * its EBUSY is no error. The threads run concurrently. */
#include "../progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static int shared;

static void *forward(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&a);
        pthread_mutex_lock(&b);
        shared++;
        pthread_mutex_unlock(&b);
        pthread_mutex_unlock(&a);
    }
    return NULL;
}

static void *backward(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100;) {
        pthread_mutex_lock(&b);
        if (pthread_mutex_trylock(&a) == 0) {
            shared++;
            i++;
            pthread_mutex_unlock(&a);
            pthread_mutex_unlock(&b);
        } else {
            pthread_mutex_unlock(&b);
            sched_yield();
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t x, y;
    put_addr("a", &a);
    put_addr("b", &b);
    CHECK(pthread_create(&x, NULL, forward, NULL));
    CHECK(pthread_create(&y, NULL, backward, NULL));
    CHECK(pthread_join(x, NULL));
    CHECK(pthread_join(y, NULL));
    put_line("shared=%d", shared);
    return 0;
}
