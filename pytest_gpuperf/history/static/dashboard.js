// pytest-gpuperf history dashboard: draws the plots of the data embedded in the page with uPlot.
"use strict";
const D = JSON.parse(document.getElementById("gpuperf-data").textContent);
const $ = id => document.getElementById(id);
const COLORS = ["#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#57606a"];
const DIR = {worse: "#cf222e", better: "#1a7f37", changed: "#bc4c00"};
const tip = $("tooltip");
let charts = [];
const NULLS = n => new Array(n).fill(null);
// what the page's data leaves out where it holds nothing: one identity, no samples, no baseline
for (const [dev, list] of Object.entries(D.metrics)) for (const m of list) {
  m.id = metricId(dev, m.name);
  m.family = m.name.split(".")[0];
  m.test = D.tests[dev][m.t];
  if (!m.ids) { m.ids = ["{}"]; m.seg = m.y.map(v => (v === null ? null : 0)); }
  if (!m.q) { m.q = [0, 1, 2, 3].map(() => NULLS(m.x.length)); m.n = NULLS(m.x.length); }
  if (!m.bv) { m.bv = NULLS(m.x.length); m.bw = NULLS(m.x.length); }
}
// the anchor of a metric's plot, as the page's Python side spells it (dashboard.metric_id)
function metricId(dev, name) { return "m-" + `${dev}-${name}`.replace(/[^A-Za-z0-9_.-]/g, "_"); }

function el(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v) {
  if (v === null || v === undefined) return "-";
  const a = Math.abs(v);
  return a !== 0 && (a >= 1e6 || a < 1e-3) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
}
function when(d) { return d.slice(0, 16).replace("T", " "); }
function tick(d) { return d.slice(5, 16).replace("T", " "); }  // MM-DD HH:MM

// the accepted band around a baseline value, as the gate draws it: ratio-safe low edge for a positive figure
function bandEdges(v, w, better) {
  if (v === null) return [null, null];
  w = w || 0;
  const low = v > 0 && (better === "lower" || better === "higher") ? v / (1 + w / v) : v - w;
  return [v + w, low];
}

function yRange(m, lows, highs) {
  let lo = Infinity, hi = -Infinity;
  for (const arr of [m.y, m.q[0], m.q[3], highs, lows])
    for (const v of arr) if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(hi >= lo)) { lo = 0; hi = 1; }
  if (hi === lo) { const d = Math.abs(hi) * 0.05 || 1; lo -= d; hi += d; }
  const pad = (hi - lo) * 0.08;
  let min = lo - pad;
  if (m.nonneg && lo >= 0) min = Math.max(0, min);  // never below 0 for a unit that cannot be negative
  return [min, hi + pad];
}

function vline(u, ctx, x, color, dash, width) {
  if (x < u.scales.x.min || x > u.scales.x.max) return;
  const px = u.valToPos(x, "x", true);
  ctx.save();
  ctx.strokeStyle = color; ctx.lineWidth = width * devicePixelRatio; ctx.setLineDash(dash.map(d => d * devicePixelRatio));
  ctx.beginPath(); ctx.moveTo(px, u.bbox.top); ctx.lineTo(px, u.bbox.top + u.bbox.height); ctx.stroke();
  ctx.restore();
  return px;
}

function drawNoise(m) {
  return u => {
    const ctx = u.ctx, r = devicePixelRatio;
    ctx.save();
    ctx.strokeStyle = "#6e7781"; ctx.fillStyle = "rgba(110,119,129,.35)";
    m.x.forEach((x, j) => {
      if (m.q[0][j] === null || m.y[j] === null) return;
      const px = u.valToPos(x, "x", true);
      const [p05, p25, p75, p95] = [0, 1, 2, 3].map(k => u.valToPos(m.q[k][j], "y", true));
      ctx.lineWidth = r;
      ctx.beginPath(); ctx.moveTo(px, p05); ctx.lineTo(px, p95); ctx.stroke();
      ctx.fillRect(px - 2.5 * r, p75, 5 * r, Math.max(p25 - p75, r));
    });
    ctx.restore();
  };
}

function drawMarks(dev, m) {
  return u => {
    const ctx = u.ctx;
    for (const e of D.env[dev] || []) vline(u, ctx, e.i - 0.5, "#6e7781", [5, 4], 1);
    for (const c of m.idc) vline(u, ctx, (c.i + c.p) / 2, "#8250df", [2, 3], 1.5);
    for (const s of m.steps) {
      if (s.i === null) continue;
      const at = s.p === null ? s.i - 0.5 : (s.i + s.p) / 2;
      const px = vline(u, ctx, at, DIR[s.dir] || "#cf222e", s.status === "candidate" ? [6, 3] : [], 2);
      if (px === undefined) continue;
      ctx.save(); ctx.fillStyle = DIR[s.dir] || "#cf222e";
      const r = devicePixelRatio, top = u.bbox.top;
      ctx.beginPath(); ctx.moveTo(px - 5 * r, top); ctx.lineTo(px + 5 * r, top); ctx.lineTo(px, top + 7 * r); ctx.fill();
      ctx.restore();
    }
  };
}

function tooltip(dev, m) {
  const runs = D.runs[dev];
  return u => {
    const j = u.cursor.idx;
    if (j === null || j === undefined || m.y[j] === null) { tip.hidden = true; return; }
    const run = runs[m.x[j]];
    const lines = [`${when(run.d)}  commit ${run.c}`, `${fmt(m.y[j])} ${m.unit}  (${m.better} is better)`];
    if (m.q[0][j] !== null)
      lines.push(`run noise: 25–75 % ${fmt(m.q[1][j])}–${fmt(m.q[2][j])}, 5–95 % ${fmt(m.q[0][j])}–${fmt(m.q[3][j])}` +
                 (m.n[j] ? ` (n=${m.n[j]})` : ""));
    if (m.bv[j] !== null) lines.push(`baseline ${fmt(m.bv[j])} ± ${fmt(m.bw[j])} ${m.unit}`);
    if (m.v[j] !== null) lines.push(`verdict: ${D.verdicts[m.v[j]]}`);
    lines.push(`driver ${run.drv || "-"}, toolkit ${run.tk || "-"}`);
    if (m.ids.length > 1 && m.seg[j] !== null) lines.push(`identity ${m.seg[j] + 1}: ${m.ids[m.seg[j]]}`);
    tip.textContent = lines.join("\n");
    const box = u.over.getBoundingClientRect();
    tip.style.left = Math.min(box.left + u.cursor.left + 14, window.innerWidth - 380) + "px";
    tip.style.top = (box.top + u.cursor.top + 14) + "px";
    tip.hidden = false;
  };
}

function plot(dev, m, parent) {
  const runs = D.runs[dev];
  const box = el("div", {class: "plot", id: m.id, "data-metric": m.name,
                         "data-points": String(m.y.filter(v => v !== null).length)}, parent);
  el("h4", {title: m.name}, box, m.name);
  el("div", {class: "meta"}, box, `${m.unit || "(no unit)"}, ${m.better} is better · ${m.test}`);
  const series = [{}], data = [m.x];
  m.ids.forEach((_, k) => {
    const color = COLORS[k % COLORS.length];
    data.push(m.y.map((v, j) => (m.seg[j] === k ? v : null)));
    series.push({label: m.ids.length > 1 ? `identity ${k + 1}` : "value", stroke: color, width: 1.5, spanGaps: false,
                 points: {show: true, size: 5, fill: color, stroke: color}});
  });
  const edges = m.bv.map((v, j) => bandEdges(v, m.bw[j], m.better));
  const highs = edges.map(e => e[0]), lows = edges.map(e => e[1]);
  const bands = [];
  if (highs.some(v => v !== null)) {
    data.push(highs, lows);
    const hiIdx = series.length;
    for (const label of ["band high", "band low"])
      series.push({label, stroke: "rgba(46,160,67,.55)", width: 1, spanGaps: false, points: {show: false}});
    bands.push({series: [hiIdx, hiIdx + 1], fill: "rgba(46,160,67,.18)"});
  }
  const [ymin, ymax] = yRange(m, lows, highs);
  box.dataset.ymin = String(ymin);
  const xmin = m.x[0] - 0.5, xmax = m.x[m.x.length - 1] + 0.5;
  const opts = {
    width: 412, height: 220, legend: {show: false}, bands,
    cursor: {points: {size: 8}, drag: {x: false, y: false}},
    scales: {x: {time: false, range: () => [xmin, xmax]}, y: {range: () => [ymin, ymax]}},
    axes: [
      {space: 74, size: 42, incrs: [1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 500], font: "10px system-ui",
       values: (u, splits) => splits.map(i => (Number.isInteger(i) && runs[i] ? `${tick(runs[i].d)}\n${runs[i].c.slice(0, 7)}` : ""))},
      {label: m.unit || "value", labelSize: 16, size: 58, font: "10px system-ui", labelFont: "11px system-ui",
       values: (u, splits) => splits.map(fmt)},
    ],
    series,
    hooks: {drawAxes: [drawNoise(m)], draw: [drawMarks(dev, m)], setCursor: [tooltip(dev, m)]},
  };
  charts.push(new uPlot(opts, data, box));
  if (m.steps.length || m.idc.length) {
    const ul = el("ul", {class: "plot-steps"}, box);
    for (const s of m.steps) {
      const levels = `${fmt(s.before)} → ${fmt(s.after)} ${m.unit}`;
      const sure = s.model === "deterministic" ? "exact figure" : `confidence ${s.conf}`;
      const status = s.status === "candidate" ? `candidate, ${s.runs} run(s) so far` : `confirmed by ${s.runs} runs`;
      el("li", {class: s.dir}, ul, `${s.dir} ${s.size} (${levels}) at ${s.range}, ${when(s.date)}; ${status}; ${sure}`);
    }
    for (const c of m.idc) el("li", {class: "ident"}, ul, `identity changed at ${runs[c.i].c}: ${c.what} (not compared across)`);
  }
  return 1;
}

function render(want) {
  for (const c of charts) c.destroy();
  charts = [];
  tip.hidden = true;
  const dev = $("device").value, fam = $("family").value, only = $("only-steps").checked;
  const runs = D.runs[dev] || [];
  $("device-info").textContent = runs.length ? `${runs.length} run(s) from ${when(runs[0].d)} to ` +
    `${when(runs[runs.length - 1].d)}; latest driver ${runs[runs.length - 1].drv}, runtime ` +
    `${runs[runs.length - 1].rt}, toolkit ${runs[runs.length - 1].tk}.` : "";
  const root = $("families");
  root.textContent = "";
  const byFamily = new Map();
  for (const m of D.metrics[dev] || []) {
    if ((fam && m.family !== fam) || (only && !m.steps.length && m.id !== want)) continue;
    if (!byFamily.has(m.family)) byFamily.set(m.family, []);
    byFamily.get(m.family).push(m);
  }
  let plots = 0;
  for (const [family, list] of [...byFamily.entries()].sort()) {
    list.sort((a, b) => b.rank - a.rank || a.name.localeCompare(b.name));
    const withSteps = list.filter(m => m.steps.length).length;
    el("h3", {class: "family", "data-family": family}, root, `${family} — ${list.length} metric(s), ${withSteps} with steps`);
    const grid = el("div", {class: "grid"}, root);
    const first = list.slice(0, D.maxPlots);
    const wanted = list.find(m => m.id === want);
    if (wanted && !first.includes(wanted)) first.push(wanted);
    for (const m of first) plots += plot(dev, m, grid);
    const rest = list.filter(m => !first.includes(m));
    if (rest.length) {
      const b = el("button", {class: "more", type: "button"}, root, `show all ${list.length}`);
      b.onclick = () => {
        for (const m of rest) plot(dev, m, grid);
        document.body.dataset.plots = String(Number(document.body.dataset.plots) + rest.length);
        b.remove();
      };
    }
  }
  document.body.dataset.plots = String(plots);
  document.body.dataset.device = dev;
}

// a link to a plot (#m-…) selects its device and family first, then scrolls to it
function follow() {
  const id = decodeURIComponent(location.hash.slice(1));
  for (const [dev, list] of Object.entries(D.metrics)) {
    const m = list.find(x => x.id === id);
    if (!m) continue;
    $("device").value = dev;
    $("family").value = m.family;
    render(id);
    const target = document.getElementById(id);
    if (target) target.scrollIntoView();
    return true;
  }
  const dev = D.devices.find(d => d.id === id);
  if (dev) $("device").value = dev.id;
  return false;
}

for (const id of ["device", "family", "only-steps"]) $(id).addEventListener("change", () => render());
window.addEventListener("hashchange", follow);
if (!follow()) render();
// what the first screen shows (a test reads it off the page with the screenshot's window size)
const onScreen = e => e.getBoundingClientRect().top < window.innerHeight;
document.body.dataset.visiblePlots = String([...document.querySelectorAll(".plot")].filter(onScreen).length);
document.body.dataset.visibleRegressions = String([...document.querySelectorAll("#regressions tbody tr")].filter(onScreen).length);
document.body.dataset.rendered = "yes";
