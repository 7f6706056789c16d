/* The draining side of the shared-memory pool (common/pool.h), run by ptt trace. */
#ifndef PTT_DAEMON_H
#define PTT_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/pool.h"
#include "session/rotate.h"
#include "trace/writer.h"

/* Where drained chunks go: the trace file by default, the flight recorder's window with
 * --flight-recorder. daemon_own: one of ptt trace's own chunks (process ends, switches, hangs). */
typedef void (*ptt_chunk_sink)(void *arg, const struct ptt_rec_chunk *c, const void *data,
                               uint32_t len, int daemon_own);

struct ptt_daemon {
    struct ptt_pool *pool;
    struct ptt_pool_geom geom; /* the pool's layout, never read again from its header */
    ptt_chunk_sink sink;       /* NULL: write to out */
    void *sink_arg;
    size_t size;
    char shm_name[64]; /* the pool: /ptt-UID-PID-RAND */
    char name[64];     /* the session: ptt-UID-PID (its control socket's name) */
    char env[128];     /* PTT_SHM for the program: "/ptt-UID-PID-RAND:SECRET" */
    uint8_t secret[PTT_POOL_SECRET];
    int guardian; /* the guardian's pipe (guardian.h); -1: none */
    int clock_tsc;
    struct ptt_writer *out;
    struct ptt_rotate *rot; /* --max-size: the parts out is written into; NULL: one file */
    uint64_t events, bytes, chunks;
    uint64_t corrupt;     /* chunks cut short at a malformed event (a bug if ever non-zero) */
    uint64_t lost_marked; /* events lost that the TRACE_LOST events drained so far count */
    /* Told of each sub-buffer drained (index, bytes of whole events) while it is still in the
     * pool: hang detection reads there what it had not read yet. NULL: none. */
    void (*drained)(void *arg, uint32_t index, uint32_t len);
    void *drained_arg;
    /* Told of each process's end (arg: drained_arg), once what it had not handed over is drained
     * (ptt_daemon_process_exit). NULL: none. */
    void (*exited)(void *arg, int32_t pid);
    /* Told that process pid runs a new program (an exec) whose threads are numbered after
     * `before`, once what its old program's threads left is drained. NULL: none. */
    void (*execd)(void *arg, int32_t pid, uint32_t before);
    /* Told that a process pid was announced, its threads numbered after `before`. NULL: none. */
    void (*started)(void *arg, int32_t pid, uint32_t before);
    int32_t image_pid; /* PTT_DRAIN_IMAGE: the process, and its old program's last serial */
    uint32_t image_before;
};

struct ptt_pool_config {
    uint64_t size;     /* bytes of the whole pool */
    uint32_t buf_size; /* bytes of one sub-buffer */
    int clock_tsc;
    int overflow;
    uint64_t class_mask;
    int light;          /* record calls only, no STATE events */
    int stopped;        /* start with recording off (ptt ctl start) */
    unsigned backtrace; /* --backtrace=N */
    int reserve_later;  /* with --overflow=block and a guardian, a large pool's rest is
                           reserved by the guardian as the writers need it */
};

/* Create and map the pool, its memory reserved before any writer uses it, so that a full
 * /dev/shm is an error now rather than a bus error in the application later (reserve_later: the
 * rest by the guardian, the room checked now). Its name has a random part and is
 * created exclusively: a name taken (by anyone) is never removed, another is tried. -1 with a
 * message in err. */
int ptt_daemon_create(struct ptt_daemon *d, const struct ptt_pool_config *c, char *err,
                      size_t errlen);
/* Put sub-buffer i on the free list (ptt trace's side and the guardian's push; writers pop). */
void ptt_pool_push_free(const struct ptt_pool_geom *g, uint32_t i);
/* n sub-buffers were put on the free list: wake as many writers waiting for one (lib/buffer.c). */
void ptt_pool_freed(const struct ptt_pool_geom *g, uint32_t n);
/* Nobody drains pool p any more: writers stop recording, those waiting for a sub-buffer at once. */
void ptt_pool_abandon(struct ptt_pool *p);
/* Reserve sub-buffers from `from` up to `upto` of pool g (file fd) in /dev/shm, then put them on
 * the free list. 0, or posix_fallocate's error (/dev/shm full: none is put on the list). */
int ptt_pool_reserve(const struct ptt_pool_geom *g, int fd, uint32_t from, uint32_t upto);
/* The same, the pool's name told to a guardian (guardian.h) before it is created; d owns the
 * guardian's pipe from then on, even on an error. */
int ptt_daemon_create_guarded(struct ptt_daemon *d, const struct ptt_pool_config *c, int guardian,
                              char *err, size_t errlen);
/* What ptt_daemon_drain takes besides READY sub-buffers: a pid > 0 takes the OWNED ones of that
 * (ended) process too. */
enum {
    PTT_DRAIN_READY = 0,  /* only READY */
    PTT_DRAIN_ALL = -1,   /* every OWNED one too: the session is over */
    PTT_DRAIN_DEAD = -2,  /* OWNED ones of threads that no longer exist (ended without handing
                             their sub-buffer over: killed, exec, raw clone, exit-time code) */
    PTT_DRAIN_IMAGE = -3, /* OWNED ones of image_pid's threads numbered up to image_before */
};
/* Write sub-buffers to the file and free them; returns how many. */
size_t ptt_daemon_drain(struct ptt_daemon *d, int which);
/* Record that a process of the session ended, with its wait status. */
/* The process's end, at the trace clock's time at (0: now). */
void ptt_daemon_process_exit(struct ptt_daemon *d, int pid, int status, uint64_t at);
/* Process pid runs a new program whose threads are numbered after `before`: what the old one's
 * threads had not handed over (exec ended them all, but the one that called it, whose tid the
 * process keeps) is drained now, rather than kept in the pool until the process ends. */
void ptt_daemon_process_exec(struct ptt_daemon *d, int pid, uint32_t before);
/* Process pid was announced, its threads numbered after `before` (the started hook). */
void ptt_daemon_process_start(struct ptt_daemon *d, int pid, uint32_t before);
/* Record events of ptt trace's own, about process pid (ptt trace's pid for the session), all
 * at the current time: ids[i] with nargs[i] arguments taken in turn from args. */
void ptt_daemon_events(struct ptt_daemon *d, int pid, unsigned n, const uint16_t *ids,
                       const unsigned *nargs, const uint64_t *args);
/* ptt trace -p as root gives the pool to the traced process's user, who can then shrink it
 * (ftruncate): the pages cut off would fault (SIGBUS) where ptt trace reads them. Guarded, the
 * first such fault replaces the whole mapping at base (len bytes) by zeroed private memory, so
 * that the access reads zeros and ptt_pool_cut() says so; a fault elsewhere, and a SIGBUS sent,
 * is what it would have been. One mapping per process, forgotten when the pool is unmapped.
 * (The guardian maps the pool only to reserve it as the writers need it, which no -p session
 * asks of it.) */
void ptt_pool_guard(void *base, size_t len);
int ptt_pool_cut(void);
/* The session is over: mark the pool abandoned (processes that outlive the session stop
 * recording), unmap it, remove its name, and tell the guardian it was a clean end. */
void ptt_daemon_destroy(struct ptt_daemon *d);
/* Remove what sessions of ours left when their ptt trace died with its guardian: pools
 * /dev/shm/ptt-UID-PID-* and files ptt-UID-PID.* of the control directory ctl_dir (NULL: none)
 * whose ptt trace (PID) no longer exists. */
void ptt_daemon_sweep(const char *ctl_dir);

#endif
