#!/usr/bin/env python3
"""Turn every MODULE_LOAD event of a trace file into TRACE_PAD (which readers skip), so that
what the readers print of it does not depend on the traced binaries being present: code
addresses stay addresses on every machine. The events keep their size and time; each chunk's
event count drops by the events padded. Layout: docs/format.md.

usage: strip_modules.py IN OUT"""

import struct
import sys

MODULE_LOAD, TRACE_PAD = 0x000A, 0x000D
ID_MASK, FLAGS = 0x3FFF, 0xC000
REC_CHUNK, CHUNK_HEAD = 3, 40  # record header 8 + pid, tid, serial, seq, base_ts, nevents, flags
CHUNK_COMPACT = 4  # the chunk's records are of the compact encoding (common/codec.h)


def strip_v1(data, p, end):
    """Format 1's events from p to end: MODULE_LOAD becomes TRACE_PAD; how many."""
    padded = 0
    while p + 8 <= end:
        eid, esize = struct.unpack_from("<HH", data, p)
        if esize < 8:
            break
        if eid & ID_MASK == MODULE_LOAD:
            struct.pack_into("<H", data, p, (eid & FLAGS) | TRACE_PAD)
            padded += 1
        p += esize
    return padded


def strip_compact(data, p, end):
    """The same for records of the compact encoding: a record's head is a varint id << 2 | flags
    after its length (one byte, or 255 and a u16); both ids fit in its first byte."""
    padded = 0
    while p < end and data[p]:
        size, head = (data[p] + 1, p + 1) if data[p] != 255 else (
            struct.unpack_from("<H", data, p + 1)[0] + 3, p + 3)
        if data[head] >> 2 == MODULE_LOAD:
            data[head] = TRACE_PAD << 2 | (data[head] & 3)
            padded += 1
        p += size
    return padded


def strip(data):
    data = bytearray(data)
    if data[:8] != b"PTTRACE\0":
        sys.exit("strip_modules.py: not a ptt trace file")
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if size < 8 or off + size > len(data):
            break
        if rtype == REC_CHUNK:
            flags = struct.unpack_from("<I", data, off + 36)[0]
            walk = strip_compact if flags & CHUNK_COMPACT else strip_v1
            padded = walk(data, off + CHUNK_HEAD, off + size)
            nevents = struct.unpack_from("<I", data, off + 32)[0]
            struct.pack_into("<I", data, off + 32, nevents - padded)
        off += size
    return bytes(data)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.splitlines()[-1])
    with open(sys.argv[1], "rb") as f:
        out = strip(f.read())
    with open(sys.argv[2], "wb") as f:
        f.write(out)
