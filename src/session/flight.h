/* The flight recorder (ptt trace --flight-recorder=SIZE): the newest SIZE bytes of events kept
 * in ptt trace's memory, written to the trace file when the session ends, on a hang, or on
 * 'ptt ctl dump'. ptt trace's own events (process ends, switches, hangs) are always kept. */
#ifndef PTT_FLIGHT_H
#define PTT_FLIGHT_H

#include <stdint.h>

#include "../../common/format.h"

struct ptt_flight;

struct ptt_flight *ptt_flight_new(uint64_t size);
/* A ptt_chunk_sink (daemon.h): keep a copy, dropping the oldest chunks past the size. */
void ptt_flight_add(void *flight, const struct ptt_rec_chunk *c, const void *data, uint32_t len,
                    int daemon_own);
/* Write the window as a whole trace file at path (through a temporary file and a rename, so a
 * reader never sees half of it): the file header, info (INFO text), the clock records, the
 * chunks, the end record if end is set. Returns the number of events written, -1 on error
 * (errno set). */
int64_t ptt_flight_write(struct ptt_flight *f, const char *path, const char *info,
                         const struct ptt_rec_clock *clocks, unsigned nclocks,
                         const struct ptt_rec_end *end);
/* Events dropped from the window so far (older than its size). */
uint64_t ptt_flight_dropped(const struct ptt_flight *f);
void ptt_flight_free(struct ptt_flight *f);

#endif
