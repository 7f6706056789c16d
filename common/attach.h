/* ptt trace -p: what ptt trace tells libptt of each thread it stopped, for the calls in progress
 * at the attach (lib/inflight.c, src/session/attach.c, docs/attach.md). x86-64. */
#ifndef PTT_COMMON_ATTACH_H
#define PTT_COMMON_ATTACH_H

#include <stdint.h>

struct ptt_stopped_thread {
    int64_t tid;
    uint64_t rsp;        /* its stack pointer where it stopped */
    uint64_t stack_hi;   /* the end of the mapping rsp is in */
    uint64_t nr;         /* the system call it is inside (orig_rax), or -1 */
    uint64_t a0, a1, a2; /* that call's first arguments (rdi, rsi, rdx) */
    uint64_t fs_base;    /* its thread pointer */
};

#endif
