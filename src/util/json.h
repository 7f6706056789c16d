/* The one JSON string writer of every JSON output (view --format=json, stat --format=json, the
 * report's data, the Chrome export): RFC 8259 strings that any strict parser reads. */
#ifndef PTT_JSON_H
#define PTT_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "util/obuf.h"

/* Also write '<', '>' and '&' as \u00XX: the string is then safe inside an HTML <script>
 * element (no "</script>", no "<!--"). */
#define PTT_JSON_HTML 1u

/* Write s, at most n bytes or up to its NUL, as a quoted JSON string. Valid UTF-8 is copied as it
 * is; what is not (a stray continuation byte, a sequence cut short, an overlong form, a
 * surrogate, a code point above U+10FFFF, bytes 0xc0, 0xc1, 0xf5-0xff) becomes U+FFFD, one per
 * maximal ill-formed subpart (Unicode's recommended practice, as Python's decode does): names
 * are text for the reader, and the replacement character shows where a byte was lost. '"' and
 * '\\' are escaped, control characters (C0, DEL and C1: none reaches a terminal that shows the
 * output) as \b \f \n \r \t or \u00XX; '/' is left alone. */
void ptt_json_strn(FILE *f, const char *s, size_t n, unsigned flags);

/* The same into an output buffer (the writer itself: ptt_json_strn goes through it). */
void ptt_json_put(struct ptt_obuf *b, const char *s, size_t n, unsigned flags);

/* ptt_json_strn(f, s, SIZE_MAX, 0). */
void ptt_json_str(FILE *f, const char *s);

/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0 if there is none; *bad:
 * then, how many bytes one U+FFFD replaces (at least 1). */
size_t ptt_utf8_seq(const unsigned char *p, size_t n, size_t *bad);

#endif
