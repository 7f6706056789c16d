/* The index that tells which addresses of a binary have no symbol without asking libdw
 * (src/analysis/symbols.c, struct nosym): at the bounds of every symbol of every library this
 * test runs with (the C library, libdw, libelf, cmocka, ...), and of libLLVM where installed
 * (the large stripped library that made it needed), an address it says has none has none for
 * libdw either. */
#define _GNU_SOURCE
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "src/analysis/symbols.h"

/* Addresses asked of libdw per binary (a lookup scans its whole table: about 3 ms in libLLVM) */
#define MAX_PER_FILE 400

static int one_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    unsigned *files = arg;
    if (info->dlpi_name[0] != '/')
        return 0; /* the program (checked below) and the vDSO */
    size_t checked;
    long wrong = ptt_symbols_check_index(info->dlpi_name, MAX_PER_FILE, &checked);
    print_message("%s: %zu addresses without a symbol asked, %ld found one\n", info->dlpi_name,
                  checked, wrong);
    if (wrong)
        fail_msg("%s: libdw found a symbol at %ld addresses the index said had none",
                 info->dlpi_name, wrong);
    *files += checked > 0;
    return 0;
}

static void test_index_agrees(void **state)
{
    (void)state;
    if (!ptt_symbols_available())
        skip();
    unsigned files = 0;
    dl_iterate_phdr(one_object, &files);
    assert_true(files >= 3); /* libc, libdw, libelf at least */
    static const char *more[] = {"/proc/self/exe", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        if (access(more[i], R_OK))
            continue;
        struct dl_phdr_info info = {.dlpi_name = more[i]};
        one_object(&info, sizeof info, &files);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
