/* ptt trace -p attaches while "waiter" is blocked in pthread_cond_wait with a C++ object on its
 * stack whose destructor unlocks the mutex (tests/e2e/test_attach_inflight.py). On "cancel"
 * (stdin) main cancels it and joins it: the cancellation unwinds through the return address
 * ptt trace replaced. Prints "@pid=", "waiting=1" once the waiter waits, then "destroyed=1" (the
 * destructor ran), "cancelled=1" and "relocked=0" (the mutex free again). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "in_futex.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int destroyed;
static pid_t waiter_tid;

struct Unlock {
    ~Unlock()
    {
        destroyed = 1;
        pthread_mutex_unlock(&mutex);
    }
};

static void *waiter(void *)
{
    pthread_mutex_lock(&mutex);
    Unlock u;
    __atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
    for (;;)
        pthread_cond_wait(&cond, &mutex);
    return nullptr;
}

int main()
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    pthread_t t;
    printf("@pid=%d\n", (int)getpid());
    pthread_create(&t, nullptr, waiter, nullptr);
    pid_t w;
    while (!(w = __atomic_load_n(&waiter_tid, __ATOMIC_SEQ_CST)) || !in_futex(w))
        usleep(1000);
    printf("waiting=1\n");
    char line[64];
    while (fgets(line, sizeof line, stdin) && strncmp(line, "cancel", 6))
        ;
    pthread_cancel(t);
    void *r;
    pthread_join(t, &r);
    printf("destroyed=%d\n", destroyed);
    printf("cancelled=%d\n", r == PTHREAD_CANCELED);
    printf("relocked=%d\n", pthread_mutex_trylock(&mutex));
    return 0;
}
