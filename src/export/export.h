/* Exporters: the trace in another form, read through the timeline (timeline.h). Each writes
 * opts->out; 0, or -1 with one line in err (after writing what it could). */
#ifndef PTT_EXPORT_H
#define PTT_EXPORT_H

#include <stddef.h>

#include "analysis/names.h"

struct ptt_export_opts {
    const char *in;  /* the trace file */
    const char *out; /* the file (or directory, for ctf and sco) to write */
    struct ptt_names *names;
};

/* X(format, function, what it writes) */
#define PTT_EXPORTERS(X)                                                                           \
    X(paje, ptt_export_paje, "a Pajé trace for ViTE and PajeNG (FILE)")                            \
    X(chrome, ptt_export_chrome, "Chrome Trace Event JSON for Perfetto and chrome://tracing")      \
    X(perfetto, ptt_export_chrome, "the same as chrome")                                           \
    X(ctf, ptt_export_ctf, "a CTF 1.8 trace for babeltrace2 and Trace Compass (DIRECTORY)")        \
    X(sco, ptt_export_sco, "SCO OpenServer per-thread text files and their event map (DIRECTORY)") \
    X(report, ptt_export_report, "one self-contained HTML page (FILE)")                            \
    X(tables, ptt_export_tables, "relational tables for DuckDB and Spark: CSV files (DIRECTORY)")

int ptt_export_paje(const struct ptt_export_opts *o, char *err, size_t errlen);
int ptt_export_chrome(const struct ptt_export_opts *o, char *err, size_t errlen);
int ptt_export_ctf(const struct ptt_export_opts *o, char *err, size_t errlen);
int ptt_export_sco(const struct ptt_export_opts *o, char *err, size_t errlen);
int ptt_export_report(const struct ptt_export_opts *o, char *err, size_t errlen);
int ptt_export_tables(const struct ptt_export_opts *o, char *err, size_t errlen);

#endif
