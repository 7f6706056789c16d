/* Writing a trace file (docs/format.md). */
#ifndef PTT_WRITER_H
#define PTT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../common/format.h"

struct ptt_writer {
    int fd;
    uint64_t offset; /* bytes written so far */
    int error;       /* first errno of a failed write; later writes are skipped */
};

/* Create path (mode 0600) and write the file header. -1 with errno on failure. */
int ptt_writer_open(struct ptt_writer *w, const char *path);
/* Write a record made of a header part and an optional payload, padded to 8 bytes. */
int ptt_writer_record(struct ptt_writer *w, uint32_t type, const void *head, size_t head_len,
                      const void *payload, size_t payload_len);
/* Several records in one system call (the drain's chunks: one writev costs the kernel much less
 * than as many small ones). Each is head (a struct ptt_record first, its type and size set
 * here) then payload; payload lengths must be multiples of 8. */
struct ptt_writer_rec {
    uint32_t type;
    void *head;
    size_t head_len;
    const void *payload;
    size_t payload_len;
};
int ptt_writer_records(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n);
int ptt_writer_info(struct ptt_writer *w, const char *text);
int ptt_writer_clock(struct ptt_writer *w, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns);
int ptt_writer_close(struct ptt_writer *w);

#endif
