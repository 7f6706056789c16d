/* Encoding of one event as a writer stores it into its sub-buffer (see docs/format.md). */
#ifndef PTT_EVENT_H
#define PTT_EVENT_H

#include <stdint.h>

/* Event ids, from the table. */
enum ptt_event_id {
#define PTT_EVENT(name, id, class, kind, routine, nargs, fields, human) PTT_EV_##name = id,
#include "events.def"
};

/* A call recorded as one record (PTT_CALL in the table): the id of its IN with this bit. Events
 * are numbered below 0x80 within their class, so that no event has it. */
#define PTT_EV_CALL 0x80u
#define PTT_EVENT(name, id, class, kind, routine, nargs, fields, human) \
    _Static_assert(((id)&PTT_EV_CALL) == 0, "event numbers within a class stay below 0x80");
#include "events.def"
/* The OUT event of each call with a one-record form, by its IN: the recorder checks its pairs. */
enum ptt_call_out {
#define PTT_CALL(in, out) PTT_CALLOUT_##in = PTT_EV_##out,
#include "events.def"
};

/* Argument counts, for the recorder's compile-time check. */
enum ptt_event_nargs {
#define PTT_EVENT(name, id, class, kind, routine, nargs, fields, human) PTT_NARGS_##name = nargs,
#include "events.def"
};

/* Whether an event is a STATE event: with the light level only calls (IN, OUT) and META events
 * are recorded (and a thread's start and end: PTT_REC_LIGHT in lib/record.h).
 * ptt_masks[PTT_STATE_<name>] is the mask of classes its kind is recorded for. */
enum { PTT_IS_STATE_IN = 0, PTT_IS_STATE_OUT = 0, PTT_IS_STATE_META = 0, PTT_IS_STATE_STATE = 1 };
enum ptt_event_state {
#define PTT_EVENT(name, id, class, kind, routine, nargs, fields, human) \
    PTT_STATE_##name = PTT_IS_STATE_##kind,
#include "events.def"
};

/* Class numbers and masks (bit n = class n), for event selection. */
enum ptt_class_id {
#define PTT_CLASS(name, number, description) PTT_CLASS_##name = number,
#include "events.def"
};
#define PTT_CLASS_OF(id) ((unsigned)(id) >> 8)

/* 8-byte header, then nargs 64-bit arguments.
 * - id: bits 0..13 the event id, bit 14 PTT_EVF_NEST, bit 15 PTT_EVF_ABS.
 * - size: total bytes of the event, header included (a multiple of 8).
 * - dts: time since the previous base event of the same thread, in clock ticks.
 * With PTT_EVF_ABS the first 64-bit word after the header is the absolute time stamp and dts is
 * 0; the event becomes the new base unless PTT_EVF_NEST is set too (an event written by a
 * signal handler that interrupted another event: it must not move the base the interrupted
 * event is computing against). */
struct ptt_event {
    uint16_t id;
    uint16_t size;
    uint32_t dts;
};

#define PTT_EVF_NEST 0x4000u
#define PTT_EVF_ABS 0x8000u
#define PTT_EV_ID_MASK 0x3fffu
/* Fixed arguments and string words of one event, at most (a string takes up to 32 words). */
#define PTT_EVENT_MAX_ARGS 48

/* Whether event id (a call's one record: its IN | PTT_EV_CALL) names things: processes, threads,
 * modules, objects. A rotated trace carries them into its later parts (src/session/carry.c), and
 * a writer flags the sub-buffers that hold one (PTT_DESC_NAMED). For an id known at compile
 * time, a constant. */
static inline int ptt_ev_names(unsigned id)
{
    switch (id & ~PTT_EV_CALL) {
    case PTT_EV_PROCESS_START:
    case PTT_EV_PROCESS_EXIT:
    case PTT_EV_PROCESS_ARGS:
    case PTT_EV_MODULE_LOAD:
    case PTT_EV_THREAD_START:
    case PTT_EV_THREAD_END:
    case PTT_EV_THREAD_SETNAME_NP_IN:
    case PTT_EV_THREAD_SETNAME_NP_OUT:
    case PTT_EV_OBJECT_NAME: return 1;
    default: return 0;
    }
}

#endif
