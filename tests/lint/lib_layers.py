#!/usr/bin/env python3
"""libptt's objects depend on each other without a cycle: each object's undefined ptt_* symbols
(nm -u) are defined by objects strictly below it, so the library could be linked from its
objects in any order, layer by layer. Prints the layers; exits 1 naming a cycle.

usage: lib_layers.py OBJECT... (or one ';'-separated list)"""

import subprocess
import sys
from pathlib import Path


def symbols(obj, defined):
    args = ["nm", "--defined-only" if defined else "-u", str(obj)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        if defined and (len(parts) < 3 or parts[1] not in "TDBRVW"):
            continue
        name = parts[-1]
        if name.startswith("ptt_"):
            names.add(name)
    return names


def main(args):
    objs = [o for a in args for o in a.split(";") if o]  # CMake passes a list as one argument
    if not objs:
        sys.exit(__doc__.splitlines()[-1])
    name = {o: Path(o).name.split(".")[0] for o in objs}
    owner = {}
    for o in objs:
        for s in symbols(o, True):
            owner[s] = o
    deps = {o: {owner[s] for s in symbols(o, False) if s in owner} - {o} for o in objs}
    layers, placed = [], set()
    while len(placed) < len(objs):
        layer = sorted(o for o in objs if o not in placed and deps[o] <= placed)
        if not layer:
            left = {o for o in objs if o not in placed}
            cyc = {name[o]: sorted(name[d] for d in deps[o] & left) for o in sorted(left)}
            print("lib_layers: a cycle among libptt's objects:", file=sys.stderr)
            for o, d in cyc.items():
                print(f"  {o} needs {', '.join(d)}", file=sys.stderr)
            return 1
        layers.append(layer)
        placed.update(layer)
    for i, layer in enumerate(layers):
        print(f"layer {i}: {' '.join(name[o] for o in layer)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
