#!/bin/sh
# html_report.sh SYNCPROF BANK PRELOAD LOCKORDER_CASES TMPDIR - the HTML report (--format html) of
# an unmodified program (bank, preloaded, with --hold and --lock-order):
#   1. written by 'syncprof run -f html' (the report at exit; of
#      lockorder_cases' three-lock cycle too), by
#      'syncprof report -f html' from the saved JSON, with and without
#      --trace, and by SYNCPROF_OPTIONS=format=html alone;
#   2. each page self-contained, its data the profile (check_html.py
#      static: compared with 'report -f json' of the same profile), and
#      so is docs/example-report.html;
#   3. a profile whose strings hold "</script>" and "<!--" re-rendered:
#      the data block still parses, the title is escaped; one whose rows'
#      hold states differ 100,000-fold: each row's bar is still seen;
#   4. with chromium (Debian's; skipped, exit 77, without it): each page
#      loaded headless with a window.onerror hook and a script that sorts
#      the table, opens a row and zooms the flame graph; no script error,
#      no console message, the table (lock contention first, the waits for
#      an event in their own part; one list with --merged) and both flame graphs drawn (and the
#      timeline when a trace was given), one bar per thread of the time
#      account (none for docs/example-report.html, saved before it), then
#      a 1400x1600 screenshot;
#   5. the timeline of traces small enough for their page to hold every
#      slice, and of one that is not: a track per lock (the busiest 16),
#      named as 'trace export' names it, its holds and waits those of the
#      Chrome export and of 'trace dump'; the hand-offs the export's flows;
#      a click on a wait draws its arrow (check_html.py timeline).
. "$(dirname "$0")/lib.sh"
set -eu
cli=$1
bank=$2
preload=$3
cases=$4
tmp=$5
states=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/check_html.py"
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp"

# 1. the pages
"$cli" run --hold --lock-order --trace t.bin -f json -o p.json -- "$bank" 4 50000 >/dev/null ||
	die "syncprof run -f json exited $?"
"$cli" run --hold -f html -o live.html -- "$bank" 4 50000 >/dev/null ||
	die "syncprof run -f html exited $?"
SYNCPROF_OPTIONS=hold=1,format=html,output=env.html LD_PRELOAD="$preload" \
	"$bank" 2 20000 >/dev/null || die "SYNCPROF_OPTIONS=format=html: bank exited $?"
"$cli" run --lock-order --no-control -f html -o cycle.html -- "$cases" three >/dev/null ||
	die "syncprof run -f html -- lockorder_cases three exited $?"
"$cli" report -f html -o report.html p.json || die "report -f html exited $?"
"$cli" report -f html --merged -o merged.html p.json || die "report -f html --merged exited $?"
# long holds with hold states (tests/preload/hold_states.c): their section
if [ -n "$states" ]; then
	"$cli" run --hold -f html -o states.html -- "$states" sleep >/dev/null ||
		die "syncprof run -f html -- hold_states sleep exited $?"
fi
"$cli" report -f html --trace t.bin -o trace.html p.json || die "report -f html --trace exited $?"
# a trace small enough for its page to hold every slice, and one of every
# acquisition (--trace-events all) with more slices than the 20,000 a page
# draws; each also exported for Chrome and dumped, what the timeline's lock
# tracks and hand-offs are checked by
"$cli" run --hold --trace small.bin -f json -o small.json -- "$bank" 4 5000 >/dev/null ||
	die "syncprof run --trace small.bin exited $?"
# (a buffer large enough that the writer never falls behind: with the
# default 1 MiB a loaded machine drops more than half of the 48,000)
"$cli" run --hold --trace-events all --trace-buffer 33554432 --trace full.bin -f json \
	-o full.json -- "$bank" 2 4000 >/dev/null ||
	die "syncprof run --trace-events all --trace full.bin exited $?"
for t in small full; do
	"$cli" report -f html --trace $t.bin -o $t.html $t.json ||
		die "report -f html --trace $t.bin exited $?"
done
for t in t small full; do
	"$cli" trace export --format chrome "$t.bin" -o "$t.chrome.json" 2>/dev/null ||
		die "trace export --format chrome $t.bin exited $?"
	"$cli" trace dump "$t.bin" >"$t.dump" || die "trace dump $t.bin exited $?"
done
"$cli" report -f json -o again.json p.json || die "report -f json exited $?"
if "$cli" report --trace t.bin p.json >/dev/null 2>err.txt; then
	die "--trace without -f html was accepted"
fi
grep -q 'html' err.txt || die "--trace without -f html: $(cat err.txt)"
# a trace that is missing, or no trace: one line, exit 1, no page
for bad in missing.bin p.json; do
	if "$cli" report -f html --trace "$bad" -o bad.html p.json 2>err.txt; then
		die "--trace $bad was accepted"
	fi
	[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "$bad" err.txt || die "--trace $bad: $(cat err.txt)"
	[ ! -e bad.html ] || die "--trace $bad: a page was written"
done

# 2. self-contained, the data is the profile.  The live pages' profiles
# are not saved as JSON: the data block read back by 'syncprof report'
# must give the same JSON again.
$check static report.html again.json || die "report.html"
$check static trace.html again.json || die "trace.html"
$check static merged.html again.json || die "merged.html"
grep -q '"merged":true}' merged.html || die "merged.html: the view does not say merged"
grep -q '"merged":false}' report.html || die "report.html: the view says merged"
# docs/example-report.html, the example the README links to, too
cp "$here/../docs/example-report.html" example.html
for page in live env example cycle small full ${states:+states}; do
	python3 - "$page.html" "$page.json" <<'EOF' || die "$page.html: no profile in its data"
import json, re, sys
raw = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="sp-data">(.*?)</script>', raw, re.S)
json.dump(json.loads(m.group(1))["profile"], open(sys.argv[2], "w"))
EOF
	"$cli" report -f json -o "$page.again.json" "$page.json" || die "re-rendering $page.json"
	$check static "$page.html" "$page.again.json" || die "$page.html"
done
grep -q '"timeline":null' report.html || die "report.html has a timeline without --trace"
grep -q '"timeline":{"end_ns":' trace.html || die "trace.html has no timeline"

# 3. strings that could end the data block or open a comment in it
python3 - again.json evil.json <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["command"] = "bank </script><script>alert(1)</script> <!-- & \"q\""
p["rows"][0]["site"]["function"] = "f</script><!--<script>"
json.dump(p, open(sys.argv[2], "w"))
EOF
"$cli" report -f html -o evil.html evil.json || die "report -f html (evil) exited $?"
"$cli" report -f json -o evil.again.json evil.json || die "report -f json (evil) exited $?"
$check static evil.html evil.again.json || die "evil.html"
grep -q '<title>syncprof: bank &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &lt;!-- &amp; &quot;q&quot; (pid' evil.html ||
	die "the title is not escaped: $(grep '<title>' evil.html)"

# a row whose holds were long for a moment beside one long for seconds:
# its hold-state bar must still be seen (a loaded machine made one 0.13 px)
python3 - again.json tiny.json <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["rows"][0]["hold_states"] = {"running": 2000000000, "syscall:futex": 1000000000}
p["rows"][1]["hold_states"] = {"running": 30000}
json.dump(p, open(sys.argv[2], "w"))
EOF
"$cli" report -f html -o tiny.html tiny.json || die "report -f html (tiny) exited $?"
"$cli" report -f json -o tiny.again.json tiny.json || die "report -f json (tiny) exited $?"

# 4. in a browser
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "html_report: static checks ok; SKIP the browser checks: no chromium" >&2
	exit 77
fi
rows() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$1"; }
edges() { python3 -c 'import json,sys
print(sum(len(c["edges"]) for c in json.load(open(sys.argv[1]))["lock_order"]["cycles"]))' "$1"; }
nthreads() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("threads", [])))' "$1"; }
nstates() { python3 -c 'import json,sys
print(sum(1 for r in json.load(open(sys.argv[1]))["rows"] if r.get("hold_states")))' "$1"; }
load() { # PAGE ROWS [timeline|noflame|merged] [edges=N|merged]; threads=N from PAGE.again.json
	# (or again.json)
	$check inject "$1.html" "$1.test.html" || die "inject $1"
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/chromium-$1" --enable-logging=stderr --v=0 \
		--window-size=1400,1600 --dump-dom "file://$tmp/$1.test.html" \
		>"$1.dom.html" 2>"$1.chromium.log" || die "chromium --dump-dom $1 exited $?"
	if grep 'CONSOLE' "$1.chromium.log" >&2; then
		die "$1.html: console messages (above)"
	fi
	j=$1.again.json
	[ -e "$j" ] || j=again.json
	$check dom "$1.dom.html" "$2" ${3:-} ${4:-} "threads=$(nthreads "$j")" \
		"holdstates=$(nstates "$j")" ||
		die "$1.html in chromium"
}
load report "$(rows again.json)"
load merged "$(rows again.json)" merged
load trace "$(rows again.json)" timeline
load live "$(rows live.again.json)"
load env "$(rows env.again.json)"
load evil "$(rows evil.again.json)"
load tiny "$(rows tiny.again.json)"
load example "$(rows example.again.json)" timeline
load small "$(rows small.again.json)" timeline
load full "$(rows full.again.json)" timeline
# the timeline's lock tracks and hand-offs: every slice (small, trace), the
# 20,000 longest (full: the page must say so)
grep -q '"slices_total":[0-9]*,"lock_tracks"' full.html || die "full.html: no slices_total"
[ "$(grep -o '"slices_total":[0-9]*' full.html | cut -d: -f2)" -gt 20000 ] ||
	die "full.bin has no more than 20,000 slices: the cap is not tried"
grep -q 'shorter ones are left out' full.dom.html || die "full.html does not say slices were left out"
for t in small:small trace:t full:full; do
	$check timeline ${t%:*}.dom.html ${t#*:}.chrome.json ${t#*:}.dump ||
		die "${t%:*}.html's timeline"
done
n=$(edges cycle.again.json)
[ "$n" -ge 3 ] || die "lockorder_cases three: $n lock-order edges in cycles, want 3 or more"
load cycle "$(rows cycle.again.json)" noflame "edges=$n"
if [ -n "$states" ]; then
	[ "$(nstates states.again.json)" -ge 1 ] || die "hold_states sleep: no row with hold states"
	load states "$(rows states.again.json)" noflame
	# where the holder was (frames=N, hold_where=blocked by default): the
	# sleep's point, under the bars
	grep -Eq '<li data-state="syscall:clock_nanosleep" data-ns="[0-9]+">at <span class="sp-mono">[^<]*hold_states.c:[0-9]+</span>, blocked in clock_nanosleep\(\): ' \
		states.dom.html || die "states.html: no point in hold_states.c under the long holds' bars"
fi
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--user-data-dir="$tmp/chromium-shot" --window-size=1400,1600 \
	--screenshot="$tmp/shot.png" "file://$tmp/report.html" >/dev/null 2>&1 ||
	die "chromium --screenshot exited $?"
$check png shot.png 1400 1600 || die "the screenshot"
echo "html_report: ok"
