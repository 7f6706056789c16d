#!/usr/bin/env python3
"""Each command's documentation from one source, docs/src/CMD.txt: the usage text compiled into
ptt (ptt CMD --help, ptt help CMD), the man page man/ptt-CMD.1 and the generated block of
docs/CMD.md. Written once, so they cannot drift apart; the bash completion of the commands and their options
is made from the same sources.

  gen_docs.py usage OUT.c SRC...      the C file of the usage texts
  gen_docs.py man DIR SRC...          DIR/ptt-CMD.1 (DIR/ptt.1 for ptt itself)
  gen_docs.py docs ROOT SRC...        rewrite ROOT/man/*.1 and the generated blocks (synopsis,
                                      options) of ROOT/docs/*.md
  gen_docs.py check ROOT SRC...       exit 1, with a diff, when ROOT/man or ROOT/docs differ
  gen_docs.py completion OUT SRC...   the bash completion script (docs and check write
                                      ROOT/contrib/ptt.bash-completion too)

The source, line by line ('#' in column 0 starts a comment; a directive starts with '@'):

  @command NAME           trace, view... or ptt
  @title TEXT             the man page's NAME line
  @synopsis TEXT          one line of the synopsis (repeatable), plain
  @usage                  the lines up to the next directive follow the synopsis in the usage
  @roff SECTION           the lines up to the next directive are that man section, raw roff
  @group TITLE            options that follow form a group (a heading in every output)
  @option SPEC            an option: '-o FILE, --output=FILE', '--force'...
  @value SPEC             one value of the option above ('--overflow=block'), its own entry
  @help TEXT              after @option, @value, @env, @subcommand: the usage's short text
  @env NAME               an environment variable
  @exit STATUS            an exit status
  @subcommand NAME        (ptt only) a command

The lines after @option, @value, @env, @exit and @subcommand (up to the next directive) are
their text for the man page and docs/CMD.md, in Markdown: `code`, *argument*, [text](link);
paragraphs are separated by an empty line. Without them the @help text serves.
"""
import difflib
import os
import re
import sys
import textwrap

MARK_BEGIN = "<!-- options: generated from docs/src/{0}.txt by tools/gen_docs.py; edit that file -->"
MARK_END = "<!-- end of generated options -->"
SYN_BEGIN = "<!-- synopsis: generated from docs/src/{0}.txt by tools/gen_docs.py; edit that file -->"
SYN_END = "<!-- end of generated synopsis -->"
WIDTH = 96  # the usage text's lines, as the hand-written ones were
COLUMN = 26  # where an option's text starts in the usage


class Entry:
    def __init__(self, kind, spec):
        self.kind, self.spec, self.help, self.lines, self.values = kind, spec, "", [], []

    def text(self):
        """The long text (Markdown), else the short one."""
        body = "\n".join(self.lines).strip("\n")
        return body if body.strip() else self.help


class Doc:
    def __init__(self, path):
        self.path = path
        self.name = self.title = None
        self.synopsis, self.usage, self.items = [], [], []
        # items: ("roff", section, lines) | ("group", title) | ("entry", Entry)
        self.parse()

    def parse(self):
        cur = None  # the list the free lines go to
        last = None  # the entry @help and @value apply to
        with open(self.path, encoding="utf-8") as f:
            for no, line in enumerate(f.read().split("\n"), 1):
                if line.startswith("#"):
                    continue
                m = re.match(r"@(\w+) ?(.*)$", line)
                if not m:
                    if cur is None:
                        if line.strip():
                            sys.exit(f"{self.path}:{no}: text outside any directive")
                        continue
                    cur.append(line)
                    continue
                d, raw = m.group(1), m.group(2).rstrip()
                arg = raw.strip()
                if d == "command":
                    self.name, cur = arg, None
                elif d == "title":
                    self.title, cur = arg, None
                elif d == "synopsis":
                    self.synopsis.append(raw)  # indented: goes on with the line before
                    cur = None
                elif d == "usage":
                    cur = self.usage
                elif d == "roff":
                    item = ("roff", arg, [])
                    self.items.append(item)
                    cur, last = item[2], None
                elif d == "group":
                    self.items.append(("group", arg))
                    cur, last = None, None
                elif d in ("option", "env", "exit", "subcommand"):
                    last = Entry(d, arg)
                    self.items.append(("entry", last))
                    cur = last.lines
                elif d == "value":
                    if not last or last.kind != "option":
                        sys.exit(f"{self.path}:{no}: @value without its @option")
                    v = Entry("value", arg)
                    last.values.append(v)
                    cur = v.lines
                elif d == "help":
                    target = last.values[-1] if last and last.values else last
                    if not target:
                        sys.exit(f"{self.path}:{no}: @help without an entry")
                    target.help = (target.help + " " + arg).strip()
                else:
                    sys.exit(f"{self.path}:{no}: unknown directive @{d}")
        if not self.name or not self.title or not self.synopsis:
            sys.exit(f"{self.path}: @command, @title and @synopsis are needed")
        for e in self.entries("option") + self.entries("env") + self.entries("subcommand"):
            if not e.help:
                sys.exit(f"{self.path}: @{e.kind} {e.spec} has no @help (its usage text)")

    def entries(self, kind):
        return [i[1] for i in self.items if i[0] == "entry" and i[1].kind == kind]

    @property
    def page(self):
        return "ptt" if self.name == "ptt" else "ptt-" + self.name


# ---- the usage text -------------------------------------------------------------------------


def wrap(spec, text, indent=2, column=COLUMN):
    head = " " * indent + spec
    if len(head) <= column - 2:
        head = head.ljust(column)
    else:
        head += "  "
    lines = textwrap.wrap(text, WIDTH - column, break_on_hyphens=False, break_long_words=False)
    out = [head + (lines[0] if lines else "")]
    out += [" " * column + l for l in lines[1:]]
    return [l.rstrip() for l in out]


def usage_spec(spec):
    """'-o FILE, --output=FILE' as the usage shows it: '-o, --output=FILE'."""
    parts = [p.strip() for p in spec.split(",")] if spec.startswith("-") else [spec]
    if len(parts) == 2 and not parts[0].startswith("--"):
        return parts[0].split()[0] + ", " + parts[1]
    return ("    " if spec.startswith("--") else "") + spec


def usage_text(doc):
    out = []
    for i, s in enumerate(doc.synopsis):
        out.append(("usage: " if i == 0 else "       ") + s)
    out += [l for l in doc.usage]
    while out and not out[-1].strip():
        out.pop()
    section = None
    for item in doc.items:
        if item[0] == "group":
            out += ["", item[1]]
            section = "option"
            continue
        if item[0] != "entry" or item[1].kind == "exit":
            continue
        e = item[1]
        if e.kind != section:
            out += [""] + {"env": ["environment:"], "subcommand": ["commands:"]}.get(e.kind, [])
            section = e.kind
        if e.kind == "subcommand":
            out += wrap(e.spec, e.help, 2, 11)
            continue
        out += wrap(usage_spec(e.spec) if e.kind == "option" else e.spec, e.help)
        for v in e.values:
            if v.help:
                out += wrap(v.spec.split("=", 1)[-1], v.help, COLUMN + 2, COLUMN + 12)
    return "\n".join(out) + "\n"


def c_string(text):
    out = []
    for line in text.splitlines(True):
        s = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        out.append(f'        "{s}"')
    return "\n".join(out)


def gen_usage(docs):
    out = [
        "/* Generated by tools/gen_docs.py from docs/src/CMD.txt: edit those files. The strings are",
        " * laid out as the usage text is, not as clang-format would. */",
        "// clang-format off",
        "#include <string.h>",
        "",
        '#include "cmd/usage.h"',
        "",
        "static const struct {",
        "    const char *cmd, *text;",
        "} usages[] = {",
    ]
    for d in docs:
        out.append(f'    {{"{d.name}",\n{c_string(usage_text(d))}}},')
    out += [
        "};",
        "",
        "const char *ptt_usage(const char *cmd)",
        "{",
        "    for (size_t i = 0; i < sizeof usages / sizeof usages[0]; i++)",
        "        if (!strcmp(usages[i].cmd, cmd))",
        "            return usages[i].text;",
        "    return NULL;",
        "}",
        "",
    ]
    return "\n".join(out)


# ---- roff -----------------------------------------------------------------------------------


def roff_escape(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return s.replace("é", "\\['e]").replace("×", "\\(mu").replace("≥", "\\(>=")


def roff_inline(s):
    """Markdown-lite to roff: `code` bold, *arg* italic, [text](link) its text."""
    out, pos = [], 0
    for m in re.finditer(r"`([^`]+)`|\*([^*\s][^*]*)\*|\[([^\]]+)\]\([^)]*\)", s):
        out.append(roff_escape(s[pos : m.start()]))
        if m.group(1) is not None:
            out.append("\\fB" + roff_escape(m.group(1)) + "\\fR")
        elif m.group(2) is not None:
            out.append("\\fI" + roff_escape(m.group(2)) + "\\fR")
        else:
            out.append(roff_escape(m.group(3)))
        pos = m.end()
    out.append(roff_escape(s[pos:]))
    return "".join(out)


def roff_text(text):
    """Paragraphs of an entry's text, inside a .TP: .IP between them; ``` blocks as .nf."""
    out, para, verbatim = [], [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            if para:
                out.append(" ".join(para))
                para = []
            out.append(".fi" if verbatim else ".nf")
            verbatim = not verbatim
        elif verbatim:
            out.append(roff_line(roff_escape(line)))
        elif not line.strip():
            if para:
                out += [roff_line(roff_inline(" ".join(para))), ".IP"]
                para = []
        else:
            para.append(line.strip())
    if para:
        out.append(roff_line(roff_inline(" ".join(para))))
    while out and out[-1] == ".IP":
        out.pop()
    return out


def roff_line(s):
    return "\\&" + s if s.startswith((".", "'")) else s


def roff_spec(spec):
    """'-o FILE, --output=FILE': options bold, their arguments italic."""
    parts = []
    for p in [p.strip() for p in spec.split(", ")]:
        m = re.match(r"(-[-\w]*)(=|\s)?(.*)$", p)
        if not m:
            parts.append("\\fB" + roff_escape(p) + "\\fR")
            continue
        opt, sep, arg = m.group(1), m.group(2) or "", m.group(3)
        s = "\\fB" + roff_escape(opt + (sep if sep == "=" else "")) + "\\fR"
        if arg:
            s += (" " if sep == " " else "") + roff_arg(arg)
        parts.append(s)
    return ", ".join(parts)


def roff_arg(arg):
    """An option's argument: words in capitals are to be replaced (italic), others literal."""
    out = []
    for tok in re.split(r"([A-Z][A-Z0-9_]*(?:,\.\.\.|\.\.\.)?)", arg):
        if not tok:
            continue
        if re.fullmatch(r"[A-Z][A-Z0-9_]*(?:,\.\.\.|\.\.\.)?", tok):
            out.append("\\fI" + roff_escape(tok) + "\\fR")
        elif re.fullmatch(r"[|\[\]]+", tok):
            out.append(roff_escape(tok))
        else:
            out.append("\\fB" + roff_escape(tok) + "\\fR")
    return "".join(out)


def roff_synopsis(line):
    out = []
    for tok in re.split(r"(\s+|[\[\]|])", line):
        if not tok:
            continue
        if tok.isspace() or tok in "[]|":
            out.append(roff_escape(tok))
        elif re.fullmatch(r"(-[-\w]*)(=.*)?", tok):
            m = re.fullmatch(r"(-[-\w]*=?)(.*)", tok)
            out.append("\\fB" + roff_escape(m.group(1)) + "\\fR" + roff_arg(m.group(2)))
        elif re.fullmatch(r"[A-Z][A-Z0-9_.,]*", tok):
            out.append("\\fI" + roff_escape(tok) + "\\fR")
        else:
            out.append(roff_arg(tok) if re.search(r"[A-Z]", tok) else "\\fB" + roff_escape(tok) + "\\fR")
    return "".join(out)


def gen_man(doc, version):
    src = "docs/src/" + doc.name + ".txt"
    out = [
        f'.\\" Generated by tools/gen_docs.py from {src}: edit that file.',
        f'.TH {doc.page.upper()} 1 "2026" "ptt {version}" "User Commands"',
        ".SH NAME",
        f"{roff_escape(doc.page)} \\- {roff_escape(doc.title)}",
        ".SH SYNOPSIS",
    ]
    for i, s in enumerate(doc.synopsis):
        # An indented line goes on with the one before it: roff fills them together.
        out += ([".br"] if i and not s[:1].isspace() else []) + [roff_synopsis(s.strip())]
    titles = {"option": "OPTIONS", "env": "ENVIRONMENT", "exit": "EXIT STATUS",
              "subcommand": "COMMANDS"}
    section = None
    for item in doc.items:
        if item[0] == "roff":
            out.append(".SH " + (f'"{item[1]}"' if " " in item[1] else item[1]))
            lines = list(item[2])
            while lines and not lines[-1].strip():
                lines.pop()
            out += lines
            section = None
            continue
        if item[0] == "group":
            if section != "option":
                out.append(".SH OPTIONS")
                section = "option"
            out += [".SS " + roff_escape(item[1].rstrip(":"))]
            continue
        e = item[1]
        if e.kind != section:
            out.append(".SH " + titles[e.kind])
            section = e.kind
        if e.kind == "option" and e.values and not e.lines:
            entries = e.values
        else:
            entries = [e] + e.values
        for x in entries:
            tag = roff_spec(x.spec) if x.kind in ("option", "value") else "\\fB" + roff_escape(x.spec) + "\\fR"
            if x.kind == "exit" and not re.fullmatch(r"\d+", x.spec):
                tag = "\\fI" + roff_escape(x.spec) + "\\fR"
            out += [".TP", tag] + roff_text(x.text())
    return "\n".join(out) + "\n"


# ---- Markdown -------------------------------------------------------------------------------


def md_spec(spec):
    if not spec.startswith("-"):
        return "`" + spec + "`"
    return ", ".join("`" + p.strip() + "`" for p in spec.split(", "))


def md_cell(text):
    paras = [" ".join(l.strip() for l in p.split("\n")) for p in re.split(r"\n\s*\n", text.strip())]
    return "<br>".join(paras).replace("|", "\\|")


def gen_md_block(doc):
    out = [MARK_BEGIN.format(doc.name)]
    table = None
    for item in doc.items:
        if item[0] == "group":
            out += ["", item[1], ""]
            table = None
            continue
        if item[0] != "entry" or item[1].kind not in ("option", "env"):
            continue
        e = item[1]
        if table != e.kind:
            if table:
                out.append("")
            out += ["| option | meaning |" if e.kind == "option" else "| environment | meaning |",
                    "|---|---|"]
            table = e.kind
        entries = e.values if e.values and not e.lines else [e] + e.values
        for x in entries:
            out.append(f"| {md_spec(x.spec).replace('|', chr(92) + '|')} | {md_cell(x.text())} |")
    out.append(MARK_END)
    return "\n".join(l for l in out) + "\n"


def gen_md_synopsis(doc):
    lines = [SYN_BEGIN.format(doc.name), "```"]
    lines += doc.synopsis
    return "\n".join(lines + ["```", SYN_END]) + "\n"


def md_block(text, path, begin, end, block):
    i = text.find(begin)
    j = text.find(end, i)
    if i < 0 or j < 0:
        sys.exit(f"{path}: no '{begin}' ... '{end}' block")
    return text[:i] + block + text[j + len(end) + 1 :]


def md_replace(path, doc):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = md_block(text, path, SYN_BEGIN.format(doc.name), SYN_END, gen_md_synopsis(doc))
    return md_block(text, path, MARK_BEGIN.format(doc.name), MARK_END, gen_md_block(doc))


# ---- bash completion --------------------------------------------------------------------------


def completion_words(doc):
    """The words an option of doc completes to: '--format=', '--force', '-o'; and its values:
    {'--format': ['human', 'raw', 'json']}."""
    words, values = [], {}
    for e in doc.entries("option"):
        for part in [p.strip() for p in e.spec.split(",")]:
            m = re.match(r"(--?[\w-]+)(\[?=|\s)?", part)
            if not m:
                continue
            opt, sep = m.group(1), m.group(2) or ""
            if sep == "=":
                words.append(opt + "=")
            elif sep == "[=":  # an optional value: both forms
                words += [opt, opt + "="]
            else:
                words.append(opt)
        for v in e.values:
            name, _, val = v.spec.partition("=")
            values.setdefault(name, []).extend(val.split("|"))
        # "--color[=WHEN]": its values are in its text (auto, always, never)
        m = re.match(r"(--[\w-]+)\[=WHEN\]", e.spec)
        if m:
            values[m.group(1)] = ["auto", "always", "never"]
    return words, values


def completion_subcommands(doc):
    """The words that follow a command in its synopsis lines: 'ptt runs import ...' gives
    'import' at position 0; 'ptt ctl SESSION start | stop' gives 'start' and 'stop' at position 1
    (after a word of the user's)."""
    at = ([], [])
    for line in doc.synopsis:
        w = line.split()
        if len(w) < 3 or w[:2] != ["ptt", doc.name]:
            continue
        word = re.compile(r"[a-z][a-z-]*")
        if word.fullmatch(w[2]):
            at[0].append(w[2])
        elif re.fullmatch(r"[A-Z]+", w[2]):  # each alternative's first word
            for alt in " ".join(w[3:]).split("|"):
                if alt.split() and word.fullmatch(alt.split()[0]):
                    at[1].append(alt.split()[0])
    return [list(dict.fromkeys(a)) for a in at]


def gen_completion(docs):
    cmds = [d for d in docs if d.name != "ptt"]
    ptt = next((d for d in docs if d.name == "ptt"), None)
    names = [e.spec for e in ptt.entries("subcommand")] if ptt else [d.name for d in cmds]
    out = [
        "# bash completion for ptt. Generated by tools/gen_docs.py from docs/src/*.txt: edit those",
        "# files. Installed as share/bash-completion/completions/ptt (make install).",
        "",
        "_ptt_commands='" + " ".join(names) + "'",
        "",
        "# The options of command $1.",
        "_ptt_options()",
        "{",
        "    case $1 in",
    ]
    for d in cmds:
        words, _ = completion_words(d)
        out.append(f"    {d.name}) echo '{' '.join(words)}' ;;")
    out += ["    esac", "}", "", "# The values of option $2 of command $1.", "_ptt_values()", "{",
            '    case "$1 $2" in']
    for d in cmds:
        _, values = completion_words(d)
        for opt, vals in values.items():
            out.append(f"    '{d.name} {opt}') echo '{' '.join(vals)}' ;;")
    out += ["    esac", "}", ""]
    out += ["# The subcommands of command $1 (ptt runs import): at $2 0, its first word; at 1, the word",
            "# after one of the user's (ptt ctl SESSION stop).", "_ptt_subcommands()", "{",
            '    case "$1 $2" in']
    for d in cmds:
        for pos, subs in enumerate(completion_subcommands(d)):
            if subs:
                out.append(f"    '{d.name} {pos}') echo '{' '.join(subs)}' ;;")
    out += ["    esac", "}", ""]
    out += r"""# Whether word $1 of the line is the traced program or its arguments (ptt trace PROGRAM ...):
# after '--', or after a word that is no option nor an option's value.
_ptt_in_program()
{
    local i w
    for ((i = $2; i < $1; i++)); do
        w=${COMP_WORDS[i]}
        [[ $w == -- ]] && return 0
        [[ $w == -o || $w == = || ${COMP_WORDS[i+1]} == = ]] && { ((i++)); continue; }
        [[ $w != -* && ${COMP_WORDS[i-1]} != -o ]] && return 0
    done
    return 1
}

_ptt()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd first opt
    local prog=${COMP_WORDS[0]##*/}
    COMPREPLY=()
    if [[ $prog == ptt-* ]]; then
        cmd=${prog#ptt-} first=1
    elif ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$_ptt_commands help --help --version" -- "$cur"))
        return
    else
        cmd=${COMP_WORDS[1]} first=2
    fi
    if [[ $cmd == help ]]; then
        ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$_ptt_commands" -- "$cur"))
        return
    fi
    if [[ $cur != -* ]] && ((COMP_CWORD - first < 2)); then
        local subs=$(_ptt_subcommands "$cmd" $((COMP_CWORD - first)))
        if [[ -n $subs ]]; then
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
            return
        fi
    fi
    if [[ $cmd == trace || $cmd == scal ]]; then
        _ptt_in_program "$COMP_CWORD" "$first" && return # its arguments: bash's default (files)
        if [[ $cur != -* && $cur != = && $prev != -o && $prev != = ]]; then
            COMPREPLY=($(compgen -c -- "$cur")) # the program
            return
        fi
    fi
    # An option's value: --opt=VALUE as one word, or split at '=' (COMP_WORDBREAKS).
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        COMPREPLY=($(compgen -P "$opt=" -W "$(_ptt_values "$cmd" "$opt")" -- "${cur#*=}"))
    elif [[ $cur == = ]]; then
        COMPREPLY=($(compgen -W "$(_ptt_values "$cmd" "$prev")"))
    elif [[ $prev == = ]]; then
        COMPREPLY=($(compgen -W "$(_ptt_values "$cmd" "${COMP_WORDS[COMP_CWORD-2]}")" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_ptt_options "$cmd")" -- "$cur"))
        [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    fi
    # else: a file (bash's default)
}
complete -o bashdefault -o default -F _ptt ptt ptt-trace ptt-view ptt-stat ptt-paje
""".split("\n")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- main -----------------------------------------------------------------------------------


def outputs(root, docs, version):
    """Every committed file the sources make: path -> text."""
    res = {os.path.join(root, "src", "cmd", "usage.c"): gen_usage(docs),
           os.path.join(root, "contrib", "ptt.bash-completion"): gen_completion(docs)}
    for d in docs:
        res[os.path.join(root, "man", d.page + ".1")] = gen_man(d, version)
        md = os.path.join(root, "docs", d.name + ".md")
        if d.name != "ptt":
            res[md] = md_replace(md, d)
    return res


def write(path, text):
    old = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    if old != text:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    mode, dest, version = argv[1], argv[2], os.environ.get("PTT_DOC_VERSION", "0.1")
    docs = [Doc(p) for p in argv[3:]]
    if mode == "usage":
        write(dest, gen_usage(docs))
    elif mode == "man":
        os.makedirs(dest, exist_ok=True)
        for d in docs:
            write(os.path.join(dest, d.page + ".1"), gen_man(d, version))
    elif mode == "completion":
        write(dest, gen_completion(docs))
    elif mode == "docs":
        for path, text in outputs(dest, docs, version).items():
            write(path, text)
    elif mode == "check":
        bad = 0
        for path, text in outputs(dest, docs, version).items():
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if old != text:
                bad = 1
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True), path, path + " (generated)"))
        if bad:
            print("generated documentation differs: run 'make docs' (cmake --build BUILD --target docs)")
        return bad
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
