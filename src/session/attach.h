/* ptt trace -p: load libptt into a running process with ptrace, and take it out again
 * (docs/attach.md). x86-64 only. */
#ifndef PTT_ATTACH_H
#define PTT_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ptt_attach {
    pid_t pid;
    char lib[4096];    /* libptt.so, as the process maps it */
    uint64_t lib_base; /* where it is mapped in the process */
    uint64_t handle;   /* its dlopen handle there */
    char libc[4096];   /* the C library the process maps, and where */
    uint64_t libc_base;
    uint64_t stop_fn, release_fn; /* ptt_attach_stop, ptt_attach_release there */
    int64_t tls[3];               /* ptt_self from the thread pointer, its size, nest's offset */
    int exec;                     /* the process executed another program: nothing to detach */
};

/* Whether pid can be attached, and if not why, in err: a one-line reason. 0: it can. */
int ptt_attach_check(pid_t pid, char *err, size_t len);
/* Load libptt into pid and start recording into the pool env names ("/NAME:SECRET"). Once
 * started, the threads still stopped, started(arg) is called (may be NULL), then the calls in
 * progress are followed (lib/inflight.c). On failure the process is left as it was (but for
 * libptt loaded, if only the start failed). */
int ptt_attach(struct ptt_attach *a, pid_t pid, const char *lib, const char *env,
               void (*started)(void *arg), void *arg, char *err, size_t len);
/* Stop recording: the process's slots put back. The pool must then be drained. */
int ptt_attach_stop(struct ptt_attach *a, char *err, size_t len);
/* Every thread's recording state cleared and the pool unmapped in the process. */
int ptt_attach_release(struct ptt_attach *a, char *err, size_t len);

#endif
