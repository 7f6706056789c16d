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
            padded, p, end = 0, off + CHUNK_HEAD, off + size
            while p + 8 <= end:
                eid, esize = struct.unpack_from("<HH", data, p)
                if esize < 8:
                    break
                if eid & ID_MASK == MODULE_LOAD:
                    struct.pack_into("<H", data, p, (eid & FLAGS) | TRACE_PAD)
                    padded += 1
                p += esize
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
