#!/usr/bin/env python3
"""check_layers.py - the source tree's layering rule, checked.

The folders of src/ are the data flow, lowest first:

    base  ->  trace  ->  record  ->  report  ->  read  ->  runtime

and above them preload/ (the interposer) and tools/ (the CLI).  A quoted
#include may name a header of its own folder or of a folder below it, never
above; so no folders form a circle.  Besides:

  * src/report reaches src/record only through collect.c / collect.h;
  * outside src/trace, src/record and src/runtime (which drive the writer),
    only trace/format.h of src/trace may be included (the file format);
  * tools/ uses base, report, read and the trace format; never record,
    runtime or the trace writer;
  * every header of src/ says whose it is ("private to ..."), as libuv's do.

Usage: check_layers.py SOURCE_DIR.  Prints each violation with its file and
line, and exits 1 when there is one.  Headers found through <...> (system,
public API) are not ours to check.
"""
import os
import re
import sys

LAYERS = ["base", "trace", "record", "report", "read", "runtime"]
RANK = {name: i for i, name in enumerate(LAYERS)}
TOP = len(LAYERS)  # preload/ and tools/
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(root, path):
    """(folder name, rank) of a file of ours, or None for other files."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2 and parts[1] in RANK:
        return parts[1], RANK[parts[1]]
    if parts[0] in ("preload", "tools"):
        return parts[0], TOP
    return None


def target_of(root, path, name):
    """The folder of an included header, resolved as the build does:
    next to the includer first, then under src/."""
    here = os.path.join(os.path.dirname(path), name)
    if os.path.exists(here):
        return folder_of(root, here), os.path.normpath(here)
    under_src = os.path.join(root, "src", name)
    if os.path.exists(under_src):
        return folder_of(root, under_src), os.path.normpath(under_src)
    return None, None


def check_file(root, path, problems):
    me = folder_of(root, path)
    if me is None:
        return
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if path.endswith(".h") and rel.startswith("src" + os.sep):
        head = text[:1500].lower()
        if "private to" not in head:
            problems.append(f"{rel}: header does not say whose it is ('private to ...')")
    for lineno, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        name = m.group(1)
        target, tpath = target_of(root, path, name)
        if target is None:
            continue  # generated files (profile.pb-c.h), tests' helpers
        where = f"{rel}:{lineno}: #include \"{name}\""
        (mine, my_rank), (theirs, their_rank) = me, target
        if their_rank > my_rank:
            problems.append(f"{where}: {mine} may not include {theirs} (a layer above it)")
        if theirs == "record" and mine == "report" and \
                not os.path.basename(path).startswith("collect."):
            problems.append(f"{where}: report reaches record only through collect.c")
        if theirs == "trace" and mine not in ("trace", "record", "runtime") and \
                os.path.basename(tpath) != "format.h":
            problems.append(f"{where}: only trace/format.h is for {mine}")
        if mine == "tools" and theirs in ("record", "runtime"):
            problems.append(f"{where}: the CLI never uses {theirs}")


def main():
    if len(sys.argv) != 2:
        print("usage: check_layers.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    problems = []
    n = 0
    for top in ("src", "preload", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    check_file(root, os.path.join(dirpath, name), problems)
                    n += 1
    for p in problems:
        print("check_layers: " + p)
    print(f"check_layers: {n} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
