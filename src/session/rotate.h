/* Rotation (ptt trace --max-size=SIZE [--max-files=N], docs/trace.md "Long runs: rotation"): the
 * trace written into the parts FILE.1, FILE.2, ...; when the part being written reaches SIZE it
 * ends (a CLOCK record) and the next begins, whole by itself: its header, the session's INFO with
 * the set's keys, the session's first CLOCK record (time 0), the carried state (carry.h), then
 * the chunks. With N, only the last N parts are kept. */
#ifndef PTT_ROTATE_H
#define PTT_ROTATE_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/format.h"
#include "trace/writer.h"

struct ptt_rotate;

struct ptt_rotate_config {
    const char *path; /* FILE: the parts are FILE.N */
    uint64_t max_size;
    unsigned max_files; /* 0: every part is kept */
    int force;          /* the previous run removed, not kept as FILE.old.N */
    int clock_tsc;
};

/* The smallest SIZE, in sub-buffers: a part holds a few, besides its header and carried state. */
#define PTT_ROTATE_MIN_SUBBUFFERS 4

/* Move the previous run aside (parts.h), create FILE.1 with its header and the set's INFO keys
 * into w. info: the session's INFO text (it grows), first: its first CLOCK record, both written
 * again at the start of each part. NULL with one line in err. */
struct ptt_rotate *ptt_rotate_start(const struct ptt_rotate_config *cfg, struct ptt_writer *w,
                                    char *const *info, const struct ptt_rec_clock *first, char *err,
                                    size_t errlen);
/* Chunk records (a thread's sub-buffers, empty ones too, and ptt trace's own) into the parts, in
 * each thread's order (seq); named[i]: whether r[i] holds events that name things (NULL:
 * unknown; carry.h), the others need not be read for the carried state. One that comes early is
 * held until those before it are written. A part that reaches SIZE ends after the record that took
 * it there and the next one begins, with the carried state of the chunks written so far; the parts
 * past --max-files are deleted. When the next part cannot be created, one line says so, and what
 * comes later is counted as not written (as after a write error: the current part gets the END
 * record). */
void ptt_rotate_chunks(struct ptt_rotate *t, const struct ptt_writer_rec *r, const uint8_t *named,
                       unsigned n);
/* The session is over: the chunks still held written (one whose predecessor never came). */
void ptt_rotate_finish(struct ptt_rotate *t);
/* Bytes written into every part, those deleted included. */
uint64_t ptt_rotate_bytes(const struct ptt_rotate *t);
/* The parts for the start line ("t.ptt.1, t.ptt.2, ... (...)") and the summary ("t.ptt.1 to
 * t.ptt.7 (parts 1-5 deleted: --max-files=2)"). */
void ptt_rotate_target(const struct ptt_rotate *t, char *buf, size_t len);
void ptt_rotate_summary(const struct ptt_rotate *t, char *buf, size_t len);
/* The program could not be run: FILE.1 removed, the previous run given its names back. */
void ptt_rotate_undo(struct ptt_rotate *t);
void ptt_rotate_free(struct ptt_rotate *t);

#endif
