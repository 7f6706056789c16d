/* Libraries loaded at their first use (src/util/dynlib.c): a table filled from the library, or
 * one line saying why not, the same at every later call. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "util/dynlib.h"

double ptt_no_such_function(double);

#define M_FUNCS(X) X(cos) X(sqrt)
static struct {
    M_FUNCS(PTT_DYN_PTR)
} m;
static const char *const m_names[] = {M_FUNCS(PTT_DYN_NAME)};

static void loaded(void **state)
{
    (void)state;
    struct ptt_dynlib lib = PTT_DYNLIB("libm.so.6", m, m_names);
    assert_int_equal(lib.n, 2);
    assert_int_equal(ptt_dynlib_load(&lib), 1);
    assert_true(m.cos(0.0) == 1.0);
    assert_true(m.sqrt(6.25) == 2.5);
    assert_int_equal(ptt_dynlib_load(&lib), 1);
    assert_string_equal(lib.why, "");
}

static void no_library(void **state)
{
    (void)state;
    struct ptt_dynlib lib = PTT_DYNLIB("libptt-none.so.0", m, m_names);
    assert_int_equal(ptt_dynlib_load(&lib), 0);
    assert_non_null(strstr(lib.why, "libptt-none.so.0"));
    assert_int_equal(lib.state, -1);
    assert_int_equal(ptt_dynlib_load(&lib), 0); /* the same answer */
}

#define BAD_FUNCS(X) X(cos) X(ptt_no_such_function)
static struct {
    BAD_FUNCS(PTT_DYN_PTR)
} bad;
static const char *const bad_names[] = {BAD_FUNCS(PTT_DYN_NAME)};

static void no_symbol(void **state)
{
    (void)state;
    struct ptt_dynlib lib = PTT_DYNLIB("libm.so.6", bad, bad_names);
    assert_int_equal(ptt_dynlib_load(&lib), 0);
    assert_string_equal(lib.why, "libm.so.6: no ptt_no_such_function in it");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loaded),
        cmocka_unit_test(no_library),
        cmocka_unit_test(no_symbol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
