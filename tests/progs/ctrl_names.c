/* Names made of control characters (tests/e2e/test_text_names.py): ctrl_names [hang] [ARG...]
 *
 * Two threads name themselves with escape sequences: a C0 one ("\e[2J" clears a terminal) and a C1
 * one (U+009B, a CSI to many terminals, as UTF-8). Main names two mutexes with ptt_name, one with
 * an OSC sequence (it sets a terminal's title), one with a C0 sequence. The first thread locks A
 * then B, the second, after it ended, B then A: an inversion that ptt check reports, naming both
 * threads and both mutexes. With "hang", main then holds A and joins a third thread, named with
 * an escape sequence too, that waits for A: a hang. Other arguments are not read: the test puts
 * control characters in the command line. Prints the threads' ids (@tid_1, @tid_2, @tid_3). */
#include <ptt.h>

#include "progs.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

static void *first(void *arg)
{
    CHECK(pthread_setname_np(pthread_self(), "\x1b[2Jwipe"));
    put_tid("1");
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return arg;
}

static void *second(void *arg)
{
    CHECK(pthread_setname_np(pthread_self(), "c1\xc2\x9b"
                                             "31mred"));
    put_tid("2");
    pthread_mutex_lock(&b);
    pthread_mutex_lock(&a);
    pthread_mutex_unlock(&a);
    pthread_mutex_unlock(&b);
    return arg;
}

static void *stuck(void *arg)
{
    CHECK(pthread_setname_np(pthread_self(), "\x1b[1mstuck"));
    put_tid("3");
    pthread_mutex_lock(&a);
    return arg;
}

int main(int argc, char **argv)
{
    ptt_name(&a, "A\x1b]0;owned\x07");
    ptt_name(&b, "B\x1b[5m");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, first, NULL));
    CHECK(pthread_join(t, NULL));
    CHECK(pthread_create(&t, NULL, second, NULL));
    CHECK(pthread_join(t, NULL));
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        fflush(stdout);
        pthread_mutex_lock(&a);
        CHECK(pthread_create(&t, NULL, stuck, NULL));
        CHECK(pthread_join(t, NULL));
    }
    return 0;
}
