/* How wide a string shows in a terminal, for text tables that pad names by their display width
 * (a byte count would break the columns of a name with non-ASCII characters). */
#ifndef PTT_WIDTH_H
#define PTT_WIDTH_H

#include <stddef.h>
#include <stdio.h>

/* The columns the UTF-8 string s takes: East Asian wide and fullwidth characters 2, combining
 * marks and zero-width characters 0, others 1; a byte that is not valid UTF-8 counts 1 (it shows
 * as one replacement character). */
size_t ptt_display_width(const char *s);
/* Print s, then spaces up to width columns (nothing more when s is wider). */
void ptt_put_padded(FILE *f, const char *s, size_t width);

#endif
