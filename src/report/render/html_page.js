/*
 * html_page.js - draws syncprof's HTML report (render/html.c) from the
 * JSON in <script id="sp-data">: {"profile": profile JSON version 1,
 * "view": names as the other renderers print them, "timeline": null or a
 * trace's threads and slices (docs/formats.md, "html")}.
 *
 * No library and nothing fetched: plain DOM and SVG.  Each section is
 * drawn on its own; one that fails says so in the page (class sp-error)
 * and on the console, and the others are still drawn.  When all is done
 * the body gets data-rendered="1" (tests/html_report.sh waits for it).
 */
"use strict";
(function () {
	/* SVG's namespace, from the HTML parser: the page names no URL. */
	var SVGNS = (function () {
		var d = document.createElement("div");
		d.innerHTML = "<svg></svg>";
		return d.firstChild.namespaceURI;
	})();
	var D = JSON.parse(document.getElementById("sp-data").textContent);
	var P = D.profile, V = D.view, T = D.timeline;
	var main = document.getElementById("sp-main");
	var HOLD = !!P.hold_tracking;
	var MAX_ROWS = 5000;

	/* ---- helpers ---------------------------------------------------- */

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		for (var k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function svg(tag, attrs) {
		var e = document.createElementNS(SVGNS, tag);
		for (var k in attrs || {})
			e.setAttribute(k, attrs[k]);
		return e;
	}

	function tip(parent, text) {
		var t = svg("title");
		t.textContent = text;
		parent.appendChild(t);
	}

	/* A duration for people: "830 ns", "12.5 us", "3.20 ms", "1.234 s". */
	function dur(ns) {
		if (ns === null || ns === undefined)
			return "";
		if (ns < 1e3)
			return Math.round(ns) + " ns";
		if (ns < 1e6)
			return (ns / 1e3).toPrecision(3) + " us";
		if (ns < 1e9)
			return (ns / 1e6).toPrecision(3) + " ms";
		return (ns / 1e9).toFixed(3) + " s";
	}

	function pct(part, whole) {
		return whole > 0 ? (100 * part / whole).toFixed(1) + "%" : "";
	}

	/* The smallest value of a histogram bucket (docs/formats.md,
	 * "Histograms"): 8 buckets per power of two above 16. */
	function bucketLo(b) {
		if (b < 16)
			return b;
		var s = (b >> 3) - 1;
		return (b - s * 8) * Math.pow(2, s);
	}

	function bucketHi(b) {
		return b + 1 < P.hist.buckets ? bucketLo(b + 1) - 1 : Math.pow(2, 40) - 1;
	}

	/* The width to draw in: the window's, less the margins. */
	function pageWidth(min) {
		return Math.max(min, (document.documentElement.clientWidth || 1200) - 44);
	}

	function section(id, title) {
		var s = el("section", { id: id });
		s.appendChild(el("h2", null, title));
		main.appendChild(s);
		return s;
	}

	function draw(id, title, fn) {
		var s = section(id, title);
		try {
			fn(s);
		} catch (e) {
			s.appendChild(el("p", { "class": "sp-error" },
					 "This section could not be drawn: " + e));
			console.error(e);
		}
	}

	function rowLock(r) {
		return "[" + r.type + (r.lock_name ? " " + r.lock_name : "") + "]";
	}

	/* ---- header -------------------------------------------------------- */

	function header() {
		var m = el("p", { "class": "sp-meta" });
		var shown = P.rows.length, total = P.rows_total || shown;
		var waits = 0, holds = 0;

		P.rows.forEach(function (r) {
			waits += r.wait_ns;
			holds += r.hold_ns || 0;
		});
		[["command", P.command], ["pid", P.pid], ["elapsed", dur(P.elapsed_ns)]]
		 .concat(P.interrupted ? [["interrupted by", P.interrupted + " (the profile up to then)"]] : [])
		 .concat([["rows", shown === total ? shown : shown + " of " + total],
		 ["wait", dur(waits)], ["hold", HOLD ? dur(holds) : "not tracked (--hold)"],
		 ["sorted by", P.sort], ["per", P.coalesced ? "call site" : "lock object"],
		 ["clock", P.clock]]).forEach(function (kv) {
			var s = el("span");
			s.appendChild(el("b", null, kv[0] + ": "));
			s.appendChild(document.createTextNode(String(kv[1])));
			m.appendChild(s);
		});
		main.appendChild(m);
		if (P.lost_events)
			main.appendChild(el("p", { "class": "sp-error" }, P.lost_events +
					 " lock calls could not be recorded: they are missing from every count."));
		var nav = el("nav");
		var links = [["sp-locks", "Locks"], ["sp-flame-wait", "Flame graph: waits"],
			     ["sp-flame-hold", "Flame graph: holds"]];
		if (P.accounting)
			links.unshift(["sp-threads", "Threads"]);
		if (P.lock_order)
			links.push(["sp-cycles", "Lock-order cycles"]);
		if (HOLD)
			links.push(["sp-blame", "Blame"]);
		if (T)
			links.push(["sp-timeline", "Timeline"]);
		links.forEach(function (l) {
			nav.appendChild(el("a", { href: "#" + l[0] }, l[1]));
		});
		main.appendChild(nav);
	}

	/* ---- the table -------------------------------------------------------- */

	/* The range of buckets that the rows' histograms of @key use, so that
	 * all rows share one axis. */
	function bucketRange(key) {
		var lo = Infinity, hi = -1;

		P.rows.forEach(function (r) {
			(r[key] || []).forEach(function (bc) {
				lo = Math.min(lo, bc[0]);
				hi = Math.max(hi, bc[0]);
			});
		});
		return hi < 0 ? null : [lo, hi];
	}

	function histCell(buckets, range, cls) {
		var W = 96, H = 20, td = el("td", { "class": "sp-l" });
		if (!range || !buckets || !buckets.length)
			return td;
		var n = range[1] - range[0] + 1, bw = W / n, max = 0, sum = 0;
		buckets.forEach(function (bc) {
			max = Math.max(max, bc[1]);
			sum += bc[1];
		});
		var g = svg("svg", { width: W, height: H, "class": "sp-hist " + cls });
		tip(g, sum + " in " + buckets.length + " buckets");
		g.appendChild(svg("rect", { x: 0, y: 0, width: W, height: H, "class": "sp-bg" }));
		buckets.forEach(function (bc) {
			var h = Math.max(1, H * Math.sqrt(bc[1] / max));
			var r = svg("rect", { x: ((bc[0] - range[0]) * bw).toFixed(2),
					     y: (H - h).toFixed(2), width: Math.max(1, bw).toFixed(2),
					     height: h.toFixed(2), "class": "sp-bar" });
			tip(r, dur(bucketLo(bc[0])) + " - " + dur(bucketHi(bc[0])) + ": " + bc[1]);
			g.appendChild(r);
		});
		td.appendChild(g);
		return td;
	}

	function axisLabel(range) {
		return range ? dur(bucketLo(range[0])) + " \u2026 " + dur(bucketHi(range[1])) : "";
	}

	function tableSection(s) {
		var cols = [
			{ k: "type", t: "Type", l: 1, v: function (r) { return r.type; } },
			{ k: "site", t: "Call site", l: 1, v: function (r, i) { return V.rows[i].site; } },
			{ k: "wait", t: "Wait (s)", v: function (r) { return r.wait_ns; },
			  f: function (x) { return (x / 1e9).toFixed(5); } },
			{ k: "count", t: "Count", v: function (r) { return r.acquisitions; } },
			{ k: "contended", t: "Contended", v: function (r) { return r.contended; } },
			{ k: "avg", t: "Avg (us)",
			  v: function (r) { return r.acquisitions ? r.wait_ns / r.acquisitions : 0; },
			  f: function (x) { return (x / 1e3).toFixed(3); } },
			{ k: "max", t: "Max (us)", v: function (r) { return r.wait_max_ns; },
			  f: function (x) { return (x / 1e3).toFixed(1); } },
			{ k: "p50", t: "p50 (us)", v: function (r) { return r.wait_p50_ns; },
			  f: function (x) { return (x / 1e3).toFixed(1); } },
			{ k: "p90", t: "p90 (us)", v: function (r) { return r.wait_p90_ns; },
			  f: function (x) { return (x / 1e3).toFixed(1); } },
			{ k: "p99", t: "p99 (us)", v: function (r) { return r.wait_p99_ns; },
			  f: function (x) { return (x / 1e3).toFixed(1); } }
		];
		if (HOLD)
			cols.push(
				{ k: "hold", t: "Hold (s)", v: function (r) { return r.hold_ns; },
				  f: function (x) { return (x / 1e9).toFixed(5); } },
				{ k: "max_hold", t: "Max hold (us)", v: function (r) { return r.hold_max_ns; },
				  f: function (x) { return (x / 1e3).toFixed(1); } },
				{ k: "owner_chg", t: "Owner chg", v: function (r) { return r.owner_changes; } });
		var wr = bucketRange("wait_buckets"), hr = HOLD ? bucketRange("hold_buckets") : null;
		if (!P.rows.length) {
			s.appendChild(el("p", { "class": "sp-note" }, "No lock activity was recorded."));
			return;
		}
		s.appendChild(el("p", { "class": "sp-note" },
				 "Click a column to sort by it, a row for its stack and blame."));
		var table = el("table", { "class": "sp-table", id: "sp-table" });
		var thead = el("thead"), hrow = el("tr");
		var parts = [], sortKey = null, desc = true;

		hrow.appendChild(el("th", null, "#"));
		cols.forEach(function (c) {
			var th = el("th", { "class": c.l ? "sp-l" : "", "data-key": c.k }, c.t);
			th.addEventListener("click", function () { sortBy(c, th); });
			c.th = th;
			hrow.appendChild(th);
		});
		var wth = el("th", { "class": "sp-l" }, "Waits");
		wth.appendChild(el("span", { "class": "sp-axis" }, axisLabel(wr)));
		hrow.appendChild(wth);
		if (HOLD) {
			var hth = el("th", { "class": "sp-l" }, "Holds");
			hth.appendChild(el("span", { "class": "sp-axis" }, axisLabel(hr)));
			hrow.appendChild(hth);
		}
		thead.appendChild(hrow);
		table.appendChild(thead);

		/* Contention first (the table's order, render/table.c): the rows
		 * of locks in one body under their title, the waits for an event
		 * in a second one under theirs, each in the profile's order;
		 * sorting by a column sorts within each.  "merged": one body. */
		var span = cols.length + 2 + (HOLD ? 1 : 0);
		function part(kind, title) {
			var p = { kind: kind, tbody: el("tbody", kind ? { "class": "sp-part-" + kind } : null),
				  items: [] };
			if (title) {
				var n = P.rows.slice(0, MAX_ROWS).filter(function (r) {
					return r.kind === kind;
				}).length;
				var tr = el("tr", { "class": "sp-part" });
				tr.appendChild(el("th", { "class": "sp-l", colspan: span },
						  title + ": " + n + (n === 1 ? " row" : " rows")));
				p.tbody.appendChild(tr);
				if (!n)
					p.tbody.appendChild(el("tr", { "class": "sp-part-none" })).appendChild(
						el("td", { "class": "sp-l", colspan: span },
						   P.rows_total > P.rows.length ? "none in the top " +
						   P.rows.length + " rows" : "none"));
				p.n = n;
			}
			table.appendChild(p.tbody);
			parts.push(p);
			return p;
		}
		var byKind = {};
		if (V.merged) {
			byKind.lock = byKind.event = part(null, null);
		} else {
			byKind.lock = part("lock", "Lock contention (mutex, rwlock, spinlock, futex, glibc lock)");
			byKind.event = part("event", "Waits for an event (condition variable, semaphore, " +
					    "barrier, join)");
			if (!byKind.event.n) {
				byKind.event.tbody.remove();
				parts.pop();
			}
		}

		/* A browser builds a table of thousands of rows, not of a million:
		 * the flame graphs take every row, the table the first MAX_ROWS. */
		var shown = P.rows.slice(0, MAX_ROWS).map(function (r, i) {
			return { r: r, i: i };
		});
		if (!V.merged) /* stable: the profile's order within each kind */
			shown = shown.filter(function (x) { return x.r.kind !== "event"; })
				.concat(shown.filter(function (x) { return x.r.kind === "event"; }));
		shown.forEach(function (x, pos) {
			var r = x.r, i = x.i;
			var tr = el("tr", { "class": "sp-row", "data-kind": r.kind || "" });
			tr.appendChild(el("td", null, pos + 1));
			cols.forEach(function (c) {
				var x = c.v(r, i), td = el("td", { "class": c.k === "site" ? "sp-l sp-site sp-mono" : c.l ? "sp-l" : "" });
				td.textContent = c.f ? c.f(x) : String(x);
				if (c.k === "site" && (r.lock_name || r.object)) {
					td.appendChild(el("br"));
					td.appendChild(el("span", { "class": "sp-lockname" },
							  (r.lock_name ? "lock \u201c" + r.lock_name + "\u201d " : "") +
							  (r.object ? r.object : r.n_objects + " objects")));
				}
				tr.appendChild(td);
			});
			tr.appendChild(histCell(r.wait_buckets, wr, "sp-wait"));
			if (HOLD)
				tr.appendChild(histCell(r.hold_buckets, hr, "sp-hold"));
			var item = { r: r, i: i, tr: tr, detail: null };
			var p = byKind[r.kind === "event" ? "event" : "lock"];
			tr.addEventListener("click", function () { toggleDetail(item, cols.length + 3); });
			p.items.push(item);
			p.tbody.appendChild(tr);
		});
		/* A filter: the rows whose text (site, lock, type, name) has the
		 * words typed, in any case; the others and their details hide. */
		var filter = el("input", { type: "search", "class": "sp-filter", id: "sp-filter",
					   placeholder: "Filter rows: site, function, file, lock, type" });
		filter.addEventListener("input", function () {
			var q = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
			parts.forEach(function (p) {
				p.items.forEach(function (it) {
					var t = it.tr.textContent.toLowerCase();
					var show = q.every(function (w) { return t.indexOf(w) >= 0; });
					it.tr.style.display = show ? "" : "none";
					if (it.detail)
						it.detail.style.display = show ? "" : "none";
				});
			});
		});
		s.appendChild(filter);
		var scroll = el("div", { "class": "sp-scroll" });
		scroll.appendChild(table);
		s.appendChild(scroll);
		if (P.rows.length > MAX_ROWS)
			s.appendChild(el("p", { "class": "sp-note" }, "The table shows the first " +
					 MAX_ROWS + " of " + P.rows.length + " rows (the flame graphs have " +
					 "them all); -n N picks the top N."));
		if (P.rows_total > P.rows.length)
			s.appendChild(el("p", { "class": "sp-note" }, (P.rows_total - P.rows.length) +
					 " more rows were cut by --top."));

		function sortBy(c, th) {
			desc = sortKey === c.k ? !desc : !c.l;
			sortKey = c.k;
			cols.forEach(function (o) { o.th.className = o.l ? "sp-l" : ""; });
			th.className = (c.l ? "sp-l " : "") + (desc ? "sp-sorted-desc" : "sp-sorted-asc");
			parts.forEach(function (p) {
				p.items.sort(function (a, b) {
					var x = c.v(a.r, a.i), y = c.v(b.r, b.i);
					var d = x < y ? -1 : x > y ? 1 : a.i - b.i;
					return desc ? -d : d;
				});
				p.items.forEach(function (it) {
					p.tbody.appendChild(it.tr);
					if (it.detail)
						p.tbody.appendChild(it.detail);
				});
			});
		}
	}

	function toggleDetail(item, span) {
		if (item.detail) {
			item.detail.remove();
			item.detail = null;
			return;
		}
		var v = V.rows[item.i], r = item.r, td = el("td", { colspan: span + (HOLD ? 4 : 0) });
		td.appendChild(el("b", null, "Stack"));
		var ul = el("ul", { "class": "sp-mono" });
		v.stack.concat([v.site]).forEach(function (f) { ul.appendChild(el("li", null, f)); });
		td.appendChild(ul);
		if (r.created_at)
			td.appendChild(el("p", null, "Lock created (" + r.created_by + ") at " +
					  (r.created_at.function || "") + " " + (r.created_at.file || "") +
					  (r.created_at.line ? ":" + r.created_at.line : "")));
		if (r.blame && r.blame.length) {
			td.appendChild(el("b", null, "Waits here were caused by holders at"));
			td.appendChild(blameList(r, v));
		}
		item.detail = el("tr", { "class": "sp-detail" });
		item.detail.appendChild(td);
		item.tr.after(item.detail);
	}

	function blameList(r, v) {
		var ul = el("ul", { "class": "sp-blame" });
		r.blame.forEach(function (b, k) {
			var li = el("li");
			li.appendChild(el("span", { "class": "sp-mono" }, v.blame[k][0]));
			li.appendChild(document.createTextNode(": " + dur(b.wait_ns) + " (" +
				pct(b.wait_ns, r.wait_ns) + " of the wait) in " + b.count + " waits"));
			if (v.blame[k][1]) {
				li.appendChild(document.createTextNode("; the chain's root holder took its lock at "));
				li.appendChild(el("span", { "class": "sp-mono" }, v.blame[k][1]));
			}
			ul.appendChild(li);
		});
		return ul;
	}

	/* ---- flame graphs ------------------------------------------------------- */

	function node(name, parent) {
		return { name: name, value: 0, kids: [], byName: {}, parent: parent };
	}

	/* The tree of the rows' stacks, outermost frame at the root, the
	 * lock's type (and name) as the leaf, as the folded output has it. */
	function flameTree(weight) {
		var root = node("all", null);
		P.rows.forEach(function (r, i) {
			var w = weight(r);
			if (!w)
				return;
			var path = V.rows[i].stack.concat([V.rows[i].site, rowLock(r)]), n = root;
			root.value += w;
			path.forEach(function (name) {
				var k = n.byName[name];
				if (!k) {
					k = node(name, n);
					n.byName[name] = k;
					n.kids.push(k);
				}
				k.value += w;
				n = k;
			});
		});
		return root;
	}

	function depthOf(n) {
		var d = 0;
		n.kids.forEach(function (k) { d = Math.max(d, depthOf(k)); });
		return d + 1;
	}

	function hue(name, hold) {
		var h = 0;
		for (var i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		if (name.charAt(0) === "[")
			return hold ? "hsl(265,45%,72%)" : "hsl(45,85%,60%)";
		return hold ? "hsl(" + (195 + h % 35) + ",55%," + (58 + h % 17) + "%)"
			    : "hsl(" + (h % 40) + ",75%," + (55 + h % 15) + "%)";
	}

	/* Flame graph of @root in @box: root at the bottom; a click on a
	 * frame makes it the full width (its callers stay, faded), a click
	 * on "all" or on the focused frame goes back. */
	function flame(box, root, hold, what) {
		var W = pageWidth(600), FH = 17;
		var depth = depthOf(root), H = depth * FH + 4;
		var svgEl = svg("svg", { width: W, height: H, "class": "sp-flame",
					 "data-frames": 0 });
		var focus = root;

		function render() {
			while (svgEl.firstChild)
				svgEl.removeChild(svgEl.firstChild);
			var count = 0;
			/* the focus and its callers span the width */
			for (var a = focus, d = 0; a; a = a.parent)
				d++;
			var chain = [];
			for (a = focus; a; a = a.parent)
				chain.unshift(a);
			chain.forEach(function (n, level) {
				frame(n, 0, W, level, n !== focus);
				count++;
			});
			count += kids(focus, 0, W, chain.length);
			svgEl.setAttribute("data-frames", count);
		}

		function kids(n, x, w, level) {
			var c = 0, scale = n.value ? w / n.value : 0;
			n.kids.slice().sort(function (p, q) { return p.name < q.name ? -1 : 1; })
				.forEach(function (k) {
					var kw = k.value * scale;
					if (kw >= 0.5) {
						frame(k, x, kw, level, false);
						c += 1 + kids(k, x, kw, level + 1);
					}
					x += kw;
				});
			return c;
		}

		function frame(n, x, w, level, faded) {
			var g = svg("g", { "class": "sp-frame" + (faded ? " sp-faded" : "") });
			var y = H - (level + 1) * FH;
			var label = n.name + " \u2014 " + dur(n.value) + " (" + pct(n.value, root.value) +
				    " of all " + what + ")";
			tip(g, label);
			g.appendChild(svg("rect", { x: x.toFixed(2), y: y, width: Math.max(0.5, w - 0.5).toFixed(2),
						    height: FH - 1, rx: 1.5, fill: hue(n.name, hold) }));
			var chars = Math.floor((w - 6) / 6.7);
			if (chars >= 3) {
				var t = svg("text", { x: (x + 3).toFixed(2), y: y + FH - 5 });
				t.textContent = n.name.length <= chars ? n.name
					: n.name.slice(0, chars - 1) + "\u2026";
				g.appendChild(t);
			}
			g.addEventListener("click", function () {
				focus = n === focus ? (n.parent || root) : n;
				if (n === root)
					focus = root;
				render();
			});
			svgEl.appendChild(g);
		}

		render();
		box.appendChild(svgEl);
	}

	function flameSection(s, hold) {
		var what = hold ? "hold time" : "wait time";
		if (hold && !HOLD) {
			s.appendChild(el("p", { "class": "sp-note" },
					 "Hold times were not tracked: profile with --hold (hold=1)."));
			return;
		}
		var root = flameTree(hold ? function (r) { return r.hold_ns || 0; }
					  : function (r) { return r.wait_ns; });
		if (!root.value) {
			s.appendChild(el("p", { "class": "sp-note" }, "No " + what + " was recorded."));
			return;
		}
		s.appendChild(el("p", { "class": "sp-note" },
				 "Each bar's width is its share of the " + what + " (" + dur(root.value) +
				 " in all); callers below callees, the lock's type on top. " +
				 "Click a bar to zoom in, again to zoom out."));
		flame(s, root, hold, what);
	}

	/* ---- lock-order cycles and blame ------------------------------------- */

	function cyclesSection(s) {
		var lo = P.lock_order;
		s.appendChild(el("p", { "class": "sp-note" },
			lo.edges_kept + " lock-order edges kept" +
			(lo.edges_dropped ? ", " + lo.edges_dropped + " dropped (table full)" : "") +
			(lo.cycles_dropped ? ", " + lo.cycles_dropped + " cycles not kept" : "") +
			(lo.searches_cut ? ", " + lo.searches_cut + " searches cut short" : "") + "."));
		var incomplete = lo.edges_dropped || lo.cycles_dropped || lo.searches_cut;
		if (!lo.cycles.length) {
			s.appendChild(el("p", null, incomplete
				? "No cycle found, but the check was incomplete (edges or searches dropped, above): cycles may be missing."
				: "No cycle: locks were always taken in one order."));
			return;
		}
		lo.cycles.forEach(function (c, i) {
			s.appendChild(el("p", { "class": "sp-cycle-title" },
				"Cycle " + (i + 1) + ": " + c.edges.length + " locks, a potential deadlock (found " +
				c.count + " time" + (c.count === 1 ? "" : "s") + ")"));
			var ul = el("ul", { "class": "sp-cycle" });
			c.edges.forEach(function (e, k) {
				var v = V.cycles[i][k], li = el("li");
				li.appendChild(document.createTextNode("thread " + e.thread + " took " +
					e.acquired.type + " " + e.acquired.object + " at "));
				li.appendChild(el("span", { "class": "sp-mono" }, v[1].site));
				li.appendChild(document.createTextNode(" while holding " + e.held.type + " " +
					e.held.object + ", taken at "));
				li.appendChild(el("span", { "class": "sp-mono" }, v[0].site));
				ul.appendChild(li);
			});
			s.appendChild(ul);
		});
	}

	function blameSection(s) {
		var any = 0;
		P.rows.slice(0, MAX_ROWS).forEach(function (r, i) {
			if (!r.blame || !r.blame.length)
				return;
			any++;
			var p = el("p");
			p.appendChild(el("span", { "class": "sp-mono" }, V.rows[i].site));
			p.appendChild(document.createTextNode(" (" + r.type + ") waited " + dur(r.wait_ns) +
							      ", for holders at:"));
			s.appendChild(p);
			s.appendChild(blameList(r, V.rows[i]));
		});
		if (!any)
			s.appendChild(el("p", { "class": "sp-note" }, "No wait was blamed on a holder."));
		if (P.blame_lost)
			s.appendChild(el("p", { "class": "sp-error" }, P.blame_lost +
					 " waits were blamed on no one: the blame table was full."));
	}

	/* ---- the timeline (syncprof report --trace) ------------------------ */

	/* A holder thread's colour on the lock tracks (and by its name): hues
	 * spread by the golden angle, so neighbours differ. */
	function threadColour(i) {
		return "hsl(" + Math.round((i * 137.508) % 360) + ",60%,45%)";
	}

	function shorten(text, n) {
		return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
	}

	function timelineSection(s) {
		var LANE = 9, LABEL = 250, W = pageWidth(700);
		var span = Math.max(1, T.end_ns), view = [0, span];
		var LT = T.lock_tracks || [], FL = T.flows || [];
		var rowsY = [], lockY = [], lockRow = {}, y = 18;

		T.threads.forEach(function (t) {
			rowsY.push(y);
			y += Math.max(1, t.lanes) * LANE + 6;
		});
		var locksTop = y;
		if (LT.length)
			y += 16; /* the title of the lock tracks */
		LT.forEach(function (lt, i) {
			lockY.push(y);
			lockRow[lt.lock] = i;
			y += Math.max(1, lt.lanes) * LANE + 6;
		});
		var H = y + 4;
		var waitsDrawn = 0;
		T.slices.forEach(function (sl) {
			if (T.kinds[sl[1]] === "wait")
				waitsDrawn++;
		});
		s.appendChild(el("p", { "class": "sp-note" }, T.threads.length + " threads, " +
			T.slices.length + " slices over " + dur(span) +
			(T.slices_total > T.slices.length ? " (the longest " + T.slices.length + " of " +
			 T.slices_total + ": the " + (T.slices_total - T.slices.length) +
			 " shorter ones are left out; syncprof trace export has them all)" : "") +
			". Drag across the time axis to zoom in; the buttons zoom out."));
		if (T.lock_tracks) {
			var more = T.lock_tracks_total - LT.length;
			s.appendChild(el("p", { "class": "sp-note", id: "sp-lock-note" },
				"Below the threads, a track per lock: the " + LT.length + " busiest of " +
				T.lock_tracks_total + " (by the time threads waited for them)" +
				(more > 0 ? ", " + more + " more locks not drawn" : "") +
				"; each hold in its holder thread's colour. A click on a wait (or pointing" +
				" at it) draws an arrow from the release that let it through to its end: " +
				FL.length + " of the " + waitsDrawn + " waits drawn have one (" +
				T.flows_total + " in the trace)."));
		}
		var legend = el("p", { "class": "sp-legend" });
		[["wait", "#d9534f"], ["condition wait", "#e8a33d"], ["hold", "#3a78c3"],
		 ["events dropped", "#999"], ["hand-off", "#111"]].forEach(function (l) {
			legend.appendChild(el("span", { style: "background:" + l[1] }));
			legend.appendChild(document.createTextNode(l[0]));
		});
		s.appendChild(legend);
		var bar = el("p");
		var out = el("button", { type: "button" }, "Zoom out"), all = el("button", { type: "button" }, "Whole trace");
		bar.appendChild(out);
		bar.appendChild(all);
		s.appendChild(bar);
		var g = svg("svg", { width: W, height: H, "class": "sp-timeline" });
		s.appendChild(g);
		var pinned = -1, hover = -1; /* the flow drawn: clicked, pointed at */

		function xAt(t) {
			return LABEL + (t - view[0]) * (W - LABEL) / (view[1] - view[0]);
		}

		/* The arrow of flow @f: from the release on its thread's track to
		 * the end of the wait on the waiter's. */
		function drawFlow(layer, f) {
			var fl = FL[f];
			if (!fl)
				return;
			var x1 = Math.max(LABEL, Math.min(W, xAt(fl[1]))), y1 = rowsY[fl[0]] + LANE / 2;
			var x2 = Math.max(LABEL, Math.min(W, xAt(fl[3]))), y2 = rowsY[fl[2]] + LANE / 2;
			var p = svg("path", { d: "M" + x1.toFixed(1) + "," + y1 + " L" + x2.toFixed(1) + "," + y2,
					      "class": "sp-flow", "data-flow": f,
					      "data-from": T.threads[fl[0]].tid, "data-to": T.threads[fl[2]].tid });
			tip(p, "hand-off of " + (fl[4] >= 0 ? T.locks[fl[4]] : "the lock") + ": released by " +
			    T.threads[fl[0]].tid + " at " + dur(fl[1]) + ", " + T.threads[fl[2]].tid +
			    " through at " + dur(fl[3]) + " (" + dur(fl[3] - fl[1]) + " later)");
			layer.appendChild(p);
			/* the head, at the waiter's end */
			var a = Math.atan2(y2 - y1, x2 - x1), L = 7;
			var pts = [[x2, y2], [x2 - L * Math.cos(a - 0.45), y2 - L * Math.sin(a - 0.45)],
				   [x2 - L * Math.cos(a + 0.45), y2 - L * Math.sin(a + 0.45)]];
			layer.appendChild(svg("polygon", { "class": "sp-flow-head", points: pts.map(function (q) {
				return q[0].toFixed(1) + "," + q[1].toFixed(1); }).join(" ") }));
		}

		var flowLayer = null;
		function showFlows() {
			while (flowLayer.firstChild)
				flowLayer.removeChild(flowLayer.firstChild);
			if (pinned >= 0)
				drawFlow(flowLayer, pinned);
			if (hover >= 0 && hover !== pinned)
				drawFlow(flowLayer, hover);
		}

		function render() {
			while (g.firstChild)
				g.removeChild(g.firstChild);
			var x0 = view[0], k = (W - LABEL) / (view[1] - view[0]);
			for (var i = 0; i <= 4; i++) {
				var t = svg("text", { x: LABEL + i * (W - LABEL - 60) / 4, y: 12 });
				t.textContent = dur(x0 + i * (view[1] - x0) / 4);
				g.appendChild(t);
			}
			T.threads.forEach(function (th, i) {
				g.appendChild(svg("rect", { x: 2, y: rowsY[i] + 1, width: 6, height: LANE - 2,
							    style: "fill:" + threadColour(i) }));
				var t = svg("text", { x: 11, y: rowsY[i] + LANE });
				t.textContent = th.tid + (th.name ? " " + th.name : "");
				g.appendChild(t);
			});
			if (LT.length) {
				var h = svg("text", { x: 2, y: locksTop + 11, "class": "sp-locks-title" });
				h.textContent = "locks (holder's colour)";
				g.appendChild(h);
				g.appendChild(svg("line", { x1: 0, x2: W, y1: locksTop + 1, y2: locksTop + 1,
							    "class": "sp-sep" }));
			}
			var tracks = LT.map(function (lt, i) {
				var tg = svg("g", { "class": "sp-lock-track", "data-lock": T.locks[lt.lock],
						    "data-holds": lt.holds, "data-waits": lt.waits });
				var t = svg("text", { x: 2, y: lockY[i] + LANE });
				t.textContent = shorten(T.locks[lt.lock], 40);
				tip(t, T.locks[lt.lock] + ": " + lt.holds + " holds (" + dur(lt.hold_ns) + "), " +
				    lt.waits + " waits (" + dur(lt.wait_ns) + ")");
				tg.appendChild(t);
				g.appendChild(tg);
				return tg;
			});
			T.slices.forEach(function (sl) {
				/* [thread, kind, start, end, lane, lock, site, lock_lane, flow] */
				if (sl[3] < view[0] || sl[2] > view[1])
					return;
				var kind = T.kinds[sl[1]] || "?";
				var x = LABEL + Math.max(0, sl[2] - x0) * k;
				var w = Math.max(1, (Math.min(sl[3], view[1]) - Math.max(sl[2], x0)) * k);
				var inst = sl[3] === sl[2];
				var th = T.threads[sl[0]] || { tid: "?" };
				var r = svg("rect", { x: x.toFixed(1), y: rowsY[sl[0]] + sl[4] * LANE,
						      width: (inst ? 1 : w).toFixed(1), height: LANE - 1,
						      "class": "sp-slice sp-k-" +
							(inst ? "instant" : kind.replace(/ /g, "_")) });
				var text = kind + (sl[6] >= 0 ? " at " + T.sites[sl[6]] : "") +
				    (sl[5] >= 0 ? ", " + T.locks[sl[5]] : "") + ": " + dur(sl[3] - sl[2]) +
				    " from " + dur(sl[2]);
				var f = sl.length > 8 ? sl[8] : -1;
				if (f >= 0) {
					r.setAttribute("data-flow", f);
					r.addEventListener("click", function (ev) {
						ev.stopPropagation();
						pinned = pinned === f ? -1 : f;
						showFlows();
					});
					r.addEventListener("mouseenter", function () { hover = f; showFlows(); });
					r.addEventListener("mouseleave", function () { hover = -1; showFlows(); });
					text += "; released by " + T.threads[FL[f][0]].tid + " " +
						dur(FL[f][3] - FL[f][1]) + " before its end (click: the arrow)";
				}
				tip(r, text);
				g.appendChild(r);
				var lr = sl.length > 7 && sl[7] >= 0 && sl[5] >= 0 ? lockRow[sl[5]] : undefined;
				if (lr === undefined)
					return;
				var hr = svg("rect", { x: x.toFixed(1), y: lockY[lr] + sl[7] * LANE,
						       width: w.toFixed(1), height: LANE - 1,
						       "class": "sp-slice sp-lockhold", "data-holder": th.tid,
						       style: "fill:" + threadColour(sl[0]) });
				tip(hr, "held by " + th.tid + (th.name ? " " + th.name : "") +
				    (sl[6] >= 0 ? " at " + T.sites[sl[6]] : "") + ": " + dur(sl[3] - sl[2]) +
				    " from " + dur(sl[2]));
				tracks[lr].appendChild(hr);
			});
			flowLayer = svg("g", { "class": "sp-flows" });
			g.appendChild(flowLayer);
			showFlows();
		}

		var drag = null;
		function tAt(ev) {
			var b = g.getBoundingClientRect();
			return view[0] + (ev.clientX - b.left - LABEL) * (view[1] - view[0]) / (W - LABEL);
		}
		g.addEventListener("mousedown", function (ev) { drag = tAt(ev); });
		g.addEventListener("mouseup", function (ev) {
			if (drag === null)
				return;
			var a = Math.max(0, Math.min(drag, tAt(ev))), b = Math.min(span, Math.max(drag, tAt(ev)));
			drag = null;
			if (b - a > (view[1] - view[0]) / 500) {
				view = [a, b];
				render();
			}
		});
		out.addEventListener("click", function () {
			var w = view[1] - view[0], c = (view[0] + view[1]) / 2;
			view = [Math.max(0, c - w), Math.min(span, c + w)];
			render();
		});
		all.addEventListener("click", function () {
			view = [0, span];
			render();
		});
		render();
	}

	/* ---- the threads' time account ------------------------------------ */

	var ACCOUNT_PARTS = [
		["running", "running"], ["preempted", "preempted (runnable, not running)"],
		["sync", "blocked in the waits of the rows"],
		["elsewhere", "blocked elsewhere (I/O, sleep, poll)"]];

	/* A thread's (or the totals') four parts, in ns: blocked split into
	 * the rows' waits and the rest. */
	function accountParts(a) {
		var sync = Math.min(a.sync_wait_ns, a.blocked_ns);
		return [a.running_ns, a.preempted_ns, sync, a.blocked_ns - sync];
	}

	/* One bar per thread, its length its lifetime (the longest fills the
	 * width), its parts running, preempted, blocked in the rows' waits and
	 * blocked elsewhere. */
	function accountSection(s) {
		var A = P.accounting, TH = P.threads || [];
		var MAX_THREADS = 2000;

		if (A.unavailable !== undefined) {
			s.appendChild(el("p", { "class": "sp-note" },
					 "No thread time account: the kernel gives no per-thread " +
					 "schedstat (" + A.unavailable + ")."));
			return;
		}
		var tot = accountParts(A);
		s.appendChild(el("p", null, A.threads + " threads (" + A.exited + " exited) lived " +
				 dur(A.lifetime_ns) + ": " + dur(A.running_ns) + " running, " +
				 dur(A.preempted_ns) + " preempted, " + dur(A.blocked_ns) +
				 " blocked: " + dur(tot[2]) + " (" + pct(tot[2], A.blocked_ns) +
				 ") in the waits " + (A.rows_reset ? "seen since the threads started" :
				 "of the rows") + ", " + dur(tot[3]) + " elsewhere."));
		if (TH.length < A.threads)
			s.appendChild(el("p", { "class": "sp-note" }, (A.threads - TH.length) +
					 " exited threads are in the totals only."));
		var legend = el("p", { "class": "sp-legend" });
		ACCOUNT_PARTS.forEach(function (p) {
			legend.appendChild(el("span", { "class": "sp-a-" + p[0] }));
			legend.appendChild(document.createTextNode(p[1]));
		});
		s.appendChild(legend);
		var shown = TH.slice(0, MAX_THREADS), longest = 1;
		shown.forEach(function (t) { longest = Math.max(longest, t.lifetime_ns); });
		var W = pageWidth(600), LABEL = 220, H = 16, GAP = 4;
		var box = svg("svg", { "class": "sp-account", width: W,
				       height: shown.length * (H + GAP) + GAP });
		shown.forEach(function (t, i) {
			var y = GAP + i * (H + GAP), x = LABEL;
			var parts = accountParts(t);
			var g = svg("g", { "class": "sp-thread", "data-tid": t.tid });
			var label = svg("text", { x: 4, y: y + H - 4 });
			label.textContent = (t.name || "?") + " " + t.tid + (t.exited ? " (exited)" : "");
			g.appendChild(label);
			parts.forEach(function (ns, k) {
				var w = (W - LABEL - 8) * ns / longest;
				var r = svg("rect", { "class": "sp-a-" + ACCOUNT_PARTS[k][0], x: x, y: y,
						      width: Math.max(0, w), height: H,
						      "data-ns": ns });
				tip(r, (t.name || "?") + " " + t.tid + ": " + ACCOUNT_PARTS[k][1] + " " +
				    dur(ns) + " (" + pct(ns, t.lifetime_ns) + " of " +
				    dur(t.lifetime_ns) + ")");
				g.appendChild(r);
				x += w;
			});
			box.appendChild(g);
		});
		s.appendChild(el("div", { "class": "sp-scroll" })).appendChild(box);
		if (TH.length > shown.length)
			s.appendChild(el("p", { "class": "sp-note" }, "The first " + shown.length +
					 " of " + TH.length + " threads are drawn."));
	}

	/* One bar per row with hold states (issue 24): what the holder of its
	 * long holds was doing, each state's share of the bar; the longest
	 * total fills the width. */
	var STATE_FILL = { running: "#4c9a52", preempted: "#e8a33d", lock: "#d9534f",
			   other: "#b8bcc6" };
	var SYSCALL_FILLS = ["#3b6fb6", "#6a8fd0", "#8e5ba8", "#2d9a9a", "#5a7f3a", "#9a6a2d"];

	function stateFill(name, syscalls) {
		if (STATE_FILL[name])
			return STATE_FILL[name];
		if (syscalls[name] === undefined)
			syscalls[name] = Object.keys(syscalls).length % SYSCALL_FILLS.length;
		return SYSCALL_FILLS[syscalls[name]];
	}

	function stateLabel(name) {
		if (name.indexOf("syscall:") === 0)
			return "blocked in " + name.slice(8) + "()";
		return { running: "running", preempted: "preempted (runnable, not running)",
			 lock: "waiting for another lock", other: "blocked outside a system call" }[name] || name;
	}

	function holdStatesSection(s) {
		var rows = [], longest = 1, syscalls = {};

		P.rows.forEach(function (r, i) {
			if (!r.hold_states)
				return;
			var total = 0;
			Object.keys(r.hold_states).forEach(function (k) { total += r.hold_states[k]; });
			rows.push({ r: r, i: i, total: total });
			longest = Math.max(longest, total);
		});
		s.appendChild(el("p", null, "What the holder was doing during each row's holds longer " +
				 "than the threshold (hold_states=MS, 1 ms by default): running and " +
				 "preempted from the kernel's accounting, blocked time by the system " +
				 "call it was blocked in, sampled every ms at first, then ever less often " +
				 "(docs/hold-states.md). " +
				 "The bars are to scale, but none is under 3 pixels."));
		var W = pageWidth(600), LABEL = 320, H = 16, GAP = 4;
		var box = svg("svg", { "class": "sp-holdstates", width: W,
				       height: rows.length * (H + GAP) + GAP });
		rows.forEach(function (x, j) {
			var y = GAP + j * (H + GAP), left = LABEL;
			/* to scale with the longest row, but never thinner than
			 * 3 px: a row listed here has a visible bar */
			var rowW = Math.max((W - LABEL - 8) * x.total / longest, 3);
			var g = svg("g", { "class": "sp-holdstate-row", "data-row": x.i });
			var label = svg("text", { x: 4, y: y + H - 4 });
			label.textContent = V.rows[x.i].site;
			g.appendChild(label);
			Object.keys(x.r.hold_states).forEach(function (k) {
				var ns = x.r.hold_states[k], w = x.total ? rowW * ns / x.total : 0;
				var rect = svg("rect", { "class": "sp-holdstate", x: left, y: y,
							 width: Math.max(0, w), height: H,
							 fill: stateFill(k, syscalls), "data-state": k,
							 "data-ns": ns });
				tip(rect, V.rows[x.i].site + ": " + stateLabel(k) + " " + dur(ns) + " (" +
				    pct(ns, x.total) + " of " + dur(x.total) + " held long)");
				g.appendChild(rect);
				left += w;
			});
			box.appendChild(g);
		});
		var legend = el("p", { "class": "sp-legend" });
		Object.keys(STATE_FILL).concat(Object.keys(syscalls)).forEach(function (k) {
			legend.appendChild(el("span", { style: "background:" + stateFill(k, syscalls) }));
			legend.appendChild(document.createTextNode(stateLabel(k)));
		});
		s.appendChild(legend);
		s.appendChild(el("div", { "class": "sp-scroll" })).appendChild(box);
		/* where in its code the holder was (frames=N): the row's points */
		rows.forEach(function (x) {
			var pts = x.r.hold_where || [], sampled = 0;
			if (!pts.length)
				return;
			pts.forEach(function (w) { sampled += w.ns; });
			var p = el("p", { "class": "sp-where", "data-row": x.i });
			p.appendChild(el("span", { "class": "sp-mono" }, V.rows[x.i].site));
			p.appendChild(document.createTextNode(" held long: where the holder was"));
			s.appendChild(p);
			var ul = el("ul", { "class": "sp-where" });
			pts.forEach(function (w, k) {
				var site = V.rows[x.i].where[k];
				var li = el("li", { "data-state": w.state, "data-ns": w.ns });
				li.appendChild(document.createTextNode(site ? "at " : "elsewhere"));
				if (site)
					li.appendChild(el("span", { "class": "sp-mono" }, site));
				li.appendChild(document.createTextNode(", " + stateLabel(w.state) + ": " +
					dur(w.ns) + " (" + pct(w.ns, sampled) + " of the time sampled there)"));
				ul.appendChild(li);
			});
			s.appendChild(ul);
		});
	}

	/* ---- the page ------------------------------------------------------- */

	header();
	if (P.accounting)
		draw("sp-threads", "Threads: where their time went", accountSection);
	draw("sp-locks", "Locks", tableSection);
	draw("sp-flame-wait", "Flame graph: waits", function (s) { flameSection(s, false); });
	draw("sp-flame-hold", "Flame graph: holds", function (s) { flameSection(s, true); });
	if (P.lock_order)
		draw("sp-cycles", "Lock-order cycles", cyclesSection);
	if (HOLD)
		draw("sp-blame", "Blame: who held the locks that others waited for", blameSection);
	if (HOLD && P.rows.some(function (r) { return r.hold_states; }))
		draw("sp-holdstates", "Long holds: what the holder was doing", holdStatesSection);
	if (T)
		draw("sp-timeline", "Timeline", timelineSection);
	document.body.setAttribute("data-rendered", "1");
})();
