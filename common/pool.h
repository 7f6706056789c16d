/* The shared-memory pool between the traced processes (writers) and ptt trace (the daemon).
 *
 * Layout: one header page, then nbufs descriptors of 128 bytes (two cache lines each, so no two
 * writers share a line: the sub-buffer's, and a call slot's), the ready bits (ptt_pool_ready),
 * then nbufs sub-buffers of buf_size bytes, page aligned.
 *
 * A sub-buffer moves FREE -> OWNED (a writer thread popped it from the free list) -> READY (the
 * writer filled it, or its thread ended) -> FREE (the daemon wrote it to the file and pushed it
 * back, zeroed). Writers only pop; only the daemon pushes. A writer hands a sub-buffer over with
 * its length (committed) and what the daemon would otherwise read the records for: their events,
 * the losses their TRACE_LOST events count, whether one names things. The daemon copies it whole
 * without reading it. It walks the records of those whose writer could not count them exactly
 * (PTT_DESC_WALK) and of the OWNED sub-buffers of writers that are gone (killed, crashed, hung
 * when the session ends): up to the first empty length, since a writer writes a record's length
 * byte last (common/codec.h). */
#ifndef PTT_POOL_H
#define PTT_POOL_H

#include <stdatomic.h>
#include <stdint.h>

#define PTT_POOL_MAGIC 0x31304c4f4f505454ull /* "TTPOOL01" */
/* 7: owned and pressure, freed, sleepers and drain_wanted, PTT_DESC_BLOCKED; 8: the call slots
 * (struct ptt_call, slot_head, ptt_desc.slot) and PTT_CALL_ROOM */
#define PTT_POOL_VERSION 8
#define PTT_POOL_EMPTY 0xffffffffu
#define PTT_POOL_SECRET 16 /* bytes of the session's secret */

enum ptt_buf_state { PTT_BUF_FREE = 0, PTT_BUF_OWNED = 1, PTT_BUF_READY = 2 };
enum ptt_clock { PTT_CLOCK_TSC = 1, PTT_CLOCK_MONO = 2 };
enum ptt_overflow { PTT_OVERFLOW_BLOCK = 0, PTT_OVERFLOW_DISCARD = 1 };

/* Why events were dropped: the pool counts each reason (lost_why), the END record carries them
 * (common/format.h), ptt_lost_text (src/export/textfmt.h) words them. */
enum ptt_lost_why {
    PTT_LOST_DISCARD = 0, /* --overflow=discard and no free sub-buffer */
    PTT_LOST_STARVED = 1, /* no sub-buffer came free in 10 s: more live threads than them */
    PTT_LOST_DAEMON = 2,  /* ptt trace was gone */
    PTT_LOST_HANDLER = 3, /* a signal handler found no room for its event */
    PTT_LOST_NWHY = 4
};

/* A call begun and not yet recorded (lib/record.h: its IN waits here, and the call is recorded as
 * one record when it returns). In the pool rather than in the thread, so that ptt trace finds it
 * when the thread dies inside the call (the program crashed in it, or exited or was killed while
 * the thread was in it): the drain then writes its IN, at its entry, after the thread's last
 * record. A thread takes a slot with its first sub-buffer (slot_head, a free list of its own)
 * and gives it back when it ends; the drain takes back those of threads that died. Slot i is the
 * second line of descriptor i, without any other link to its sub-buffer. */
#define PTT_CALL_MAX_ARGS 5
enum { PTT_CALL_FREE = 0, PTT_CALL_CLAIMED = 1, PTT_CALL_PENDING = 2 };
struct ptt_call {
    _Alignas(64) uint32_t state; /* FREE, CLAIMED (being filled), PENDING */
    uint16_t id;                 /* its IN event */
    uint16_t n;                  /* its arguments */
    uint64_t t0;                 /* its entry */
    uint64_t a[PTT_CALL_MAX_ARGS];
    uint32_t next;          /* free-list link */
    _Atomic uint32_t owner; /* the serial of the thread that holds it (0: none): a descriptor names
                               it for that thread only, and it goes back once (a CAS) */
};
_Static_assert(sizeof(struct ptt_call) == 64, "one cache line per call slot");
/* The bytes a writer leaves free at the end of each sub-buffer: room for the IN of the call it
 * may die in (a record of PTT_CALL_MAX_ARGS literal values and an absolute time). */
#define PTT_CALL_ROOM 80u

struct ptt_desc {
    _Atomic uint32_t state;
    _Atomic uint32_t committed; /* bytes of events, stored by the owner when it hands it over */
    uint32_t next;              /* free-list link (daemon-written while FREE) */
    int32_t pid;
    int32_t tid;
    uint32_t serial;  /* thread number within its process, from 1 */
    uint32_t seq;     /* sub-buffer number within its thread, from 0; PTT_SEQ_UNSET while free
                         (its next owner numbers it only after taking it) */
    uint32_t nevents; /* events in the committed bytes (a call's one record: 2), stored with
                         committed, as are marked and flags */
    uint64_t base_ts; /* time stamp the first event's dts counts from */
    uint64_t marked;  /* events lost that its TRACE_LOST events count */
    uint32_t flags;   /* PTT_DESC_NAMED, PTT_DESC_WALK, PTT_DESC_BLOCKED */
    uint32_t slot;    /* its writer's call slot, plus 1; 0: none */
    uint8_t pad[8];
    struct ptt_call call; /* call slot number i, of whichever thread took it (not this one's) */
};
_Static_assert(sizeof(struct ptt_desc) == 128, "a cache line per descriptor, one per call slot");
#define PTT_SEQ_UNSET UINT32_MAX
#define PTT_DESC_NAMED 1u /* it holds an event that names things (ptt_ev_names) */
#define PTT_DESC_WALK 2u  /* nevents, marked and NAMED are unknown: read them from the records */
/* Handed over by a thread about to block (PTT_BLOCKS): its last event opens the call the thread
 * is in until its next sub-buffer. */
#define PTT_DESC_BLOCKED 4u

struct ptt_pool {
    uint64_t magic;
    uint32_t version;
    uint32_t nbufs;
    uint32_t buf_size;
    uint32_t clock;    /* enum ptt_clock */
    uint32_t overflow; /* enum ptt_overflow */
    int32_t daemon_pid;
    uint64_t desc_offset; /* from the start of the pool */
    uint64_t data_offset;
    uint64_t total_size;
    uint32_t backtrace_depth; /* --backtrace=N: frames recorded before each sited event */
    /* The daemon sleeps long, nothing to drain: the first writer to hand a sub-buffer over
     * clears it and wakes the daemon (SIGURG). Written at most once per idle spell. */
    _Atomic uint32_t idle;
    char proc_socket[108]; /* where a process announces itself (src/session/procs.h); "": nowhere */
    uint8_t secret[PTT_POOL_SECRET]; /* random, also in PTT_SHM: libptt attaches no other pool */
    /* The guardian that reserves the pool's rest as the writers need it (0: none, or nothing
     * left to reserve). A writer that finds no free sub-buffer sets reserve_wanted and wakes it
     * (SIGURG), once until it looks again. */
    _Atomic int32_t reserver_pid;
    _Atomic uint32_t reserve_wanted;
    _Atomic uint32_t reserve_waits; /* waits begun while the guardian still reserved the pool */
    uint8_t pad0[36];

    /* What is recorded, read on every event and written only by the daemon (ptt ctl): bit n of
     * masks[0] records the calls (IN, OUT) and META events of class n, of masks[1] its STATE
     * events. Stopped: only meta. Light level: masks[1] is 0. */
    _Alignas(64) _Atomic uint64_t masks[2];
    /* Set once nobody drains any more (ptt trace ended, or died and its guardian saw it): writers
     * stop recording at their next sub-buffer. Read-mostly, as the masks. */
    _Atomic uint32_t abandoned;
    /* Set while threads hold most sub-buffers (owned, from PTT_PRESSURE_ON of them; cleared below
     * PTT_PRESSURE_OFF): a thread about to block in a call then hands its own over first
     * (PTT_BLOCKS in lib/libptt.h), so that threads blocked for long do not hold the sub-buffers
     * the others need. Written by writers, at those two edges only. */
    _Atomic uint32_t pressure;

    /* Each contended word sits on a line of its own. */
    _Alignas(64) _Atomic uint64_t free_head; /* low 32 bits: index, high: ABA tag */
    _Atomic int32_t owned; /* sub-buffers OWNED: writers count theirs taken and handed over, the
                              daemon those it takes from writers that are gone */
    _Alignas(64) _Atomic uint64_t heartbeat; /* the daemon ticks it: writers waiting on a dead
                                                daemon give up */
    _Atomic uint32_t freed;    /* bumped after sub-buffers are put on the free list: writers
                                  waiting for one sleep on it (a futex) */
    _Atomic uint32_t sleepers; /* writers asleep on freed: woken only if some are */
    /* A writer found no free sub-buffer: it woke the drain (SIGURG) rather than wait for its
     * next turn, once until the drain takes its turn and clears it. */
    _Atomic uint32_t drain_wanted;
    _Alignas(64) _Atomic uint64_t lost;        /* events dropped, exactly */
    _Atomic uint64_t wait_ns;                  /* total time writers waited for a free sub-buffer */
    _Atomic uint64_t waits;                    /* number of such waits */
    _Atomic uint64_t lost_why[PTT_LOST_NWHY];  /* lost, by reason (enum ptt_lost_why) */
    _Alignas(64) _Atomic uint32_t next_serial; /* thread numbers, unique in the session: a
                                                  process that calls exec keeps its pid */
    _Alignas(64) _Atomic uint64_t slot_head;   /* the free call slots: as free_head */
};

#define PTT_PRESSURE_ON(nbufs) ((nbufs) - (nbufs) / 16)
#define PTT_PRESSURE_OFF(nbufs) ((nbufs) - (nbufs) / 8)

static inline struct ptt_desc *ptt_pool_desc(struct ptt_pool *p, uint32_t i)
{
    return (struct ptt_desc *)((char *)p + p->desc_offset) + i;
}

/* Right after the descriptors, a bit per sub-buffer: its writer sets it when it hands it over
 * (READY), and the daemon takes the bits (an exchange of each word) to find the READY ones
 * without reading every descriptor's line at each turn. A bit may be left over from a
 * sub-buffer taken otherwise (a full scan): the state says. */
#define PTT_POOL_READY_BYTES(nbufs) (((uint64_t)(nbufs) + 63) / 64 * 8)

static inline _Atomic uint64_t *ptt_pool_ready(struct ptt_pool *p)
{
    return (_Atomic uint64_t *)((char *)p + p->desc_offset +
                                (uint64_t)p->nbufs * sizeof(struct ptt_desc));
}

static inline uint8_t *ptt_pool_data(struct ptt_pool *p, uint32_t i)
{
    return (uint8_t *)p + p->data_offset + (uint64_t)i * p->buf_size;
}

/* The pool's layout as ptt trace made it. ptt trace and its guardian address the pool through
 * their own copy, never through the header again: attached as root to another user's process,
 * the pool is that user's, who could otherwise aim ptt trace's reads and writes anywhere
 * (docs/security.md). libptt reads the header: it is the writers' own memory. */
struct ptt_pool_geom {
    struct ptt_pool *base;
    uint32_t nbufs, buf_size;
    uint64_t desc_offset, data_offset, total_size;
};

static inline struct ptt_desc *ptt_geom_desc(const struct ptt_pool_geom *g, uint32_t i)
{
    return (struct ptt_desc *)((char *)g->base + g->desc_offset) + i;
}

/* Give call slot i (the second line of descriptor i) back to the free list whose head is head:
 * by the thread that ends, or by the drain for a thread that died. */
static inline void ptt_slot_push(_Atomic uint64_t *head, struct ptt_call *c, uint32_t i)
{
    uint64_t h = atomic_load_explicit(head, memory_order_relaxed);
    do
        __atomic_store_n(&c->next, (uint32_t)h, __ATOMIC_RELAXED);
    while (!atomic_compare_exchange_weak_explicit(head, &h, (((h >> 32) + 1) << 32) | i,
                                                  memory_order_release, memory_order_relaxed));
}

static inline _Atomic uint64_t *ptt_geom_ready(const struct ptt_pool_geom *g)
{
    return (_Atomic uint64_t *)((char *)g->base + g->desc_offset +
                                (uint64_t)g->nbufs * sizeof(struct ptt_desc));
}

static inline uint8_t *ptt_geom_data(const struct ptt_pool_geom *g, uint32_t i)
{
    return (uint8_t *)g->base + g->data_offset + (uint64_t)i * g->buf_size;
}

/* Environment passed from ptt trace to libptt: "/NAME:SECRET", the pool's shm name and its
 * secret in hex (docs/security.md). */
#define PTT_ENV_SHM "PTT_SHM"
#define PTT_META_MASK 1ull /* class meta (0): the process's start and end, losses */

#endif
