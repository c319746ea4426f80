#!/usr/bin/env python3
"""man_from_help.py SYNCPROF OUTDIR - the man pages of syncprof, made from
its --help texts, the one source of truth: syncprof.1 from 'syncprof
--help', and syncprof-CMD.1 for each command that page lists under
"Commands:" (so a new command gets its page with no change here), from
'syncprof CMD --help'; a command whose usage names subcommands ('syncprof
trace dump FILE ...') gets each subcommand's --help as a section of its
page.

Design: the help texts follow a few layout rules that this turns into
roff: "Usage:" lines are the SYNOPSIS; a line at column 0 that ends with
':' is a section heading; an indented line that starts with '-' and has
two spaces before its text is an option (.TP), and the lines indented
under its text continue it; other indented lines (commands, examples)
are kept as they are (.nf); blank lines separate paragraphs.  No date is
written, so the pages are the same bytes for the same binary.  Each page
is written as PAGE.1 (to read in the build tree with man -l) and
PAGE.1.gz, compressed at level 9 with no name or time in its gzip header
(as 'gzip -9n' does: reproducible), which is what is installed.

Costs: runs the built syncprof once per page at build time (milliseconds).

Alternatives considered: help2man (one more build dependency, and it
wants one binary per page); hand-written pages (a second text to keep in
step with --help, which is what the issue asks to avoid).
"""
import gzip
import os
import re
import subprocess
import sys


def run_help(exe, args):
    p = subprocess.run([exe] + args + ["--help"], capture_output=True, text=True,
                       env=dict(os.environ, SYNCPROF_OPTIONS=""))
    if p.returncode != 0 or not p.stdout.strip():
        sys.exit(f"man_from_help: '{' '.join([exe] + args)} --help' failed: {p.stderr}")
    return p.stdout


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s.startswith((".", "'")) else s


OPTION = re.compile(r"^ {1,6}(-\S(?:.*?\S)?)(?: {2,}(\S.*))?$")


def body(text, skip_usage=True):
    """roff for a help text, without its Usage lines when @skip_usage."""
    out, lines = [], text.rstrip("\n").split("\n")
    i, pre, opt_col = 0, False, None
    while skip_usage and i < len(lines) and (lines[i].startswith("Usage:") or
                                             (i and lines[i].startswith("       "))):
        i += 1

    def end_pre():
        nonlocal pre
        if pre:
            out.append(".fi")
            pre = False

    for line in lines[i:]:
        if not line.strip():
            end_pre()
            opt_col = None
            out.append(".PP")
            continue
        m = OPTION.match(line)
        if m:
            end_pre()
            out.append(".TP")
            out.append("\\fB" + esc(m.group(1)) + "\\fR")
            if m.group(2):
                out.append(esc(m.group(2)))
                opt_col = line.index(m.group(2))
            else:
                opt_col = len(line) - len(line.lstrip()) + 4
            continue
        indent = len(line) - len(line.lstrip())
        if opt_col is not None and indent >= min(opt_col, 8):
            out.append(esc(line.strip()))
            continue
        opt_col = None
        if indent == 0 and line.endswith(":"):
            end_pre()
            out.append(".SS " + esc(line[:-1]))
            continue
        if indent:
            if not pre:
                out.append(".nf")
                pre = True
            out.append(esc(line))
            continue
        end_pre()
        out.append(esc(line))
    end_pre()
    # No paragraph break right after a heading or at the end.
    clean = []
    for ln in out:
        if ln == ".PP" and (not clean or clean[-1].startswith((".SS", ".PP", ".SH"))):
            continue
        clean.append(ln)
    while clean and clean[-1] == ".PP":
        clean.pop()
    return clean


def usage(text):
    u = []
    for line in text.split("\n"):
        if line.startswith("Usage:"):
            u.append(line[len("Usage:"):].strip())
        elif u and line.startswith("       ") and line.strip():
            u.append(line.strip())
        elif u:
            break
    return u


def page(name, title, summary, text, version, extra=(), see=()):
    roff = [f'.TH "{title}" "1" "" "syncprof {version}" "User Commands"',
            ".SH NAME", f"{esc(name)} \\- {esc(summary)}", ".SH SYNOPSIS"]
    for k, u in enumerate(usage(text)):
        if k:
            roff.append(".br")
        roff.append(esc(u))
    roff.append(".SH DESCRIPTION")
    roff += body(text)
    for head, sub in extra:
        roff.append(".SH " + esc(head.upper()))
        roff.append(".nf")
        roff += [esc(u) for u in usage(sub)]
        roff.append(".fi")
        roff += body(sub)
    if see:
        roff.append(".SH SEE ALSO")
        roff.append(", ".join(f"\\fB{esc(s)}\\fR(1)" for s in see))
    return "\n".join(roff) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: man_from_help.py SYNCPROF OUTDIR")
    exe, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    version = subprocess.run([exe, "--version"], capture_output=True,
                             text=True).stdout.split()[-1]
    top = run_help(exe, [])
    commands = []  # (name, summary) from "Commands:"
    in_cmds = False
    for line in top.split("\n"):
        if line == "Commands:":
            in_cmds = True
            continue
        if in_cmds:
            m = re.match(r"^  ([a-z][a-z-]*) +(\S.*)$", line)
            if not m:
                break
            commands.append((m.group(1), m.group(2).split(":")[0].strip()))
    if not commands:
        sys.exit("man_from_help: no 'Commands:' list in 'syncprof --help'")
    names = ["syncprof"] + [f"syncprof-{c}" for c, _ in commands]
    pages = {"syncprof.1": page("syncprof", "SYNCPROF",
                                "synchronization profiler and lock-event tracer",
                                top, version, see=names[1:])}
    for cmd, summary in commands:
        text = run_help(exe, [cmd])
        extra = []
        for u in usage(text):
            m = re.match(rf"^syncprof {cmd} ([a-z][a-z-]*)\b", u)
            if m and m.group(1) not in [e[0].split()[-1] for e in extra]:
                extra.append((f"syncprof {cmd} {m.group(1)}",
                              run_help(exe, [cmd, m.group(1)])))
        pages[f"syncprof-{cmd}.1"] = page(
            f"syncprof-{cmd}", f"SYNCPROF-{cmd.upper()}", summary, text, version, extra,
            see=[n for n in names if n != f"syncprof-{cmd}"])
    for fname, roff in pages.items():
        path = os.path.join(outdir, fname)
        old = open(path).read() if os.path.exists(path) else None
        if old != roff or not os.path.exists(path + ".gz"):
            # keep the time stamps when nothing changed
            with open(path, "w") as f:
                f.write(roff)
            # The installed copy, compressed as Debian's policy asks (and
            # lintian checks): level 9 and, as with 'gzip -9n', no name and
            # no time in the header, so a rebuild gives an identical file.
            with open(path + ".gz", "wb") as f:
                f.write(gzip.compress(roff.encode(), 9, mtime=0))
    print(" ".join(sorted(pages)))


if __name__ == "__main__":
    main()
