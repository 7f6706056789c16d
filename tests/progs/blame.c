/* Who made others wait, for ptt stat and ptt report (tests/e2e/test_blame.py): blame
 *
 * - big_lock, a mutex: the thread started at holder takes it and keeps it until both threads
 *   started at waiter (waiter, waiter#2) are blocked in their lock; then releases it. Each waiter
 *   releases it as soon as it has it: the first one to get it makes the other wait once more.
 *   Later the thread started at second takes it and keeps it until main is blocked in its lock.
 * - table_lock, a rwlock: the threads started at reader (reader, reader#2) read-lock it, the one
 *   started at writer blocks in its write lock; reader releases it, then reader#2.
 * No other call waits. The calls whose site the tests check carry a comment "site:KEY" on their
 * line. Prints the addresses and thread ids. */
#include "progs.h"

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static int held, waiter_tid[2], second_held, read_held[2], reader_done, writer_tid;
static pid_t main_tid;

static void *holder(void *arg)
{
    put_tid("holder");
    pthread_mutex_lock(&big_lock); /* site:holder_lock */
    set_flag(&held);
    for (int j = 0; j < 2; j++) {
        while (!__atomic_load_n(&waiter_tid[j], __ATOMIC_ACQUIRE))
            nap();
        wait_blocked(waiter_tid[j], &big_lock, sizeof big_lock);
    }
    pthread_mutex_unlock(&big_lock); /* site:holder_unlock */
    return arg;
}

static void *waiter(void *arg)
{
    int j = *(int *)arg;
    put_tid(j ? "waiter1" : "waiter0");
    __atomic_store_n(&waiter_tid[j], (int)gettid(), __ATOMIC_RELEASE);
    pthread_mutex_lock(&big_lock);   /* site:waiter_lock */
    pthread_mutex_unlock(&big_lock); /* site:waiter_unlock */
    return arg;
}

static void *second(void *arg)
{
    put_tid("second");
    pthread_mutex_lock(&big_lock); /* site:second_lock */
    set_flag(&second_held);
    wait_blocked(main_tid, &big_lock, sizeof big_lock);
    pthread_mutex_unlock(&big_lock); /* site:second_unlock */
    return arg;
}

static void *reader(void *arg)
{
    int j = *(int *)arg;
    put_tid(j ? "reader1" : "reader0");
    pthread_rwlock_rdlock(&table_lock); /* site:reader_lock */
    set_flag(&read_held[j]);
    while (!__atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE))
        nap();
    wait_blocked(writer_tid, &table_lock, sizeof table_lock);
    if (j)
        wait_flag(&reader_done);        /* the writer is still blocked: this reader holds it */
    pthread_rwlock_unlock(&table_lock); /* site:reader_unlock */
    if (!j)
        set_flag(&reader_done);
    return arg;
}

static void *writer(void *arg)
{
    put_tid("writer");
    __atomic_store_n(&writer_tid, (int)gettid(), __ATOMIC_RELEASE);
    pthread_rwlock_wrlock(&table_lock); /* site:writer_lock */
    pthread_rwlock_unlock(&table_lock); /* site:writer_unlock */
    return arg;
}

int main(void)
{
    main_tid = gettid();
    put_tid("main");
    put_addr("big_lock", &big_lock);
    put_addr("table_lock", &table_lock);
    pthread_t h, w[2], s, r[2], wr;
    int ids[2] = {0, 1};
    CHECK(pthread_create(&h, NULL, holder, NULL));
    wait_flag(&held);
    for (int j = 0; j < 2; j++) { /* waiter#2 is created once waiter has started */
        CHECK(pthread_create(&w[j], NULL, waiter, &ids[j]));
        while (!__atomic_load_n(&waiter_tid[j], __ATOMIC_ACQUIRE))
            nap();
    }
    CHECK(pthread_join(h, NULL));
    for (int j = 0; j < 2; j++)
        CHECK(pthread_join(w[j], NULL));

    CHECK(pthread_create(&s, NULL, second, NULL));
    wait_flag(&second_held);
    pthread_mutex_lock(&big_lock);   /* site:main_lock */
    pthread_mutex_unlock(&big_lock); /* site:main_unlock */
    CHECK(pthread_join(s, NULL));

    for (int j = 0; j < 2; j++) {
        CHECK(pthread_create(&r[j], NULL, reader, &ids[j]));
        wait_flag(&read_held[j]);
    }
    CHECK(pthread_create(&wr, NULL, writer, NULL));
    for (int j = 0; j < 2; j++)
        CHECK(pthread_join(r[j], NULL));
    CHECK(pthread_join(wr, NULL));
    return 0;
}
