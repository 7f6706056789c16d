/* Expected findings: none (a recursive mutex taken 3 deep by a recursive function, as often
 * unlocked as locked, by 2 threads). */
#include "../progs.h"

static pthread_mutex_t r;
static int total;

static void descend(int depth)
{
    pthread_mutex_lock(&r);
    total++;
    if (depth > 1)
        descend(depth - 1);
    pthread_mutex_unlock(&r);
}

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        descend(3);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t a;
    pthread_t x, y;
    CHECK(pthread_mutexattr_init(&a));
    CHECK(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE));
    CHECK(pthread_mutex_init(&r, &a));
    put_addr("r", &r);
    CHECK(pthread_create(&x, NULL, work, NULL));
    CHECK(pthread_create(&y, NULL, work, NULL));
    CHECK(pthread_join(x, NULL));
    CHECK(pthread_join(y, NULL));
    CHECK(pthread_mutex_destroy(&r));
    put_line("total=%d", total);
    return 0;
}
