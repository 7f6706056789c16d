/* Each pthread_spin_* routine: spin_calls CASE (see cases[]). */
#include "progs.h"

static pthread_spinlock_t s;
static int started;

static void case_init(void)
{
    pthread_spinlock_t x;
    put_addr("x", &x);
    CALL("init_private", pthread_spin_init(&x, PTHREAD_PROCESS_PRIVATE));
    CALL("destroy_private", pthread_spin_destroy(&x));
    CALL("init_shared", pthread_spin_init(&x, PTHREAD_PROCESS_SHARED));
    CALL("destroy_shared", pthread_spin_destroy(&x));
}

static void case_lock(void)
{
    CALL("lock", pthread_spin_lock(&s));
    CALL("unlock", pthread_spin_unlock(&s));
    CALL("trylock_free", pthread_spin_trylock(&s));
    CALL("trylock_held", pthread_spin_trylock(&s));
    CALL("unlock_2", pthread_spin_unlock(&s));
}

static void *spinner(void *arg)
{
    put_tid("t2");
    set_flag(&started);
    CALL("t2_lock", pthread_spin_lock(&s));
    CALL("t2_unlock", pthread_spin_unlock(&s));
    return arg;
}

/* t2 locks s while main holds it: it spins (SPIN_WAIT) until main unlocks (SPIN_ACQUIRED). */
static void case_contended(void)
{
    pthread_t th;
    put_fn("fn", spinner);
    put_addr("th_ptr", &th);
    CALL("lock", pthread_spin_lock(&s));
    CALL("create", pthread_create(&th, NULL, spinner, (void *)0x9));
    put_pthread("th", th);
    wait_flag(&started);
    /* glibc's x86-64 spinlock is 1 when free, 0 when taken; a thread that finds it taken
     * decrements it below 0 before it spins. Only then has t2 surely found it taken. */
    while (__atomic_load_n(&s, __ATOMIC_ACQUIRE) >= 0)
        nap();
    CALL("unlock", pthread_spin_unlock(&s));
    CALL("join", pthread_join(th, NULL));
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"init", case_init},
    {"lock", case_lock},
    {"contended", case_contended},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(argv[1], cases[i].name)) {
            put_line("@pid=%d", (int)getpid());
            put_tid("main");
            put_addr("s", &s);
            CALL("init_s", pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
            cases[i].fn();
            CALL("destroy_s", pthread_spin_destroy(&s));
            return 0;
        }
    fprintf(stderr, "usage: spin_calls CASE\n");
    return 2;
}
