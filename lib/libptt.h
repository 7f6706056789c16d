/* Internals shared by libptt's files (not the hot path: see record.h). */
#ifndef PTT_LIBPTT_H
#define PTT_LIBPTT_H

#include "record.h"
#include "real.h"

#define PTT_EXPORT __attribute__((visibility("default")))

extern struct ptt_pool *ptt_pool;
extern int ptt_pid;

/* Hand the calling thread's sub-buffer to the daemon (its thread ends, or the process exits). */
void ptt_thread_release(struct ptt_thread *t);

/* Convert a struct timespec the application passed into one argument (ns, wrapping). */
static inline uint64_t ptt_ts_arg(const struct timespec *ts)
{
    return ts ? (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec : 0;
}

#endif
