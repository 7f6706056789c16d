/* pthread_key_create, pthread_key_delete, pthread_setspecific, pthread_getspecific: key_calls. */
#include "progs.h"

static pthread_key_t k;
static void *destroyed;

static void destructor(void *v)
{
    destroyed = v;
}

static void *worker(void *arg)
{
    put_tid("t2");
    CALL("t2_set", pthread_setspecific(k, arg));
    put_value("t2_get", pthread_getspecific(k));
    return NULL;
}

int main(void)
{
    pthread_key_t k2;
    pthread_t th;
    const pthread_key_t bad = 100000; /* never a key (PTHREAD_KEYS_MAX is 1024) */
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    put_addr("k_ptr", &k);
    put_addr("k2_ptr", &k2);
    put_line("@destructor=0x%" PRIxPTR, (uintptr_t)destructor);
    put_fn("fn", worker);
    put_addr("th_ptr", &th);
    CALL("create", pthread_key_create(&k, destructor));
    put_line("key=%u", k);
    put_value("get_unset", pthread_getspecific(k));
    CALL("set", pthread_setspecific(k, (void *)0x1234));
    put_value("get", pthread_getspecific(k));
    /* A thread's own value; its destructor runs when the thread ends. */
    CALL("create_thread", pthread_create(&th, NULL, worker, (void *)0x5678));
    put_pthread("th", th);
    CALL("join", pthread_join(th, NULL));
    put_value("destroyed", destroyed);
    put_value("get_after", pthread_getspecific(k));
    CALL("create_2", pthread_key_create(&k2, NULL));
    put_line("key2=%u", k2);
    CALL("delete", pthread_key_delete(k));
    CALL("delete_again", pthread_key_delete(k));
    CALL("set_deleted", pthread_setspecific(k, (void *)0x1));
    put_line("bad=%u", bad);
    CALL("set_bad", pthread_setspecific(bad, (void *)0x1));
    put_value("get_bad", pthread_getspecific(bad));
    CALL("delete_bad", pthread_key_delete(bad));
    CALL("delete_2", pthread_key_delete(k2));
    return 0;
}
