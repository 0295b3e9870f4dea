"""The static dashboard: one self-contained ``index.html`` (inline CSS, JS and data; no CDN, no network).

The data (runs, per-metric series, steps, driver/toolkit changes) is embedded as strict JSON and the
page's own script draws every plot as inline SVG, so the file works from a laptop, a CI artifact or a
mail attachment. Per device (selector) and per area (the metric name's prefix before the first dot):
the metrics with steps or the largest recent moves first, each with its baseline band, detected steps
(red worse, green better), identity changes (purple dotted: not compared across) and
driver/runtime/toolkit changes (grey dashed), the x axis labelled with the first and last run's date and
commit; then a table of what changed since each metric's previous run. Planted gate-check runs are
left out of the plots, as out of detection, and listed.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from ..util.atomic import atomic_write_chunks
from .detect import Step, environment_changes, identity_difference, identity_key, trend_runs
from .records import RunRecord, dumps


def _r(x: float | None) -> float | None:
    """Six significant digits: the page stays small and no plot needs more."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.6g}")


def _moved(rel: float | None, delta: float | None) -> float:
    """How far a metric moved, for ranking: its relative change (at most 9), or 1 for any move from 0."""
    return min(abs(rel), 9.0) if rel is not None else (1.0 if delta else 0.0)


def build_data(runs: Iterable[RunRecord], steps: Iterable[Step], max_plots: int = 12) -> dict[str, Any]:
    """The JSON the page renders: everything per device id ``key/backend``.

    Only the runs of the trends are plotted (planted gate-check runs are left out, and counted). Each
    point carries its identity's index; the page marks where a metric's identity changed, and a step is
    placed at its run (matched by uid), with its date and commit."""
    kept, dropped = trend_runs(runs)
    by_dev: dict[str, list[RunRecord]] = defaultdict(list)
    for r in kept:
        by_dev[f"{r.device_key}/{r.backend}"].append(r)
    dropped_by: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r, why in dropped:
        dropped_by[f"{r.device_key}/{r.backend}"].append({"date": r.date, "commit": r.commit[:12], "why": why})
    steps_by: dict[tuple[str, str], list[Step]] = defaultdict(list)
    for s in steps:
        steps_by[(f"{s.device_key}/{s.backend}", s.name)].append(s)
    env = environment_changes(kept)
    data: dict[str, Any] = {"devices": [], "runs": {}, "series": {}, "env": {}, "changes": {},
                            "leftOut": dict(dropped_by), "maxPlots": max_plots}
    for dev, dev_runs in by_dev.items():
        key, backend = dev.split("/", 1)
        data["devices"].append({"id": dev, "key": key, "backend": backend, "name": dev_runs[-1].device_name,
                                "runs": len(dev_runs)})
        data["runs"][dev] = [{"date": r.date, "commit": r.commit[:12], "driver": r.driver, "runtime": r.runtime,
                              "toolkit": r.toolkit} for r in dev_runs]
        index_of = {r.uid: i for i, r in enumerate(dev_runs)}
        data["env"][dev] = [{"i": index_of.get(e["run"], 0), "what": e["what"]} for e in env.get((key, backend), [])]
        series: dict[str, dict[str, Any]] = {}
        for i, r in enumerate(dev_runs):
            for m in r.metrics:
                if _r(m.value) is None:
                    continue
                s = series.setdefault(m.name, {"name": m.name, "unit": m.unit, "better": m.better, "pts": [],
                                               "ids": []})
                ident = identity_key(m.identity)
                if ident not in s["ids"]:
                    s["ids"].append(ident)
                s["pts"].append([i, _r(m.value), _r(m.baseline_value), _r(m.band), m.verdict, s["ids"].index(ident)])
        areas: dict[str, list[dict[str, Any]]] = defaultdict(list)
        changes = []
        for name, s in series.items():
            pts = s["pts"]
            s["idChanges"] = [{"i": b[0], "what": identity_difference(json.loads(s["ids"][a[5]]),
                                                                      json.loads(s["ids"][b[5]]))}
                              for a, b in zip(pts, pts[1:]) if a[5] != b[5]]
            del s["ids"]
            s["steps"] = [{"i": index_of[st.run], "rel": _r(st.rel), "delta": _r(st.delta), "dir": st.direction,
                           "commit": st.commit[:12], "date": st.date}
                          for st in steps_by.get((dev, name), []) if st.run in index_of]
            moved = 0.0
            if len(pts) >= 2:
                prev, cur = pts[-2], pts[-1]
                same = prev[5] == cur[5]
                rel = (cur[1] - prev[1]) / abs(prev[1]) if same and prev[1] else None
                delta = _r(cur[1] - prev[1]) if same else None
                moved = _moved(rel, delta)
                changes.append({"name": name, "prev": prev[1], "cur": cur[1], "unit": s["unit"], "rel": _r(rel),
                                "delta": delta, "identity": not same, "better": s["better"], "verdict": cur[4],
                                "commit": dev_runs[cur[0]].commit[:12], "date": dev_runs[cur[0]].date})
            s["rank"] = (10.0 if s["steps"] else 0.0) + moved
            areas[name.split(".", 1)[0]].append(s)
        for lst in areas.values():
            lst.sort(key=lambda s: (-s["rank"], s["name"]))
        data["series"][dev] = dict(sorted(areas.items()))
        changes.sort(key=lambda c: (c["identity"], -_moved(c["rel"], c["delta"])))
        data["changes"][dev] = changes[:60]
    return data


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:center;flex-wrap:wrap}
header h1{font-size:18px;margin:0}
main{padding:8px 18px}
section.area{margin:14px 0;border-top:1px solid #ccc}
.grid{display:flex;flex-wrap:wrap;gap:10px}
.plot{background:#fff;border:1px solid #ddd;border-radius:4px;padding:4px}
.plot h3{font-size:12px;margin:0 0 2px;font-weight:600;max-width:380px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
svg .series{fill:none;stroke:#1565c0;stroke-width:1.5}
svg .band{fill:#a5d6a7;opacity:.45;stroke:none}
svg .pt{fill:#1565c0}
svg .step-worse{stroke:#c62828;stroke-width:2}
svg .step-better{stroke:#2e7d32;stroke-width:2}
svg .step-changed{stroke:#ef6c00;stroke-width:2}
svg .env{stroke:#777;stroke-dasharray:4 3}
svg .ident{stroke:#6a1b9a;stroke-dasharray:1 3;stroke-width:1.5}
svg text{font-size:10px;fill:#555}
table{border-collapse:collapse;background:#fff;font-size:12px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
td:first-child{text-align:left}
.worse{color:#c62828;font-weight:600}.better{color:#2e7d32}
#errors{color:#c62828}
button{margin:6px 0}
"""

JS = r"""
"use strict";
const D = JSON.parse(document.getElementById("gpuperf-data").textContent);
const NS = "http://www.w3.org/2000/svg";
function el(tag, attrs, parent, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(x) { return x === null ? "-" : Number(x).toPrecision(4); }
function pct(x) { return (x >= 0 ? "+" : "") + (100 * x).toFixed(1) + "%"; }
// a change from 0 has no relative size (rel null): show the absolute change
function size(rel, delta, unit) {
  return rel !== null ? pct(rel) : (delta >= 0 ? "+" : "") + fmt(delta) + " " + unit + " (from 0)";
}
function worse(better, delta) {
  return better === "exact" ? delta !== 0 : (better === "higher" ? delta < 0 : delta > 0);
}
function day(date) { return date.slice(0, 16).replace("T", " "); }
function plot(parent, dev, s) {
  const W = 380, H = 162, L = 46, R = 8, T = 8, B = 34;
  const runs = D.runs[dev], n = Math.max(runs.length - 1, 1);
  const box = el("div", {class: "plot"}, parent);
  el("h3", {title: s.name}, box, s.name + " [" + s.unit + ", " + s.better + "]");
  const svg = el("svg:svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-metric": s.name}, box);
  let lo = Infinity, hi = -Infinity;
  for (const [i, v, bv, bw] of s.pts) {
    lo = Math.min(lo, v); hi = Math.max(hi, v);
    if (bv !== null) { lo = Math.min(lo, bv - (bw || 0)); hi = Math.max(hi, bv + (bw || 0)); }
  }
  if (!(hi > lo)) { const d = Math.abs(hi) * 0.05 || 1; lo -= d; hi += d; }
  const pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
  const x = i => L + (W - L - R) * i / n, y = v => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  const banded = s.pts.filter(p => p[2] !== null);
  if (banded.length) {
    const up = banded.map(p => `${x(p[0])},${y(p[2] + (p[3] || 0))}`), down = banded.slice().reverse().map(p => `${x(p[0])},${y(p[2] - (p[3] || 0))}`);
    const w = banded.length === 1 ? 3 : 0;
    el("svg:path", {class: "band", d: "M" + up.join(" L") + " L" + down.join(" L") + "Z", "stroke-width": w}, svg)
      .appendChild(el("svg:title", {}, null, "baseline band"));
  }
  for (const e of D.env[dev] || []) {
    const l = el("svg:line", {class: "env", x1: x(e.i - 0.5), x2: x(e.i - 0.5), y1: T, y2: H - B}, svg);
    el("svg:title", {}, l, e.what);
  }
  for (const c of s.idChanges) {
    const l = el("svg:line", {class: "ident", x1: x(c.i - 0.5), x2: x(c.i - 0.5), y1: T, y2: H - B}, svg);
    el("svg:title", {}, l, `identity changed at ${runs[c.i].commit} ${day(runs[c.i].date)}: ${c.what} ` +
                           "(not compared across)");
  }
  for (const st of s.steps) {
    const l = el("svg:line", {class: "step-" + st.dir, x1: x(st.i - 0.5), x2: x(st.i - 0.5), y1: T, y2: H - B}, svg);
    el("svg:title", {}, l, `${st.dir} step ${size(st.rel, st.delta, s.unit)} at ${st.commit} (${day(st.date)})`);
    el("svg:text", {x: x(st.i - 0.5) + 2, y: T + 9}, svg, size(st.rel, st.delta, s.unit));
  }
  el("svg:path", {class: "series", d: "M" + s.pts.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" L"),
                  "data-points": s.pts.length}, svg);
  for (const [i, v] of s.pts) {
    const c = el("svg:circle", {class: "pt", cx: x(i), cy: y(v), r: 2.5}, svg);
    el("svg:title", {}, c, `${runs[i].commit} ${day(runs[i].date)}: ${fmt(v)} ${s.unit}`);
  }
  el("svg:text", {x: 2, y: T + 8}, svg, fmt(hi));
  el("svg:text", {x: 2, y: H - B}, svg, fmt(lo));
  // the x axis is the device's runs in date order: its first and last run's date and commit label its ends
  const first = runs[0], last = runs[runs.length - 1];
  el("svg:text", {class: "xdate", x: L, y: H - 16}, svg, day(first.date));
  el("svg:text", {x: L, y: H - 5}, svg, first.commit);
  el("svg:text", {class: "xdate", x: W - R, y: H - 16, "text-anchor": "end"}, svg, day(last.date));
  el("svg:text", {x: W - R, y: H - 5, "text-anchor": "end"}, svg, last.commit);
  return 1;
}
function render(dev) {
  const main = document.getElementById("main");
  main.textContent = "";
  let plots = 0;
  const runs = D.runs[dev];
  el("p", {}, main, `${runs.length} run(s) from ${day(runs[0].date)} to ${day(runs[runs.length - 1].date)}; driver ` +
     `${runs[runs.length - 1].driver}, runtime ${runs[runs.length - 1].runtime}, toolkit ${runs[runs.length - 1].toolkit}.`);
  const out = D.leftOut[dev] || [];
  if (out.length) el("p", {id: "left-out"}, main, `${out.length} run(s) left out of the trends: ` +
     out.map(o => `${o.commit} ${day(o.date)} (${o.why})`).join("; "));
  for (const [area, list] of Object.entries(D.series[dev])) {
    const sec = el("section", {class: "area", "data-area": area}, main);
    const nsteps = list.filter(s => s.steps.length).length;
    el("h2", {}, sec, `${area} — ${list.length} metric(s), ${nsteps} with steps`);
    const grid = el("div", {class: "grid"}, sec);
    const first = list.slice(0, D.maxPlots);
    for (const s of first) plots += plot(grid, dev, s);
    if (list.length > first.length) {
      const b = el("button", {}, sec, `show all ${list.length}`);
      b.onclick = () => { for (const s of list.slice(D.maxPlots)) plot(grid, dev, s); b.remove(); };
    }
  }
  const sec = el("section", {class: "area"}, main);
  el("h2", {}, sec, "Changed since each metric's previous run (largest first)");
  const t = el("table", {id: "changes"}, sec);
  const hr = el("tr", {}, t);
  for (const h of ["metric", "previous", "latest", "unit", "change", "verdict", "commit", "date"]) el("th", {}, hr, h);
  for (const c of D.changes[dev]) {
    const tr = el("tr", {}, t);
    el("td", {}, tr, c.name); el("td", {}, tr, fmt(c.prev)); el("td", {}, tr, fmt(c.cur)); el("td", {}, tr, c.unit);
    if (c.identity) el("td", {}, tr, "identity changed");
    else el("td", {class: c.delta === 0 ? "" : (worse(c.better, c.delta) ? "worse" : "better")}, tr,
            size(c.rel, c.delta, c.unit));
    el("td", {}, tr, c.verdict); el("td", {}, tr, c.commit); el("td", {}, tr, day(c.date));
  }
  document.body.dataset.plots = String(plots);
  document.body.dataset.device = dev;
}
const sel = document.getElementById("device");
for (const d of D.devices) el("option", {value: d.id}, sel, `${d.key} (${d.backend}) — ${d.runs} run(s)`);
sel.onchange = () => { location.hash = encodeURIComponent(sel.value); render(sel.value); };
const wanted = D.devices.find(d => d.id === decodeURIComponent(location.hash.slice(1))) || D.devices[0];
if (wanted) { sel.value = wanted.id; render(wanted.id); }
document.body.dataset.rendered = "yes";
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{css}</style>
<script>window.addEventListener("error", e => {{ document.body.dataset.jsErrors = "1";
  const p = document.getElementById("errors"); if (p) p.textContent += "JS error: " + e.message + "\\n"; }});</script>
</head><body>
<header><h1>{title}</h1><label>device <select id="device"></select></label>
<span>{summary}</span></header>
<pre id="errors"></pre>
<main id="main"></main>
<script type="application/json" id="gpuperf-data">{data}</script>
<script>{js}</script>
</body></html>
"""


def render_html(runs: Iterable[RunRecord], steps: Iterable[Step], max_plots: int = 12,
                title: str = "pytest-gpuperf history") -> str:
    steps = list(steps)
    data = build_data(runs, steps, max_plots)
    worse = sum(s.direction in ("worse", "changed") for s in steps)
    left_out = sum(len(v) for v in data["leftOut"].values())
    summary = (f"{sum(d['runs'] for d in data['devices'])} run(s), {len(data['devices'])} device/backend(s), "
               f"{len(steps)} step(s) ({worse} toward worse)"
               + (f"; {left_out} planted run(s) left out" if left_out else ""))
    # strict JSON: the page's JSON.parse rejects NaN/Infinity, so a non-finite figure fails here, not in a browser
    payload = dumps(data, separators=(",", ":")).replace("</", "<\\/")  # never closes the script tag
    return PAGE.format(title=html.escape(title), css=CSS, js=JS, data=payload, summary=html.escape(summary))


def write(out_dir: str | Path, runs: Iterable[RunRecord], steps: Iterable[Step], max_plots: int = 12) -> Path:
    """Write ``DIR/index.html`` atomically; returns its path."""
    path = Path(out_dir) / "index.html"
    atomic_write_chunks(path, [render_html(runs, steps, max_plots).encode("utf-8")])
    return path
