/* Writing a trace file (docs/format.md). */
#ifndef PTT_WRITER_H
#define PTT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/format.h"

struct ptt_writer {
    int fd;
    const char *path;   /* named in the report of a write error; NULL: no report */
    uint64_t offset;    /* bytes written so far: the end of the last whole record */
    uint64_t events;    /* events in the chunks written whole */
    uint64_t bytes;     /* and their bytes of events */
    uint64_t unwritten; /* events of chunks a write error kept out of the file */
    int error;          /* first errno of a failed write; later writes are skipped */
    int cut;            /* the chunks' memory was cut: later chunks are counted, not written */
    uint64_t prealloc;  /* the file's blocks are reserved up to here (ext4): see grow() */
    int reserved;       /* a reservation was tried: what it got is given back at the close */
};

struct iovec;
/* Called when a write of n iovecs fails with EFAULT, their memory cut under the writer (a pool
 * ptt trace -p gave to its process's user, shrunk: src/session/daemon.h); nonzero: the memory was
 * cut (it reads zeros now), the record being written and the later chunks are not written. With
 * n 0: whether the memory was cut. NULL: none. */
extern int (*ptt_writer_fault_hook)(const struct iovec *iov, int n);

/* Write the file header into fd, an open output (see ptt_output_open). path names it in the
 * one line that reports a write error (NULL: no report). -1 with errno on failure. */
int ptt_writer_start(struct ptt_writer *w, int fd, const char *path);
/* Create path exclusively (mode 0600, no symbolic link followed) and write the file header. */
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
/* After a write error: try once more to append these records (the true figures at the end),
 * leaving the file whole up to its last complete record if they do not fit either. */
int ptt_writer_retry(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n);
int ptt_writer_close(struct ptt_writer *w);
/* Give back the blocks reserved beyond the file's end (ptt_writer_close does it). */
void ptt_writer_trim(struct ptt_writer *w);

/* The output of ptt trace (docs/trace.md, "Output file"). A symbolic link in a sticky,
 * world-writable directory is followed only when it belongs to the user or to the directory's
 * owner (the kernel's protected_symlinks rule). An existing file is kept as FILE.old, or
 * overwritten with force; the new one is created exclusively, mode 0600, no link followed.
 * What is not a regular file (a FIFO, /dev/null, /dev/stdout) is opened as it is. */
struct ptt_output {
    int fd;       /* -1 when not opened (open_it 0) */
    int created;  /* a new regular file: removed if the program cannot run */
    int kept_old; /* FILE.old holds the previous file */
    int special;  /* not a regular file */
};
/* 0, or -1 with one line in err. open_it 0: only make room for the file (the flight recorder
 * writes it at the end, through a rename), refusing a special file. */
int ptt_output_open(const char *path, int force, int open_it, struct ptt_output *o, char *err,
                    size_t errlen);
/* The program could not run: remove the new file, give FILE back its previous content. */
void ptt_output_undo(const char *path, const struct ptt_output *o);
/* A file an export writes, as a stream: "-" is standard output; else made as ptt_output_open
 * makes it (created exclusively, 0600, no planted link followed), overwriting an earlier one
 * (a file made again from the trace is worth no FILE.old). NULL with one line in err. */
#include <stdio.h>
FILE *ptt_output_fopen(const char *path, char *err, size_t errlen);

#endif
