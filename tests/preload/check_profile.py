#!/usr/bin/env python3
"""check_profile.py - validate a syncprof profile against "profile JSON
version 1" (DESIGN.md, "Formats"), with Python's json module.

Usage: check_profile.py FILE [--dso-suffix S] [--need-file-line NAME]
                             [--min-acquisitions N] [--hold]
  --dso-suffix S         some row's site lies in a DSO whose path ends in S
  --need-file-line NAME  some row's site.file ends in NAME, with a line
  --min-acquisitions N   some row has at least N acquisitions
  --hold                 hold_ns/hold_max_ns are numbers and rows carry blame
Exit 0 when valid; prints the first problem and exits 1 otherwise.
"""
import json
import re
import sys

TYPES = {"mutex", "rec_mutex", "condvar", "rwlock_read", "rwlock_write", "spinlock",
         "semaphore", "barrier", "join", "futex", "glibc_lock"}
SORTS = {"total", "avg", "max", "count", "contended", "hold"}
HEX = re.compile(r"^0x[0-9a-f]+$")


def fail(msg):
    print("check_profile: " + msg)
    sys.exit(1)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_frame(f, where):
    if not isinstance(f, dict):
        fail(f"{where}: not an object")
    for k in ("function", "file", "line", "dso", "address"):
        if k not in f:
            fail(f"{where}: key '{k}' missing")
    for k in ("function", "file", "dso"):
        if f[k] is not None and not isinstance(f[k], str):
            fail(f"{where}.{k}: {f[k]!r} is neither a string nor null")
    if f["line"] is not None and not (is_int(f["line"]) and f["line"] > 0):
        fail(f"{where}.line: {f['line']!r}")
    if f["address"] is not None and not (isinstance(f["address"], str) and HEX.match(f["address"])):
        fail(f"{where}.address: {f['address']!r}")
    if f["line"] is not None and f["file"] is None:
        fail(f"{where}: a line without a file")


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: check_profile.py FILE [options]")
    path = args.pop(0)
    opts = {}
    while args:
        k = args.pop(0)
        if k == "--hold":
            opts["hold"] = True
        else:
            opts[k] = args.pop(0)
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: not valid JSON: {e}")
    if not isinstance(d, dict):
        fail("top level is not an object")
    want = {"format": str, "version": int, "pid": int, "command": str, "clock": str,
            "elapsed_ns": int, "coalesced": bool, "sort": str, "rows": list}
    for k, t in want.items():
        if k not in d:
            fail(f"top-level key '{k}' missing")
        if not isinstance(d[k], t) or (t is int and isinstance(d[k], bool)):
            fail(f"top-level '{k}': {d[k]!r} is not {t.__name__}")
    if d["format"] != "syncprof-profile" or d["version"] != 1:
        fail(f"format/version {d['format']!r}/{d['version']!r}")
    if d["clock"] not in ("tsc", "monotonic"):
        fail(f"clock {d['clock']!r}")
    if d["sort"] not in SORTS:
        fail(f"sort {d['sort']!r}")
    found = {"dso": False, "fileline": False, "acq": False}
    for i, r in enumerate(d["rows"]):
        w = f"rows[{i}]"
        for k in ("type", "object", "n_objects", "site", "stack", "acquisitions", "contended",
                  "wait_ns", "wait_max_ns", "hold_ns", "hold_max_ns"):
            if k not in r:
                fail(f"{w}: key '{k}' missing")
        if r["type"] not in TYPES:
            fail(f"{w}.type {r['type']!r}")
        if not is_int(r["n_objects"]) or r["n_objects"] < 1:
            fail(f"{w}.n_objects {r['n_objects']!r}")
        if r["object"] is None:
            if r["n_objects"] == 1:
                fail(f"{w}: object null for a single object")
        elif not (isinstance(r["object"], str) and HEX.match(r["object"])):
            fail(f"{w}.object {r['object']!r}")
        elif r["n_objects"] != 1:
            fail(f"{w}: an object address for {r['n_objects']} objects")
        check_frame(r["site"], w + ".site")
        if not isinstance(r["stack"], list):
            fail(f"{w}.stack is not a list")
        for j, f in enumerate(r["stack"]):
            check_frame(f, f"{w}.stack[{j}]")
        for k in ("acquisitions", "contended", "wait_ns", "wait_max_ns"):
            if not is_int(r[k]) or r[k] < 0:
                fail(f"{w}.{k} {r[k]!r}")
        if r["wait_max_ns"] > r["wait_ns"]:
            fail(f"{w}: wait_max_ns > wait_ns")
        for k in ("hold_ns", "hold_max_ns"):
            if opts.get("hold"):
                if not is_int(r[k]):
                    fail(f"{w}.{k} {r[k]!r}: a number was expected with hold tracking")
            elif r[k] is not None:
                fail(f"{w}.{k} {r[k]!r}: null was expected without hold tracking")
        if opts.get("hold"):
            if not isinstance(r.get("blame"), list):
                fail(f"{w}: no blame list")
            for j, b in enumerate(r["blame"]):
                check_frame(b.get("site"), f"{w}.blame[{j}].site")
                if not is_int(b.get("wait_ns")) or not is_int(b.get("count")):
                    fail(f"{w}.blame[{j}]: {b!r}")
        s = r["site"]
        if "--dso-suffix" in opts and (s["dso"] or "").endswith(opts["--dso-suffix"]):
            found["dso"] = True
        if "--need-file-line" in opts and (s["file"] or "").endswith(opts["--need-file-line"]) \
                and is_int(s["line"]) and s["function"]:
            found["fileline"] = True
        if "--min-acquisitions" in opts and r["acquisitions"] >= int(opts["--min-acquisitions"]):
            found["acq"] = True
    if "--dso-suffix" in opts and not found["dso"]:
        fail(f"no row's site is in a DSO ending in {opts['--dso-suffix']}")
    if "--need-file-line" in opts and not found["fileline"]:
        fail(f"no row's site has function and {opts['--need-file-line']}:line")
    if "--min-acquisitions" in opts and not found["acq"]:
        fail(f"no row has {opts['--min-acquisitions']} acquisitions")
    print(f"check_profile: {path}: valid, {len(d['rows'])} rows")


main()
