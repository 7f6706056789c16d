/* Meaningful names for threads and objects, learned from the trace as it is read:
 * - a thread: the name it set (pthread_setname_np), else its start routine's symbol (producer,
 *   producer#2 for the second thread started there), for a std::thread what it runs, the main
 *   thread "main";
 * - an object: the name the program gave it (ptt_name, <ptt.h>), or one from --names=FILE, else
 *   its symbol (queue_lock, cache.lock for a field), else where it was initialized
 *   (mutex@queue.c:42); the second object to come to the same such name gets "#2";
 * - a code address: function, file and line.
 * Symbols come from the binaries the trace saw mapped (MODULE_LOAD), read with libdw when ptt
 * was built with it; without it, names fall back to addresses. */
#ifndef PTT_NAMES_H
#define PTT_NAMES_H

#include <stdint.h>

#include "trace/reader.h"

struct ptt_names;

/* An object whose born entry is set (names.c's born()). */
struct ptt_names_settled {
    int used;
    int32_t pid;
    uint64_t addr;
};
#define PTT_NAMES_NAMES 1u /* the event names a process, module, thread or object */
#define PTT_NAMES_BORN 2u  /* an IN event on an object, with a call site */
/* The start of struct ptt_names, what ptt_names_event tells in line, without a call: by event
 * id, what it does with it (most events: nothing), and for PTT_NAMES_BORN the fields of the
 * object and the site; the objects whose born entry is set, by address (most IN events are on
 * them: nothing to do). */
struct ptt_names_head {
    uint8_t does[PTT_EV_ID_MASK + 1];
    uint8_t obj[PTT_EV_ID_MASK + 1], site[PTT_EV_ID_MASK + 1];
    struct ptt_names_settled settled[64];
};

/* What a PROCESS_START or MODULE_LOAD meant (ptt_names_meant), for the words that say it. */
enum ptt_names_what {
    PTT_NAMES_NONE,
    PTT_NAMES_EXEC,    /* a PROCESS_START of a process that had one: an exec */
    PTT_NAMES_PROGRAM, /* the first MODULE_LOAD after a PROCESS_START: the program */
};
struct ptt_names_moment {
    enum ptt_names_what what;
    uint16_t id;
    int32_t pid, tid;
    int64_t ns;
};

/* Exits on out of memory, as the tools' other tables do. */
struct ptt_names *ptt_names_new(void);
/* Learn from one event (feed every event, in order, before asking about it). */
void ptt_names_learn(struct ptt_names *n, const struct ptt_ev *ev, unsigned does);
static inline void ptt_names_event(struct ptt_names *n, const struct ptt_ev *ev)
{
    const struct ptt_names_head *h = (const struct ptt_names_head *)n;
    unsigned does = ev->id <= PTT_EV_ID_MASK ? h->does[ev->id] : 0;
    if (!does)
        return;
    if (does == PTT_NAMES_BORN && ev->info->role != PTT_ROLE_CREATE) {
        unsigned obj = h->obj[ev->id], site = h->site[ev->id];
        if (obj < ev->nargs && site < ev->nargs) {
            uint64_t addr = ev->args[obj];
            const struct ptt_names_settled *k = &h->settled[(addr >> 4 ^ addr >> 12) % 64];
            if (k->used && k->addr == addr && k->pid == ev->pid)
                return; /* a use of an object whose first use is known */
        }
    }
    ptt_names_learn(n, ev, does);
}
/* A map file: lines "ADDRESS NAME" or "SYMBOL NAME" ('#' starts a comment). -1 with a message. */
int ptt_names_load(struct ptt_names *n, const char *path, char *err, size_t errlen);
/* The names the functions below give: by default as a terminal may show them, each control
 * character (C0, DEL, C1) as \xNN, so that no name a program chose can send an escape sequence;
 * raw: as recorded, for the outputs that escape them in their own way (JSON, HTML, CSV). */
void ptt_names_raw(struct ptt_names *n, int raw);
/* NULL when there is no name. The strings live as long as n. */
const char *ptt_names_thread(const struct ptt_names *n, int32_t pid, int32_t tid);
/* The file name of the program process pid runs (its last exec, else its parent's for a forked
 * child), as the trace mapped it; NULL when no module of it was seen. */
const char *ptt_names_program(const struct ptt_names *n, int32_t pid);
/* The command line of the program process pid runs, as recorded (PROCESS_ARGS: arguments quoted
 * as for a shell, cut at 255 bytes); a forked child's, its parent's when it forked; NULL when none
 * was (a trace of format 2.1 or older, a C library other than glibc). */
const char *ptt_names_command(const struct ptt_names *n, int32_t pid);
/* Forget thread (pid, tid)'s name: it ended, and nothing will name it again (the hang watch). */
void ptt_names_forget_thread(struct ptt_names *n, int32_t pid, int32_t tid);
const char *ptt_names_object(const struct ptt_names *n, int32_t pid, uint64_t addr);
/* The kernel thread id of a pthread_t (from THREAD_START), 0 if unknown. */
int32_t ptt_names_pthread(const struct ptt_names *n, int32_t pid, uint64_t pthread);
/* "function (file:line)" of a code address, or NULL. */
const char *ptt_names_code(const struct ptt_names *n, int32_t pid, uint64_t addr);
/* "file:line" of a return address (the call before it), or NULL: the program's own line, also
 * when the call is made by code inlined from a system header (std::lock_guard's). */
const char *ptt_names_site(const struct ptt_names *n, int32_t pid, uint64_t ret_addr);
/* For such a call, the header's line ("gthr-default.h:749"), else NULL. */
const char *ptt_names_site_detail(const struct ptt_names *n, int32_t pid, uint64_t ret_addr);
/* Whether the call itself is made in a system header's code (inlined or not). */
int ptt_names_site_in_system_header(const struct ptt_names *n, int32_t pid, uint64_t ret_addr);
/* What ev, the last event learned, meant: PTT_NAMES_NONE for any other event. */
enum ptt_names_what ptt_names_meant(const struct ptt_names *n, const struct ptt_ev *ev);
/* Whether symbols can be read (ptt was built with libdw). */
int ptt_names_have_symbols(void);
void ptt_names_free(struct ptt_names *n);

#endif
