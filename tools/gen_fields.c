/* Prints ptt_fields.h: the index of every field of every event of the table (common/events.def),
 * so that the readers name the fields they read: ev->args[PTT_F(THREAD_START, self)]. Built and
 * run at build time: adding an event or a field touches the table alone. */
#include <stdio.h>

#include "../src/trace/events.h"

int main(void)
{
    unsigned n;
    const struct ptt_evinfo *ev = ptt_evinfo_all(&n);
    printf("/* Generated from common/events.def by tools/gen_fields.c: do not edit. */\n"
           "#ifndef PTT_FIELDS_H\n#define PTT_FIELDS_H\n\n"
           "/* PTT_F(EVENT, field): the index of a field in the event's arguments. */\n"
           "#define PTT_F(event, field) PTT_FIELD_##event##_##field\n\nenum ptt_field_index {\n");
    for (unsigned i = 0; i < n; i++)
        for (unsigned f = 0; f < ev[i].nfields; f++)
            printf("    PTT_FIELD_%s_%.*s = %u,\n", ev[i].name, ev[i].fields[f].name_len,
                   ev[i].fields[f].name, f);
    printf("};\n\n#endif\n");
    return 0;
}
