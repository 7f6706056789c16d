/* The trace file (docs/format.md): a file header, then records. All integers little endian. */
#ifndef PTT_FORMAT_H
#define PTT_FORMAT_H

#include <stdint.h>

#define PTT_FILE_MAGIC "PTTRACE\0"
#define PTT_FORMAT_MAJOR 2 /* a reader refuses a newer major (it reads 1 too) */
#define PTT_FORMAT_MINOR 2 /* a reader accepts a newer minor, skipping records it does not know */

struct ptt_file_header {
    char magic[8];
    uint16_t major;
    uint16_t minor;
    uint32_t header_size; /* bytes before the first record */
};

/* Every record starts with this; size counts the whole record and is a multiple of 8. */
struct ptt_record {
    uint32_t type;
    uint32_t size;
};

enum ptt_record_type {
    PTT_REC_INFO = 1,  /* "key=value\n" text lines */
    PTT_REC_CLOCK = 2, /* struct ptt_rec_clock */
    PTT_REC_CHUNK = 3, /* struct ptt_rec_chunk, then events */
    PTT_REC_END = 4,   /* struct ptt_rec_end: the session ended and everything was saved */
};

/* A calibration point: the same instant read on the trace clock, CLOCK_MONOTONIC and
 * CLOCK_REALTIME. The reader converts trace ticks to nanoseconds between the first and the
 * last point. */
struct ptt_rec_clock {
    struct ptt_record h;
    uint64_t ticks;
    uint64_t mono_ns;
    uint64_t real_ns;
};

/* The events one thread wrote into one sub-buffer. */
struct ptt_rec_chunk {
    struct ptt_record h;
    int32_t pid;
    int32_t tid;
    uint32_t serial; /* thread number within the process: (pid, serial) names a stream */
    uint32_t seq;    /* chunk number within the stream */
    uint64_t base_ts;
    uint32_t nevents;
    uint32_t flags;
};
#define PTT_CHUNK_DAEMON 1 /* events ptt trace wrote itself (process exits) */
/* Since 1.2: with PTT_CHUNK_DAEMON, the carried state that begins each part of a rotated trace
 * (ptt trace --max-size) after the first: copies of the events, from the parts before, that name
 * things (processes, modules, live threads, names given), at their own times, in the stream
 * (pid, serial) that recorded them (serial 0: ptt trace's own). A reader of several parts uses
 * those of the first part it reads only. */
#define PTT_CHUNK_CARRY 2
/* Its records are of the compact encoding (common/codec.h), else of format 1's (event.h). */
#define PTT_CHUNK_COMPACT 4

struct ptt_rec_end {
    struct ptt_record h;
    uint64_t events;
    uint64_t bytes; /* bytes of events */
    uint64_t lost;
    uint64_t wait_ns;
    uint64_t waits;
    int32_t exit_status; /* as ptt trace exits */
    uint32_t pad;
    /* Minor 1: why they were lost, and how many no TRACE_LOST event marks (the thread ended or
     * died before it could write one). Minor 0's END ends before: a reader reads them as 0. */
    uint64_t lost_why[4]; /* enum ptt_lost_why (common/pool.h) */
    uint64_t lost_unmarked;
};
#define PTT_REC_END_V0_SIZE 56 /* the END record of minor 0 */

#endif
