/* libFuzzer target: arbitrary bytes as a test log, through the parsers of ptt runs (OPTS, TAP,
 * JUnit XML with expat) and the guess of its format. The first byte chooses the parser (the
 * guess, or one of the three), the rest is the log. Built with clang only
 * (tests/fuzz/CMakeLists.txt). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/runs/runs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    /* The import hands the parsers the file NUL-terminated. */
    size_t len = size - 1;
    char *text = malloc(len + 1);
    if (!text)
        abort();
    memcpy(text, data + 1, len);
    text[len] = 0;
    static const struct runs_format *const formats[] = {NULL, &runs_format_opts, &runs_format_tap,
                                                        &runs_format_junit};
    const struct runs_format *f = formats[data[0] & 3];
    if (!f)
        f = runs_format_guess(text, len);
    if (f) {
        struct runs_log log = {0};
        char err[512];
        if (f->parse(text, len, &log, err, sizeof err) == 0)
            for (size_t i = 0; i < log.n; i++)
                if (!log.tests[i].name || runs_status_name(log.tests[i].status)[0] == '?')
                    abort();
        runs_log_free(&log);
    }
    free(text);
    return 0;
}
