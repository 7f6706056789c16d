/* A thread blocked in a traced wait while another works outside any traced call, then releases
 * it: hang_busy compute|sleep|read MS [ROUNDS]
 *   the holder locks m and, once the waiter is blocked in its lock of m, spends MS ms computing
 *   (a CPU loop), in nanosleep, or in read(2) on a pipe a feeder thread writes after MS ms; then
 *   it unlocks m; main joins both. Prints the threads' ids, "@blocked=1" once the waiter is
 *   blocked, and "released=1" at the end. ROUNDS (default 1): all that, ROUNDS times over. */
#include "progs.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int held;
static long ms;
static const char *mode;
static int round_no; /* what a round prints, the first prints alone */
static int pipefd[2];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *feeder(void *arg)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&d, &d))
        ;
    if (write(pipefd[1], "x", 1) != 1)
        exit(98);
    return arg;
}

static void *holder(void *arg)
{
    if (!round_no)
        put_tid("holder");
    pthread_mutex_lock(&m);
    set_flag(&held);
    wait_mutex_waiter(&m);
    if (!round_no)
        put_line("@blocked=1");
    fflush(stdout);
    if (!strcmp(mode, "compute")) {
        volatile unsigned long x = 0;
        for (double t0 = now_ms(); now_ms() - t0 < (double)ms;)
            x++;
    } else if (!strcmp(mode, "sleep")) {
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
        while (nanosleep(&d, &d))
            ;
    } else {
        char c;
        while (read(pipefd[0], &c, 1) != 1)
            ;
    }
    pthread_mutex_unlock(&m);
    return arg;
}

static void *waiter(void *arg)
{
    if (!round_no)
        put_tid("waiter");
    wait_flag(&held);
    pthread_mutex_lock(&m); /* site:waiter_lock */
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    int rounds = argc == 4 ? atoi(argv[3]) : 1;
    if (argc < 3 || argc > 4 || (ms = atol(argv[2])) < 1 || rounds < 1 ||
        (strcmp(argv[1], "compute") && strcmp(argv[1], "sleep") && strcmp(argv[1], "read"))) {
        fprintf(stderr, "usage: hang_busy compute|sleep|read MS [ROUNDS]\n");
        return 2;
    }
    mode = argv[1];
    put_line("@pid=%d", (int)getpid());
    if (pipe(pipefd))
        return 3;
    for (; round_no < rounds; round_no++) {
        pthread_t th[3];
        int nth = 2;
        __atomic_store_n(&held, 0, __ATOMIC_SEQ_CST);
        CHECK(pthread_create(&th[0], NULL, holder, NULL));
        CHECK(pthread_create(&th[1], NULL, waiter, NULL));
        if (!strcmp(mode, "read"))
            CHECK(pthread_create(&th[nth++], NULL, feeder, NULL));
        for (int i = 0; i < nth; i++)
            CHECK(pthread_join(th[i], NULL));
    }
    put_line("released=1");
    return 0;
}
