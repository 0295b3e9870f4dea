"""The static dashboard: one self-contained ``index.html`` (inline CSS, JS and data; no CDN, no network).

The data (runs, per-metric series, steps, driver/toolkit changes) is embedded as JSON and the page's own
script draws every plot as inline SVG, so the file works from a laptop, a CI artifact or a mail
attachment. Per device (selector) and per area (the metric name's prefix before the first dot): the
metrics with steps or the largest recent moves first, each with its baseline band, detected steps
(red worse, green better) and driver/runtime/toolkit changes (grey dashed); then a table of what
changed since each metric's previous run.
"""

from __future__ import annotations

import html
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from ..util.atomic import atomic_write_chunks
from .detect import Step, environment_changes
from .records import RunRecord


def _r(x: float | None) -> float | None:
    """Six significant digits: the page stays small and no plot needs more."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.6g}")


def build_data(runs: Iterable[RunRecord], steps: Iterable[Step], max_plots: int = 12) -> dict[str, Any]:
    """The JSON the page renders: everything per device id ``key/backend``."""
    runs = sorted(runs, key=lambda r: r.date)
    by_dev: dict[str, list[RunRecord]] = defaultdict(list)
    for r in runs:
        by_dev[f"{r.device_key}/{r.backend}"].append(r)
    steps_by: dict[tuple[str, str], list[Step]] = defaultdict(list)
    for s in steps:
        steps_by[(f"{s.device_key}/{s.backend}", s.name)].append(s)
    env = environment_changes(runs)
    data: dict[str, Any] = {"devices": [], "runs": {}, "series": {}, "env": {}, "changes": {}, "maxPlots": max_plots}
    for dev, dev_runs in by_dev.items():
        key, backend = dev.split("/", 1)
        data["devices"].append({"id": dev, "key": key, "backend": backend, "name": dev_runs[-1].device_name,
                                "runs": len(dev_runs)})
        data["runs"][dev] = [{"date": r.date, "commit": r.commit[:12], "driver": r.driver, "runtime": r.runtime,
                              "toolkit": r.toolkit} for r in dev_runs]
        index_of = {r.date + r.commit: i for i, r in enumerate(dev_runs)}
        data["env"][dev] = [{"i": index_of.get(e["date"] + e["commit"], 0), "what": e["what"]}
                            for e in env.get((key, backend), [])]
        series: dict[str, dict[str, Any]] = {}
        for i, r in enumerate(dev_runs):
            for m in r.metrics:
                if m.value is None:
                    continue
                s = series.setdefault(m.name, {"name": m.name, "unit": m.unit, "better": m.better, "pts": []})
                s["pts"].append([i, _r(m.value), _r(m.baseline_value), _r(m.band), m.verdict])
        areas: dict[str, list[dict[str, Any]]] = defaultdict(list)
        changes = []
        for name, s in series.items():
            pts = s["pts"]
            s["steps"] = [{"i": st.index if st.index >= len(pts) else pts[st.index][0], "rel": st.rel,
                           "dir": st.direction, "commit": st.commit[:12]} for st in steps_by.get((dev, name), [])]
            last_rel = 0.0
            if len(pts) >= 2 and pts[-2][1]:
                last_rel = (pts[-1][1] - pts[-2][1]) / abs(pts[-2][1])
                changes.append({"name": name, "prev": pts[-2][1], "cur": pts[-1][1], "unit": s["unit"],
                                "rel": last_rel, "better": s["better"], "verdict": pts[-1][4],
                                "commit": dev_runs[pts[-1][0]].commit[:12]})
            s["rank"] = (10.0 if s["steps"] else 0.0) + min(abs(last_rel), 9.0)
            areas[name.split(".", 1)[0]].append(s)
        for lst in areas.values():
            lst.sort(key=lambda s: (-s["rank"], s["name"]))
        data["series"][dev] = dict(sorted(areas.items()))
        changes.sort(key=lambda c: -abs(c["rel"]))
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
function worse(better, rel) { return better === "exact" ? rel !== 0 : (better === "higher" ? rel < 0 : rel > 0); }
function plot(parent, dev, s) {
  const W = 380, H = 150, L = 46, R = 8, T = 8, B = 22;
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
  for (const st of s.steps) {
    const l = el("svg:line", {class: "step-" + st.dir, x1: x(st.i - 0.5), x2: x(st.i - 0.5), y1: T, y2: H - B}, svg);
    el("svg:title", {}, l, `${st.dir} step ${pct(st.rel)} at ${st.commit}`);
    el("svg:text", {x: x(st.i - 0.5) + 2, y: T + 9}, svg, pct(st.rel));
  }
  el("svg:path", {class: "series", d: "M" + s.pts.map(p => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" L"),
                  "data-points": s.pts.length}, svg);
  for (const [i, v] of s.pts) {
    const c = el("svg:circle", {class: "pt", cx: x(i), cy: y(v), r: 2.5}, svg);
    el("svg:title", {}, c, `${runs[i].commit} ${runs[i].date}: ${fmt(v)} ${s.unit}`);
  }
  el("svg:text", {x: 2, y: T + 8}, svg, fmt(hi));
  el("svg:text", {x: 2, y: H - B}, svg, fmt(lo));
  el("svg:text", {x: L, y: H - 6}, svg, runs[0].commit);
  el("svg:text", {x: W - R, y: H - 6, "text-anchor": "end"}, svg, runs[runs.length - 1].commit);
  return 1;
}
function render(dev) {
  const main = document.getElementById("main");
  main.textContent = "";
  let plots = 0;
  const runs = D.runs[dev];
  el("p", {}, main, `${runs.length} run(s) from ${runs[0].date} to ${runs[runs.length - 1].date}; driver ` +
     `${runs[runs.length - 1].driver}, runtime ${runs[runs.length - 1].runtime}, toolkit ${runs[runs.length - 1].toolkit}.`);
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
  for (const h of ["metric", "previous", "latest", "unit", "change", "verdict", "commit"]) el("th", {}, hr, h);
  for (const c of D.changes[dev]) {
    const tr = el("tr", {}, t);
    el("td", {}, tr, c.name); el("td", {}, tr, fmt(c.prev)); el("td", {}, tr, fmt(c.cur)); el("td", {}, tr, c.unit);
    el("td", {class: c.rel === 0 ? "" : (worse(c.better, c.rel) ? "worse" : "better")}, tr, pct(c.rel));
    el("td", {}, tr, c.verdict); el("td", {}, tr, c.commit);
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
    summary = (f"{sum(d['runs'] for d in data['devices'])} run(s), {len(data['devices'])} device/backend(s), "
               f"{len(steps)} step(s) ({worse} toward worse)")
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")  # never closes the script tag
    return PAGE.format(title=html.escape(title), css=CSS, js=JS, data=payload, summary=html.escape(summary))


def write(out_dir: str | Path, runs: Iterable[RunRecord], steps: Iterable[Step], max_plots: int = 12) -> Path:
    """Write ``DIR/index.html`` atomically; returns its path."""
    path = Path(out_dir) / "index.html"
    atomic_write_chunks(path, [render_html(runs, steps, max_plots).encode("utf-8")])
    return path
