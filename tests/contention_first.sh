#!/bin/sh
# contention_first.sh SYNCPROF BANK TMPDIR - issue 26, contention first, on
# bank preloaded (one run, saved as JSON, rendered from it):
#   1. the table: the rows of locks under "Lock contention (...): N rows"
#      first - bank's account mutexes, journal mutex and teller spinlock
#      among them - then the waits for an event (its condition waits and
#      joins) under "Waits for an event (...): N rows"; each part in the
#      profile's order (total wait, largest first);
#   2. --merged: one list, no titles, in the profile's order (the JSON's
#      rows), as the table was before: there a condition wait or a join
#      comes before a mutex;
#   3. -s count: the parts sorted by acquisitions, each on its own;
#   4. the other formats keep the profile's order (CSV), and JSON rows say
#      their kind.
. "$(dirname "$0")/lib.sh"
set -eu
cli=$1
bank=$2
tmp=$3
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp"
"$cli" run -f json -o p.json -- "$bank" 4 50000 >/dev/null || die "syncprof run exited $?"
"$cli" report p.json >table.txt || die "report exited $?"
"$cli" report --merged p.json >merged.txt || die "report --merged exited $?"
"$cli" report -s count p.json >count.txt || die "report -s count exited $?"
"$cli" report -s count -f json p.json >count.json || die "report -s count -f json exited $?"
"$cli" report -f csv p.json >p.csv || die "report -f csv exited $?"
cat table.txt
python3 - <<'PY' || die "see above"
import csv, json, re, sys

LOCKS = {"mutex", "rec_mutex", "rwlock_read", "rwlock_write", "spinlock", "futex", "glibc_lock"}
bad = []

def rows_of(path):
    """(part title or None, type, "function :line") per row line of a table."""
    out, part, cols = [], None, False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("Lock contention") or line.startswith("Waits for an event"):
            part, cols = line, False
        elif line.startswith("Type "):
            cols = True
        elif cols and line and not line.startswith((" ", "-", "(", "syncprof:")):
            w = line.split()
            out.append((part, w[0], "%s :%s" % (w[2], w[3].rsplit(":", 1)[-1])))
    return out

def profile_order(path):
    return [(r["type"], "%s :%s" % (r["site"]["function"], r["site"]["line"]))
            for r in json.load(open(path))["rows"]]

prof = json.load(open("p.json"))
for r in prof["rows"]:
    want = "lock" if r["type"] in LOCKS else "event"
    if r.get("kind") != want:
        bad.append("JSON row %s %s: kind %r, want %r" % (r["type"], r["site"]["line"],
                                                         r.get("kind"), want))
order = profile_order("p.json")
types = [t for t, _ in order]
for t in ("mutex", "spinlock", "condvar", "join"):
    if t not in types:
        bad.append("bank's profile has no %s row: %s" % (t, types))
# The split shows something only when the profile's own order is not
# contention-first already: some wait for an event comes before some lock
# row (which ones depends on the machine's load).
kinds = ["lock" if t in LOCKS else "event" for t in types]
if "event" not in kinds or "lock" not in kinds or \
        kinds.index("event") > len(kinds) - 1 - kinds[::-1].index("lock"):
    bad.append("bank's profile is contention-first already: the test shows nothing")

def check_parts(path, want_order, what):
    t = rows_of(path)
    titles = [p for p in dict.fromkeys(p for p, _, _ in t)]
    if len(titles) != 2 or not titles[0].startswith("Lock contention (mutex, rwlock, spinlock, "
                                                    "futex, glibc lock): ") \
            or not titles[1].startswith("Waits for an event (condition variable, semaphore, "
                                        "barrier, join): "):
        bad.append("%s: part titles %r" % (what, titles))
        return
    locks = [(ty, s) for p, ty, s in t if p == titles[0]]
    events = [(ty, s) for p, ty, s in t if p == titles[1]]
    for ty, s in locks:
        if ty not in LOCKS:
            bad.append("%s: %s %s among the locks" % (what, ty, s))
    for ty, s in events:
        if ty in LOCKS:
            bad.append("%s: %s %s among the waits for an event" % (what, ty, s))
    for title, part in zip(titles, (locks, events)):
        n = int(re.search(r": ([0-9]+) rows?$", title).group(1))
        if n != len(part):
            bad.append("%s: %r but %d rows" % (what, title, len(part)))
    want_l = [(ty, s) for ty, s in want_order if ty in LOCKS]
    want_e = [(ty, s) for ty, s in want_order if ty not in LOCKS]
    if locks != want_l or events != want_e:
        bad.append("%s: rows %s then %s, want %s then %s" % (what, locks, events, want_l, want_e))

# 1. contention first, each part in the profile's order
check_parts("table.txt", order, "table")
# 2. --merged: the profile's order, no titles
m = rows_of("merged.txt")
if any(p for p, _, _ in m):
    bad.append("--merged: part titles")
if [(ty, s) for _, ty, s in m] != order:
    bad.append("--merged: rows %s, want the profile's %s" % ([(ty, s) for _, ty, s in m], order))
# 3. -s count: the parts in the order of the profile sorted by count
check_parts("count.txt", profile_order("count.json"), "-s count")
# 4. CSV keeps the profile's order
with open("p.csv") as f:
    c = list(csv.DictReader(f))
if [r["type"] for r in c] != types:
    bad.append("CSV rows %s, want the profile's %s" % ([r["type"] for r in c], types))
for b in bad:
    print("contention_first:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "contention_first: ok"
