"""Helpers of the exporters' tests (test_chrome.py, test_ctf.py): the field types of the event
table, the tools the exports are checked with (babeltrace2, chromium), and fields as other tools
print them turned into ptt view --format=raw's text."""

import os
import re
import shutil

import pytest

from conftest import SOURCE

# The Debian packages of the tools: CI must install them.
TOOL_PACKAGES = {"babeltrace2": "babeltrace2", "chromium": "chromium"}


def require_tool(name):
    """The tool's path. Missing: the test fails when $CI is set (CI must install it), else it is
    skipped."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK)
                                  else None)
    if path:
        return path
    msg = f"{name} not found (Debian package {TOOL_PACKAGES.get(name, name)})"
    if os.environ.get("CI"):
        pytest.fail(msg + ": CI must install it")
    pytest.skip(msg)


def load_fields():
    """{event name: (id, nargs, [(field, type), ...])} from common/events.def."""
    text = (SOURCE / "common" / "events.def").read_text()
    table = {}
    for m in re.finditer(r'^PTT_EVENT\((\w+),\s*(0x[0-9a-fA-F]+),\s*\w+,\s*\w+,\s*"[^"]*",\s*'
                         r'(\d+),\s*((?:"[^"]*"\s*)+),', text, re.M):
        spec = "".join(re.findall(r'"([^"]*)"', m[4]))
        table[m[1]] = (int(m[2], 16), int(m[3]), [tuple(f.split(":")) for f in spec.split()])
    assert len(table) > 50, "cannot read the fields of common/events.def"
    return table


FIELDS = load_fields()
# Types ptt view prints in hexadecimal, and those it prints as names (enumerations).
HEX_TYPES = {"obj", "ptr", "sym", "pthread", "hex", "sigset", "cpuset", "classes", "site"}


def raw_str(s):
    """A string field as ptt view --format=raw quotes it."""
    out = []
    for ch in s.encode():
        c = chr(ch)
        if c in '"\\':
            out.append("\\" + c)
        elif ch < 0x20 or ch >= 0x7f:
            out.append(f"\\x{ch:02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def wstatus(st):
    st &= 0xffffffff
    if st & 0x7f == 0:
        return f"exit={(st >> 8) & 0xff}"
    if st & 0x7f != 0x7f:
        return f"signal={st & 0x7f}"
    return f"status=0x{st:x}"


def same_value(ftype, raw, value):
    """Whether a field's raw text (ptt view --format=raw) says the same as value: an int, a
    string, ("enum", label, number) or a list of ints."""
    if isinstance(value, tuple):  # an enumeration: its label, or the number ptt view prints
        _, label, number = value
        return raw in (label, str(number)) or (ftype == "evid" and raw == f"0x{number:04x}")
    if ftype == "str":
        return raw == raw_str(value)
    if ftype == "frames":
        return raw == ",".join(f"0x{v:x}" for v in value)
    if ftype in HEX_TYPES:
        return raw == f"0x{value:x}"
    if ftype == "oct":
        return int(raw, 8) == value
    if ftype == "abstime":
        return raw == f"{value // 10**9}.{value % 10**9:09d}"
    if ftype == "wstatus":
        return raw == wstatus(value)
    return raw == str(value)
