/* Expected findings:
 *   lock-order: objects a, b, c (cycle a -> b -> c -> a); threads "t_ab", "t_bc", "t_ca";
 *               lines check:ab, check:bc, check:ca (the inner lock of each thread).
 * Does not hang: each thread is joined before the next one starts. */
#include "../progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER,
                       c = PTHREAD_MUTEX_INITIALIZER;

static void *t_ab(void *arg)
{
    (void)arg;
    put_tid("t_ab");
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b); /* check:ab */
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return NULL;
}

static void *t_bc(void *arg)
{
    (void)arg;
    put_tid("t_bc");
    pthread_mutex_lock(&b);
    pthread_mutex_lock(&c); /* check:bc */
    pthread_mutex_unlock(&c);
    pthread_mutex_unlock(&b);
    return NULL;
}

static void *t_ca(void *arg)
{
    (void)arg;
    put_tid("t_ca");
    pthread_mutex_lock(&c);
    pthread_mutex_lock(&a); /* check:ca */
    pthread_mutex_unlock(&a);
    pthread_mutex_unlock(&c);
    return NULL;
}

int main(void)
{
    void *(*fn[3])(void *) = {t_ab, t_bc, t_ca};
    put_addr("a", &a);
    put_addr("b", &b);
    put_addr("c", &c);
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, fn[i], NULL));
        CHECK(pthread_join(t, NULL));
    }
    return 0;
}
