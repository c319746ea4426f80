#!/usr/bin/env python3
"""check_lock_order.py - the lock-order cycles of a profile (JSON, written
with lock_order=1) against what a test program should give.

Usage: check_lock_order.py PROFILE.json [--cycles N] [--cycle SPEC]...
                           [--min-count N] [--held-stack FUNC] [--acquired-stack FUNC]
                           [--held-stack-is F,F,...] [--acquired-stack-is F,F,...]

  --cycles N        exactly N cycles
  --cycle SPEC      a cycle with exactly these edges, in any order and
                    rotation: SPEC is "H>A,H>A,...", each H and A a site's
                    function, optionally "/TYPE" (mutex, rwlock_read, ...):
                    "rw_read_then_m/rwlock_read>rw_read_then_m/mutex,..."
  --min-count N     every cycle was found at least N times ("count")
  --held-stack F    some edge's held end has F in its stack
  --acquired-stack F  some edge's acquired end has F in its stack
  --held-stack-is F,F,...      some edge's held end has exactly this stack
                               (its functions, innermost first)
  --acquired-stack-is F,F,...  the same for an acquired end

Besides, every profile must be well formed: "lock_order" present with its
counts, nothing dropped, each cycle closed (an edge's acquired object is
the next edge's held object, the last edge's the first's), each edge's
two objects different.  Prints what it found; exit 0 when everything
holds, 1 otherwise.
"""
import json
import sys


def end_str(e):
    s = e["site"]
    return "%s/%s %s (%s:%s)" % (s.get("function"), e["type"], e["object"], s.get("file"),
                                 s.get("line"))


def parse_spec(spec):
    edges = []
    for item in spec.split(","):
        held, acq = item.split(">")
        edges.append(tuple(x.split("/", 1) if "/" in x else [x, None] for x in (held, acq)))
    return edges


def end_matches(end, want):
    func, typ = want
    return end["site"].get("function") == func and (typ is None or end["type"] == typ)


def cycle_matches(cycle, spec):
    edges = cycle["edges"]
    if len(edges) != len(spec):
        return False
    left = list(edges)
    for h, a in spec:
        for e in left:
            if end_matches(e["held"], h) and end_matches(e["acquired"], a):
                left.remove(e)
                break
        else:
            return False
    return True


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__)
        return 2
    path, args = argv[1], argv[2:]
    want_n, specs, min_count, held_stack, acq_stack = None, [], None, [], []
    held_is, acq_is = [], []
    while args:
        a = args.pop(0)
        if a == "--cycles":
            want_n = int(args.pop(0))
        elif a == "--cycle":
            specs.append((args[0], parse_spec(args.pop(0))))
        elif a == "--min-count":
            min_count = int(args.pop(0))
        elif a == "--held-stack":
            held_stack.append(args.pop(0))
        elif a == "--acquired-stack":
            acq_stack.append(args.pop(0))
        elif a == "--held-stack-is":
            held_is.append(args.pop(0).split(","))
        elif a == "--acquired-stack-is":
            acq_is.append(args.pop(0).split(","))
        else:
            print(__doc__)
            return 2
    with open(path) as fh:
        doc = json.load(fh)
    problems = []
    lo = doc.get("lock_order")
    if not isinstance(lo, dict):
        print(f"{path}: no \"lock_order\" object (was lock_order=1 set?)")
        return 1
    cycles = lo["cycles"]
    print(f"{path}: {len(cycles)} cycle(s); edges kept {lo['edges_kept']}, dropped "
          f"{lo['edges_dropped']}; cycles dropped {lo['cycles_dropped']}; searches cut "
          f"{lo['searches_cut']}")
    for i, c in enumerate(cycles):
        print(f"  cycle {i + 1}: found {c['count']} time(s)")
        for e in c["edges"]:
            print(f"    thread {e['thread']}: {end_str(e['held'])} -> {end_str(e['acquired'])}")
    for key in ("edges_dropped", "cycles_dropped", "searches_cut"):
        if lo[key]:
            problems.append(f"{key} is {lo[key]}, not 0")
    for i, c in enumerate(cycles):
        edges = c["edges"]
        if len(edges) < 2:
            problems.append(f"cycle {i + 1} has {len(edges)} edge(s)")
        for k, e in enumerate(edges):
            nxt = edges[(k + 1) % len(edges)]
            if e["acquired"]["object"] != nxt["held"]["object"]:
                problems.append(f"cycle {i + 1}: edge {k + 1} acquires {e['acquired']['object']}"
                                f" but edge {(k + 1) % len(edges) + 1} holds "
                                f"{nxt['held']['object']}: not a cycle")
            if e["acquired"]["object"] == e["held"]["object"]:
                problems.append(f"cycle {i + 1}: edge {k + 1} is a lock taken inside itself")
        if min_count is not None and c["count"] < min_count:
            problems.append(f"cycle {i + 1} was found {c['count']} time(s), not at least "
                            f"{min_count}")
    if want_n is not None and len(cycles) != want_n:
        problems.append(f"{len(cycles)} cycle(s), expected {want_n}")
    for text, spec in specs:
        if not any(cycle_matches(c, spec) for c in cycles):
            problems.append(f"no cycle with the edges {text}")
    ends = [(e["held"], e["acquired"]) for c in cycles for e in c["edges"]]
    for f in held_stack:
        if not any(f in [x.get("function") for x in h["stack"]] for h, _ in ends):
            problems.append(f"no held end has {f} in its stack")
    for f in acq_stack:
        if not any(f in [x.get("function") for x in a["stack"]] for _, a in ends):
            problems.append(f"no acquired end has {f} in its stack")
    for want, side, what in [(w, 0, "held") for w in held_is] + \
                            [(w, 1, "acquired") for w in acq_is]:
        got = [[x.get("function") for x in end[side]["stack"]] for end in ends]
        if want not in got:
            problems.append(f"no {what} end has the stack {','.join(want)}; they have: "
                            + "; ".join(",".join(map(str, g)) for g in got))
    for p in problems:
        print(f"check_lock_order: FAIL: {p}")
    if not problems:
        print("check_lock_order: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
