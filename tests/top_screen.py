#!/usr/bin/env python3
"""top_screen.py - reads what 'syncprof top' printed (a tmux capture-pane of
its screen, or its --batch output) for tests/top_tmux.sh and
tests/top_batch.sh.

  top_screen.py order FILE KEY
      the table of the (last) screen in FILE is sorted by KEY (rate, total,
      count, contended, avg, max, hold) within each of its parts: the key's
      column never grows from one row to the next of a part, and there are
      at least 2 rows.
  top_screen.py parts FILE [merged]
      contention first: the rows of locks (mutex, rwlock, spinlock, futex,
      glibc lock) come first under the line "-- Lock contention ...: N
      rows", the waits for an event (condvar, semaphore, barrier, join)
      after them under "-- Waits for an event ...: N rows", each N the
      part's rows in the process (at least the rows shown); with merged
      (--merged): no title line, and both kinds among the rows.
  top_screen.py rates FILE SITE
      FILE holds two or more --batch snapshots; for the row whose SITE
      column contains SITE, in the last two, the acquisitions per second
      shown (ACQ/s) times the span shown ("rates: over the last X s") is
      the growth of ACQS between them (within rounding).
  top_screen.py columns FILE
      prints the column titles of the last screen, one line.

Exits 1 with a message naming what is wrong.

A number is the last word before the end of its column's title: numbers
are right-aligned under their titles (top_view.c).  Numbers carry units: 0, 520ns, 1.23us, 4.56ms,
7.8s; 123, 4.56k, 7.8M; 12.3%.
"""
import re
import sys

KEY_COLUMN = {"rate": "WAIT%", "total": "WAIT", "count": "ACQS", "contended": "WAITS",
              "avg": "AVG", "max": "MAX", "hold": "HOLD"}
TIME = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
COUNT = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def fail(msg):
    sys.exit("top_screen.py: " + msg)


def value(cell):
    if cell == "-":
        return None
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|k|M|G|T|P|E|%)?", cell)
    if not m:
        fail(f"not a number: {cell!r}")
    v = float(m.group(1))
    unit = m.group(2)
    if unit in TIME:
        return v * TIME[unit]
    if unit in COUNT:
        return v * COUNT[unit]
    return v


def screens(text):
    """Each screen or snapshot: (header lines, column titles with their
    ends, table lines)."""
    out, cur = [], None
    for line in text.split("\n"):
        if line.startswith("syncprof top - pid"):
            cur = {"head": [line], "cols": None, "rows": [], "titles": [], "done": False}
            out.append(cur)
        elif cur is None:
            continue
        elif cur["cols"] is None and line.startswith("TYPE "):
            cur["cols"] = [(m.group(0), m.end()) for m in re.finditer(r"\S+", line)]
        elif cur["cols"] is None:
            cur["head"].append(line)
        elif not line.strip():
            cur["done"] = True  # the table ends at the first empty line
        elif not cur["done"] and line.startswith("-- "):
            cur["titles"].append((line, len(cur["rows"])))  # a part starts at that row
        elif not cur["done"] and not line.startswith("("):
            cur["rows"].append(line)
    if not out or out[-1]["cols"] is None:
        fail("no screen with a table in it:\n" + text)
    return [s for s in out if s["cols"] is not None]


def cell(screen, row, title):
    """A number: right-aligned, it ends where its title ends."""
    for name, end in screen["cols"]:
        if name == title:
            return (row[:end].split() or [""])[-1]
    fail(f"no column {title} in {[c[0] for c in screen['cols']]}")


def site(screen, row):
    start = [end - len(name) for name, end in screen["cols"] if name == "SITE"]
    return row[start[0]:].strip() if start else ""


def order(path, key):
    s = screens(open(path).read())[-1]
    title = KEY_COLUMN[key]
    vals = [value(cell(s, r, title)) for r in s["rows"]]
    starts = {start for _, start in s["titles"]}
    if len(vals) < 2:
        fail(f"{len(vals)} rows; want 2 or more to see an order")
    for i in range(1, len(vals)):
        if i in starts:
            continue  # a new part: sorted on its own
        if vals[i] is not None and vals[i - 1] is not None and vals[i] > vals[i - 1]:
            fail(f"sort {key}: row {i + 1} has {title} {vals[i]} > row {i}'s {vals[i - 1]}:\n" +
                 "\n".join(s["rows"]))
    print(f"sort {key}: {title} {vals}")


LOCKS = {"mutex", "rec_mutex", "rwlock_rd", "rwlock_wr", "spinlock", "futex", "glibc_lock"}
EVENTS = {"condvar", "semaphore", "barrier", "join"}


def parts(path, merged):
    s = screens(open(path).read())[-1]
    types = [r.split()[0] for r in s["rows"]]
    for t in types:
        if t not in LOCKS | EVENTS:
            fail(f"a row of type {t!r}: " + repr(s["rows"]))
    kinds = "".join("l" if t in LOCKS else "e" for t in types)
    if merged:
        if s["titles"]:
            fail(f"--merged: title lines {s['titles']}")
        if "le" not in kinds or "el" not in kinds:
            fail(f"--merged: rows by kind {kinds!r}; want locks and events mixed (bank's "
                 "condition waits rank among its locks)")
        print(f"merged: rows by kind {kinds}")
        return
    nl = kinds.count("l")
    if kinds != "l" * nl + "e" * (len(kinds) - nl):
        fail(f"rows by kind {kinds!r}: a lock row after an event row")
    want = [("-- Lock contention (mutex, rwlock, spinlock, futex, glibc lock): ", 0)]
    if nl < len(kinds):
        want.append(("-- Waits for an event (condition variable, semaphore, barrier, join): ", nl))
    got = [(re.sub(r"[0-9]+ rows?$", "", t), at) for t, at in s["titles"]]
    if got != want:
        fail(f"title lines {s['titles']}, want {want} (with their counts)")
    for (t, at), n in zip(s["titles"], (nl, len(kinds) - nl)):
        m = re.search(r": ([0-9]+) rows?$", t)
        if not m or int(m.group(1)) < n:
            fail(f"{t!r}: fewer rows than the {n} shown")
    print(f"parts: rows by kind {kinds}; titles {[t for t, _ in s['titles']]}")


def rates(path, pattern):
    ss = screens(open(path).read())
    if len(ss) < 2:
        fail(f"{len(ss)} snapshots; want 2")
    a, b = ss[-2], ss[-1]
    span = None
    for line in b["head"]:
        m = re.search(r"rates: over the last ([0-9.]+) s", line)
        if m:
            span = float(m.group(1))
    if span is None:
        fail("no 'rates: over the last X s' in the last snapshot: " + repr(b["head"]))

    def row(s):
        rs = [r for r in s["rows"] if pattern in site(s, r)]
        if len(rs) != 1:
            fail(f"{len(rs)} rows with {pattern!r} in their site")
        return rs[0]

    acq_a, acq_b = cell(a, row(a), "ACQS"), cell(b, row(b), "ACQS")
    if not acq_a.isdigit() or not acq_b.isdigit():
        fail(f"ACQS not exact ({acq_a}, {acq_b}): pick a slower row")
    grown = int(acq_b) - int(acq_a)
    shown = value(cell(b, row(b), "ACQ/s"))
    if abs(shown * span - grown) > 0.01 * grown + 2:
        fail(f"ACQ/s {shown} x {span} s = {shown * span:.1f}, but ACQS grew by {grown}")
    print(f"{pattern}: ACQS {acq_a} -> {acq_b} in {span} s; ACQ/s {shown}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "order" and sys.argv[3] in KEY_COLUMN:
        order(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "parts" and sys.argv[3:] in ([], ["merged"]):
        parts(sys.argv[2], sys.argv[3:] == ["merged"])
    elif len(sys.argv) == 4 and sys.argv[1] == "rates":
        rates(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "columns":
        print(" ".join(c[0] for c in screens(open(sys.argv[2]).read())[-1]["cols"]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
