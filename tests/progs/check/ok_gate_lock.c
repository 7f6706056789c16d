/* Expected findings: none. Two threads take a and b in opposite orders, but always under the
 * outer lock gate: the cycle can never close. The threads run concurrently. */
#include "../progs.h"

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER, a = PTHREAD_MUTEX_INITIALIZER,
                       b = PTHREAD_MUTEX_INITIALIZER;

static void *ab(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&gate);
        pthread_mutex_lock(&a);
        pthread_mutex_lock(&b);
        pthread_mutex_unlock(&b);
        pthread_mutex_unlock(&a);
        pthread_mutex_unlock(&gate);
    }
    return NULL;
}

static void *ba(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&gate);
        pthread_mutex_lock(&b);
        pthread_mutex_lock(&a);
        pthread_mutex_unlock(&a);
        pthread_mutex_unlock(&b);
        pthread_mutex_unlock(&gate);
    }
    return NULL;
}

int main(void)
{
    pthread_t x, y;
    put_addr("gate", &gate);
    put_addr("a", &a);
    put_addr("b", &b);
    CHECK(pthread_create(&x, NULL, ab, NULL));
    CHECK(pthread_create(&y, NULL, ba, NULL));
    CHECK(pthread_join(x, NULL));
    CHECK(pthread_join(y, NULL));
    return 0;
}
