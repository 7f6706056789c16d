/* The progress line of the readers (progress.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace/reader.h"
#include "util/progress.h"
#include "util/term.h"
#include "util/util.h"

unsigned ptt_progress_left = 16384;

static struct {
    const char *cmd;
    const struct ptt_reader *r;
    uint64_t start, next; /* ns: when reading began, when to draw next */
    int shown;
} pg;

static const char *default_cmd = "export";

void ptt_progress_command(const char *cmd)
{
    default_cmd = cmd;
}

void ptt_progress_start(const char *cmd, const struct ptt_reader *r)
{
    cmd = cmd ? cmd : default_cmd;
    pg.r = NULL;
    if (!r || !isatty(STDERR_FILENO) || ptt_term_paging())
        return;
    /* PTT_PROGRESS_DELAY_MS: how long a read lasts before the line shows (default 1000). */
    const char *d = getenv("PTT_PROGRESS_DELAY_MS");
    uint64_t delay = d && *d ? strtoull(d, NULL, 10) * 1000000u : 1000000000u;
    pg = (typeof(pg)){cmd, r, ptt_mono_ns(), 0, 0};
    pg.next = pg.start + delay;
    ptt_progress_check();
}

/* "1.2 GB" */
static const char *human_size(char *buf, size_t len, uint64_t b)
{
    if (b >= 1000000000u)
        snprintf(buf, len, "%.1f GB", (double)b / 1e9);
    else if (b >= 1000000u)
        snprintf(buf, len, "%.1f MB", (double)b / 1e6);
    else
        snprintf(buf, len, "%.1f kB", (double)b / 1e3);
    return buf;
}

void ptt_progress_check(void)
{
    ptt_progress_left = 16384;
    if (!pg.r)
        return;
    uint64_t now = ptt_mono_ns();
    if (now < pg.next)
        return;
    pg.next = now + 100000000u; /* ten lines a second at most */
    uint64_t done, total;
    char a[32], b[32];
    ptt_reader_progress(pg.r, &done, &total);
    fprintf(stderr, "\rptt %s: reading %3d%% (%s of %s)", pg.cmd,
            total ? (int)(done * 100 / total) : 100, human_size(a, sizeof a, done),
            human_size(b, sizeof b, total));
    pg.shown = 1;
}

void ptt_progress_end(void)
{
    if (pg.shown)
        fputs("\r\033[K", stderr);
    pg.shown = 0;
    pg.r = NULL;
}
