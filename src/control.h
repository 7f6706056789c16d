/* Live control of a session (ptt ctl): a Unix socket per session in a directory only its user
 * can enter ($XDG_RUNTIME_DIR/ptt, else /tmp/ptt-UID, mode 0700). One request line, one reply. */
#ifndef PTT_CONTROL_H
#define PTT_CONTROL_H

#include <stddef.h>

/* The control directory, created if need be; -1 with a message in err if it cannot be used
 * safely (not ours, or open to others). */
int ptt_ctl_dir(char *dir, size_t len, char *err, size_t errlen);
/* Listen on the session's socket; the socket's path in path. -1 with a message in err. */
int ptt_ctl_listen(const char *session, char *path, size_t len, char *err, size_t errlen);
/* Accept one request on the listening socket fd and answer it with handler; requests from
 * another user are refused. */
void ptt_ctl_serve(int fd, void (*handler)(void *arg, const char *req, char *reply, size_t len),
                   void *arg);
/* Send req to a session (a name, or the pid of its ptt trace) and read the reply. -1 with a
 * message in reply when the session cannot be reached. */
int ptt_ctl_request(const char *session, const char *req, char *reply, size_t len);
/* The sessions of this user, one name per line, in out (stale sockets are removed). */
int ptt_ctl_list(char *out, size_t len);

#endif
