/* A progress line on standard error for a read that lasts, as git shows one: "ptt stat: reading
 * 45% (1.2 GB of 2.6 GB)", after a second, updated in place, cleared at the end; only when
 * standard error is a terminal and no pager shows the output there. */
#ifndef PTT_PROGRESS_H
#define PTT_PROGRESS_H

struct ptt_reader;

/* The command a NULL cmd of ptt_progress_start stands for (the exports read in the timeline). */
void ptt_progress_command(const char *cmd);
/* Follow cmd's reading of r (a NULL r: nothing shown). */
void ptt_progress_start(const char *cmd, const struct ptt_reader *r);
/* Called for each event read: a counter down to 0 (one decrement in memory, its flags the
 * test); the clock is read every 16384 events. */
extern unsigned ptt_progress_left;
void ptt_progress_check(void);
static inline void ptt_progress_tick(void)
{
    if (!--ptt_progress_left)
        ptt_progress_check();
}
/* The line cleared, if shown; reading r is over. */
void ptt_progress_end(void);

#endif
