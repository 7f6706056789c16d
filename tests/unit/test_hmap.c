/* The hash map (src/util/hmap.c): records removed from among colliding keys, at the table's end
 * and across its wrap, leave every other record found, and the slots free for new ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/hmap.h"

/* Keys whose home slot is h in a table of 256 slots (the first capacity): h, h + 256, ... */
#define CAP 256
static uint64_t key_at(unsigned home, unsigned k)
{
    return home + (uint64_t)k * CAP;
}

static void put(struct ptt_hmap *m, uint64_t key)
{
    uint64_t *v = ptt_hmap_get(m, key, sizeof *v);
    *v = key;
}

static void all_found(struct ptt_hmap *m, const uint64_t *keys, const int *in, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t *v = ptt_hmap_get(m, keys[i], 0);
        if (in[i]) {
            assert_non_null(v);
            assert_int_equal(*v, keys[i]);
        } else {
            assert_null(v);
        }
    }
}

/* A run of colliding keys that wraps from the last slots to the first, with keys of their own
 * home slots among them; each removed in turn, in an order that takes middles, heads and tails. */
static void removal_keeps_probes(void **state)
{
    (void)state;
    struct ptt_hmap m = {0};
    uint64_t keys[12];
    int in[12];
    unsigned n = 0;
    for (unsigned k = 0; k < 6; k++)
        keys[n++] = key_at(CAP - 2, k); /* home 254: fills 254, 255, 0, 1, 2, 3 */
    keys[n++] = key_at(0, 1);           /* home 0: pushed to 4 */
    keys[n++] = key_at(1, 1);           /* home 1: 5 */
    keys[n++] = key_at(255, 1);         /* home 255: 6 */
    keys[n++] = key_at(5, 2);           /* home 5: 7 */
    keys[n++] = key_at(100, 0);         /* alone */
    keys[n++] = key_at(101, 0);
    for (unsigned i = 0; i < n; i++) {
        put(&m, keys[i]);
        in[i] = 1;
    }
    assert_int_equal(m.cap, CAP);
    const unsigned order[] = {2, 7, 0, 10, 5, 8, 1, 6, 3, 11, 9, 4};
    for (unsigned j = 0; j < n; j++) {
        unsigned i = order[j];
        uint64_t *v = ptt_hmap_del(&m, keys[i]);
        assert_non_null(v);
        assert_int_equal(*v, keys[i]);
        free(v);
        in[i] = 0;
        assert_null(ptt_hmap_del(&m, keys[i])); /* gone: a second removal finds nothing */
        all_found(&m, keys, in, n);
        assert_int_equal(m.n, n - j - 1);
    }
    for (size_t i = 0; i < m.cap; i++)
        assert_null(ptt_hmap_slot(&m, i));
    ptt_hmap_free(&m, NULL);
}

/* Many records made and removed, as the hang watch does with threads: the table does not grow
 * past what is held at once, and what is held is found. */
static void churn_keeps_the_table_small(void **state)
{
    (void)state;
    struct ptt_hmap m = {0};
    for (uint64_t k = 1; k <= 100000; k++) {
        put(&m, k * 0x9e3779b97f4a7c15ull);
        if (k > 50)
            free(ptt_hmap_del(&m, (k - 50) * 0x9e3779b97f4a7c15ull));
    }
    assert_int_equal(m.n, 50);
    assert_int_equal(m.cap, CAP);
    for (uint64_t k = 100000 - 49; k <= 100000; k++)
        assert_non_null(ptt_hmap_get(&m, k * 0x9e3779b97f4a7c15ull, 0));
    assert_null(ptt_hmap_get(&m, (100000 - 50) * 0x9e3779b97f4a7c15ull, 0));
    ptt_hmap_free(&m, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(removal_keeps_probes),
        cmocka_unit_test(churn_keeps_the_table_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
