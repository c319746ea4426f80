#!/usr/bin/env python3
"""check_inline_frames.py - inlined callers are frames in every output that
draws stacks (issue 26, part 3).

Runs PROGRAM (built -O2 -g; tests/inline_frames.c, inline_frames_cxx.cpp)
preloaded under 'syncprof run -f json', then renders the saved profile as
folded, html and pprof, and checks:

  json    a mutex row whose site's function matches SITE has an
          "inlined" list whose functions match CALLERS (outermost first,
          as given; the list is innermost first);
  folded  every line parses as flamegraph.pl reads it (frames, one
          space, an integer); its frames are exactly those the JSON row
          gives (each stack frame after its inlined callers, then the
          site's inlined callers, the site, the [type] leaf), so no
          frame name held a ';'; the site row's line has CALLERS, then
          the site, right under the leaf;
  html    each row's view "stack" is that same list of frames (before
          the site), with the names unchanged; so the flame graphs and
          the row's stack list show CALLERS;
  pprof   (protoc) a Location holds the site's Line then one Line per
          caller, innermost first.

Usage: check_inline_frames.py SYNCPROF PROGRAM OUT_DIR PROTO_DIR SITE CALLER...
(SITE and CALLERs are regular expressions, matched at the name's start.)
Exit 0 when all hold; otherwise one line per problem and exit 1.
"""
import json
import os
import re
import subprocess
import sys

problems = []


def label(f):
    """A frame's one name, as names.c's sp_frame_label() makes it."""
    if f.get("function"):
        return f["function"]
    if f.get("file"):
        return "%s:%s" % (os.path.basename(f["file"]), f.get("line", 0))
    if f.get("dso"):
        return "%s+0x%x" % (os.path.basename(f["dso"]), f.get("offset", 0))
    return "0x%x" % int(f.get("address") or "0", 16)


def inline_label(i):
    """sp_inline_label(): function, else the call's file:line."""
    if i.get("function"):
        return i["function"]
    if i.get("file"):
        return "%s:%s" % (os.path.basename(i["file"]), i.get("line", 0))
    return "??"


def callers(f):
    """The functions frame @f was inlined into, outermost first."""
    return [inline_label(i) for i in reversed(f.get("inlined", []))]


def expected_stack(row):
    """The frames above a row's site, outermost first, inlined ones included."""
    out = []
    for f in reversed(row.get("stack", [])):
        out += callers(f) + [label(f)]
    return out + callers(row["site"])


def matches(names, patterns):
    return len(names) == len(patterns) and all(re.match(p, n) for p, n in zip(patterns, names))


def main():
    if len(sys.argv) < 7:
        print(__doc__, file=sys.stderr)
        return 2
    cli, program, out, proto_dir, site_re = sys.argv[1:6]
    caller_res = sys.argv[6:]
    os.makedirs(out, exist_ok=True)
    prof = os.path.join(out, "p.json")
    p = subprocess.run([cli, "run", "-f", "json", "-o", prof, "--", program],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print(f"syncprof run exited {p.returncode}: {p.stderr}", file=sys.stderr)
        return 1
    rows = json.load(open(prof))["rows"]

    def render(fmt):
        r = subprocess.run([cli, "report", "-f", fmt, "-o", "/dev/stdout", prof],
                           capture_output=True, timeout=60)
        if r.returncode != 0:
            problems.append(f"{fmt}: report exited {r.returncode}: {r.stderr!r}")
        return r.stdout

    # json: the site row and its inlined callers
    site_rows = [r for r in rows if r["type"] == "mutex" and
                 re.match(site_re, r["site"].get("function") or "")]
    if not site_rows:
        problems.append(f"json: no mutex row whose site is {site_re}: "
                        f"{[r['site'].get('function') for r in rows]}")
    for r in site_rows:
        if not matches(callers(r["site"]), caller_res):
            problems.append(f"json: site {r['site'].get('function')} inlined into "
                            f"{callers(r['site'])}, expected {caller_res}")

    # folded: frames exactly as the JSON rows give them, in row order
    text = render("folded").decode()
    lines = text.splitlines()
    waited = [r for r in rows if r["wait_ns"]]
    if len(lines) != len(waited):
        problems.append(f"folded: {len(lines)} lines for {len(waited)} rows that waited")
    seen_site = False
    for line, r in zip(lines, waited):
        m = re.match(r"^(.*)\s+?(\d+(?:\.\d*)?)$", line)  # flamegraph.pl's own parse
        if not m or m.group(2) != str(r["wait_ns"]):
            problems.append(f"folded: not 'frames {r['wait_ns']}': {line}")
            continue
        frames = m.group(1).split(";")
        want = [s.replace(";", ":") for s in expected_stack(r)]
        if frames[:-2] != want or not re.match(r"^\[[a-z_]+( .*)?\]$", frames[-1]) or \
                any(not f for f in frames):
            problems.append(f"folded: frames {frames[:-2]}, the JSON row gives {want}: {line}")
        if r in site_rows:
            seen_site = True
            if not matches(frames[-2 - len(caller_res):-2], caller_res) or \
                    not re.match(site_re + r".* \(.*:\d+\)$", frames[-2]):
                problems.append(f"folded: the site's line lacks {caller_res}: {line}")
    if site_rows and not seen_site:
        problems.append("folded: no line for the site's row")

    # html: the view's stacks are the same frames
    page = render("html").decode()
    m = re.search(r'<script type="application/json" id="sp-data">\n(.*?)</script>', page, re.S)
    if not m:
        problems.append("html: no sp-data block")
    else:
        data = json.loads(m.group(1))
        view = data["view"]["rows"]
        for r, v in zip(data["profile"]["rows"], view):
            if v["stack"] != expected_stack(r):
                problems.append(f"html: stack {v['stack']}, the JSON row gives "
                                f"{expected_stack(r)}")
        if site_rows and not any(matches(v["stack"][-len(caller_res):], caller_res)
                                 for r, v in zip(data["profile"]["rows"], view)
                                 if re.match(site_re, r["site"].get("function") or "")):
            problems.append(f"html: no row's stack ends in {caller_res}")

    # pprof: one Location with the site's Line, then its callers'
    pb = render("pprof")
    d = subprocess.run(f"gzip -dc | protoc --decode=perftools.profiles.Profile -I{proto_dir} "
                       f"{proto_dir}/profile.proto", shell=True, input=pb, capture_output=True,
                       timeout=60)
    if d.returncode != 0:
        problems.append(f"pprof: decoding failed: {d.stderr.decode(errors='replace')}")
    else:
        t = d.stdout.decode(errors="replace")
        strings = [bytes(s, "latin-1").decode("unicode_escape")
                   for s in re.findall(r'string_table: "((?:[^"\\]|\\.)*)"', t)]
        fname = {int(i): strings[int(n)] for i, n in
                 re.findall(r"function \{\s*id: (\d+)\s*name: (\d+)", t)}
        found = False
        for loc in re.findall(r"location \{(.*?)\n\}", t, re.S):
            names = [fname.get(int(i), "?") for i in re.findall(r"function_id: (\d+)", loc)]
            if names and re.match(site_re, names[0]) and \
                    matches(list(reversed(names[1:])), caller_res):
                found = True
        if site_rows and not found:
            problems.append(f"pprof: no Location with Lines {site_re} then {caller_res}")

    for p in problems:
        print("check_inline_frames: " + p, file=sys.stderr)
    if not problems:
        print(f"check_inline_frames: ok ({os.path.basename(program)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
