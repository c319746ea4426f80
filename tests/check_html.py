#!/usr/bin/env python3
"""check_html.py - checks of the HTML report (--format html) for
tests/html_report.sh.

  check_html.py static PAGE.html PROFILE.json
      The page is self-contained and its data is the profile: nothing in
      it can fetch (no src/href but "#...", no <link>, <img>, <iframe>,
      <object>, <embed>, <base>, no url( or @import in the style, no
      fetch/XMLHttpRequest/import()/WebSocket in the script, no "http:",
      "https:" or "://" outside the data); exactly one data block, whose
      text has no '<' (escaped as \\u003c) and parses as JSON whose
      "profile" equals PROFILE.json (the same profile rendered as JSON)
      and whose "view" names every row.
  check_html.py inject PAGE.html OUT.html
      A copy with two test hooks: window.onerror (first in <head>) marks
      <html data-js-error="...">; after the page's own script, a script
      that sorts the table by Count (twice), opens a row, zooms into the
      wait flame graph and writes what it saw into <html data-test-...>.
  check_html.py dom DOM.html ROWS [timeline] [noflame] [edges=N] [threads=N] [holdstates=N]
                   [merged]
      The DOM that chromium --dump-dom printed for an injected page: no
      script error, drawn (data-rendered), ROWS table rows, the rows of
      locks first under the title "Lock contention", the waits for an
      event after them under "Waits for an event" (when there are any),
      before and after sorting by a column (with "merged", made with
      --merged: one list in the profile's order, no titles), both flame
      graphs drawn, sorting and zoom worked, the table and the wait flame
      graph inside a 1400x1600 window (what the screenshot shows); with
      "timeline", the timeline has slices; with edges=N, the lock-order
      cycles are drawn with N edges in all; with noflame, the flame
      graphs are not checked (a profile that may have no wait); with
      threads=N, the threads section draws N bars (the profile's
      "threads"), each running, preempted, sync and elsewhere, one at
      least of visible length; threads=0: no threads section; with
      holdstates=N, the long holds' section draws N bars (the rows with
      "hold_states"), each of visible length; 0: no such section.
  check_html.py timeline DOM.html CHROME.json DUMP.txt
      The timeline of an injected page (a trace's), against the same trace
      exported ('trace export --format chrome') and dumped ('trace dump'):
      as many lock tracks as locks held or waited for, at most 16 drawn,
      the busiest (by wait time) first, "N more locks not drawn" said;
      each drawn track named as the export names the lock, never after a
      release site, its holds and waits the export's, its waits the
      dump's acquisitions after a wait of that address, its hold
      rectangles the data's hold slices (all of them when nothing was cut);
      the hand-offs the export's flows (releaser, waiter), each ending its
      wait on the waiter's thread after the release; a click on a wait
      draws its one arrow (releaser to waiter), a second takes it away.
  check_html.py png SHOT.png WIDTH HEIGHT
      A PNG of that size, not of one colour.

Exit status 0 when every check passes, 1 with one line per failure.
"""
import html
import html.parser
import json
import re
import struct
import sys
import zlib

FAILS = []


def fail(msg):
    FAILS.append(msg)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []        # (tag, attrs)
        self.scripts = []     # (attrs, text)
        self.styles = []
        self._in = None
        self._buf = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in = (tag, dict(attrs))
            self._buf = []

    def handle_endtag(self, tag):
        if self._in and tag == self._in[0]:
            text = "".join(self._buf)
            (self.scripts if tag == "script" else self.styles).append((self._in[1], text))
            self._in = None

    def handle_data(self, data):
        if self._in:
            self._buf.append(data)


def check_static(page_path, profile_path):
    raw = open(page_path, encoding="utf-8").read()
    p = Page()
    p.feed(raw)
    p.close()
    for tag, attrs in p.tags:
        if tag in ("link", "img", "iframe", "object", "embed", "base", "frame", "audio",
                   "video", "source", "track", "form"):
            fail("a <%s> element" % tag)
        for k in ("src", "href", "srcset", "action", "poster", "data", "background"):
            v = attrs.get(k)
            if v is not None and not v.startswith("#"):
                fail("<%s %s=%r> points outside the page" % (tag, k, v))
        if tag == "meta" and "http-equiv" in attrs:
            fail("<meta http-equiv=%r>" % attrs["http-equiv"])
    data = [t for a, t in p.scripts if a.get("type") == "application/json"]
    code = [t for a, t in p.scripts if a.get("type") != "application/json"]
    if len(data) != 1 or data and [a.get("id") for a, t in p.scripts
                                   if a.get("type") == "application/json"] != ["sp-data"]:
        fail("%d data blocks, want one (id sp-data)" % len(data))
        return
    if len(code) != 1 or any(a.get("src") for a, t in p.scripts):
        fail("%d inline scripts (want one), or a script with src" % len(code))
    if len(p.styles) != 1:
        fail("%d <style> elements, want one" % len(p.styles))
    for css in [t for a, t in p.styles]:
        for bad in ("url(", "@import"):
            if bad in css.lower():
                fail("the style has %s" % bad)
    for js in code:
        for bad in ("fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource",
                    "sendBeacon", "importScripts", ".src", "location"):
            if bad in js:
                fail("the script has %s" % bad)
    outside = raw.replace(data[0], "")
    for bad in ("http:", "https:", "://", "<link"):
        if bad in outside.lower():
            fail("%r outside the data block" % bad)
    if "<" in data[0]:
        fail("a '<' in the data block (must be \\u003c)")
    try:
        d = json.loads(data[0])
    except ValueError as e:
        fail("the data block is no JSON: %s" % e)
        return
    want = json.load(open(profile_path, encoding="utf-8"))
    if d.get("profile") != want:
        keys = [k for k in set(want) | set(d.get("profile") or {})
                if (d.get("profile") or {}).get(k) != want.get(k)]
        fail("the page's profile differs from %s in %s" % (profile_path, sorted(keys)))
    view = d.get("view") or {}
    rows = view.get("rows")
    if not isinstance(rows, list) or len(rows) != len(want["rows"]):
        fail("view.rows: %r rows, the profile has %d" % (
            len(rows) if isinstance(rows, list) else rows, len(want["rows"])))
    else:
        for i, (v, r) in enumerate(zip(rows, want["rows"])):
            if not isinstance(v.get("site"), str) or not v["site"]:
                fail("row %d has no site name" % i)
            # a name per frame, and one per function a frame (or the
            # site) was inlined into
            n = sum(1 + len(f.get("inlined", [])) for f in r.get("stack", [])) + \
                len(r["site"].get("inlined", []))
            if len(v.get("stack", [])) != n:
                fail("row %d: %d stack names, %d frames and inlined callers" % (
                    i, len(v.get("stack", [])), n))
            if len(v.get("blame", [])) != len(r.get("blame", [])):
                fail("row %d: %d blame names, %d blame entries" % (
                    i, len(v.get("blame", [])), len(r.get("blame", []))))
    cycles = (want.get("lock_order") or {}).get("cycles", [])
    if [len(c) for c in view.get("cycles", [])] != [len(c["edges"]) for c in cycles]:
        fail("view.cycles does not match lock_order.cycles")


HOOK_HEAD = """<script>window.onerror = function (m) {
document.documentElement.setAttribute("data-js-error", String(m)); };</script>
"""

# Runs after the page's script: drives the page as a user would.
HOOK_TAIL = r"""<script>
(function () {
  var H = document.documentElement;
  function inWindow(e) {
    var r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= 1600 && r.left >= 0;
  }
  function set(k, v) { H.setAttribute("data-test-" + k, String(v)); }
  /* the Count cells of each part of the table (one <tbody> each) */
  function counts() {
    return Array.prototype.map.call(document.querySelectorAll("#sp-table tbody"), function (tb) {
      return Array.prototype.map.call(tb.querySelectorAll("tr.sp-row"),
        function (tr) { return Number(tr.children[4].textContent); });
    });
  }
  function sorted(parts, desc) {
    return parts.every(function (a) {
      for (var i = 1; i < a.length; i++)
        if (desc ? a[i - 1] < a[i] : a[i - 1] > a[i]) return false;
      return true;
    });
  }
  /* contention first: no lock row after an event row, before and after sorting;
   * the parts' titles */
  function kinds() {
    return Array.prototype.map.call(document.querySelectorAll("#sp-table tbody tr.sp-row"),
      function (tr) { return tr.getAttribute("data-kind") === "event" ? "e" : "l"; }).join("");
  }
  function partTitles() {
    return Array.prototype.map.call(document.querySelectorAll("#sp-table tr.sp-part th"),
      function (th) { return th.textContent.split(" (")[0]; }).join("|");
  }
  set("kinds", kinds());
  set("parts", partTitles());
  var th = document.querySelector('#sp-table th[data-key="count"]');
  th.click();
  set("sort-desc", sorted(counts(), true));
  th.click();
  set("sort-asc", sorted(counts(), false));
  set("kinds-sorted", kinds());
  document.querySelector("#sp-table tbody tr.sp-row").click();
  set("detail", document.querySelectorAll("#sp-table tr.sp-detail").length);
  /* the filter: the first row's type word keeps the rows that have it,
   * a word no row has hides them all, an empty box shows them all again */
  var f = document.getElementById("sp-filter"), rowsAll = document.querySelectorAll("#sp-table tr.sp-row");
  function shownRows() {
    return Array.prototype.filter.call(rowsAll, function (tr) { return tr.style.display !== "none"; }).length;
  }
  if (f) {
    var word = rowsAll[0].children[1].textContent.trim().split(/\s+/)[0].toLowerCase();
    var want = Array.prototype.filter.call(rowsAll, function (tr) {
      return tr.textContent.toLowerCase().indexOf(word) >= 0; }).length;
    f.value = word; f.dispatchEvent(new Event("input"));
    var a = shownRows();
    f.value = "no-such-row-zz"; f.dispatchEvent(new Event("input"));
    var b = shownRows();
    f.value = ""; f.dispatchEvent(new Event("input"));
    set("filter", (a === want && a > 0) + "," + b + "," + (shownRows() === rowsAll.length));
  } else {
    set("filter", "none");
  }
  /* the timeline's lock tracks: [name, holds, waits, hold rects drawn] each;
   * a click on the first wait with a hand-off draws one arrow, a second
   * click takes it away */
  var tracks = document.querySelectorAll("#sp-timeline g.sp-lock-track");
  if (tracks.length)
    set("locktracks", JSON.stringify(Array.prototype.map.call(tracks, function (g) {
      return [g.getAttribute("data-lock"), Number(g.getAttribute("data-holds")),
              Number(g.getAttribute("data-waits")), g.querySelectorAll("rect.sp-lockhold").length];
    })));
  var fw = document.querySelector("#sp-timeline rect.sp-k-wait[data-flow]");
  if (fw) {
    fw.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    var arrows = document.querySelectorAll("#sp-timeline path.sp-flow");
    var a0 = arrows[0];
    set("flowclick", JSON.stringify([Number(fw.getAttribute("data-flow")), arrows.length,
      a0 ? Number(a0.getAttribute("data-flow")) : -1, a0 ? Number(a0.getAttribute("data-from")) : -1,
      a0 ? Number(a0.getAttribute("data-to")) : -1,
      document.querySelectorAll("#sp-timeline polygon.sp-flow-head").length]));
    fw.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    set("flowunclick", document.querySelectorAll("#sp-timeline path.sp-flow").length);
  }
  var fl = document.querySelector("#sp-flame-wait svg.sp-flame");
  set("table-visible", inWindow(document.getElementById("sp-table")));
  if (!fl) { set("flame-visible", "none"); set("zoom", "none"); return; }
  var before = Number(fl.getAttribute("data-frames"));
  var frames = fl.querySelectorAll("g.sp-frame");
  /* zoom into the narrowest frame of the graph: fewer frames drawn */
  var narrow = null, w = Infinity;
  Array.prototype.forEach.call(frames, function (g) {
    var r = Number(g.querySelector("rect").getAttribute("width"));
    if (r < w) { w = r; narrow = g; }
  });
  narrow.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  var zoomed = Number(fl.getAttribute("data-frames"));
  fl.querySelector("g.sp-frame").dispatchEvent(new MouseEvent("click", { bubbles: true }));
  set("zoom", before + "," + zoomed + "," + fl.getAttribute("data-frames"));
  set("flame-visible", inWindow(fl));
})();
</script>
"""


def inject(page_path, out_path):
    raw = open(page_path, encoding="utf-8").read()
    if raw.count("<head>") != 1 or raw.count("</body>") != 1:
        fail("no single <head> and </body> to hook into")
        return
    raw = raw.replace("<head>", "<head>\n" + HOOK_HEAD, 1)
    raw = raw.replace("</body>", HOOK_TAIL + "</body>", 1)
    open(out_path, "w", encoding="utf-8").write(raw)


def attr(dom, name):
    m = re.search(r'<html[^>]*\s%s="([^"]*)"' % re.escape(name), dom)
    return m.group(1) if m else None


def check_parts(dom, merged, kinds_want):
    """Contention first: the table's rows are the lock rows (in the
    profile's order: kinds_want, "l"/"e" per row) then the event rows,
    under the titles "Lock contention" and, when there is one, "Waits
    for an event"; sorting by a column keeps them apart.  merged: one
    list in the profile's order, no titles."""
    titles = attr(dom, "data-test-parts")
    if merged:
        order = kinds_want
        if titles:
            fail("a merged table has part titles: %s" % titles)
    else:
        order = "l" * kinds_want.count("l") + "e" * kinds_want.count("e")
        want = "Lock contention" + ("|Waits for an event" if "e" in kinds_want else "")
        if titles != want:
            fail("the table's part titles are %r, want %r" % (titles, want))
    for k in ("kinds", "kinds-sorted"):
        got = attr(dom, "data-test-" + k)
        if k == "kinds-sorted" and merged:
            continue  # sorting one list mixes them, as it always did
        if got != order:
            fail("%s: the table's rows by kind are %r, want %r" % (k, got, order))


def page_kinds(dom):
    """"l"/"e" per row of the profile in the page's data block (the rows
    the table draws: the first 5000)."""
    m = re.search(r'<script type="application/json" id="sp-data">(.*?)</script>', dom, re.S)
    if not m:
        fail("no data block in the DOM")
        return ""
    rows = json.loads(m.group(1))["profile"]["rows"][:5000]
    return "".join("e" if r["kind"] == "event" else "l" for r in rows)


def check_dom(dom_path, rows, timeline, edges, flames, threads=None, holdstates=None,
              merged=False):
    dom = open(dom_path, encoding="utf-8").read()
    check_parts(dom, merged, page_kinds(dom))
    err = attr(dom, "data-js-error")
    if err is not None:
        fail("script error: %s" % err)
    if 'data-rendered="1"' not in dom.split("<body", 1)[-1].split(">", 1)[0]:
        fail("the page did not finish drawing (no <body data-rendered=\"1\">)")
    if 'class="sp-error"' in dom:
        m = re.search(r'class="sp-error">([^<]*)', dom)
        fail("a section failed: %s" % (m.group(1) if m else "?"))
    n = len(re.findall(r'<tr class="sp-row"', dom))
    if n != rows:
        fail("%d table rows drawn, the profile has %d" % (n, rows))
    for sec in ("sp-flame-wait", "sp-flame-hold"):
        m = re.search(r'<section id="%s">(.*?)</section>' % sec, dom, re.S)
        frames = len(re.findall(r'<g class="sp-frame', m.group(1))) if m else 0
        if flames and frames < 3:
            fail("%s: %d frames drawn" % (sec, frames))
    for k in ("sort-desc", "sort-asc", "table-visible", "flame-visible"):
        if attr(dom, "data-test-" + k) != "true" and (flames or k != "flame-visible"):
            fail("%s: %s" % (k, attr(dom, "data-test-" + k)))
    if attr(dom, "data-test-detail") != "1":
        fail("clicking a row opened %s detail rows" % attr(dom, "data-test-detail"))
    if attr(dom, "data-test-filter") != "true,0,true":
        fail("the filter box: %s (want: the rows with the word, none for a word no row has, "
             "all again when empty)" % attr(dom, "data-test-filter"))
    zoom = [int(x) for x in (attr(dom, "data-test-zoom") or "0,0,0").split(",")
            if x.isdigit()] or [0, 0, 0]
    if flames and not (zoom[1] < zoom[0] and zoom[2] == zoom[0]):
        fail("flame zoom: frames before, zoomed, after a click on 'all': %s" % zoom)
    slices = len(re.findall(r'<rect [^>]*class="sp-slice', dom))
    if timeline and slices < 10:
        fail("the timeline has %d slices" % slices)
    if not timeline and 'id="sp-timeline"' in dom:
        fail("a timeline without a trace")
    m = re.search(r'<section id="sp-threads">(.*?)</section>', dom, re.S)
    if threads is not None and threads == 0 and m:
        fail("a threads section without an account")
    if threads:
        bars = re.findall(r'<g class="sp-thread" data-tid="(\d+)">(.*?)</g>', m.group(1), re.S) \
            if m else []
        if len(bars) != threads:
            fail("%d thread bars drawn, the profile lists %d threads" % (len(bars), threads))
        drawn = 0
        for tid, g in bars:
            parts = re.findall(r'<rect class="sp-a-(running|preempted|sync|elsewhere)"[^>]*'
                               r'width="([0-9.e+-]+)"', g)
            if [k for k, _ in parts] != ["running", "preempted", "sync", "elsewhere"]:
                fail("thread %s: its bar's parts are %s" % (tid, [k for k, _ in parts]))
            if any(float(w) < 0 for _, w in parts):
                fail("thread %s: a part of negative width" % tid)
            drawn += sum(float(w) for _, w in parts) > 1
        if not drawn:
            fail("no thread bar has a visible length")
    m = re.search(r'<section id="sp-holdstates">(.*?)</section>', dom, re.S)
    if holdstates == 0 and m:
        fail("a hold-states section without hold states")
    if holdstates:
        bars = re.findall(r'<g class="sp-holdstate-row" data-row="(\d+)">(.*?)</g>', m.group(1), re.S) \
            if m else []
        if len(bars) != holdstates:
            fail("%d hold-state bars drawn, the profile has %d rows with hold states" %
                 (len(bars), holdstates))
        for row, g in bars:
            widths = [float(w) for w in re.findall(r'<rect [^>]*width="([0-9.e+-]+)"', g)]
            if not widths or min(widths) < 0 or sum(widths) <= 1:
                fail("row %s: its hold-state bar has widths %s" % (row, widths))
    if edges is not None:
        m = re.search(r'<section id="sp-cycles">(.*?)</section>', dom, re.S)
        drawn = len(re.findall(r"<li>thread ", m.group(1))) if m else -1
        if drawn != edges:
            fail("%d lock-order edges drawn in cycles, the profile has %d" % (drawn, edges))


def timeline_data(dom):
    m = re.search(r'<script type="application/json" id="sp-data">(.*?)</script>', dom, re.S)
    return json.loads(m.group(1))["timeline"] if m else None


def check_timeline(dom_path, chrome_path, dump_path):
    """The timeline's lock tracks and hand-offs against the same trace
    exported for Chrome (the exports' names and slices) and dumped (its
    raw lock_acquired events)."""
    dom = open(dom_path, encoding="utf-8").read()
    T = timeline_data(dom)
    if not T or "lock_tracks" not in T:
        fail("no timeline with lock tracks in the page's data")
        return
    ev = json.load(open(chrome_path, encoding="utf-8"))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    holds, waits, wait_us, acquire_sites, release_sites = {}, {}, {}, set(), set()
    # async slices (those that do not nest on their thread): "b" ... "e" by id
    ends = {e["id"]: e["ts"] for e in ev if e.get("ph") == "e" and "id" in e}
    for e in ev:
        if e.get("ph") == "b":
            e["dur"] = ends.get(e.get("id"), e["ts"]) - e["ts"]
    for e in ev:
        a = e.get("args") or {}
        if e.get("ph") not in ("X", "b") or "lock" not in a or a.get("type") == "join":
            continue
        name, lock = e["name"], a["lock"]
        if name.startswith("hold released at "):
            release_sites.add(name[len("hold released at "):])
        elif name.startswith("hold ") or name.startswith("wait "):
            acquire_sites.add(name.split(" ", 1)[1])
        if name.startswith("hold "):
            holds[lock] = holds.get(lock, 0) + 1
        elif name.startswith("wait "):
            waits[lock] = waits.get(lock, 0) + 1
            wait_us[lock] = wait_us.get(lock, 0) + e.get("dur", 0)
    chrome_locks = set(holds) | set(waits)
    if T["lock_tracks_total"] != len(chrome_locks):
        fail("lock_tracks_total %d, the Chrome export has %d locks held or waited for" % (
            T["lock_tracks_total"], len(chrome_locks)))
    drawn = json.loads(html.unescape(attr(dom, "data-test-locktracks") or "[]"))
    lt = T["lock_tracks"]
    if len(lt) != min(16, len(chrome_locks)) or len(drawn) != len(lt):
        fail("%d lock tracks in the data, %d drawn, for %d locks (at most 16)" % (
            len(lt), len(drawn), len(chrome_locks)))
    more = T["lock_tracks_total"] - len(lt)
    note = re.search(r'id="sp-lock-note">([^<]*)', dom)
    if more > 0 and (not note or ("%d more locks not drawn" % more) not in note.group(1)):
        fail("the page does not say %d more locks are not drawn: %s" % (
            more, note.group(1) if note else None))
    if [t["wait_ns"] for t in lt] != sorted((t["wait_ns"] for t in lt), reverse=True):
        fail("the lock tracks are not the busiest first: %s" % [t["wait_ns"] for t in lt])
    names = [T["locks"][t["lock"]] for t in lt]
    last = min((wait_us.get(n, 0) for n in names), default=0)
    for n in chrome_locks - set(names):
        if wait_us.get(n, 0) > last + 10:
            fail("%s (%.0f us of waits) is not drawn, %.0f us are" % (n, wait_us[n], last))
    dump = {}
    for line in open(dump_path, encoding="utf-8"):
        m = re.search(r"lock_acquired obj=(0x[0-9a-f]+) .*wait_ns=(\d+)", line)
        if m and int(m.group(2)) > 0:
            dump[m.group(1)] = dump.get(m.group(1), 0) + 1
    kinds = T["kinds"]
    capped = T["slices_total"] > len(T["slices"])
    hold_slices = {}
    for sl in T["slices"]:
        if kinds[sl[1]] == "hold" and sl[7] >= 0:
            hold_slices[sl[5]] = hold_slices.get(sl[5], 0) + 1
    for t, d in zip(lt, drawn):
        n = T["locks"][t["lock"]]
        if d[0] != n or n not in chrome_locks:
            fail("lock track %r drawn, the data names %r, the Chrome export has %s" % (
                d[0], n, "it" if n in chrome_locks else "no such lock"))
        site = n.split(" created at ")[-1] if " created at " in n else " ".join(n.split(" ")[2:])
        if site in release_sites and site not in acquire_sites:
            fail("lock track %r is named after a release site" % n)
        if (t["holds"], t["waits"]) != (holds.get(n, 0), waits.get(n, 0)) or d[1:3] != [t["holds"], t["waits"]]:
            fail("%s: %s holds and %s waits in the page, %d and %d in the Chrome export" % (
                n, d[1], d[2], holds.get(n, 0), waits.get(n, 0)))
        addr = re.search(r" (0x[0-9a-f]+)", n)
        if addr and dump.get(addr.group(1), 0) != t["waits"]:
            fail("%s: %d waits in the page, %d acquisitions after a wait in the trace" % (
                n, t["waits"], dump.get(addr.group(1), 0)))
        if d[3] != hold_slices.get(t["lock"], 0) or (not capped and d[3] != t["holds"]):
            fail("%s: %d holds drawn on its track, %d hold slices in the data, %d holds" % (
                n, d[3], hold_slices.get(t["lock"], 0), t["holds"]))
    # hand-offs: the Chrome export's flows, thread to thread
    fs = {e["id"]: e for e in ev if e.get("ph") == "s"}
    pairs = sorted((fs[e["id"]]["tid"], e["tid"]) for e in ev if e.get("ph") == "f" and e["id"] in fs)
    if T["flows_total"] != len(pairs):
        fail("flows_total %d, the Chrome export has %d flows" % (T["flows_total"], len(pairs)))
    tids = [t["tid"] for t in T["threads"]]
    FL = T["flows"]
    page_pairs = sorted((tids[f[0]], tids[f[2]]) for f in FL)
    if not capped and page_pairs != pairs:
        fail("the page's hand-offs (releaser, waiter) differ from the Chrome export's")
    waits_with = [sl for sl in T["slices"] if sl[8] >= 0]
    if len(waits_with) != len(FL) or any(kinds[sl[1]] != "wait" for sl in waits_with):
        fail("%d slices point at %d flows (waits only)" % (len(waits_with), len(FL)))
    for sl in waits_with:
        f = FL[sl[8]]
        if f[2] != sl[0] or f[3] != sl[3] or f[1] > f[3] or f[0] == f[2] or f[4] != sl[5]:
            fail("flow %s does not end the wait %s on its thread" % (f, sl))
            break
    if not FL:
        fail("no hand-off in the timeline")
        return
    click = json.loads(html.unescape(attr(dom, "data-test-flowclick") or "null"))
    if not click:
        fail("no wait with a hand-off was drawn to click")
        return
    f = FL[click[0]]
    want = [click[0], 1, click[0], tids[f[0]], tids[f[2]], 1]
    if click != want:
        fail("a click on a wait drew [flow, arrows, its flow, from, to, heads] %s, want %s" % (
            click, want))
    if attr(dom, "data-test-flowunclick") != "0":
        fail("a second click left %s arrows" % attr(dom, "data-test-flowunclick"))


def check_png(path, width, height):
    b = open(path, "rb").read()
    if b[:8] != b"\x89PNG\r\n\x1a\n" or b[12:16] != b"IHDR":
        fail("%s is no PNG" % path)
        return
    w, h, depth, ctype = struct.unpack(">IIBB", b[16:26])
    if (w, h) != (width, height):
        fail("screenshot is %dx%d, want %dx%d" % (w, h, width, height))
    idat, off = b"", 8
    while off < len(b):
        n, = struct.unpack(">I", b[off:off + 4])
        if b[off + 4:off + 8] == b"IDAT":
            idat += b[off + 8:off + 8 + n]
        off += 12 + n
    pix = zlib.decompress(idat)
    if len(set(pix[i:i + 64] for i in range(0, len(pix), 4096))) < 20:
        fail("the screenshot looks blank")


def main(argv):
    if len(argv) >= 4 and argv[1] == "static":
        check_static(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "inject":
        inject(argv[2], argv[3])
    elif 4 <= len(argv) <= 10 and argv[1] == "dom":
        edges = [int(a[6:]) for a in argv[4:] if a.startswith("edges=")]
        threads = [int(a[8:]) for a in argv[4:] if a.startswith("threads=")]
        hs = [int(a[11:]) for a in argv[4:] if a.startswith("holdstates=")]
        check_dom(argv[2], int(argv[3]), "timeline" in argv[4:], edges[0] if edges else None,
                  "noflame" not in argv[4:], threads[0] if threads else None,
                  hs[0] if hs else None, "merged" in argv[4:])
    elif len(argv) == 5 and argv[1] == "timeline":
        check_timeline(argv[2], argv[3], argv[4])
    elif len(argv) == 5 and argv[1] == "png":
        check_png(argv[2], int(argv[3]), int(argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for f in FAILS:
        print("check_html: %s: %s" % (argv[2], f), file=sys.stderr)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
