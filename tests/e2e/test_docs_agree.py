"""Each command's long options are the same set in its getopt_long table (the truth), its usage
text (ptt CMD --help, ptt help CMD), its man page and docs/CMD.md; ptt help names an unknown
command as such."""
import re
import subprocess

import pytest

from conftest import PTT, SOURCE

# The command, the file of its option table.
COMMANDS = {
    "ptt": "cmd/ptt.c",
    "trace": "cmd/trace.c",
    "view": "cmd/view.c",
    "stat": "cmd/stat.c",
    "paje": "cmd/export.c",
    "export": "cmd/export.c",
    "report": "cmd/export.c",
    "ctl": "cmd/ctl.c",
    "scal": "cmd/scal.c",
    "runs": "cmd/runs.c",
}
# ptt paje and ptt report share ptt export's table, whose --format they do not document: it is
# ptt export's option (given to them, it writes another format).
NOT_THEIRS = {"paje": {"format"}, "report": {"format"}}


def run(args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=30)


def filter_options(macro):
    """The long options of a macro of src/trace/filter.h (PTT_FILTER_OPTIONS...)."""
    text = (SOURCE / "src" / "trace" / "filter.h").read_text()
    m = re.search(rf"#define {macro}\b(.*?)(?<!\\)\n", text, re.S)
    assert m, f"no {macro} in src/trace/filter.h"
    return set(re.findall(r'\{"([a-z][a-z-]*)",\s*\w+_argument', m[1]))


def code_options(cmd):
    """The long options of the getopt_long table, and those compared with strcmp (ptt, ctl)."""
    text = (SOURCE / "src" / COMMANDS[cmd]).read_text()
    names = set()
    for table in re.findall(r"struct option\s+\w+\[\]\s*=\s*\{(.*?)\};", text, re.S):
        names |= set(re.findall(r'\{"([a-z][a-z-]*)",\s*\w+_argument', table))
        if "PTT_TERM_OPTIONS" in table:  # -o, --color, --no-pager: src/util/term.h
            term = (SOURCE / "src" / "util" / "term.h").read_text()
            macro = re.search(r"#define PTT_TERM_OPTIONS(.*?)\n\n", term, re.S)[1]
            names |= set(re.findall(r'\{"([a-z][a-z-]*)",\s*\w+_argument', macro))
        for macro in re.findall(r"\b(PTT_FILTER_\w+)\b", table):  # the readers' filters
            names |= filter_options(macro)
    names |= set(re.findall(r'strcmp\(argv\[\d\],\s*"--([a-z][a-z-]*)"\)', text))
    assert names, f"no option found in src/{COMMANDS[cmd]}"
    return names - NOT_THEIRS.get(cmd, set())


def usage_options(text):
    """Options of the usage text: the lines that start with an option, up to its text."""
    names = set()
    for line in text.splitlines():
        if re.match(r"\s+(-\w, )?--\w", line):
            names |= set(re.findall(r"--([a-z][a-z-]*)", line.strip().split("  ")[0]))
    return names


def man_options(cmd):
    page = SOURCE / "man" / ("ptt.1" if cmd == "ptt" else f"ptt-{cmd}.1")
    names, section, tag = set(), None, False
    for line in page.read_text().splitlines():
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif section == "OPTIONS" and line.startswith(".TP"):
            tag = True
        elif tag:
            names |= set(re.findall(r"--([a-z][a-z-]*)", line.replace("\\-", "-")))
            tag = False
    return names


def md_options(cmd):
    """The first column of the tables headed 'option' of docs/CMD.md."""
    names, in_options, prev = set(), False, ""
    for line in (SOURCE / "docs" / f"{cmd}.md").read_text().splitlines():
        if not line.startswith("|"):
            in_options, prev = False, line
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if not prev.startswith("|"):
            in_options = cells[0] == "option"
        elif in_options and not cells[0].startswith("---"):
            names |= set(re.findall(r"--([a-z][a-z-]*)", cells[0]))
        prev = line
    return names


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_same_options(cmd):
    code = code_options(cmd)
    p = run([PTT, "--help"] if cmd == "ptt" else [PTT, cmd, "--help"])
    assert p.returncode == 0 and p.stderr == ""
    assert usage_options(p.stdout) == code, "usage text"
    assert man_options(cmd) == code, "man page"
    if cmd != "ptt":
        assert md_options(cmd) == code, f"docs/{cmd}.md"


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_help_command(cmd):
    """ptt help CMD prints what ptt CMD --help prints; ptt help, what ptt --help prints."""
    p = run([PTT, "help"] + ([] if cmd == "ptt" else [cmd]))
    q = run([PTT, "--help"] if cmd == "ptt" else [PTT, cmd, "--help"])
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == q.stdout
    assert p.stdout.startswith("usage: ptt" if cmd == "ptt" else f"usage: ptt {cmd}")


def test_help_unknown_command():
    p = run([PTT, "help", "nosuch"])
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == "ptt: 'nosuch' is not a ptt command; see 'ptt --help'\n"


def test_commands_listed():
    """ptt --help and man/ptt.1 list exactly the commands ptt runs (src/cmd/cmds.h): the list is
    written in docs/src/ptt.txt, apart from the table."""
    table = (SOURCE / "src" / "cmd" / "cmds.h").read_text()
    m = re.search(r"#define PTT_COMMANDS\(X\)(.*?)\n\n", table, re.S)
    commands = set(re.findall(r"X\((\w+)\)", m.group(1)))
    text = run([PTT, "--help"]).stdout
    listed = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    assert {line.split()[0] for line in listed.splitlines()} == commands
    page = (SOURCE / "man" / "ptt.1").read_text().split(".SH COMMANDS\n", 1)[1].split(".SH", 1)[0]
    assert set(re.findall(r"^\.TP\n(?:\.B |\\fB)(\w+)", page, re.M)) == commands
