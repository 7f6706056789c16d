"""Calls recorded as one record, in the compact encoding (docs/format.md, format 2.0): a call that
waited keeps its IN, what happened inside and its OUT; one that did not is one record of a few
bytes; an uncontended lock and unlock take 16 bytes of the file, give or take the deltas of time
that do not fit in 7 bits."""

import collections
import struct

from conftest import PTT, parse_raw, prog, ptt_trace, run, view
from export_util import FIELDS

CALL = 0x80  # a call's one record: its IN's id | 0x80
COMPACT = 4  # the chunk flag of the compact encoding
ID = {name: FIELDS[name][0] for name in ("MUTEX_LOCK_IN", "MUTEX_UNLOCK_IN")}


def varint(b, p):
    """The LEB128 varint at b[p]: (value, position after it)."""
    v = s = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, p


def records(path):
    """Every record of the compact chunks of a trace file: (chunk index, id, size, time delta
    or None when absolute, duration or None, values as (kind, value)), kind 'lit', 'ref', 'def'."""
    data = path.read_bytes()
    off = struct.unpack_from("<I", data, 12)[0]
    chunk = 0
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if rtype == 3 and struct.unpack_from("<I", data, off + 36)[0] & COMPACT:
            p, end = off + 40, off + size
            while p < end and data[p]:
                n, q = (data[p], p + 1) if data[p] != 255 else (
                    struct.unpack_from("<H", data, p + 1)[0], p + 3)
                rend = q + n
                head, q = varint(data, q)
                rid = head >> 2
                t, q = varint(data, q)
                dur = None
                if rid & CALL:
                    dur, q = varint(data, q)
                vals = []
                while q < rend:
                    c = data[q]
                    q += 1
                    if c <= 0x5F:
                        vals.append(("lit", c))
                    elif c == 0x60:
                        v, q = varint(data, q)
                        vals.append(("lit", v))
                    elif c >= 0xC0:
                        v, q = varint(data, q)
                        vals.append(("def", v))
                    else:
                        assert c >= 0x80, f"reserved value byte 0x{c:02x}"
                        vals.append(("ref", c & 63))
                yield chunk, rid, rend - p, None if head & 2 else t, dur, vals
                p = rend
            chunk += 1
        off += size


def end_record(path):
    """The END record's events and bytes."""
    data = path.read_bytes()
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if rtype == 4:
            return struct.unpack_from("<QQ", data, off + 8)
        off += size
    raise AssertionError(f"{path}: no END record")


def undefined_ref(data, rid):
    """data with the first value that defines a slot in a record of id rid (of the short form)
    made a use of that slot, never defined before in its chunk: the varint after it taken out,
    the chunk's later records moved back, zeros at its end. (data, the record's offset)."""
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if rtype == 3 and struct.unpack_from("<I", data, off + 36)[0] & COMPACT:
            p, end, defined = off + 40, off + size, set()
            while p < end and data[p]:
                n, q = (data[p], p + 1) if data[p] != 255 else (
                    struct.unpack_from("<H", data, p + 1)[0], p + 3)
                rend = q + n
                head, q = varint(data, q)
                _, q = varint(data, q)
                if head >> 2 & CALL:
                    _, q = varint(data, q)
                while q < rend:
                    c = data[q]
                    if c >= 0xC0 and head >> 2 == rid and data[p] != 255 and \
                            c & 63 not in defined:
                        _, after = varint(data, q + 1)
                        data[q] = 0x80 | c & 63
                        data[q + 1:end] = data[after:end] + bytes(after - q - 1)
                        data[p] -= after - q - 1
                        return data, p
                    if c >= 0xC0:
                        defined.add(c & 63)
                    q = varint(data, q + 1)[1] if c == 0x60 or c >= 0xC0 else q + 1
                p = rend
        off += size
    raise AssertionError(f"no record of id {rid} defines a slot")


def test_use_of_an_empty_slot(tmp_path):
    """A value that names a slot of the chunk's dictionary no record defined (its writer never
    makes one: damage) is a corrupt record, said in one line with its offset, exit status 2;
    never read as 0 (a thread "created by thread 0")."""
    t = ptt_trace(tmp_path, [prog("contend"), 2, 1])
    data, at = undefined_ref(bytearray(t.path.read_bytes()), FIELDS["THREAD_START"][0])
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(data)
    for cmd in ("view", "stat"):
        p = run([PTT, cmd, bad])
        assert p.returncode == 2, p.stderr
        assert p.stderr == f"ptt {cmd}: {bad}: corrupt record at offset {at}\n"
        assert "created by thread 0" not in p.stdout


def test_contended_lock_keeps_in_and_out(tmp_path):
    """contend: every lock of big_lock but the first had to wait, and shows as MUTEX_LOCK_IN,
    MUTEX_WAIT, MUTEX_ACQUIRED, MUTEX_LOCK_OUT in ptt view --format=raw; the first one, and every
    unlock, as their IN and OUT, from one record each in the file."""
    rounds = 4
    t = ptt_trace(tmp_path, [prog("contend"), rounds, 1])
    big = dict(line.split("=", 1) for line in t.stdout.splitlines() if "=" in line)["@big_lock"]
    calls = collections.defaultdict(list)  # by thread: the big_lock call it is inside
    seqs = collections.Counter()
    for e in parse_raw(view("--format=raw", t.path)):
        call = calls[e.tid]
        if e.name.endswith("_IN") and e.name.startswith("MUTEX_") and e.fields[0] == big:
            call.append(e.name)
        elif call:
            call.append(e.name)
            if e.name == call[0].replace("_IN", "_OUT"):
                seqs[tuple(call)] += 1
                call.clear()
    assert seqs == {
        ("MUTEX_LOCK_IN", "MUTEX_WAIT", "MUTEX_ACQUIRED", "MUTEX_LOCK_OUT"): 2 * rounds - 1,
        ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT"): 1,
        ("MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"): 2 * rounds,
    }
    ids = collections.Counter(rid for _c, rid, *_ in records(t.path))
    assert ids[ID["MUTEX_LOCK_IN"]] == 2 * rounds - 1  # the waits' INs, written alone
    assert ids[ID["MUTEX_LOCK_IN"] | CALL] == 1
    assert ids[ID["MUTEX_UNLOCK_IN"] | CALL] == 2 * rounds
    assert ids[ID["MUTEX_UNLOCK_IN"]] == 0


def test_light_level_blocked_lock_in_first(tmp_path):
    """--level=light records no MUTEX_WAIT, yet a lock that had to wait writes its IN before it
    blocks (a thread blocked in it is seen, and kept if it never returns): in the file, the
    waits' INs alone, the uncontended lock as one record."""
    rounds = 3
    t = ptt_trace(tmp_path, [prog("contend"), rounds, 1], opts=["--level=light"])
    ids = collections.Counter(rid for _c, rid, *_ in records(t.path))
    assert ids[ID["MUTEX_LOCK_IN"]] == 2 * rounds - 1
    assert ids[ID["MUTEX_LOCK_IN"] | CALL] == 1
    names = collections.Counter(e.name for e in parse_raw(view("--format=raw", t.path)))
    assert names["MUTEX_WAIT"] == names["MUTEX_ACQUIRED"] == 0
    assert names["MUTEX_LOCK_IN"] == names["MUTEX_LOCK_OUT"] == 2 * rounds


def test_bytes_per_pair(tmp_path):
    """flood 1 N: each lock and each unlock is one record; past the first of its sub-buffer, one
    that names the mutex and the site by their slots, the result 0 as itself, and holds 6 bytes
    besides its time and duration (length, a head of 2 bytes, 3 values), which take a byte each
    under 128 ticks. So the END record's bytes grow by 16 bytes a pair, and a little more for
    the deltas that do not fit in 7 bits and the first records of each sub-buffer."""
    n1, n2 = 50000, 150000
    t1 = ptt_trace(tmp_path, [prog("flood"), 1, n1], name="f1.ptt")
    t2 = ptt_trace(tmp_path, [prog("flood"), 1, n2], name="f2.ptt")
    (e1, b1), (e2, b2) = end_record(t1.path), end_record(t2.path)
    assert e2 - e1 == 4 * (n2 - n1)  # every call gives back its IN and its OUT
    per_pair = (b2 - b1) / (n2 - n1)
    print(f"bytes per lock+unlock pair: {per_pair:.3f}")
    assert 15 <= per_pair <= 18  # the first records of each run's sub-buffers differ a little
    calls = collections.Counter()
    for chunk, rid, size, delta, dur, vals in records(t2.path):
        if rid not in (ID["MUTEX_LOCK_IN"] | CALL, ID["MUTEX_UNLOCK_IN"] | CALL):
            continue
        calls[rid] += 1
        assert delta is not None and dur is not None
        assert len(vals) == 3 and vals[2] == ("lit", 0)  # the mutex, the site, the result
        if vals[0][0] == "ref" and vals[1][0] == "ref":
            assert size == 6 + len(varint_bytes(delta)) + len(varint_bytes(dur))
    assert calls == {ID["MUTEX_LOCK_IN"] | CALL: n2, ID["MUTEX_UNLOCK_IN"] | CALL: n2}
    counts = collections.Counter(e.name for e in parse_raw(view("--format=raw", t2.path)))
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"):
        assert counts[name] == n2


def varint_bytes(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)
