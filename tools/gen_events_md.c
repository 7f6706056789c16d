/* Prints docs/events.md from the event table (common/events.def). */
#include <stdio.h>
#include <string.h>

#include "../src/trace/events.h"

/* The role vocabulary (PTT_ROLE in common/events.def). */
static void print_roles(void)
{
    printf("Roles say what an event means to the analyses (ptt stat, the timeline of the exports "
           "and the report, hang detection), which follow roles, not lists of events. The object "
           "an event is about is of the kind its class names (unless `kind=` says otherwise):\n\n"
           "| role | meaning |\n|---|---|\n");
    static const char *meanings[][2] = {
        {"NONE", "nothing the analyses follow"},
        {"USE", "acts on the object otherwise (getvalue, consistent, setspecific...)"},
        {"CREATE", "creates or initializes the object (a STATE event: what it was made with)"},
        {"DESTROY", "destroys, closes, deletes or unlinks it"},
        {"ACQUIRE", "asks for a lock, or a semaphore's unit (`counted`); `shared`: a read lock; "
                    "`blocks`: it may wait (then a CONTENDED event comes inside it)"},
        {"CONTENDED", "the acquire must wait: its thread blocks from here (`owner=`: who holds "
                      "it)"},
        {"ACQUIRED", "the acquire got the object after waiting"},
        {"RELEASE", "unlock (`shared`: it may end a read lock)"},
        {"WAIT", "waits for the object: a condvar (releasing `lock=`), a barrier, a thread to "
                 "end, signals, a message queue, a once routine; `blocks`: from its start "
                 "(`busy=`: only when that field is 1); `wakes`: its arrival may end the others'"},
        {"WOKEN", "the wait is over (`status=` not 0: nobody woke it)"},
        {"SIGNAL", "wakes waiters: a condvar signal or broadcast, sem_post, a signal or a "
                   "cancellation sent to a thread"},
        {"THREAD_START", "a thread starts (`object=`: its pthread_t, `by=`: its creator)"},
        {"THREAD_END", "a thread ends"},
        {"PROCESS_START", "a process starts (`by=`: its parent)"},
        {"PROCESS_END", "a process ends"},
        {"FRAME_BEGIN", "code runs on the thread until the FRAME_END of the class: the once "
                        "routine, a signal handler, a SIGEV_THREAD timer's function"},
        {"FRAME_END", "that code returns"},
    };
    for (unsigned i = 0; i < sizeof meanings / sizeof meanings[0]; i++)
        printf("| %s | %s |\n", meanings[i][0], meanings[i][1]);
    printf("\nThe role's fields: `object=` the object, `lock=` the mutex of a condvar wait, "
           "`owner=` the thread holding the object, `by=` who acted, `value=` a semaphore's value, "
           "`count=` a number of things, `status=` the result (an OUT event: its ret). An OUT "
           "event has its call's role. A CONTENDED or ACQUIRED event comes inside a blocking "
           "ACQUIRE call of its class, a WOKEN one inside a blocking WAIT call of its class, a "
           "CREATE STATE event inside its class's CREATE call.\n\n");
}

/* The calls with a one-record form (PTT_CALL in the table). */
static void print_calls(const struct ptt_evinfo *ev, unsigned n)
{
    printf("\n## Calls recorded as one record\n\n"
           "A call of these routines that returned without waiting, with nothing recorded on its "
           "thread meanwhile, is written as one record (docs/format.md): its id is the IN event's "
           "with 0x80 added, and it holds the entry time, the duration, the IN event's fields and "
           "the OUT event's. Every reader gives it back as the IN event, at the entry, and the OUT "
           "event, at the entry plus the duration: only the file's size tells. A call that waited "
           "(a CONTENDED event inside it), that a signal handler interrupted with events, or that "
           "was cancelled inside, is recorded as IN, what happened inside, OUT.\n\n"
           "| record id | routine | IN | OUT |\n|---|---|---|---|\n");
    for (unsigned i = 0; i < n; i++)
        if (ev[i].call_out)
            printf("| 0x%04x | %s | %s | %s |\n", ev[i].id | PTT_EV_CALL, ev[i].routine, ev[i].name,
                   ptt_evinfo(ev[i].call_out)->name);
}

int main(void)
{
    unsigned n, nc;
    const struct ptt_evinfo *ev = ptt_evinfo_all(&n);
    const struct ptt_classinfo *cl = ptt_classes(&nc);
    printf("# ptt events\n\n"
           "Generated from `common/events.def` by `tools/gen_events_md.c` (`make events-md`); do "
           "not edit.\nA test checks that this page matches the table.\n\n"
           "Every event has a time stamp, a process id and a thread id (they belong to the "
           "sub-buffer, not to each event: see format.md), then the fields below, each one 64-bit "
           "argument.\nKinds: IN, a routine is entered; OUT, it returns (the first field is its "
           "return value); STATE, a change the tracer observed inside the library (a wait, a "
           "wake-up, an owner); META, about the trace itself.\n\n");
    printf("Field types: obj (address of a POSIX threads object), ptr (another address), sym (a "
           "function's address), int, uint, count, ret (0 or an errno number), tid (kernel thread "
           "id), pthread (a pthread_t), abstime (absolute timeout in ns), wstatus (wait status), "
           "evid (an event id), endhow (return, exit or cancel), str (a string, up to 255 bytes, "
           "stored after the fixed arguments), site (a return address: where the program made the "
           "call, named file:line by the tools), frames (return addresses, innermost first, after "
           "the fixed arguments); the other types are listed in src/trace/events.h.\n\n");
    print_roles();
    printf("## Classes\n\nSelect them with `ptt trace --events=CLASS,...`.\n\n"
           "| class | number | events |\n|---|---|---|\n");
    for (unsigned c = 0; c < nc; c++)
        printf("| %s | %u | %s |\n", cl[c].name, cl[c].number, cl[c].description);
    for (unsigned c = 0; c < nc; c++) {
        printf("\n## %s\n\n| id | event | kind | routine | fields | text | role |\n"
               "|---|---|---|---|---|---|---|\n",
               cl[c].name);
        for (unsigned i = 0; i < n; i++) {
            if (strcmp(ev[i].cls, cl[c].name))
                continue;
            printf("| 0x%04x | %s | %s | %s | ", ev[i].id, ev[i].name, ptt_kind_name(ev[i].kind),
                   ev[i].routine[0] ? ev[i].routine : "");
            for (unsigned f = 0; f < ev[i].nfields; f++)
                printf("%s%.*s:%s", f ? ", " : "", ev[i].fields[f].name_len, ev[i].fields[f].name,
                       ptt_ftype_name(ev[i].fields[f].type));
            printf(" | %s | %s%s%s%s |\n",
                   ev[i].human[0] ? ev[i].human
                   : ev[i].kind == PTT_KIND_IN
                       ? (ev[i].noreturn ? "enters function (never returns)" : "enters function")
                       : "leaves function, returning ret",
                   ptt_role_name(ev[i].role), ev[i].role_spec[0] ? " (" : "", ev[i].role_spec,
                   ev[i].role_spec[0] ? ")" : "");
        }
    }
    print_calls(ev, n);
    return 0;
}
