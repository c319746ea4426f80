#!/usr/bin/env python3
"""check_layers.py - the source tree's layering rule, checked.

The folders of src/ are the data flow, lowest first:

    base  ->  trace  ->  record  ->  report  ->  read  ->  analyse  ->  runtime

and above them preload/ (the interposer) and tools/ (the CLI).  A quoted
#include may name a header of its own folder or of a folder below it, never
above; so no folders form a circle.  Besides:

  * src/report reaches src/record only through collect.c / collect.h;
  * outside src/trace, src/record and src/runtime (which drive the writer),
    only trace/format.h of src/trace may be included (the file format);
  * tools/ uses base, report, read, analyse and the trace format; never
    record, runtime or the trace writer;
  * src/analyse (the trace analyses and exports) is the CLI's alone: only
    tools/ includes it, the runtime never;
  * every header of src/ says whose it is ("private to ..."), as libuv's do.

Comments that are true (src/, preload/, tools/, include/):

  * a file's first comment opens with the file's own name;
  * every file a comment cites (NAME.c, NAME.h, NAME.md, or a path, which
    may be the tail of one: "render/html.c") exists: in the tree, under
    /usr/include, or in EXTERNAL (sources of other projects that comments
    cite on purpose: glibc's, libiberty's, pigz's);
  * the library's build force-includes no header (CMakeLists.txt has no
    "-include"): a header forced into a file is one the file never names.

Usage: check_layers.py SOURCE_DIR.  Prints each violation with its file and
line, and exits 1 when there is one.  Headers found through <...> (system,
public API) are not ours to check.
"""
import os
import re
import sys

LAYERS = ["base", "trace", "record", "report", "read", "analyse", "runtime"]
RANK = {name: i for i, name in enumerate(LAYERS)}
TOP = len(LAYERS)  # preload/ and tools/
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
CITED = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[A-Za-z_][\w-]*\.(?:c|h|md))\b")
# Files of other projects that comments cite on purpose.
EXTERNAL = {
    "pthreadP.h", "genops.c",         # glibc's nptl and libio sources
    "cp-demangle.c",                  # libiberty's demangler
    "yarn.c",                         # pigz's lock wrappers
    "mutex_prof.h",                   # jemalloc's list of mutexes
    "gthr-default.h", "unistd_64.h",  # libstdc++'s and the kernel's, by name
    "cmd_NAME.c",                     # a pattern: tools/syncprof/cmd_*.c
}


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
        if theirs == "analyse" and mine not in ("analyse", "tools"):
            problems.append(f"{where}: the trace analyses are the CLI's alone")


def system_headers():
    names = set()
    for dirpath, _, files in os.walk("/usr/include"):
        names.update(files)
    return names


def tree_files(root):
    names, paths = set(), set()
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        for name in files:
            names.add(name)
            paths.add(os.path.relpath(os.path.join(dirpath, name), root))
    return names, paths


def cited_exists(root, path, cited, names, paths, sysnames):
    base = os.path.basename(cited)
    if base in EXTERNAL:
        return True
    if "/" not in cited:
        return base in names or base in sysnames
    if cited.startswith(("nptl/", "sysdeps/", "bits/", "sys/", "linux/", "asm/", "c++/")):
        return base in sysnames or base in EXTERNAL or cited.startswith(("nptl/", "sysdeps/"))
    # relative to the root, include/, or any folder above the citing file
    d = os.path.relpath(os.path.dirname(path), root)
    cands = [cited, os.path.join("include", cited)]
    while d and d != ".":
        cands.append(os.path.join(d, cited))
        d = os.path.dirname(d)
    if any(os.path.normpath(c) in paths for c in cands):
        return True
    # a path's tail that names one of our files ("render/html.c")
    return any(p.endswith("/" + cited) for p in paths)


def check_comments(root, path, names, paths, sysnames, problems):
    rel = os.path.relpath(path, root)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    first = COMMENT.search(text)
    own = os.path.basename(path)
    if first:
        body = first.group(0).lstrip("/*").lstrip().lstrip("*").lstrip()
        name = body.split()[0] if body.split() else ""
        if not (name == own or name.endswith("/" + own)):
            problems.append(f"{rel}: its first comment does not open with its name "
                            f"('{body.splitlines()[0][:40] if body else ''}')")
    for m in COMMENT.finditer(text):
        for cited in set(CITED.findall(m.group(0))):
            if not cited_exists(root, path, cited, names, paths, sysnames):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{line}: a comment cites {cited}, which is not there")


def check_no_forced_include(root, problems):
    cmake = os.path.join(root, "CMakeLists.txt")
    with open(cmake, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if re.search(r"(^|[\s\"])-include\b", line.split("#")[0]):
                problems.append(f"CMakeLists.txt:{lineno}: the library's build force-includes "
                                f"a header (a file must name what it includes)")


def main():
    if len(sys.argv) != 2:
        print("usage: check_layers.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    problems = []
    n = 0
    names, paths = tree_files(root)
    sysnames = system_headers()
    for top in ("src", "preload", "tools", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    if top != "include":
                        check_file(root, path, problems)
                    check_comments(root, path, names, paths, sysnames, problems)
                    n += 1
    check_no_forced_include(root, problems)
    for p in problems:
        print("check_layers: " + p)
    print(f"check_layers: {n} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
