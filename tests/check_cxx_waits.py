#!/usr/bin/env python3
"""check_cxx_waits.py - C++'s timed waits and joins name the program's own
lines (issue 28), compiled in and preloaded.

Runs PROGRAM (tests/cxx_waits.cpp) once, then checks its JSON profile
(valid: tests/check_profile_schema.py).  The program prints one line
"mark NAME FUNCTION TYPE LINE MODES" per site; MODES is "both", or
"preload" for a call that only the preload library sees (a join made
inside libstdc++.so).  MODE is how the program was built and run:

  compiled   built with -include syncprof/instrument.h against libsyncprof,
             run with SYNCPROF_OPTIONS=enabled=1,format=json,output=FILE;
             the marks of MODES "both" are checked;
  preloaded  built plain, run as 'SYNCPROF run -f json -o FILE -- PROGRAM';
             every mark is checked.

For each checked mark: exactly one row of TYPE whose site is in
cxx_waits.cpp at LINE, named FUNCTION ("-": not compared; two sites that
share one copy of a libstdc++ template are two rows, each at its line).  No row's site names
a libstdc++ header or instrument.h (a site left inside the library's code).

Usage: check_cxx_waits.py MODE PROGRAM OUT_DIR [SYNCPROF]
Exit 0 when all hold; otherwise one line per problem and exit 1.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEADERS = ("/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm-", "gthr-default.h",
           "std_mutex.h", "instrument.h")
problems = []


def run(mode, program, out_dir, cli):
    """Run @program profiled as @mode; return (marks, rows)."""
    path = os.path.join(out_dir, "profile.json")
    if os.path.exists(path):
        os.unlink(path)
    if mode == "compiled":
        env = dict(os.environ, SYNCPROF_OPTIONS=f"enabled=1,format=json,output={path}")
        cmd = [program]
    else:
        env = dict(os.environ)
        env.pop("SYNCPROF_OPTIONS", None)
        cmd = [cli, "run", "-f", "json", "-o", path, "--", program]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        problems.append(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    marks = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "mark":
            marks.append({"name": f[1], "function": f[2], "type": f[3], "line": int(f[4]),
                          "modes": f[5]})
    v = subprocess.run([sys.executable, os.path.join(HERE, "check_profile_schema.py"), path],
                       capture_output=True, text=True, timeout=60)
    if v.returncode != 0:
        problems.append(f"profile not valid: {v.stdout.strip()} {v.stderr.strip()}")
    with open(path) as fh:
        return marks, json.load(fh)["rows"]


def label(s):
    return f"{s.get('function')} {s.get('file')}:{s.get('line')}"


def check(mode, marks, rows):
    for r in rows:
        s = r["site"]
        if any(h in (s.get("file") or "") for h in HEADERS):
            problems.append(f"a {r['type']} row's site is in a header: {label(s)}")
    for k in marks:
        if mode == "compiled" and k["modes"] != "both":
            continue
        found = [r for r in rows
                 if r["type"] == k["type"] and r["site"].get("line") == k["line"]
                 and (r["site"].get("file") or "").endswith("cxx_waits.cpp")]
        if len(found) != 1:
            others = [label(r["site"]) for r in rows if r["type"] == k["type"]]
            problems.append(f"{k['name']}: {len(found)} {k['type']} rows at cxx_waits.cpp:"
                            f"{k['line']}, expected 1; the {k['type']} rows: {others}")
            continue
        if k["function"] != "-" and found[0]["site"].get("function") != k["function"]:
            problems.append(f"{k['name']}: function {found[0]['site'].get('function')!r}, "
                            f"expected {k['function']!r}")


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in ("compiled", "preloaded") or \
            (sys.argv[1] == "preloaded" and len(sys.argv) != 5):
        print(__doc__, file=sys.stderr)
        return 2
    mode, program, out_dir = sys.argv[1:4]
    cli = sys.argv[4] if len(sys.argv) == 5 else None
    os.makedirs(out_dir, exist_ok=True)
    marks, rows = run(mode, program, out_dir, cli)
    if len(marks) != 8:
        problems.append(f"{len(marks)} marks printed, expected 8")
    check(mode, marks, rows)
    for p in problems:
        print(f"check_cxx_waits: {mode}: {p}")
    if not problems:
        n = sum(1 for k in marks if mode == "preloaded" or k["modes"] == "both")
        print(f"check_cxx_waits: {mode}: {n} sites named by their own lines: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
