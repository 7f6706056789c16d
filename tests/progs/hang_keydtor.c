/* hang_keydtor: thread w sets a key's value and returns; the key's destructor, which runs after
 * w's THREAD_END, locks H, which main holds while it joins w: a deadlock after w's recorded end.
 * Prints the pid and w's tid, flushed before main joins. */
#include "progs.h"

static pthread_mutex_t h = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t key;

static void destructor(void *v)
{
    (void)v;
    pthread_mutex_lock(&h); /* never returns */
}

static void *w(void *arg)
{
    *(int *)arg = (int)gettid();
    CHECK(pthread_setspecific(key, arg));
    return NULL;
}

int main(void)
{
    CHECK(pthread_key_create(&key, destructor));
    for (int i = 0; i < 2000; i++) { /* main's first sub-buffers handed over and drained */
        pthread_mutex_lock(&h);
        pthread_mutex_unlock(&h);
    }
    usleep(100000);
    int tid = 0;
    pthread_t th;
    CHECK(pthread_mutex_lock(&h));
    CHECK(pthread_create(&th, NULL, w, &tid));
    while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
        usleep(1000);
    usleep(200000); /* w has ended its function, and its last sub-buffer is drained */
    put_line("@pid=%d", (int)getpid());
    put_line("@tid_w=%d", tid);
    fflush(stdout);
    pthread_join(th, NULL); /* never returns */ /* site:join */
    return 1;
}
