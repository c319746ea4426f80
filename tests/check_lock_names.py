#!/usr/bin/env python3
"""check_lock_names.py - the lock names and creation sites of
tests/lock_names.c in every output of one saved profile (JSON, re-rendered
by the CLI as JSON, table, CSV, folded and pprof).

Usage: check_lock_names.py SYNCPROF_CLI PROFILE.json LOCK_NAMES.c
The expected lines are the LINE_* markers of LOCK_NAMES.c.  Exit 1 with
one line per failure.
"""
import csv
import gzip
import io
import json
import re
import subprocess
import sys


def main():
    cli, path, src = sys.argv[1:4]
    marks = {}
    with open(src) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"/\* (LINE_[A-Z]+) \*/", text)
            if m:
                marks[m.group(1)] = n
    fails = []

    def check(ok, what):
        if not ok:
            fails.append(what)

    def render(*args):
        r = subprocess.run([cli, "report", "--no-coalesce", *args, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(r.returncode == 0, "report %s: exit %d: %s" % (args, r.returncode,
                                                              r.stderr.decode()))
        return r.stdout

    raw = open(path, "rb").read()
    prof = json.loads(raw)
    rows = [r for r in prof["rows"] if r["type"] == "mutex"]
    named = {}
    for r in rows:  # each lock has rows at several sites: keep the most waited
        k = r.get("lock_name")
        if k not in named or r["wait_ns"] > named[k]["wait_ns"]:
            named[k] = r
    acc = named.get('accounts; "ledger"')
    stat = named.get("static lock")
    for r in rows:
        if r.get("lock_name"):
            check(r == named[r["lock_name"]] or r.get("created_at") ==
                  named[r["lock_name"]].get("created_at"), "one lock, two creation sites")
    check(acc is not None, "no row named accounts")
    check(stat is not None, "no row named static lock")
    if acc:
        c = acc.get("created_at") or {}
        check(c.get("line") == marks["LINE_ACCOUNTS"] and acc.get("created_by") == "init",
              "accounts: created_at %s by %s, want line %d by init"
              % (c.get("line"), acc.get("created_by"), marks["LINE_ACCOUNTS"]))
        check(acc["wait_ns"] > 0, "accounts: never waited for")
    if stat:
        c = stat.get("created_at") or {}
        check(c.get("line") == marks["LINE_STATIC"] and stat.get("created_by") == "first_use",
              "static lock: created_at %s by %s, want line %d by first_use"
              % (c.get("line"), stat.get("created_by"), marks["LINE_STATIC"]))
    check(b"old-name" not in raw, "the destroyed lock's name outlived it")
    reused = [r for r in rows if not r.get("lock_name") and "created_at" in r]
    check(len(reused) == 2, "want 2 rows of the reused lock, got %d" % len(reused))
    for r in reused:
        c = r.get("created_at") or {}
        check(c.get("line") == marks["LINE_REUSED"] and r.get("created_by") == "init",
              "reused lock: created_at %s by %s, want line %d by init"
              % (c.get("line"), r.get("created_by"), marks["LINE_REUSED"]))
    for r in prof["rows"]:
        check(r["type"] != "join" or "created_at" not in r, "a joined thread has a creation site")
    # The other primitives: created at their init (pthread_cond_init, sem_init,
    # pthread_barrier_init, cnd_init), in the JSON and in the table.
    others = [("condvar", "LINE_COND"), ("semaphore", "LINE_SEM"),
              ("barrier", "LINE_BARRIER"), ("condvar", "LINE_CND")]
    for typ, mark in others:
        got = [r for r in prof["rows"] if r["type"] == typ and not r.get("lock_name") and
               (r.get("created_at") or {}).get("line") == marks[mark]]
        check(len(got) >= 1 and all(r.get("created_by") == "init" for r in got),
              "%s: no row created at line %d by init: %s" % (typ, marks[mark], [
                  (r.get("created_at"), r.get("created_by"))
                  for r in prof["rows"] if r["type"] == typ]))

    # The loader round trip: the same bytes back.
    check(render("-f", "json") == raw, "report -f json does not give the saved bytes back")

    table = render().decode()
    check(re.search(r'^    lock "accounts; "ledger"", created at .*lock_names\.c:%d \(init\)$'
                    % marks["LINE_ACCOUNTS"], table, re.M) is not None,
          "table: no lock line for accounts:\n" + table)
    check(re.search(r'^    lock "static lock", created at .*lock_names\.c:%d \(first use\)$'
                    % marks["LINE_STATIC"], table, re.M) is not None,
          "table: no lock line for static lock")
    for typ, mark in others:
        check(re.search(r"^%s .*\n    lock created at .*lock_names\.c:%d \(init\)$"
                        % (typ, marks[mark]), table, re.M) is not None,
              "table: no %s row created at line %d (init)" % (typ, marks[mark]))
    coalesced = subprocess.run([cli, "report", path], stdout=subprocess.PIPE).stdout.decode()
    check(re.search(r"^mutex +\[\d+\] .*\n    lock", coalesced, re.M) is None,
          "table: a coalesced row names a lock:\n" + coalesced)

    got = list(csv.DictReader(io.StringIO(render("-f", "csv").decode())))
    by = {r["lock_name"]: r for r in got}
    check('accounts; "ledger"' in by and by['accounts; "ledger"']["created_at"]
          .endswith("lock_names.c:%d" % marks["LINE_ACCOUNTS"]), "csv: accounts row")
    check("static lock" in by, "csv: static lock row")

    folded = render("-f", "folded").decode()
    check(re.search(r';\[mutex accounts: "ledger"\] [1-9]', folded) is not None,
          "folded: no [mutex accounts: \"ledger\"] leaf:\n" + folded)
    check(";[mutex static lock] " in folded, "folded: no [mutex static lock] leaf")

    pb = render("-f", "pprof", "-o", "/dev/stdout")
    try:
        data = gzip.decompress(pb)
        check(b"lock name" in data and b'accounts; "ledger"' in data,
              "pprof: no lock name label")
        check(b"lock created at" in data, "pprof: no lock created at label")
    except OSError as e:
        fails.append("pprof: %s" % e)

    for f in fails:
        print("check_lock_names: FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
