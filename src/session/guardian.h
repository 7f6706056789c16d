/* The guardian of a session: a small process, started by ptt trace before the pool, that
 * outlives it. When ptt trace dies without having said "clean end" (SIGKILL, a crash, any
 * signal), the guardian marks the pool abandoned, so that the program's threads stop recording
 * and run on at once, and removes the pool's name and the session's sockets. (docs/security.md) */
#ifndef PTT_GUARDIAN_H
#define PTT_GUARDIAN_H

#include <stddef.h>

#include "../../common/pool.h"

/* Start the guardian. Neither our child (we wait for every child of ours) nor in our process
 * group, it ignores the terminal's signals. Returns our end of the stream to it (a socket,
 * close-on-exec, ours only: its end is ptt trace's death), or -1 with errno. *procs_ok: whether
 * the kernel tells a reaped process's status through its pidfd (ptt_procs_supported), probed on
 * the child that starts the guardian rather than on a process of its own. *gpid: the guardian's
 * pid, which is our child after all when we are the init of a pid namespace (a container's). */
int ptt_guardian_start(int *procs_ok, pid_t *gpid);

/* The pool's name, told before it is created: if ptt trace dies, however soon, the guardian marks
 * the pool abandoned and removes its name (if it is ours). A later name replaces it. */
void ptt_guardian_pool(int fd, const char *name);

/* Also remove path (a socket of the session, told before it is created) if ptt trace dies. */
void ptt_guardian_watch(int fd, const char *path);

/* Reserve the pool's sub-buffers from `first` on (daemon.h), while ptt trace goes on: a step at a
 * time as the writers need them, for the whole session (a writer that finds none free wakes the
 * guardian: the pool's reserver_pid). */
void ptt_guardian_reserve(int fd, uint32_t first);
/* The session ended cleanly and removed everything: the guardian exits. Closes fd. */
void ptt_guardian_end(int fd);

#endif
