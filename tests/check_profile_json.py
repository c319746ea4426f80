#!/usr/bin/env python3
"""Check that a file is "profile JSON version 1" exactly as DESIGN.md
defines it: every documented key present with its documented type.  Extra
keys are allowed (DESIGN: "Keys may be added").

Usage: check_profile_json.py FILE [--expect-site FILE:LINE ...]
                                 [--expect-type TYPE ...] [--min-rows N]
Exit 0 when the file conforms, 1 with one line per problem otherwise.
"""
import json
import re
import sys

TYPES = {"mutex", "rec_mutex", "condvar", "rwlock_read", "rwlock_write", "spinlock",
         "semaphore", "barrier", "join", "futex", "glibc_lock"}
SORTS = {"total", "avg", "max", "count", "contended", "hold"}
HEX = re.compile(r"^0x[0-9a-f]+$")
problems = []


def need(obj, key, kinds, where, nullable=False):
    if key not in obj:
        problems.append(f"{where}: missing key '{key}'")
        return None
    v = obj[key]
    if v is None:
        if not nullable:
            problems.append(f"{where}: '{key}' is null")
        return None
    if isinstance(v, bool) and bool not in kinds:
        problems.append(f"{where}: '{key}' is a boolean")
        return None
    if not isinstance(v, kinds):
        problems.append(f"{where}: '{key}' has type {type(v).__name__}")
        return None
    return v


def check_frame(f, where):
    if not isinstance(f, dict):
        problems.append(f"{where}: not an object")
        return
    need(f, "function", (str,), where, True)
    need(f, "file", (str,), where, True)
    line = need(f, "line", (int,), where, True)
    if line is not None and line <= 0:
        problems.append(f"{where}: line {line}")
    need(f, "dso", (str,), where, True)
    a = need(f, "address", (str,), where, True)
    if a is not None and not HEX.match(a):
        problems.append(f"{where}: address '{a}' is not 0x-hex")


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    path, rest = args[0], args[1:]
    expect_sites, expect_types, min_rows = [], [], 0
    while rest:
        opt = rest.pop(0)
        if opt == "--expect-site":
            expect_sites.append(rest.pop(0))
        elif opt == "--expect-type":
            expect_types.append(rest.pop(0))
        elif opt == "--min-rows":
            min_rows = int(rest.pop(0))
        else:
            print(f"unknown option {opt}")
            return 2
    with open(path) as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict):
        print("top level is not an object")
        return 1
    if doc.get("format") != "syncprof-profile":
        problems.append(f"format is {doc.get('format')!r}")
    if doc.get("version") != 1:
        problems.append(f"version is {doc.get('version')!r}")
    need(doc, "pid", (int,), "top")
    need(doc, "command", (str,), "top")
    if doc.get("clock") not in ("tsc", "monotonic"):
        problems.append(f"clock is {doc.get('clock')!r}")
    need(doc, "elapsed_ns", (int,), "top")
    need(doc, "coalesced", (bool,), "top")
    if doc.get("sort") not in SORTS:
        problems.append(f"sort is {doc.get('sort')!r}")
    rows = need(doc, "rows", (list,), "top") or []
    for i, r in enumerate(rows):
        w = f"rows[{i}]"
        if r.get("type") not in TYPES:
            problems.append(f"{w}: type {r.get('type')!r}")
        o = need(r, "object", (str,), w, True)
        if o is not None and not HEX.match(o):
            problems.append(f"{w}: object '{o}'")
        n = need(r, "n_objects", (int,), w)
        if n is not None and n < 1:
            problems.append(f"{w}: n_objects {n}")
        if n is not None and n > 1 and o is not None:
            problems.append(f"{w}: object set though n_objects is {n}")
        site = need(r, "site", (dict,), w)
        if site is not None:
            check_frame(site, w + ".site")
        for j, f in enumerate(need(r, "stack", (list,), w) or []):
            check_frame(f, f"{w}.stack[{j}]")
        for k in ("acquisitions", "contended", "wait_ns", "wait_max_ns"):
            v = need(r, k, (int,), w)
            if v is not None and v < 0:
                problems.append(f"{w}: {k} {v}")
        for k in ("hold_ns", "hold_max_ns"):
            need(r, k, (int,), w, True)
        if r.get("wait_max_ns", 0) > r.get("wait_ns", 0):
            problems.append(f"{w}: wait_max_ns > wait_ns")
    if len(rows) < min_rows:
        problems.append(f"{len(rows)} rows, expected at least {min_rows}")
    for want in expect_sites:
        fname, line = want.rsplit(":", 1)
        if not any((r.get("site") or {}).get("file", "") and
                   r["site"]["file"].endswith(fname) and r["site"].get("line") == int(line)
                   for r in rows):
            problems.append(f"no row for site {want}")
    for t in expect_types:
        if not any(r.get("type") == t for r in rows):
            problems.append(f"no row of type {t}")
    for p in problems:
        print(f"{path}: {p}")
    if not problems:
        print(f"{path}: profile JSON v1, {len(rows)} rows: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
