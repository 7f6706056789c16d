/* Who made others wait (src/analysis/blame.c): the waiting for a lock charged to its holders,
 * exactly, in every case docs/stat.md describes. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "src/analysis/blame.h"

/* Holders (tids) and their sites: a lock at 0x100 + tid, an unlock at 0x200 + tid. */
#define TAKE(t) (0x100u + (t))
#define REL(t) (0x200u + (t))

/* The entry of (tid, take, release, end); fails if there is none. */
static const struct ptt_blame_entry *entry(struct ptt_blame *b, int32_t tid, uint64_t take,
                                           uint64_t release, int end)
{
    size_t n;
    const struct ptt_blame_entry *e = ptt_blame_entries(b, &n);
    for (size_t i = 0; i < n; i++)
        if (e[i].tid == tid && e[i].take == take && e[i].release == release &&
            e[i].held_at_end == end)
            return &e[i];
    fail_msg("no entry for tid %d", tid);
    return NULL;
}

/* The time and waits of all entries. */
static void totals(struct ptt_blame *b, uint64_t *ns, uint64_t *waits)
{
    size_t n;
    const struct ptt_blame_entry *e = ptt_blame_entries(b, &n);
    *ns = *waits = 0;
    for (size_t i = 0; i < n; i++)
        *ns += e[i].ns, *waits += e[i].waits;
}

/* 1 holds from 0 to 100; 2 waits from 10 (seen at 20), 3 from 30; 1 releases at 100, 2 gets it
 * at 105 and releases at 150, 3 gets it at 160. */
static void test_mutex(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_hold(&b, 1, TAKE(1));
    ptt_blame_wait(&b, 2, 10);
    ptt_blame_wait(&b, 3, 30);
    ptt_blame_release(&b, 1, REL(1), 100);
    ptt_blame_wait_end(&b, 2, 10, 105, 1);
    ptt_blame_hold(&b, 2, TAKE(2));
    ptt_blame_release(&b, 2, REL(2), 150);
    ptt_blame_wait_end(&b, 3, 30, 160, 1);
    ptt_blame_hold(&b, 3, TAKE(3));
    ptt_blame_release(&b, 3, REL(3), 170);
    const struct ptt_blame_entry *e1 = entry(&b, 1, TAKE(1), REL(1), 0);
    assert_int_equal(e1->ns, 90 + 5 + 70);
    assert_int_equal(e1->waits, 2);
    const struct ptt_blame_entry *e2 = entry(&b, 2, TAKE(2), REL(2), 0);
    assert_int_equal(e2->ns, 50 + 10);
    assert_int_equal(e2->waits, 1);
    uint64_t ns, waits;
    totals(&b, &ns, &waits);
    assert_int_equal(ns, (105 - 10) + (160 - 30)); /* the waits, whole */
    assert_int_equal(waits, 3);
    ptt_blame_free(&b);
}

/* Readers 1 and 2 hold a rwlock; writer 3 waits from 10; 1 unlocks at 41, 2 at 100; 3 gets it
 * at 110. The first 31 ns are split (16 to the first holder), the rest is 2's. */
static void test_readers_share(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_hold(&b, 1, TAKE(1));
    ptt_blame_hold(&b, 2, TAKE(2));
    ptt_blame_wait(&b, 3, 10);
    ptt_blame_release(&b, 1, REL(1), 41);
    ptt_blame_release(&b, 2, REL(2), 100);
    ptt_blame_wait_end(&b, 3, 10, 110, 1);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->ns, 16);
    assert_int_equal(entry(&b, 2, TAKE(2), REL(2), 0)->ns, 15 + 59 + 10);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->waits, 1);
    assert_int_equal(entry(&b, 2, TAKE(2), REL(2), 0)->waits, 1);
    ptt_blame_free(&b);
}

/* A wait through several holds of one thread at one site counts once for it. */
static void test_counted_once(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_wait(&b, 9, 0);
    for (int k = 0; k < 3; k++) {
        ptt_blame_hold(&b, 1, TAKE(1));
        ptt_blame_release(&b, 1, REL(1), 10 * (k + 1));
    }
    ptt_blame_wait_end(&b, 9, 0, 35, 1);
    const struct ptt_blame_entry *e = entry(&b, 1, TAKE(1), REL(1), 0);
    assert_int_equal(e->waits, 1);
    assert_int_equal(e->ns, 35);
    ptt_blame_free(&b);
}

/* A timeout goes to the holder, added when it releases; a wait open at the end to a hold never
 * released; a wait with nobody known holding it to tid 0. */
static void test_timeout_end_unknown(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_hold(&b, 1, TAKE(1));
    ptt_blame_wait(&b, 2, 10);
    ptt_blame_wait_end(&b, 2, 10, 50, 0); /* timed out */
    ptt_blame_release(&b, 1, REL(1), 60);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->ns, 40);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->waits, 1);

    struct ptt_blame c = {0};
    ptt_blame_hold(&c, 4, TAKE(4));
    ptt_blame_wait(&c, 5, 100);
    ptt_blame_wait_end(&c, 5, 100, 300, 0); /* the trace ended */
    assert_int_equal(entry(&c, 4, TAKE(4), 0, 1)->ns, 200);
    assert_int_equal(entry(&c, 4, TAKE(4), 0, 1)->waits, 1);

    struct ptt_blame d = {0};
    ptt_blame_wait(&d, 6, 0);
    ptt_blame_wait_end(&d, 6, 0, 70, 1); /* its holder never seen */
    assert_int_equal(entry(&d, 0, 0, 0, 0)->ns, 70);
    ptt_blame_free(&b);
    ptt_blame_free(&c);
    ptt_blame_free(&d);
}

/* A release between the lock's entry and its CONTENDED event, and one just before the entry
 * with nobody holding the lock after it (the holder was unlocking): that holder made it wait. */
static void test_release_before_seen(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_hold(&b, 1, TAKE(1));
    ptt_blame_release(&b, 1, REL(1), 20);
    ptt_blame_wait(&b, 2, 10); /* entered at 10, seen at 25 */
    ptt_blame_wait_end(&b, 2, 10, 30, 1);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->ns, 20);
    assert_int_equal(entry(&b, 1, TAKE(1), REL(1), 0)->waits, 1);

    struct ptt_blame c = {0};
    ptt_blame_hold(&c, 1, TAKE(1));
    ptt_blame_release(&c, 1, REL(1), 5);
    ptt_blame_wait(&c, 2, 10);
    ptt_blame_wait_end(&c, 2, 10, 12, 1);
    assert_int_equal(entry(&c, 1, TAKE(1), REL(1), 0)->ns, 2);
    assert_int_equal(entry(&c, 1, TAKE(1), REL(1), 0)->waits, 1);
    ptt_blame_free(&b);
    ptt_blame_free(&c);
}

/* A release of a hold never seen taken: taken at site 0; a forgotten wait is charged no more. */
static void test_unseen_and_forget(void **state)
{
    (void)state;
    struct ptt_blame b = {0};
    ptt_blame_wait(&b, 2, 0);
    ptt_blame_wait(&b, 3, 0);
    ptt_blame_release(&b, 1, REL(1), 10);
    ptt_blame_forget(&b, 3);
    assert_false(ptt_blame_waiting(&b, 3));
    ptt_blame_wait_end(&b, 2, 0, 15, 1);
    const struct ptt_blame_entry *e = entry(&b, 1, 0, REL(1), 0);
    assert_int_equal(e->ns, 10 + 10 + 5);
    assert_int_equal(e->waits, 2);
    ptt_blame_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutex),
        cmocka_unit_test(test_readers_share),
        cmocka_unit_test(test_counted_once),
        cmocka_unit_test(test_timeout_end_unknown),
        cmocka_unit_test(test_release_before_seen),
        cmocka_unit_test(test_unseen_and_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
