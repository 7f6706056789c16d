/* Live control of a session (ptt ctl): a Unix socket per session in a directory only its user
 * can enter ($XDG_RUNTIME_DIR/ptt, else /tmp/ptt-UID, mode 0700). One request line, one reply. */
#ifndef PTT_CONTROL_H
#define PTT_CONTROL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* The clients a session serves at once (more are refused at once), and the time each has from
 * its connection to the end of its reply. */
#define PTT_CTL_CLIENTS 8
#define PTT_CTL_CLIENT_NS 2000000000ull
/* The pollfds ptt_ctl_pollfds fills at most: the listener and the clients. */
#define PTT_CTL_POLLFDS (1 + PTT_CTL_CLIENTS)

typedef void (*ptt_ctl_handler)(void *arg, const char *req, char *reply, size_t len);
struct ptt_ctl_server;

/* The control directory, created if need be; -1 with a message in err (naming the directory
 * and its owner) if it cannot be used safely (not ours, a symlink, or open to others). */
int ptt_ctl_dir(char *dir, size_t len, char *err, size_t errlen);
/* Listen on the session's socket; the socket's path in path. -1 with a message in err. */
int ptt_ctl_listen(const char *session, char *path, size_t len, char *err, size_t errlen);
/* The server of the listening socket fd (non-blocking): it serves its clients as their sockets
 * allow, never waiting for one, so that the session loop it runs in is never delayed. Requests
 * from another user are refused. NULL when out of memory. */
struct ptt_ctl_server *ptt_ctl_server_new(int fd, ptt_ctl_handler handler, void *arg);
/* The descriptors to poll, into fds (PTT_CTL_POLLFDS at most); their number. */
unsigned ptt_ctl_pollfds(const struct ptt_ctl_server *c, struct pollfd *fds);
/* After the poll: accept, read, answer, and drop the clients past their time. */
void ptt_ctl_step(struct ptt_ctl_server *c, const struct pollfd *fds, unsigned n);
/* Closes the clients, not the listener. */
void ptt_ctl_server_free(struct ptt_ctl_server *c);
/* Send req to a session (a name, or the pid of its ptt trace) and read the reply; only a server
 * of this user is spoken to. -1 with a message in reply when the session cannot be reached. */
int ptt_ctl_request(const char *session, const char *req, char *reply, size_t len);
/* The sessions of this user, one name per line, in out (stale sockets are removed). */
int ptt_ctl_list(char *out, size_t len);

#endif
