"""Helpers of the tests of names, call sites, ptt stat and view's filters (test_names.py,
test_sites.py, test_stat.py, test_filters.py): the marked lines of the programs' sources, ptt view
and ptt stat output read back, and a small JSON Schema validator."""

import json
import re

from conftest import PTT, SOURCE, run
from export_util import FIELDS

PROGS_SRC = SOURCE / "tests" / "progs"


def site_lines(prog):
    """{KEY: line} of the comments "site:KEY" of tests/progs/PROG.c (one line per key)."""
    lines = {}
    for no, text in enumerate((PROGS_SRC / f"{prog}.c").read_text().splitlines(), 1):
        for key in re.findall(r"/\* site:(\w+) \*/", text):
            assert key not in lines, f"site:{key} marks two lines of {prog}.c"
            lines[key] = no
    assert lines, f"no site: comment in {prog}.c"
    return lines


def def_line(prog, func):
    """The line of the definition of function FUNC in tests/progs/PROG.c ("void *func(")."""
    for no, text in enumerate((PROGS_SRC / f"{prog}.c").read_text().splitlines(), 1):
        if re.match(rf"^\w[\w\s\*]*\b{func}\(", text):
            return no
    raise AssertionError(f"{func} is not defined in {prog}.c")


def obj_fields(name):
    """The names of the fields of event NAME that are POSIX threads objects (type obj)."""
    return [f for f, t in FIELDS[name][2] if t == "obj"]


def ptt_ok(*args):
    """ptt ARGS: stdout; it must succeed and say nothing on stderr."""
    p = run([PTT, *args])
    assert p.returncode == 0 and p.stderr == "", f"ptt {args}: {p.returncode} {p.stderr}"
    return p.stdout


def ptt_usage_error(*args, cmd):
    """ptt ARGS must refuse its arguments: exit status 2, nothing on stdout, one line on stderr
    that starts with "ptt CMD: ". Gives that line."""
    p = run([PTT, *args])
    assert p.returncode == 2, f"ptt {args}: exit status {p.returncode}: {p.stdout[:300]}"
    assert p.stdout == "", f"ptt {args} printed {p.stdout[:300]!r}"
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and p.stderr.endswith("\n"), f"ptt {args}: stderr {p.stderr!r}"
    assert lines[0].startswith(f"ptt {cmd}: "), lines[0]
    return lines[0]


def view_json(path, *opts):
    """ptt view --format=json: one dict per event."""
    return [json.loads(line) for line in ptt_ok("view", "--format=json", *opts, path).splitlines()]


def stat_json(path, *opts):
    return json.loads(ptt_ok("stat", "--format=json", *opts, path))


def raw_ns(line):
    """The time of a ptt view --format=raw line, in ns."""
    s, ns = line.split(":", 1)[0].split(".")
    return int(s) * 10**9 + int(ns)


# A JSON Schema validator for the keywords docs/stat.schema.json uses, for machines without
# python3-jsonschema (tests prefer the package when it is there, and check they agree).
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(doc, t):
    if t == "integer":
        return isinstance(doc, int) and not isinstance(doc, bool)
    if t == "number":
        return isinstance(doc, (int, float)) and not isinstance(doc, bool)
    return isinstance(doc, _TYPES[t]) and not (t != "boolean" and isinstance(doc, bool))


def schema_errors(schema, doc, root=None, where="$"):
    """The places where doc breaks schema: a list of messages, empty when doc is valid. Knows
    type (a name or a list of names), properties, required, additionalProperties, items, enum, const, minimum, maximum,
    minLength, pattern, minItems, maxItems, $ref (to #/$defs/...), uniqueItems."""
    root = root or schema
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), f"unsupported $ref {ref}"
        return schema_errors(root["$defs"][ref[len("#/$defs/"):]], doc, root, where)
    errs = []
    t = schema.get("type")
    if t is not None:
        if not any(_is_type(doc, one) for one in (t if isinstance(t, list) else [t])):
            return [f"{where}: {doc!r:.60} is not of type {t}"]
    if "enum" in schema and doc not in schema["enum"]:
        errs.append(f"{where}: {doc!r} is not one of {schema['enum']}")
    if "const" in schema and doc != schema["const"]:
        errs.append(f"{where}: {doc!r} is not {schema['const']!r}")
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        if "minimum" in schema and doc < schema["minimum"]:
            errs.append(f"{where}: {doc} < {schema['minimum']}")
        if "maximum" in schema and doc > schema["maximum"]:
            errs.append(f"{where}: {doc} > {schema['maximum']}")
    if isinstance(doc, str):
        if len(doc) < schema.get("minLength", 0):
            errs.append(f"{where}: {doc!r} is shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], doc):
            errs.append(f"{where}: {doc!r} does not match {schema['pattern']}")
    if isinstance(doc, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in doc:
                errs.append(f"{where}: {k} is missing")
        for k, v in doc.items():
            if k in props:
                errs += schema_errors(props[k], v, root, f"{where}.{k}")
            elif schema.get("additionalProperties", True) is False:
                errs.append(f"{where}: unexpected key {k}")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0):
            errs.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(doc) > schema["maxItems"]:
            errs.append(f"{where}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems") and len({json.dumps(x, sort_keys=True) for x in doc}) \
                != len(doc):
            errs.append(f"{where}: items are not unique")
        if "items" in schema:
            for i, v in enumerate(doc):
                errs += schema_errors(schema["items"], v, root, f"{where}[{i}]")
    return errs
