/* The carried state of a rotated trace (ptt trace --max-size): what a reader needs to name
 * things that the parts before hold, kept by ptt trace from the chunks it writes, and written at
 * the start of each new part as PTT_CHUNK_CARRY chunks (docs/format.md): the processes alive
 * (their start, the modules of their program, the names the program gave objects), the threads
 * alive (their start, the names pthread_setname_np gave them), and the processes that ended but
 * whose modules a live child still names its code with (it forked without an exec). */
#ifndef PTT_CARRY_H
#define PTT_CARRY_H

#include <stdint.h>

#include "../../common/format.h"
#include "trace/writer.h"

struct ptt_carry;

struct ptt_carry *ptt_carry_new(void);
/* The events that name things, by id (PTT_EV_ID_MASK + 1 entries, 1 for those): a chunk
 * without any need not be given to ptt_carry_chunk. */
const uint8_t *ptt_carry_ids(void);
/* A chunk just written to the current part: its events that name things are kept. Chunks of a
 * thread may come out of order (ptt trace drains sub-buffers in pool order): the events' times
 * decide. */
void ptt_carry_chunk(struct ptt_carry *c, const struct ptt_rec_chunk *h, const void *data,
                     uint32_t len);
/* The state as chunk records into w, one stream after another, each stream's events in time
 * order; then what no later part needs is forgotten. Returns the events written, *bytes their
 * bytes. */
uint64_t ptt_carry_write(struct ptt_carry *c, struct ptt_writer *w, uint64_t *bytes);
/* Whether the process pid was seen to end (since the last ptt_carry_write at least). */
int ptt_carry_ended(struct ptt_carry *c, int32_t pid);
void ptt_carry_free(struct ptt_carry *c);

#endif
