#!/usr/bin/env python3
"""check_account.py - the threads' time account of a profile of
tests/account_prog.c against what the program measured itself.

Usage: check_account.py PROFILE.json WORKER_LINE_FILE LABEL [exact]

Checks (correctness bounds, generous: the machine is shared and noisy):
  - "accounting" and "threads" are there; the totals are the sums of the
    listed threads, key by key, and "threads"/"exited" count them;
  - every thread's running + preempted + blocked is its lifetime (exactly,
    or blocked is 0 when rounding made the parts overshoot);
  - the worker (exited) lived as long as it measured (within 2%, plus the
    half clock tick by which the kernel's start time is known);
  - its mutex wait is in sync_wait_ns (~300 ms), its sleep and pipe read
    are blocked elsewhere (~600 ms), its computing is running (~300 ms);
  - acct-short (exited) and acct-idle (live, never profiled) are counted,
    the main thread too, the profiler's own threads are not;
  - with "exact" (preloaded: pthread_create() gives the start to the
    account): the worker lived at least what it measured, and acct-short
    at most the span from before its pthread_create() to after its join,
    which a start known to a clock tick misses by up to 5 ms.
Prints the figures for docs/accounting.md.
"""
import json
import sys

KEYS = ("lifetime_ns", "running_ns", "preempted_ns", "blocked_ns", "sync_wait_ns")
MS = 1000000


def main():
    path, line_file, label = sys.argv[1:4]
    exact = sys.argv[4:5] == ["exact"]
    short_outer = None
    with open(path) as f:
        prof = json.load(f)
    fields = {}
    with open(line_file) as f:
        for line in f:
            if line.startswith("worker "):
                fields = dict(kv.split("=") for kv in line.split()[1:])
            if line.startswith("short outer_ns="):
                short_outer = int(line.split("=")[1])
    fails = []

    def check(ok, what):
        if not ok:
            fails.append(what)

    check(fields, "no 'worker' line from account_prog")
    acc = prof.get("accounting")
    threads = prof.get("threads")
    if not isinstance(acc, dict) or "unavailable" in (acc or {}) or not isinstance(threads, list):
        print("check_account: %s: FAIL: no account: %r" % (label, acc))
        return 1
    for k in KEYS:
        check(acc[k] == sum(t[k] for t in threads),
              "accounting.%s %d != the sum of the threads' %d" % (k, acc[k], sum(t[k] for t in threads)))
    check(acc["threads"] == len(threads), "accounting.threads %d, %d listed" % (acc["threads"], len(threads)))
    check(acc["exited"] == sum(1 for t in threads if t["exited"]), "accounting.exited")
    for t in threads:
        parts = t["running_ns"] + t["preempted_ns"] + t["blocked_ns"]
        check(parts == t["lifetime_ns"] or (t["blocked_ns"] == 0 and parts >= t["lifetime_ns"]),
              "thread %d: parts %d, lifetime %d" % (t["tid"], parts, t["lifetime_ns"]))
        check(not (t["name"] or "").startswith("syncprof-"), "the profiler's thread %s listed" % t["name"])
    by_name = {}
    for t in threads:
        by_name.setdefault(t["name"], []).append(t)
    # (acct-writer makes no profiled call and exits before the report: the
    # profiler never knew it, docs/accounting.md says so; not checked)
    for name, exited in (("acct-worker", True), ("acct-short", True), ("acct-holder", True),
                         ("acct-idle", False)):
        ts = by_name.get(name, [])
        check(len(ts) == 1 and ts[0]["exited"] == exited,
              "%s: %d listed, exited %s (want 1, %s)" % (name, len(ts), [t["exited"] for t in ts], exited))
    mains = [t for t in threads if t["tid"] == prof["pid"]]
    check(len(mains) == 1 and not mains[0]["exited"], "the main thread is not listed live")
    if mains:
        check(mains[0]["sync_wait_ns"] > 0, "the main thread's joins are not in its sync_wait_ns")
    if fails or not by_name.get("acct-worker"):
        for f in fails:
            print("check_account: %s: FAIL: %s" % (label, f))
        return 1

    w = by_name["acct-worker"][0]
    life, sleep, pipe, mutex, compute = (int(fields[k]) for k in
                                         ("life_ns", "sleep_ns", "pipe_ns", "mutex_ns", "compute_ns"))
    check(w["tid"] == int(fields["tid"]), "the worker's tid %d, it said %s" % (w["tid"], fields["tid"]))
    # The kernel's start is known to half a 10 ms tick; the thread lived a
    # little longer than it measured (start-up, exit).
    check(w["lifetime_ns"] >= life - 5 * MS, "worker lifetime %d < measured %d" % (w["lifetime_ns"], life))
    check(w["lifetime_ns"] <= life * 1.02 + 5 * MS,
          "worker lifetime %d > measured %d + 2%%" % (w["lifetime_ns"], life))
    if exact:
        check(w["lifetime_ns"] >= life, "exact start: worker lifetime %d < measured %d"
              % (w["lifetime_ns"], life))
        s = by_name["acct-short"][0]
        check(short_outer is not None and s["lifetime_ns"] <= short_outer,
              "exact start: acct-short lifetime %d > %s ns from its creation to its join"
              % (s["lifetime_ns"], short_outer))
    check(0.8 * mutex <= w["sync_wait_ns"] <= mutex + 50 * MS,
          "worker sync_wait_ns %d, its mutex wait %d" % (w["sync_wait_ns"], mutex))
    check(w["sync_wait_ns"] >= 250 * MS, "worker sync_wait_ns %d < 250 ms" % w["sync_wait_ns"])
    elsewhere = w["blocked_ns"] - w["sync_wait_ns"]
    check(0.8 * (sleep + pipe) - w["preempted_ns"] <= elsewhere <= sleep + pipe + 50 * MS,
          "worker blocked elsewhere %d, its sleep + pipe %d" % (elsewhere, sleep + pipe))
    check(w["running_ns"] >= 290 * MS, "worker running %d < 290 ms (it computed 300 ms)" % w["running_ns"])
    check(w["running_ns"] <= compute + 100 * MS, "worker running %d > compute %d" % (w["running_ns"], compute))
    print("check_account: %s: worker measured life %.1f ms (sleep %.1f, pipe %.1f, mutex %.1f, "
          "compute %.1f); account lifetime %.1f ms (%+.2f%%): running %.1f, preempted %.1f, "
          "blocked %.1f = %.1f in waits + %.1f elsewhere"
          % (label, life / 1e6, sleep / 1e6, pipe / 1e6, mutex / 1e6, compute / 1e6,
             w["lifetime_ns"] / 1e6, 100.0 * (w["lifetime_ns"] - life) / life,
             w["running_ns"] / 1e6, w["preempted_ns"] / 1e6, w["blocked_ns"] / 1e6,
             w["sync_wait_ns"] / 1e6, elsewhere / 1e6))
    for f in fails:
        print("check_account: %s: FAIL: %s" % (label, f))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
