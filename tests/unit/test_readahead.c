/* The read-ahead thread (src/trace/readahead.c) stopped by the command's thread while it is
 * filling a batch, and running out of memory right after: the stop returns (it waited for the
 * producer's end, which never came, when the producer parked only after the stop's look). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/readahead.h"
#include "util/util.h"

/* In the producer's second batch (a batch holds 512 KiB, 9,363 of these events of 56 bytes),
 * before the four it may fill ahead are full. */
#define OOM_AT 12000

static struct ptt_ev ev;
static unsigned long made;
static _Atomic int stopping;

/* The producer's events; at OOM_AT it waits for the stop to be under way, then runs out of
 * memory, as an allocation failing in the reader's merge would. */
static const struct ptt_ev *source(struct ptt_reader *r)
{
    (void)r;
    if (++made == OOM_AT) {
        while (!stopping)
            usleep(1000);
        usleep(100000); /* the command's thread is in ptt_readahead_stop by now */
        ptt_out_of_memory();
    }
    ev.ns = (int64_t)made;
    ev.nargs = 0;
    return &ev;
}

static void stop_while_producer_runs_out(void **state)
{
    (void)state;
    char err[256] = "";
    struct ptt_readahead *ra = ptt_readahead_start(NULL, source, err);
    assert_non_null(ra);
    const struct ptt_ev *first = ptt_readahead_get(ra);
    assert_non_null(first);
    assert_int_equal(first->ns, 1);
    stopping = 1;
    alarm(30); /* a stop that never returns: the test fails (SIGALRM) rather than hangs */
    ptt_readahead_stop(ra);
    alarm(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(stop_while_producer_runs_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
