"""mq_open, mq_send, mq_timedsend, mq_receive, mq_timedreceive, mq_notify, mq_close, mq_unlink:
the exact events of each call, successful and failing, with the program's own view of each
result (return value, errno, priority, message) unchanged."""

from errno import EBADF, EBUSY, EEXIST, EMSGSIZE, ENOENT, ETIMEDOUT

from conftest import E, trace_prog
from names_util import stat_json

SIGEV_SIGNAL, SIGEV_NONE = 0, 1


def out(name, o, key, *more):
    r = o[key]
    return E(f"MQ_{name}_OUT", r, o[f"{key}.errno"] if r == "-1" else 0, *more)


def test_mq(tmp_path):
    t = trace_prog(tmp_path, "mq_calls")
    o = t.out
    name, other, q, q2 = o["name"], o["other"], o["open"], o["open_again"]
    failed = {k: (o[k], o[f"{k}.errno"]) for k in (
        "timedsend_full", "send_big", "receive_small", "timedreceive_empty", "notify_busy",
        "close_closed", "unlink_again")}
    assert failed == {"timedsend_full": ("-1", str(ETIMEDOUT)), "send_big": ("-1", str(EMSGSIZE)),
                      "receive_small": ("-1", str(EMSGSIZE)),
                      "timedreceive_empty": ("-1", str(ETIMEDOUT)),
                      "notify_busy": ("-1", str(EBUSY)), "close_closed": ("-1", str(EBADF)),
                      "unlink_again": ("-1", str(ENOENT))}
    assert (o["open.failed"], o["open_again.failed"]) == ("0", "0")
    assert (o["open_excl.failed"], o["open_excl.errno"]) == ("1", str(EEXIST))
    assert (o["open_none.failed"], o["open_none.errno"]) == ("1", str(ENOENT))
    assert (o["receive"], o["receive.prio"], o["receive.msg"]) == ("6", "5", "hello")
    assert (o["timedreceive"], o["timedreceive.prio"], o["timedreceive.msg"]) == ("4", "1", "low")
    assert o["receive_noprio"] == "2"
    assert [o[k] for k in ("close_again", "send", "send_low", "timedsend", "notify",
                           "notify_off", "notify_none", "close", "unlink")] == ["0"] * 9
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        # Flags, mode, the attribute's maxmsg and msgsize, then the name.
        E("MQ_OPEN_IN", o["creat_excl_rdwr"], "0600", 2, 16, name), E("MQ_OPEN_OUT", q, 0),
        E("MQ_OPEN_IN", o["creat_excl_rdwr"], "0600", 2, 16, name),
        E("MQ_OPEN_OUT", -1, o["open_excl.errno"]),
        # Without O_CREAT: no mode, no attribute.
        E("MQ_OPEN_IN", "0x0", "00", 0, 0, other), E("MQ_OPEN_OUT", -1, o["open_none.errno"]),
        # O_CREAT without an attribute: maxmsg and msgsize 0.
        E("MQ_OPEN_IN", o["creat_rdwr"], "0644", 0, 0, name), E("MQ_OPEN_OUT", q2, 0),
        E("MQ_CLOSE_IN", q2), out("CLOSE", o, "close_again"),
        # Descriptor, length, priority.
        E("MQ_SEND_IN", q, 6, 5), out("SEND", o, "send"),
        E("MQ_SEND_IN", q, 4, 1), out("SEND", o, "send_low"),
        E("MQ_TIMEDSEND_IN", q, 2, 3, o["abs1"]), out("TIMEDSEND", o, "timedsend_full"),
        E("MQ_SEND_IN", q, 18, 0), out("SEND", o, "send_big"),
        # The priority of the message received (0 when none was).
        E("MQ_RECEIVE_IN", q, 8), out("RECEIVE", o, "receive_small", 0),
        E("MQ_RECEIVE_IN", q, 64), out("RECEIVE", o, "receive", o["receive.prio"]),
        E("MQ_TIMEDRECEIVE_IN", q, 64, o["abs2"]),
        out("TIMEDRECEIVE", o, "timedreceive", o["timedreceive.prio"]),
        E("MQ_TIMEDRECEIVE_IN", q, 64, o["abs3"]),
        out("TIMEDRECEIVE", o, "timedreceive_empty", 0),
        E("MQ_TIMEDSEND_IN", q, 2, 7, o["abs4"]), out("TIMEDSEND", o, "timedsend"),
        # No place for the priority: libptt still records it.
        E("MQ_RECEIVE_IN", q, 64), out("RECEIVE", o, "receive_noprio", 7),
        E("MQ_NOTIFY_IN", q, SIGEV_SIGNAL, o["usr1"]), out("NOTIFY", o, "notify"),
        E("MQ_NOTIFY_IN", q, SIGEV_SIGNAL, o["usr1"]), out("NOTIFY", o, "notify_busy"),
        # No sigevent (unregister): notify -1.
        E("MQ_NOTIFY_IN", q, -1, 0), out("NOTIFY", o, "notify_off"),
        E("MQ_NOTIFY_IN", q, SIGEV_NONE, 0), out("NOTIFY", o, "notify_none"),
        E("MQ_CLOSE_IN", q), out("CLOSE", o, "close"),
        E("MQ_CLOSE_IN", q), out("CLOSE", o, "close_closed"),
        E("MQ_UNLINK_IN", name), out("UNLINK", o, "unlink"),
        E("MQ_UNLINK_IN", name), out("UNLINK", o, "unlink_again"),
        E("PROCESS_EXIT", "exit=0"),
    ]
    # ptt stat names what a queue wait waits on by its descriptor (before: "0x3").
    (main,) = stat_json(t.path)["threads"]
    on = {b["call"]: b["object"] for b in main["blocked_on"]}
    assert on["mq_timedsend"] == f"mqd {int(q)}", on
