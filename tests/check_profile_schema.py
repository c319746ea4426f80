#!/usr/bin/env python3
"""check_profile_schema.py - validate profiles against the JSON Schema of
"profile JSON version 1" (docs/profile.schema.json), with python3-jsonschema.

The one validator of profiles for the tests (issue 27: there were three).

Usage: check_profile_schema.py [--schema SCHEMA] [EXPECT...] FILE...
       check_profile_schema.py [--schema SCHEMA] --broken FILE

  FILE...         every FILE must be valid; one line per problem otherwise.
  EXPECT, what every FILE must also have:
  --min-rows N            at least N rows
  --expect-site FILE:LINE a row whose site's file ends in FILE, at LINE
  --expect-type TYPE      a row of lock type TYPE
  --need-file-line NAME   a row whose site has a function and a file
                          ending in NAME with a line
  --dso-suffix S          a row whose site lies in a DSO whose path ends in S
  --min-acquisitions N    a row with at least N acquisitions
  --hold                  hold tracking on (hold_tracking true)
  --broken FILE   FILE must be a valid profile with hold tracking; each of
                  a list of broken copies of it (a row without "wait_ns",
                  "type":"bogus", ...) must be rejected, and copies that
                  only add keys or turn hold tracking off consistently must
                  still pass.  This shows that the schema can fail.

Besides the schema, facts a schema cannot state are checked:
"rows_total" is at least the number of rows, a log2 histogram's last
bucket is not zero (trailing zero buckets are left out), the buckets of
a log-linear histogram ("wait_buckets", "hold_buckets") come in
increasing order, the log2 histogram is their sum per power of two, and
each lock-order cycle is closed (an edge's acquired object is the next
edge's held object).

python3-jsonschema (4.x: draft 2020-12) is a declared dependency
(.ci/packages): without it this script fails, it does not skip.
Exit 0 when every check passed, 1 otherwise, 2 on bad usage.
"""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "docs", "profile.schema.json")


def load_validator(schema_path):
    try:
        import jsonschema
    except ImportError:
        sys.exit("check_profile_schema: the Python module jsonschema is missing for "
                 f"{sys.executable}; it is a declared dependency (.ci/packages): "
                 "apt-get install python3-jsonschema, or run scripts/deps.sh")
    cls = getattr(jsonschema, "Draft202012Validator", None)
    if cls is None:
        sys.exit("check_profile_schema: jsonschema "
                 f"{getattr(jsonschema, '__version__', '?')} has no draft 2020-12 "
                 "validator; version 4 or later is needed (Debian 12: python3-jsonschema)")
    with open(schema_path) as fh:
        schema = json.load(fh)
    cls.check_schema(schema)  # the schema itself must be a valid 2020-12 schema
    return cls(schema)


def log2_of_bucket(b):
    """The log2 bucket of log-linear bucket b (docs/formats.md, "Histograms")."""
    if b < 16:
        lower = b
    else:
        s = b // 8 - 1
        lower = (b - 8 * s) << s
    return lower.bit_length() - 1 if lower else 0


def bucket_problems(r, what):
    """The checks of one row's log-linear histogram against its log2 one."""
    out = []
    pairs, log2 = r.get(f"{what}_buckets"), r.get(f"{what}_hist")
    if pairs is None:
        return out
    idx = [p[0] for p in pairs]
    if any(a >= b for a, b in zip(idx, idx[1:])):
        out.append(f"{what}_buckets: buckets not in increasing order")
    sums = {}
    for b, n in pairs:
        sums[log2_of_bucket(b)] = sums.get(log2_of_bucket(b), 0) + n
    want = [sums.get(k, 0) for k in range(max(sums) + 1)] if sums else []
    if log2 is not None and log2 != want:
        out.append(f"{what}_hist: not the sums of {what}_buckets per power of two "
                   f"({log2} vs {want})")
    return out


def where(path):
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def problems_of(validator, doc):
    """Schema errors, then the checks a schema cannot express."""
    out = []
    for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        # Errors under oneOf/anyOf/if: the innermost ones say what is wrong.
        leaves = [c for c in e.context if not c.context] if e.context else []
        detail = "; ".join(sorted({c.message for c in leaves}))[:300]
        msg = e.message
        if isinstance(e.instance, (list, dict)) and len(msg) > 100:  # it quotes the instance
            msg = f"fails {e.validator} {json.dumps(e.validator_value)[:100]}"
        out.append(f"{where(e.absolute_path)}: {msg}" + (f" ({detail})" if detail else ""))
    if out or not isinstance(doc, dict):
        return out
    rows = doc.get("rows", [])
    if doc.get("rows_total", 0) < len(rows):
        out.append(f"$.rows_total: {doc['rows_total']} is less than the {len(rows)} rows")
    for i, r in enumerate(rows):
        for key in ("wait_hist", "hold_hist"):
            h = r.get(key)
            if h and h[-1] == 0:
                out.append(f"$.rows[{i}].{key}: ends in a zero bucket")
        for what in ("wait", "hold"):
            out += [f"$.rows[{i}].{p}" for p in bucket_problems(r, what)]
    for i, c in enumerate(doc.get("lock_order", {}).get("cycles", [])):
        edges = c["edges"]
        for k, e in enumerate(edges):
            if e["acquired"]["object"] != edges[(k + 1) % len(edges)]["held"]["object"]:
                out.append(f"$.lock_order.cycles[{i}].edges[{k}]: the cycle is not closed "
                           "(its acquired object is not the next edge's held one)")
    return out


def expect_problems(doc, expect):
    """What a valid profile lacks of the rows the caller expects."""
    out, rows = [], doc["rows"]
    site = lambda r: r.get("site") or {}
    for key, arg in expect:
        if key == "--min-rows" and len(rows) < int(arg):
            out.append(f"{len(rows)} rows, expected at least {arg}")
        elif key == "--expect-site":
            fname, line = arg.rsplit(":", 1)
            if not any((site(r).get("file") or "").endswith(fname) and
                       site(r).get("line") == int(line) for r in rows):
                out.append(f"no row for site {arg}")
        elif key == "--expect-type" and not any(r.get("type") == arg for r in rows):
            out.append(f"no row of type {arg}")
        elif key == "--need-file-line" and not any(
                (site(r).get("file") or "").endswith(arg) and
                isinstance(site(r).get("line"), int) and site(r).get("function")
                for r in rows):
            out.append(f"no row's site has a function and {arg}:line")
        elif key == "--dso-suffix" and not any(
                (site(r).get("dso") or "").endswith(arg) for r in rows):
            out.append(f"no row's site is in a DSO ending in {arg}")
        elif key == "--min-acquisitions" and not any(
                r.get("acquisitions", 0) >= int(arg) for r in rows):
            out.append(f"no row has {arg} acquisitions")
        elif key == "--hold" and doc.get("hold_tracking") is not True:
            out.append("hold tracking is off (hold_tracking is not true)")
    return out


def check_files(validator, paths, expect=()):
    failed = 0
    for path in paths:
        try:
            with open(path) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot be read as JSON: {e}")
            failed += 1
            continue
        probs = problems_of(validator, doc)
        if not probs:
            probs = expect_problems(doc, expect)
        for p in probs:
            print(f"{path}: {p}")
        if probs:
            failed += 1
        else:
            print(f"{path}: valid against the schema "
                  f"({len(doc['rows'])} rows, hold_tracking {str(doc['hold_tracking']).lower()})")
    return 1 if failed else 0


# ---- broken copies: each must be rejected -----------------------------------

def first_row(doc, pred=lambda r: True):
    for r in doc["rows"]:
        if pred(r):
            return r
    raise LookupError("the profile has no suitable row")


def without_hold(doc):
    """The same profile as written without hold tracking."""
    doc["hold_tracking"] = False
    for k in ("hold_sample", "hold_untracked", "blame_lost"):
        del doc[k]
    # present when the ticker was late, or in clock mode
    for k in ("hold_ticker_late", "hold_ticker_gap_max_ns", "hold_clock_ns",
              "hold_clock_switches"):
        doc.pop(k, None)
    for r in doc["rows"]:
        r["hold_ns"] = r["hold_max_ns"] = None
        for k in ("holds", "owner_changes", "hold_hist", "hold_buckets", "blame"):
            del r[k]


def blamed_row(doc):
    """A row with a blame entry (one is made from its site when none has)."""
    r = first_row(doc)
    if not r["blame"]:
        r["blame"].append({"site": copy.deepcopy(r["site"]), "wait_ns": 1, "count": 1})
    return r


def setkey(get, key, value):
    def mutate(doc):
        get(doc)[key] = value
    return mutate


def delkey(get, key):
    def mutate(doc):
        del get(doc)[key]
    return mutate


def row0(doc):
    return doc["rows"][0]


def site0(doc):
    return doc["rows"][0]["site"]


def one_object_row(doc):
    return first_row(doc, lambda r: r["n_objects"] == 1)


def hist_41(doc):
    row0(doc)["wait_hist"] = [1] * 41


def stack_17(doc):
    row0(doc)["stack"] = [copy.deepcopy(site0(doc)) for _ in range(17)]


def no_hold_with_holds(doc):
    without_hold(doc)
    row0(doc)["holds"] = 3


def no_hold_with_sample(doc):
    without_hold(doc)
    doc["hold_sample"] = 16


def no_hold_with_hold_ns(doc):
    without_hold(doc)
    row0(doc)["hold_ns"] = 5


def uncoalesced_two_objects(doc):
    doc["coalesced"] = False
    r = row0(doc)
    r["n_objects"], r["object"] = 2, None


def waited_row(doc):
    return first_row(doc, lambda r: len(r["wait_buckets"]) >= 2)


def buckets_unsorted(doc):
    r = waited_row(doc)
    r["wait_buckets"].reverse()


def bucket_zero_count(doc):
    waited_row(doc)["wait_buckets"][0][1] = 0


def bucket_304(doc):
    waited_row(doc)["wait_buckets"][-1][0] = 304


def bucket_moved(doc):
    """A count moved to another power of two: the log2 histogram disagrees."""
    r = waited_row(doc)
    r["wait_buckets"][-1][0] = 303


def hist_layout(doc):
    doc["hist"]["sub_buckets"] = 16


def trailing_zero(doc):
    row0(doc)["wait_hist"].append(0)


def rows_total_short(doc):
    doc["rows_total"] = len(doc["rows"]) - 1


def with_cycle(doc):
    """A "lock_order" with one cycle of two edges, made from row 0's site."""
    def end(obj):
        return {"object": obj, "type": "mutex", "site": copy.deepcopy(site0(doc)), "stack": []}
    doc["lock_order"] = {
        "edges_kept": 2, "edges_dropped": 0, "cycles_dropped": 0, "searches_cut": 0,
        "cycles": [{"count": 1, "edges": [
            {"held": end("0x10"), "acquired": end("0x20"), "thread": 7},
            {"held": end("0x20"), "acquired": end("0x10"), "thread": 8}]}]}
    return doc["lock_order"]


def cycle0(doc):
    return with_cycle(doc)["cycles"][0]


def edge0(doc):
    return cycle0(doc)["edges"][0]


# (what is broken, text the rejection must contain, how to break it)
BROKEN = [
    ("a row without \"wait_ns\"", "'wait_ns' is a required", delkey(row0, "wait_ns")),
    ("\"type\":\"bogus\"", "$.rows[0].type: 'bogus' is not one of", setkey(row0, "type", "bogus")),
    ("a row without \"kind\"", "'kind' is a required", delkey(row0, "kind")),
    ("\"kind\":\"wait\"", "$.rows[0].kind: 'wait' is not one of", setkey(row0, "kind", "wait")),
    ("a lock row of kind event", ".kind: 'lock' was expected",
     setkey(lambda d: first_row(d, lambda r: r["type"] == "mutex"), "kind", "event")),
    ("a join row of kind lock", ".kind: 'event' was expected",
     setkey(lambda d: first_row(d, lambda r: r["type"] in ("join", "condvar")), "kind", "lock")),
    ("\"sort\":\"fastest\"", "$.sort:", lambda d: d.__setitem__("sort", "fastest")),
    ("\"clock\":\"rdtsc\"", "$.clock:", lambda d: d.__setitem__("clock", "rdtsc")),
    ("\"version\":2", "$.version:", lambda d: d.__setitem__("version", 2)),
    ("\"format\":\"other\"", "$.format:", lambda d: d.__setitem__("format", "other")),
    ("no \"rows_total\"", "'rows_total' is a required", lambda d: d.__delitem__("rows_total")),
    ("\"coalesced\":\"yes\"", "$.coalesced:", lambda d: d.__setitem__("coalesced", "yes")),
    ("\"acquisitions\":-1", "$.rows[0].acquisitions:", setkey(row0, "acquisitions", -1)),
    ("\"wait_ns\":\"12\" (a string)", "$.rows[0].wait_ns:", setkey(row0, "wait_ns", "12")),
    ("\"wait_ns\":1.5", "$.rows[0].wait_ns:", setkey(row0, "wait_ns", 1.5)),
    ("\"contended\":true", "$.rows[0].contended:", setkey(row0, "contended", True)),
    ("\"wait_max_ns\" past 2^64-1", "$.rows[0].wait_max_ns:", setkey(row0, "wait_max_ns", 1 << 64)),
    ("a wait_hist of 41 buckets", "$.rows[0].wait_hist: fails maxItems 40", hist_41),
    ("a stack of 17 frames", "$.rows[0].stack: fails maxItems 16", stack_17),
    ("\"n_objects\":0", "$.rows[0].n_objects:", setkey(row0, "n_objects", 0)),
    ("\"object\":null with n_objects 1", ".object: None is not of type 'string'",
     setkey(one_object_row, "object", None)),
    ("\"object\" without 0x", ".object: '55d731035220' does not match",
     setkey(one_object_row, "object", "55d731035220")),
    ("an upper-case address", "$.rows[0].site.address:", setkey(site0, "address", "0x55D731035220")),
    ("a site without \"dso\"", "$.rows[0].site: 'dso' is a required", delkey(site0, "dso")),
    ("a site with \"line\":0", "$.rows[0].site.line:", setkey(site0, "line", 0)),
    ("a site with \"offset\":0", "$.rows[0].site.offset:", setkey(site0, "offset", 0)),
    ("\"inlined\":[]", "$.rows[0].site.inlined:", setkey(site0, "inlined", [])),
    ("an inlined entry without \"line\"", "$.rows[0].site.inlined[0]: 'line' is a required",
     setkey(site0, "inlined", [{"function": "f", "file": "f.c"}])),
    ("\"stack\" not an array", "$.rows[0].stack:", setkey(row0, "stack", {})),
    ("hold tracking with \"hold_ns\":null", "$.rows[0].hold_ns:", setkey(row0, "hold_ns", None)),
    ("hold tracking, a row without \"blame\"", "'blame' is a required", delkey(row0, "blame")),
    ("hold tracking, a row without \"owner_changes\"", "'owner_changes' is a required",
     delkey(row0, "owner_changes")),
    ("hold tracking without \"hold_sample\"", "'hold_sample' is a required",
     lambda d: d.__delitem__("hold_sample")),
    ("\"hold_sample\":0", "$.hold_sample:", lambda d: d.__setitem__("hold_sample", 0)),
    ("a blame entry with \"count\":0", "$.rows[0].blame[0].count:",
     lambda d: blamed_row(d)["blame"][0].update(count=0)),
    ("a blame entry without \"site\"", "$.rows[0].blame[0]: 'site' is a required",
     lambda d: blamed_row(d)["blame"][0].pop("site")),
    ("a blame site with a bad address", "$.rows[0].blame[0].site.address:",
     lambda d: blamed_row(d)["blame"][0]["site"].update(address="0xZZ")),
    ("a mapping without \"build_id\"", "$.mappings[0]: 'build_id' is a required",
     lambda d: d["mappings"][0].pop("build_id")),
    ("an upper-case build ID", "$.mappings[0].build_id:",
     lambda d: d["mappings"][0].update(build_id="ABCDEF")),
    ("a mapping \"start\" without 0x", "$.mappings[0].start:",
     lambda d: d["mappings"][0].update(start="1000")),
    ("no hold tracking, a row with \"holds\"", "$.rows[0].holds:", no_hold_with_holds),
    ("no hold tracking, \"hold_sample\" present", "$.hold_sample:", no_hold_with_sample),
    ("no hold tracking, a number in \"hold_ns\"", "$.rows[0].hold_ns:", no_hold_with_hold_ns),
    ("not coalesced, a row of 2 objects", "$.rows[0].n_objects:", uncoalesced_two_objects),
    ("a wait_hist ending in a zero bucket", "$.rows[0].wait_hist: ends in a zero", trailing_zero),
    ("no top-level \"hist\"", "'hist' is a required", lambda d: d.__delitem__("hist")),
    ("\"hist\" with 16 sub-buckets", "$.hist.sub_buckets:", hist_layout),
    ("a row without \"wait_buckets\"", "'wait_buckets' is a required", delkey(row0, "wait_buckets")),
    ("hold tracking, a row without \"hold_buckets\"", "'hold_buckets' is a required",
     delkey(row0, "hold_buckets")),
    ("wait_buckets out of order", ".wait_buckets: buckets not in increasing order", buckets_unsorted),
    ("a bucket with count 0", ".wait_buckets[0][1]:", bucket_zero_count),
    ("bucket 304", ".wait_buckets[", bucket_304),
    ("wait_hist not the sums of wait_buckets", ".wait_hist: not the sums of wait_buckets",
     bucket_moved),
    ("\"rows_total\" below the number of rows", "$.rows_total:", rows_total_short),
    ("lock_order without \"edges_dropped\"", "'edges_dropped' is a required",
     lambda d: with_cycle(d).pop("edges_dropped")),
    ("a lock-order cycle of one edge", "$.lock_order.cycles[0].edges:",
     lambda d: cycle0(d)["edges"].pop()),
    ("a lock-order cycle with \"count\":0", "$.lock_order.cycles[0].count:",
     lambda d: cycle0(d).update(count=0)),
    ("a lock-order edge without \"thread\"", "'thread' is a required",
     lambda d: edge0(d).pop("thread")),
    ("a lock-order edge's end of type condvar", "$.lock_order.cycles[0].edges[0].held.type:",
     lambda d: edge0(d)["held"].update(type="condvar")),
    ("a lock-order edge's end without an object", "$.lock_order.cycles[0].edges[0].held.object:",
     lambda d: edge0(d)["held"].update(object=None)),
    ("a lock-order cycle that is not closed", "the cycle is not closed",
     lambda d: edge0(d)["acquired"].update(object="0x30")),
]

STILL_VALID = [
    ("keys added at every level", lambda d: (d.update(added=1), row0(d).update(added=[]),
                                             site0(d).update(added=None))),
    ("hold tracking turned off consistently", without_hold),
    ("a blame entry made from the site", blamed_row),
    ("a lock_order with one cycle", with_cycle),
]


def check_broken(validator, path):
    try:
        with open(path) as fh:
            base = json.load(fh)
    except (OSError, ValueError) as e:
        print(f"{path}: cannot be read as JSON: {e}")
        return 1
    probs = problems_of(validator, base)
    if probs:
        print(f"{path}: the profile to break is not valid itself: {probs[0]}")
        return 1
    if base.get("hold_tracking") is not True or not base["rows"]:
        print(f"{path}: needs a profile with hold tracking and at least one row")
        return 1
    failed = 0
    for name, expect, mutate in BROKEN:
        doc = copy.deepcopy(base)
        mutate(doc)
        probs = problems_of(validator, doc)
        why = [p for p in probs if expect in p]
        if why:
            print(f"rejected as it must be: {name}: {why[0]}")
        elif probs:
            print(f"FAIL: {name}: rejected, but not for '{expect}': {probs[0]}")
            failed += 1
        else:
            print(f"FAIL: accepted: {name}")
            failed += 1
    for name, mutate in STILL_VALID:
        doc = copy.deepcopy(base)
        mutate(doc)
        probs = problems_of(validator, doc)
        if probs:
            print(f"FAIL: rejected: {name}: {probs[0]}")
            failed += 1
        else:
            print(f"accepted as it must be: {name}")
    print(f"{path}: {len(BROKEN)} broken copies, {len(STILL_VALID)} valid ones: "
          f"{'ok' if not failed else f'{failed} wrong'}")
    return 1 if failed else 0


def main(args):
    schema, broken = DEFAULT_SCHEMA, None
    files, expect = [], []
    with_arg = ("--min-rows", "--expect-site", "--expect-type", "--need-file-line",
                "--dso-suffix", "--min-acquisitions")
    while args:
        a = args.pop(0)
        if a == "--schema" and args:
            schema = args.pop(0)
        elif a == "--broken" and args:
            broken = args.pop(0)
        elif a in with_arg and args:
            expect.append((a, args.pop(0)))
        elif a == "--hold":
            expect.append((a, None))
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            files.append(a)
    if not files and not broken:
        print(__doc__)
        return 2
    validator = load_validator(schema)
    rc = check_files(validator, files, expect) if files else 0
    if broken:
        rc |= check_broken(validator, broken)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
