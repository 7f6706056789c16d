/* Where a command's text goes, as git and perf do it: -o FILE (created as ptt trace creates its
 * file, docs/security.md), else standard output, through a pager when that is a terminal; and
 * colours on a terminal (--color=auto|always|never). */
#ifndef PTT_TERM_H
#define PTT_TERM_H

#include <getopt.h>

enum { PTT_COLOR_AUTO, PTT_COLOR_ALWAYS, PTT_COLOR_NEVER };

struct ptt_term {
    const char *output; /* -o; NULL or "-": standard output */
    int color;          /* PTT_COLOR_* */
    int no_pager;
};

/* The options every text-writing reader takes, for its getopt_long table (at its end). */
enum { PTT_TERM_OPT_COLOR = 0x7001, PTT_TERM_OPT_NO_PAGER };
// clang-format off
#define PTT_TERM_OPTIONS                                                                           \
    {"output", required_argument, 0, 'o'}, {"color", optional_argument, 0, PTT_TERM_OPT_COLOR},    \
    {"no-pager", no_argument, 0, PTT_TERM_OPT_NO_PAGER}
// clang-format on

/* Option c (getopt_long's value, 'o' for -o) into t: 1 if it was one of PTT_TERM_OPTIONS, 0 if
 * not, -1 for a bad value (said, as cmd). */
int ptt_term_option(const char *cmd, struct ptt_term *t, int c, const char *arg);
/* Standard output made the -o file; colours decided. 0, or -1 having said why. */
int ptt_term_open(const char *cmd, const struct ptt_term *t);
/* Standard output piped into the pager, if it is a terminal and no --no-pager: $PTT_PAGER, else
 * $PAGER, else "less -FRX" (-F: none for a text that fits the screen); "" or "cat": none. */
void ptt_term_pager(const struct ptt_term *t);
/* Whether the pager runs (a progress line would draw over it). */
int ptt_term_paging(void);
/* Standard output flushed and closed, the pager waited for. 0, or -1 when a write failed
 * (said, as cmd). */
int ptt_term_close(const char *cmd, const struct ptt_term *t);

/* Colours: the escape sequence, or "" when colour is off. */
enum ptt_color {
    PTT_C_RESET,
    PTT_C_BOLD,
    PTT_C_RED,
    PTT_C_GREEN,
    PTT_C_YELLOW,
    PTT_C_BLUE,
    PTT_C_MAGENTA,
    PTT_C_CYAN
};
const char *ptt_c(enum ptt_color c);
/* Whether colour is on (after ptt_term_open). */
int ptt_color_on(void);

#endif
