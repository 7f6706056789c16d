/* ptt check on one trace file, for ptt check and ptt trace --check. */
#ifndef PTT_CMD_CHECK_H
#define PTT_CMD_CHECK_H

#include <stdio.h>

/* Check the trace at path and print the findings to f (JSON if json). Returns 0 when nothing
 * was found, 1 when something was, 2 when the trace cannot be read or is damaged (having printed
 * the findings of what could be read). */
int ptt_check_file(const char *path, int json, const char *names_file, FILE *f);
/* The same, for the events flt selects (NULL: all; ptt check's --pid ... --from, --to). */
struct ptt_filter;
int ptt_check_filtered(const char *path, int json, const char *names_file,
                       struct ptt_filter *flt, FILE *f);

#endif
