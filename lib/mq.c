/* Message queues. */
#define PTT_ONLY_CLASS PTT_CLASS_mq /* every event here is of this class (record.h) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdarg.h>

#include "libptt.h"

PTT_EXPORT mqd_t mq_open(const char *name, int oflag, ...)
{
    mode_t mode = 0;
    struct mq_attr *attr = 0;
    if (oflag & O_CREAT) {
        va_list ap;
        va_start(ap, oflag);
        mode = va_arg(ap, mode_t);
        attr = va_arg(ap, struct mq_attr *);
        va_end(ap);
    }
    if (!ptt_on())
        return REAL(mq_open)(name, oflag, mode, attr);
    PTT_REC_STR(MQ_OPEN_IN, name, PTT_I(oflag), (uint64_t)mode, attr ? PTT_I(attr->mq_maxmsg) : 0,
                attr ? PTT_I(attr->mq_msgsize) : 0);
    mqd_t r = REAL(mq_open)(name, oflag, mode, attr);
    PTT_REC(MQ_OPEN_OUT, PTT_I(r), PTT_ERRNO(r == (mqd_t)-1));
    return r;
}

PTT_EXPORT int mq_send(mqd_t q, const char *msg, size_t len, unsigned prio)
{
    if (!ptt_on())
        return REAL(mq_send)(q, msg, len, prio);
    PTT_REC(MQ_SEND_IN, PTT_I(q), (uint64_t)len, (uint64_t)prio);
    PTT_BLOCKS();
    int r = REAL(mq_send)(q, msg, len, prio);
    PTT_REC(MQ_SEND_OUT, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int mq_timedsend(mqd_t q, const char *msg, size_t len, unsigned prio,
                            const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(mq_timedsend)(q, msg, len, prio, abstime);
    PTT_REC(MQ_TIMEDSEND_IN, PTT_I(q), (uint64_t)len, (uint64_t)prio, ptt_ts_arg(abstime));
    PTT_BLOCKS();
    int r = REAL(mq_timedsend)(q, msg, len, prio, abstime);
    PTT_REC(MQ_TIMEDSEND_OUT, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT ssize_t mq_receive(mqd_t q, char *msg, size_t len, unsigned *prio)
{
    if (!ptt_on())
        return REAL(mq_receive)(q, msg, len, prio);
    PTT_REC(MQ_RECEIVE_IN, PTT_I(q), (uint64_t)len);
    PTT_BLOCKS();
    unsigned p = 0;
    ssize_t r = REAL(mq_receive)(q, msg, len, prio ? prio : &p);
    PTT_REC(MQ_RECEIVE_OUT, PTT_I(r), PTT_ERRNO(r < 0), r >= 0 ? (uint64_t)(prio ? *prio : p) : 0);
    return r;
}

PTT_EXPORT ssize_t mq_timedreceive(mqd_t q, char *msg, size_t len, unsigned *prio,
                                   const struct timespec *abstime)
{
    if (!ptt_on())
        return REAL(mq_timedreceive)(q, msg, len, prio, abstime);
    PTT_REC(MQ_TIMEDRECEIVE_IN, PTT_I(q), (uint64_t)len, ptt_ts_arg(abstime));
    PTT_BLOCKS();
    unsigned p = 0;
    ssize_t r = REAL(mq_timedreceive)(q, msg, len, prio ? prio : &p, abstime);
    PTT_REC(MQ_TIMEDRECEIVE_OUT, PTT_I(r), PTT_ERRNO(r < 0),
            r >= 0 ? (uint64_t)(prio ? *prio : p) : 0);
    return r;
}

PTT_EXPORT int mq_notify(mqd_t q, const struct sigevent *sev)
{
    if (!ptt_on())
        return REAL(mq_notify)(q, sev);
    PTT_CALL_IN(call, MQ_NOTIFY, PTT_I(q), sev ? PTT_I(sev->sigev_notify) : PTT_I(-1),
                sev && sev->sigev_notify == SIGEV_SIGNAL ? PTT_I(sev->sigev_signo) : 0);
    int r = REAL(mq_notify)(q, sev);
    PTT_CALL_OUT(call, MQ_NOTIFY, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int mq_close(mqd_t q)
{
    if (!ptt_on())
        return REAL(mq_close)(q);
    PTT_CALL_IN(call, MQ_CLOSE, PTT_I(q));
    int r = REAL(mq_close)(q);
    PTT_CALL_OUT(call, MQ_CLOSE, PTT_I(r), PTT_ERRNO(r));
    return r;
}

PTT_EXPORT int mq_unlink(const char *name)
{
    if (!ptt_on())
        return REAL(mq_unlink)(name);
    PTT_REC_STR(MQ_UNLINK_IN, name);
    int r = REAL(mq_unlink)(name);
    PTT_REC(MQ_UNLINK_OUT, PTT_I(r), PTT_ERRNO(r));
    return r;
}
