#!/usr/bin/env python3
"""check_cxx_sites.py - C++ sites of the compiled-in instrumentation name
the program's own lines, in every report format.

Runs PROGRAM (tests/cxx_sites.cpp built with -include
syncprof/instrument.h) with SYNCPROF_OPTIONS=enabled=1,format=F,output=FILE
for F = json, table, folded and pprof.  The program prints one line
"mark NAME FUNCTION TYPE LINE" per marked lock site; then:

  json    each mark has its own row: that type, site function FUNCTION,
          file ending in cxx_sites.cpp, line LINE; no row's site names a
          header of libstdc++ (gthr-default.h, shared_mutex, std_mutex.h)
          or instrument.h; the program's own pthread call keeps its
          __FILE__/__LINE__ site (no address), the others are addresses;
  table   each mark's Call site reads "FUNCTION cxx_sites.cpp:LINE"
          ("cxx_sites.cpp:LINE" for the pthread call);
  folded  the condition wait (the row that surely waited) is
          "cond_until (cxx_sites.cpp:LINE)";
  pprof   the rows with contention (the failed trylocks, the condition
          wait) have a Line with their function and line number; no string
          names a lock wrapper's header (stack frames of the thread's start
          in libstdc++'s headers are real callers, allowed).

Usage: check_cxx_sites.py PROGRAM SOURCE_DIR OUT_DIR
Exit 0 when all hold; otherwise one line per problem and exit 1.
"""
import json
import os
import re
import subprocess
import sys

HEADERS = ("gthr-default.h", "gthr-posix.h", "shared_mutex", "std_mutex.h", "unique_lock.h",
           "instrument.h", "/usr/include/")
problems = []


def run(program, out_dir, fmt):
    """Run the program with format @fmt; return (marks, report bytes)."""
    path = os.path.join(out_dir, f"report.{fmt}")
    env = dict(os.environ, SYNCPROF_OPTIONS=f"enabled=1,format={fmt},output={path}")
    p = subprocess.run([program], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        problems.append(f"{fmt}: program exited {p.returncode}: {p.stderr.strip()}")
    marks = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "mark":
            marks.append({"name": f[1], "function": f[2], "type": f[3], "line": int(f[4])})
    with open(path, "rb") as fh:
        return marks, fh.read()


def check_json(marks, data):
    doc = json.loads(data)
    rows = doc["rows"]
    for r in rows:
        s = r["site"]
        for h in HEADERS:
            if h in (s.get("file") or "") or h in (s.get("function") or ""):
                problems.append(f"json: a row names {h}: {json.dumps(s)}")
                break
    for k in marks:
        found = [r for r in rows
                 if r["type"] == k["type"] and (r["site"].get("file") or "").endswith("cxx_sites.cpp")
                 and r["site"].get("line") == k["line"]]
        if len(found) != 1:
            problems.append(f"json: {len(found)} rows of type {k['type']} at cxx_sites.cpp:"
                            f"{k['line']} ({k['name']}), expected 1")
            continue
        s = found[0]["site"]
        if s.get("function") != k["function"]:
            problems.append(f"json: {k['name']}: function {s.get('function')!r}, "
                            f"expected {k['function']!r}")
        keyed_by_address = s.get("address") is not None
        if keyed_by_address != (k["name"] != "pthread_mutex_lock"):
            problems.append(f"json: {k['name']}: address {s.get('address')!r}")
    if marks and len({(k["line"]) for k in marks if k["function"] in ("guard_a()", "guard_b()")}) != 2:
        problems.append("json: the two lock_guard marks are one line")


def check_table(marks, text):
    for k in marks:
        want = (f"cxx_sites.cpp:{k['line']}" if k["name"] == "pthread_mutex_lock"
                else f"{k['function']} cxx_sites.cpp:{k['line']}")
        if not re.search(r"\s" + re.escape(want) + r"\s", text):
            problems.append(f"table: no Call site '{want}' ({k['name']})")
    for h in HEADERS:
        if h in text:
            problems.append(f"table: names {h}")


def check_folded(marks, text):
    cond = [k for k in marks if k["type"] == "condvar"]
    # The leaf is the lock type, the call site right under it.
    stacks = [line.rsplit(" ", 1)[0].split(";") for line in text.splitlines()]
    leaves = [s[-2] if len(s) > 1 else "" for s in stacks]
    for s in stacks:
        if not (s[-1].startswith("[") and s[-1].endswith("]")):
            problems.append(f"folded: leaf '{s[-1]}' is not a [lock type]")
    for k in cond:
        want = f"{k['function']} (cxx_sites.cpp:{k['line']})"
        if want not in leaves:
            problems.append(f"folded: no site '{want}' in:\n{text}")
    for h in HEADERS:
        if h in text:
            problems.append(f"folded: names {h}")


def check_pprof(marks, data, src):
    proto_dir = os.path.join(src, "src", "report", "render")
    p = subprocess.run(
        f"gzip -dc | protoc --decode=perftools.profiles.Profile -I{proto_dir} "
        f"{proto_dir}/profile.proto", shell=True, input=data, capture_output=True, timeout=60)
    if p.returncode != 0:
        problems.append(f"pprof: decoding failed: {p.stderr.decode(errors='replace')}")
        return
    text = p.stdout.decode(errors="replace")
    strings = re.findall(r'string_table: "((?:[^"\\]|\\.)*)"', text)
    lines = {int(n) for n in re.findall(r"\bline: (\d+)", text)}
    for k in marks:
        if k["type"] != "condvar" and not k["function"].startswith("try_fail"):
            continue  # no contention: no sample
        if k["function"] not in strings:
            problems.append(f"pprof: function {k['function']} not in the string table")
        if k["line"] not in lines:
            problems.append(f"pprof: no Line with line {k['line']} ({k['name']})")
    if not any(s.endswith("cxx_sites.cpp") for s in strings):
        problems.append("pprof: no file name cxx_sites.cpp in the string table")
    for s in strings:
        # Stacks go on below the site into the thread's start, whose
        # frames are libstdc++'s own (invoke.h, std_thread.h, real
        # functions at -O0) and true: only the lock wrappers' headers
        # must never be named (a site left inside them).
        if any(h in s for h in HEADERS if h != "/usr/include/"):
            problems.append(f"pprof: string table names {s}")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    program, src, out_dir = sys.argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    marks, data = run(program, out_dir, "json")
    if len(marks) != 14:
        problems.append(f"{len(marks)} marks printed, expected 14")
    check_json(marks, data)
    check_table(marks, run(program, out_dir, "table")[1].decode())
    check_folded(marks, run(program, out_dir, "folded")[1].decode())
    check_pprof(marks, run(program, out_dir, "pprof")[1], src)
    for p in problems:
        print(f"check_cxx_sites: {p}")
    if not problems:
        print(f"check_cxx_sites: {len(marks)} sites named by their own lines in json, table, "
              "folded and pprof: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
