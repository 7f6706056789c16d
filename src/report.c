/* Exporter: to be written. */
#include <stdio.h>

#include "export.h"

int ptt_export_report(const struct ptt_export_opts *o, char *err, size_t errlen)
{
    (void)o;
    snprintf(err, errlen, "the report export is not available yet");
    return -1;
}
