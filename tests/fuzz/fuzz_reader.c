/* libFuzzer target: arbitrary bytes as a trace file, through the reader (index, merge, events
 * synthesized), both text formats and the checker. Built with clang only
 * (tests/fuzz/CMakeLists.txt). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/trace/reader.h"
#include "src/analysis/check.h"
#include "src/export/textfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    /* The reader takes a path and preads: a memfd is a regular file with no disk behind it. */
    int fd = memfd_create("ptt-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    for (size_t off = 0; off < size;) {
        ssize_t k = write(fd, data + off, size - off);
        if (k <= 0)
            abort();
        off += (size_t)k;
    }
    char path[64], err[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct ptt_reader *r = ptt_reader_open(path, err, sizeof err);
    if (r) {
        ptt_reader_info(r, "ticks_per_second");
        ptt_reader_info(r, "pid");
        ptt_reader_nthreads(r);
        struct ptt_ev ev;
        char name[32];
        struct ptt_check *c = ptt_check_new(NULL);
        while (ptt_reader_next(r, &ev)) {
            ptt_print_raw(sink, &ev);
            ptt_print_human(sink, &ev);
            ptt_ev_name(&ev, name, sizeof name);
            ptt_check_event(c, &ev);
        }
        size_t n;
        ptt_check_end(c, &n);
        ptt_check_free(c);
        ptt_reader_error(r);
        ptt_reader_end(r);
        ptt_reader_close(r);
    }
    close(fd);
    return 0;
}
