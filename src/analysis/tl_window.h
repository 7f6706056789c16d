/* The timeline's callbacks seen through a time window (--from): what ends before it is left
 * out, what began before it and goes on inside starts at its beginning. The timeline follows
 * every event before the window (its state: open calls, owners, who waits), these callbacks
 * show what of it reaches the window. Internal to timeline.c. */
#ifndef PTT_TL_WINDOW_H
#define PTT_TL_WINDOW_H

#include "analysis/timeline.h"
#include "util/hmap.h"

struct tl_window {
    const struct ptt_tl_callbacks *cb; /* the caller's */
    void *arg;
    int64_t from;
    int open;                  /* the window began: what was pending was told */
    struct ptt_hmap pending;   /* processes, threads, owners and counters before it */
    struct tl_pending **order; /* the same, in the order met */
    size_t n, cap;
};

/* Callbacks (their arg: a tl_window) that pass what reaches the window to w->cb; an event
 * before it goes to w->cb->before. The first callback inside tells what is pending first. */
extern const struct ptt_tl_callbacks ptt_tl_window_callbacks;
void ptt_tl_window_free(struct tl_window *w);

#endif
