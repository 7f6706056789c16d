/* Prints docs/events.md from the event table (common/events.def). */
#include <stdio.h>
#include <string.h>

#include "../src/events.h"

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
           "evid (an event id), endhow (return, exit or cancel), str (a string, up to 255 bytes, stored after the fixed arguments), site (a return address: where the program made the call, named file:line by the tools), frames (return addresses, innermost first, after the fixed arguments); the other types are listed in src/events.h.\n\n");
    printf("## Classes\n\nSelect them with `ptt trace --events=CLASS,...`.\n\n"
           "| class | number | events |\n|---|---|---|\n");
    for (unsigned c = 0; c < nc; c++)
        printf("| %s | %u | %s |\n", cl[c].name, cl[c].number, cl[c].description);
    for (unsigned c = 0; c < nc; c++) {
        printf("\n## %s\n\n| id | event | kind | routine | fields | text |\n"
               "|---|---|---|---|---|---|\n",
               cl[c].name);
        for (unsigned i = 0; i < n; i++) {
            if (strcmp(ev[i].cls, cl[c].name))
                continue;
            printf("| 0x%04x | %s | %s | %s | ", ev[i].id, ev[i].name, ptt_kind_name(ev[i].kind),
                   ev[i].routine[0] ? ev[i].routine : "");
            for (unsigned f = 0; f < ev[i].nfields; f++)
                printf("%s%.*s:%s", f ? ", " : "", ev[i].fields[f].name_len, ev[i].fields[f].name,
                       ptt_ftype_name(ev[i].fields[f].type));
            printf(" | %s |\n",
                   ev[i].human[0] ? ev[i].human
                   : ev[i].kind == PTT_KIND_IN
                       ? (ev[i].noreturn ? "enters function (never returns)" : "enters function")
                       : "leaves function, returning ret");
        }
    }
    return 0;
}
