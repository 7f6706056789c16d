"""The states of a thread and their colours, read from ptt's one table of them (src/analysis/states.def,
under $PTT_SOURCE): the tests compare every picture with it, never with a copy of their own."""

import re
from dataclasses import dataclass

from conftest import SOURCE


@dataclass(frozen=True)
class State:
    index: int  # its place in the table: enum ptt_tl_state, the report's class s<index>
    name: str
    rgb: tuple  # (r, g, b), 0-255
    cname: str  # the Chrome trace viewer's reserved colour name


def states():
    """The table's rows, in its order."""
    text = (SOURCE / "src" / "analysis" / "states.def").read_text()
    rows = re.findall(r'^PTT_STATE\((\w+), "(\w+)", 0x([0-9a-fA-F]{6}), "(\w+)"\)$', text, re.M)
    assert rows and len(rows) == len(re.findall(r"^PTT_STATE\(", text, re.M)), \
        "src/analysis/states.def has rows this reader does not understand"
    return [State(i, name, tuple(int(rgb[k:k + 2], 16) for k in (0, 2, 4)), cname)
            for i, (_, name, rgb, cname) in enumerate(rows)]


def by_name():
    return {s.name: s for s in states()}
