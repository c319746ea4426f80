#!/usr/bin/env python3
"""check_futex_outputs.py - every output of a profile and a trace of
futex_waits.c (and the stdio case of glibc_locks.c) holds the futex
(glibc_lock) rows, at the program's line; for futex_outputs.sh.

Usage: check_futex_outputs.py futex DIR WAIT_LINE WAKE_LINE PROFILE_PROTO PERFETTO_PROTO TESTS
       check_futex_outputs.py glibc DIR LINE PROFILE_PROTO PERFETTO_PROTO TESTS

DIR holds what futex_outputs.sh wrote: prof.json (run --hold --lock-order
--trace) and, rendered from it by 'syncprof report', prof.csv,
prof.folded, prof.pb.gz (pprof), prof.html and prof.rerender.json; the
trace's 'dump --json' (dump.jsonl) and exports (t.pftrace, t.chrome.json);
the watchdog runs' stderr (warn_hold.err, warn_nohold.err).  The glibc
case has the same files with a g. prefix and no watchdog or wakes.

The expected numbers all come from the JSON profile of the same run (the
rows the table already shows): each other output must have those rows,
with that type, that site, and the same waits.  Nothing is timed.
Exit status 0 pass, 1 fail (one line per failure), 77 skip (no protoc or
python3-protobuf).
"""
import collections
import csv
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

bad = []


def expect(cond, msg):
    if not cond:
        bad.append(msg)
    return cond


def rows_at(prof, typ, src, line):
    return [r for r in prof["rows"] if r["type"] == typ and
            (r["site"].get("file") or "").endswith(src) and r["site"].get("line") == line]


def check_csv(path, typ, src, line, want):
    with open(path, newline="") as f:
        got = [r for r in csv.DictReader(f) if r["type"] == typ and
               r["file"].endswith(src) and r["line"] == str(line)]
    expect(got, "%s: no %s row at %s:%d" % (path, typ, src, line))
    expect(sum(int(r["wait_ns"]) for r in got) == want["wait_ns"] and
           sum(int(r["contended"]) for r in got) == want["contended"],
           "%s: the %s rows at %s:%d do not have the profile's waits: %s vs %s" %
           (path, typ, src, line, [(r["contended"], r["wait_ns"]) for r in got], want))


def check_folded(path, typ, func, src, line, want):
    # "...;word_lock (futex_waits.c:44);[futex] 417761982"; a named lock's
    # leaf has its name: "[glibc_lock stdio lock of FILE 0x... (fd 4)]"
    pat = re.compile(r";%s \(%s:%d\);\[%s(?: [^]]*)?\] (\d+)$" % (
        re.escape(func), re.escape(src), line, re.escape(typ)))
    vals = [int(m.group(1)) for m in map(pat.search, open(path).read().splitlines()) if m]
    expect(vals, "%s: no stack ending in '%s (%s:%d);[%s]'" % (path, func, src, line, typ))
    expect(sum(vals) == want["wait_ns"], "%s: the %s stacks at %s:%d weigh %d, the profile %d" %
           (path, typ, src, line, sum(vals), want["wait_ns"]))


def pprof_module(proto, tmp):
    r = subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto), "--python_out=" + tmp,
                        proto], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        bad.append("protoc --python_out %s: %s" % (proto, r.stderr))
        return None
    sys.path.insert(0, tmp)
    import profile_pb2
    return profile_pb2


def check_pprof(pb, path, proto, typ, func, src, line, want):
    data = gzip.open(path).read()
    # protoc reads it with the in-tree schema ...
    r = subprocess.run(["protoc", "--proto_path=" + os.path.dirname(proto),
                        "--decode=perftools.profiles.Profile", proto], input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    expect(r.returncode == 0, "%s: protoc --decode failed: %s" % (path, r.stderr[:200]))
    # ... and the samples of that type are at that line, with its waits.
    p = pb.Profile()
    p.ParseFromString(data)
    st = p.string_table
    funcs = {f.id: f for f in p.function}
    locs = {loc.id: loc for loc in p.location}
    types = [st[t.type] for t in p.sample_type]
    delay = types.index("delay") if "delay" in types else None
    expect(delay is not None, "%s: no delay sample type: %s" % (path, types))
    total = n = 0
    for s in p.sample:
        labels = {st[lb.key]: st[lb.str] for lb in s.label if lb.str}
        if labels.get("lock type") != typ:
            continue
        frames = [(st[funcs[ln.function_id].name], st[funcs[ln.function_id].filename], ln.line)
                  for lid in s.location_id for ln in locs[lid].line]
        if any(fn == func and fl.endswith(src) and ln == line for fn, fl, ln in frames):
            n += 1
            total += s.value[delay] if delay is not None else 0
            expect(frames[0][0] == "[%s]" % typ, "%s: the leaf of a %s sample is %s" %
                   (path, typ, frames[0]))
    expect(n, "%s: no sample labelled 'lock type: %s' at %s %s:%d" % (path, typ, func, src, line))
    expect(total == want["wait_ns"], "%s: the %s samples at %s:%d weigh %d ns, the profile %d" %
           (path, typ, src, line, total, want["wait_ns"]))


def check_html(path, profile, tests, typ, src, line):
    r = subprocess.run([sys.executable, os.path.join(tests, "check_html.py"), "static", path,
                        profile], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expect(r.returncode == 0, "%s: check_html.py static: %s" % (path, r.stdout.strip()))
    page = open(path).read()
    m = re.search(r'<script[^>]*id="sp-data"[^>]*>(.*?)</script>', page, re.S)
    if not expect(m, "%s: no data block" % path):
        return
    data = json.loads(m.group(1))
    expect(rows_at(data["profile"], typ, src, line), "%s: its data has no %s row at %s:%d" %
           (path, typ, src, line))


def check_dump(path, typ, func, want, wake_func):
    evs = [json.loads(x) for x in open(path) if x.strip()]
    acq = [e for e in evs if e.get("event") == "lock_acquired" and e.get("lock_type") == typ and
           e.get("site", "").startswith(func + "+")]
    expect(len(acq) == want["contended"], "%s: %d lock_acquired of type %s at %s, the profile "
           "has %d waits" % (path, len(acq), typ, func, want["contended"]))
    expect(all(e["args"]["wait_ns"] > 0 for e in acq), "%s: a %s wait of 0 ns" % (path, typ))
    expect(sum(e["args"]["wait_ns"] for e in acq) == want["wait_ns"],
           "%s: the trace's %s waits at %s add up to %d ns, the profile's to %d" %
           (path, typ, func, sum(e["args"]["wait_ns"] for e in acq), want["wait_ns"]))
    wakes = [e for e in evs if e.get("event") == "futex_wake"]
    if wake_func:
        at = [e for e in wakes if e.get("site", "").startswith(wake_func + "+")]
        expect(at and all(e["lock_type"] == "futex" and e["args"]["woken"] >= 1 for e in at),
               "%s: no futex_wake at %s that woke someone: %s" % (path, wake_func, wakes[:3]))
        objs = {e["args"]["obj"] for e in acq}
        expect(any(e["args"]["obj"] in objs for e in at),
               "%s: no wake of the word the waits were on" % path)
    else:
        expect(not wakes, "%s: futex_wake events in a program without futex locks" % path)


def check_exports(pm, cm, typ, wait_name, wake_name, want, path):
    waits = [s for s in pm["slices"] if s["name"] == wait_name]
    expect(len(waits) == want["contended"], "%s: %d slices '%s', the profile has %d waits" %
           (path, len(waits), wait_name, want["contended"]))
    expect(all(s["args"].get("lock") for s in waits), "%s: a wait slice without its lock" % path)
    tracks = [t["name"] for t in pm["tracks"].values()]
    expect(any(t.startswith(typ + " 0x") and t.endswith(wait_name[5:]) for t in tracks),
           "%s: no lock track '%s 0x... %s': %s" % (path, typ, wait_name[5:], tracks))
    expect(wait_name in cm["names"], "chrome export: no '%s'" % wait_name)
    if not wake_name:
        return
    wakes = [s for s in pm["instants"] if s["name"] == wake_name]
    expect(wakes and all(s["args"].get("woken", 0) >= 1 for s in wakes),
           "%s: no instant '%s' with 'woken'" % (path, wake_name))
    expect(wake_name in cm["names"], "chrome export: no '%s'" % wake_name)
    flows = [f for f, src in pm["flows_out"].items() if src["name"] == wake_name]
    ends = [pm["flows_in"][f]["name"] for f in flows]
    expect(flows and all(e.endswith(wait_name[5:]) for e in ends),
           "%s: no flow from '%s' to the wait it ended: %s" % (path, wake_name, ends[:3]))


def check_watchdog(hold_err, nohold_err, src, wait_line, wake_line):
    head = r"has been waiting [0-9.]+ ms for futex 0x[0-9a-f]+ at word_lock \S*%s:%d; " % (
        re.escape(src), wait_line)
    text = open(hold_err).read()
    expect(re.search(head + r".*its waiters were last woken at word_unlock \S*%s:%d$" % (
        re.escape(src), wake_line), text, re.M),
        "%s: no warning about the futex wait naming the waker word_unlock %s:%d: %s" %
        (hold_err, src, wake_line, text[:600]))
    text = open(nohold_err).read()
    expect(re.search(head + r".*the site that last woke its waiters is kept with hold tracking",
                     text, re.M),
           "%s: the warning without --hold does not say how to see the waker: %s" %
           (nohold_err, text[:600]))


def check_lock_order(prof):
    lo = prof.get("lock_order")
    if not expect(lo is not None, "prof.json: no lock_order (run --lock-order)"):
        return
    # The waiters take a pthread mutex after their futex waits, before
    # the (unseen) release: a futex wait taken for an acquisition would
    # draw a futex -> mutex edge.
    expect(lo["edges_kept"] == 0 and not lo["cycles"],
           "lock-order graph has edges or cycles for a program that nests no seen lock: %s" %
           json.dumps(lo)[:300])


def main(argv):
    if len(argv) < 2 or argv[1] not in ("futex", "glibc"):
        print(__doc__)
        return 2
    kind = argv[1]
    if kind == "futex":
        d, wait_line, wake_line, pproto, fproto, tests = argv[2], int(argv[3]), int(argv[4]), \
            argv[5], argv[6], argv[7]
        typ, func, src, pre, wake_func = "futex", "word_lock", "futex_waits.c", "", "word_unlock"
    else:
        d, wait_line, pproto, fproto, tests = argv[2], int(argv[3]), argv[4], argv[5], argv[6]
        typ, func, src, pre, wake_func = "glibc_lock", "log_line", "glibc_locks.c", "g.", None
    sys.path.insert(0, tests)
    import trace_export_check as tx
    f = lambda name: os.path.join(d, pre + name)
    prof = json.load(open(f("prof.json")))
    at = rows_at(prof, typ, src, wait_line)
    if not at:
        print("FAIL: %s: no %s row at %s:%d (the table's rows): %s" % (
            f("prof.json"), typ, src, wait_line,
            [(r["type"], r["site"].get("function"), r["site"].get("line")) for r in prof["rows"]]))
        return 1
    want = {"wait_ns": sum(r["wait_ns"] for r in at), "contended": sum(r["contended"] for r in at)}
    with tempfile.TemporaryDirectory(prefix="futex-outputs-") as tmp:
        pb_perfetto = tx.load_schema(fproto, tmp)  # exits 77 without protoc/protobuf
        pb_pprof = pprof_module(pproto, tmp)
        check_csv(f("prof.csv"), typ, src, wait_line, want)
        check_folded(f("prof.folded"), typ, func, src, wait_line, want)
        if pb_pprof:
            check_pprof(pb_pprof, f("prof.pb.gz"), pproto, typ, func, src, wait_line, want)
        check_html(f("prof.html"), f("prof.rerender.json"), tests, typ, src, wait_line)
        check_dump(f("dump.jsonl"), typ, func, want, wake_func)
        pm = tx.perfetto_model(pb_perfetto, fproto, f("t.pftrace"))
        cm = tx.chrome_model(f("t.chrome.json"))
        wait_name = "wait %s %s:%d" % (func, src, wait_line)
        wake_name = "futex wake %s %s:%d" % (wake_func, src, int(argv[4])) if wake_func else None
        check_exports(pm, cm, typ, wait_name, wake_name, want, f("t.pftrace"))
    if kind == "futex":
        check_watchdog(f("warn_hold.err"), f("warn_nohold.err"), src, wait_line, wake_line)
        check_lock_order(prof)
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print("ok: %s rows at %s:%d (%d waits, %.1f ms) in csv, folded, pprof, html, the trace "
              "and its exports%s" % (typ, src, wait_line, want["contended"], want["wait_ns"] / 1e6,
                                     ", the watchdog and the lock-order graph"
                                     if kind == "futex" else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
