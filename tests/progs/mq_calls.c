/* Message queues: each mq_* routine, successful and failing (mq_calls). */
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>

#include "progs.h"

/* mq_open's result: a descriptor (its number is not the program's result: any descriptor open
 * in the process changes it) or -1, and errno. */
static mqd_t open_mq(const char *key, mqd_t q)
{
    int e = errno;
    put_line("%s.failed=%d", key, q == (mqd_t)-1);
    put_line("%s.errno=%d", key, e);
    put_line("@%s=%d", key, (int)q);
    return q;
}

#define OPEN(key, ...) (errno = ERRNO_SENTINEL, open_mq(key, mq_open(__VA_ARGS__)))

/* A receive: the length (or -1), errno, and the message's priority. */
#define RECEIVE(key, expr)                  \
    do {                                    \
        unsigned prio_ = 99;                \
        unsigned *prio = &prio_;            \
        CALL(key, (int)(expr));             \
        put_line("%s.prio=%u", key, prio_); \
    } while (0)

int main(void)
{
    char name[64], other[64], buf[64];
    snprintf(name, sizeof name, "/ptt-e2e-mq-%d", (int)getpid());
    snprintf(other, sizeof other, "/ptt-e2e-none-%d", (int)getpid());
    put_line("@pid=%d", (int)getpid());
    put_tid("main");
    put_line("@name=\"%s\"", name);
    put_line("@other=\"%s\"", other);
    put_line("@creat_excl_rdwr=0x%x", O_CREAT | O_EXCL | O_RDWR);
    put_line("@creat_rdwr=0x%x", O_CREAT | O_RDWR);
    put_line("@usr1=%d", SIGUSR1);
    struct mq_attr attr = {.mq_maxmsg = 2, .mq_msgsize = 16};
    mqd_t q = OPEN("open", name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    OPEN("open_excl", name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    OPEN("open_none", other, O_RDONLY);
    mqd_t q2 = OPEN("open_again", name, O_CREAT | O_RDWR, 0644, NULL);
    CALL("close_again", mq_close(q2));

    CALL("send", mq_send(q, "hello", 6, 5));
    CALL("send_low", mq_send(q, "low", 4, 1));
    /* Full (two messages), opened blocking: the timed send waits and times out. */
    struct timespec a1 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs1", &a1);
    CALL("timedsend_full", mq_timedsend(q, "x", 2, 3, &a1));
    CALL("send_big", mq_send(q, "0123456789abcdefg", 18, 0));

    /* The highest priority first; a buffer smaller than the queue's messages: EMSGSIZE. */
    RECEIVE("receive_small", mq_receive(q, buf, 8, prio));
    RECEIVE("receive", mq_receive(q, buf, sizeof buf, prio));
    put_line("receive.msg=%s", buf);
    struct timespec a2 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs2", &a2);
    RECEIVE("timedreceive", mq_timedreceive(q, buf, sizeof buf, prio, &a2));
    put_line("timedreceive.msg=%s", buf);
    struct timespec a3 = in_ms(CLOCK_REALTIME, 20);
    put_abstime("abs3", &a3);
    RECEIVE("timedreceive_empty", mq_timedreceive(q, buf, sizeof buf, prio, &a3));
    struct timespec a4 = in_ms(CLOCK_REALTIME, 30000);
    put_abstime("abs4", &a4);
    CALL("timedsend", mq_timedsend(q, "t", 2, 7, &a4));
    CALL("receive_noprio", (int)mq_receive(q, buf, sizeof buf, NULL));

    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    CALL("notify", mq_notify(q, &ev));
    /* One registration per queue: EBUSY. */
    CALL("notify_busy", mq_notify(q, &ev));
    CALL("notify_off", mq_notify(q, NULL));
    ev.sigev_notify = SIGEV_NONE;
    CALL("notify_none", mq_notify(q, &ev));

    CALL("close", mq_close(q));
    CALL("close_closed", mq_close(q));
    CALL("unlink", mq_unlink(name));
    CALL("unlink_again", mq_unlink(name));
    return 0;
}
