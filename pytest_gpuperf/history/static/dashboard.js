// pytest-gpuperf history dashboard: draws the plots of the data embedded in the page with uPlot.
"use strict";
const D = JSON.parse(document.getElementById("gpuperf-data").textContent);
const $ = id => document.getElementById(id);
const COLORS = ["#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#57606a"];
const DIR = {worse: "#cf222e", better: "#1a7f37", changed: "#bc4c00"};
const KERNEL = "#1b7c83";  // a kernel change: the test's kernels changed, the two sides are not compared
const tip = $("tooltip");
let charts = [];
const NULLS = n => new Array(n).fill(null);
// what the page's data leaves out where it holds nothing: one identity, no samples, no baseline
for (const [dev, list] of Object.entries(D.metrics)) for (const m of list) {
  m.id = metricId(dev, m.name);
  m.family = m.name.split(".")[0];
  m.test = D.tests[dev][m.t];
  if (!m.kc) m.kc = [];
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
// a commit as a link to it (D.commitUrl + its sha) where the page was given a commit URL, else as text
function commit(parent, sha, text) {
  if (D.commitUrl && sha) el("a", {class: "commit", href: D.commitUrl + sha}, parent, text || sha.slice(0, 12));
  else parent.appendChild(document.createTextNode(text || sha || "?"));
}
// text with commits in it: parts are strings or [sha, label]
function li(parent, cls, parts) {
  const e = el("li", {class: cls}, parent);
  for (const p of parts) typeof p === "string" ? e.appendChild(document.createTextNode(p)) : commit(e, p[0], p[1]);
  return e;
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

// the y range: every value, noise whisker and band edge, padded; a flat series (all its values within 0.1 %
// of their level) gets that much room so its ticks read distinct numbers; never below 0 for a unit that
// cannot be negative, whatever the padding or a band's low edge, unless a value itself is negative
function yRange(m, lows, highs) {
  let lo = Infinity, hi = -Infinity, vlo = Infinity;
  for (const arr of [m.y, m.q[0], m.q[3], highs, lows])
    for (const v of arr) if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  for (const v of m.y) if (v !== null) vlo = Math.min(vlo, v);
  if (!(hi >= lo)) { lo = 0; hi = 1; }
  const mid = (hi + lo) / 2, least = Math.abs(mid) * 2e-3 || 1;
  if (hi - lo < least) { lo = mid - least / 2; hi = mid + least / 2; }
  const pad = (hi - lo) * 0.08;
  let min = lo - pad, max = hi + pad;
  if (m.nonneg && vlo >= 0 && min < 0) { max -= min; min = 0; }  // the room the padding wanted, kept above 0
  return [min, max];
}

// tick labels with as many digits as the tick step needs, so each reads its own value and no two read alike
// (uPlot picks the ticks: nice steps of 1, 2, 2.5 and 5 × 10^k)
function tickLabels(splits, incr) {
  incr = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : incr || 1;  // the step ySplits used
  const top = Math.max(...splits.map(Math.abs));
  const sci = top >= 1e6 || (top > 0 && top < 1e-3);
  let digits = sci ? Math.max(1, Math.ceil(Math.log10(top / incr))) : Math.max(0, -Math.floor(Math.log10(incr) + 1e-9));
  for (;; digits++) {
    const out = splits.map(v => (v === 0 ? "0" : sci ? v.toExponential(digits) : v.toFixed(digits)));
    const exact = splits.every((v, j) => Math.abs(Number(out[j]) - v) <= incr * 1e-3);  // 0.25 is not "0.3"
    if ((exact && new Set(out).size === out.length) || digits >= 15) return out.map(t => (/^-0(\.0*)?$/.test(t) ? "0" : t));
  }
}

// the tick steps uPlot may choose on a y axis: 1, 2, 2.5, 5 × 10^k over every magnitude a metric has (uPlot's
// own list stops at 1e-16, and an error of 1e-17 drew no tick at all)
const Y_INCRS = [];
for (let k = -40; k <= 40; k++) for (const f of [1, 2, 2.5, 5]) Y_INCRS.push(Number(`${f}e${k}`));

// the ticks: every multiple of the step uPlot chose within the range (uPlot's own rounding knows no step
// below 1e-16 and returned none; below it the step is chosen here, about five ticks to the axis)
function ySplits(u, axis, min, max, incr) {
  if (!(incr > 0 && incr <= (max - min) / 2)) incr = Y_INCRS.find(i => i >= (max - min) / 5) || max - min;  // uPlot's, floored at 1e-16
  const out = [];
  for (let k = Math.ceil(min / incr - 1e-9); k * incr <= max + incr * 1e-9; k++) out.push(Number((k * incr).toPrecision(12)));
  return out;
}

// how wide the y axis must be for its widest tick label (the axis title sits beyond it, never on it)
function axisWidth(u, values) {
  if (!values) return 40;
  const ctx = u.ctx;
  ctx.save(); ctx.font = `${10 * devicePixelRatio}px system-ui`;
  const w = Math.max(0, ...values.map(v => ctx.measureText(String(v)).width)) / devicePixelRatio;
  ctx.restore();
  return Math.ceil(w) + 16;  // tick and gap
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
    for (const c of m.kc) vline(u, ctx, c.p === null ? c.i - 0.5 : (c.i + c.p) / 2, KERNEL, [2, 2], 1.5);
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

// the line breaks at a kernel change (the two sides are other measurements): uPlot's gaps, in canvas pixels,
// between the last run before the change and the first after it, beside the gaps of missing values
function kernelGaps(m) {
  return (u, sidx, i0, i1, nullGaps) => {
    const breaks = m.kc.map(c => [c.p === null ? c.i - 1 : c.p, c.i])
      .map(([a, b]) => [Math.round(u.valToPos(a, "x", true)) + 1, Math.round(u.valToPos(b, "x", true)) - 1]);
    const all = [...nullGaps, ...breaks].sort((g, h) => g[0] - h[0]);
    const merged = [];
    for (const g of all) {
      const last = merged[merged.length - 1];
      if (last && g[0] <= last[1]) last[1] = Math.max(last[1], g[1]); else merged.push([g[0], g[1]]);
    }
    return merged;
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
  const gaps = m.kc.length ? kernelGaps(m) : undefined;
  m.ids.forEach((_, k) => {
    const color = COLORS[k % COLORS.length];
    data.push(m.y.map((v, j) => (m.seg[j] === k ? v : null)));
    series.push({label: m.ids.length > 1 ? `identity ${k + 1}` : "value", stroke: color, width: 1.5, spanGaps: false,
                 points: {show: true, size: 5, fill: color, stroke: color}, ...(gaps ? {gaps} : {})});
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
  box.dataset.nonneg = m.nonneg ? "1" : "0";
  const xmin = m.x[0] - 0.5, xmax = m.x[m.x.length - 1] + 0.5;
  const opts = {
    width: 412, height: 220, legend: {show: false}, bands,
    cursor: {points: {size: 8}, drag: {x: false, y: false}},
    scales: {x: {time: false, range: () => [xmin, xmax]}, y: {range: () => [ymin, ymax]}},
    axes: [
      {space: 74, size: 42, incrs: [1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 500], font: "10px system-ui",
       values: (u, splits) => splits.map(i => (Number.isInteger(i) && runs[i] ? `${tick(runs[i].d)}\n${runs[i].c.slice(0, 7)}` : ""))},
      {label: m.unit || "value", labelSize: 18, labelGap: 2, size: axisWidth, font: "10px system-ui", incrs: Y_INCRS, splits: ySplits,
       labelFont: "11px system-ui",
       values: (u, splits, axis, space, incr) => {
         const labels = tickLabels(splits, incr);
         box.dataset.yticks = JSON.stringify(labels);
         return labels;
       }},
    ],
    series,
    hooks: {drawAxes: [drawNoise(m)], draw: [drawMarks(dev, m)], setCursor: [tooltip(dev, m)]},
  };
  charts.push(new uPlot(opts, data, box));
  if (m.steps.length || m.idc.length || m.kc.length) {
    const ul = el("ul", {class: "plot-steps"}, box);
    for (const s of m.steps) {
      const levels = `${fmt(s.before)} → ${fmt(s.after)} ${m.unit}`;
      const sure = s.model === "deterministic" ? "exact figure" : `confidence ${s.conf}`;
      const status = s.status === "candidate" ? `candidate, ${s.runs} run(s) so far` : `confirmed by ${s.runs} runs`;
      const [a, b] = s.range.split("..");
      li(ul, s.dir, [`${s.dir} ${s.size} (${levels}) at `, [s.pc, a], "..", [s.c, b],
                     `, ${when(s.date)}; ${status}; ${sure}`]);
    }
    for (const c of m.idc)
      li(ul, "ident", ["identity changed at ", [runs[c.i].C, runs[c.i].c], `: ${c.what} (not compared across)`]);
    for (const c of m.kc)
      li(ul, "kernel", [`${c.what} at `, [runs[c.i].C, runs[c.i].c], " (not compared across: no step)"]);
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
  const byRank = (a, b) => b.rank - a.rank || a.name.localeCompare(b.name);
  const shown = (D.metrics[dev] || []).filter(m => !fam || m.family === fam);
  let plots = 0;
  // a group of plots: the first D.maxPlots (and the one a link asked for), the rest behind "show all"
  function group(list, heading) {
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
  // what changed leads: every metric with a step, toward worse first, then the largest moves
  const changed = shown.filter(m => m.steps.length).sort(byRank);
  el("h3", {class: "changes"}, root, changed.length ? `Changes — ${changed.length} metric(s) with steps, toward worse first` :
     "Changes — no metric of this selection has a step");
  if (changed.length) group(changed);
  // kernel changes apart from the steps: other measurements on each side, not regressions
  const kernels = shown.filter(m => m.kc.length && !m.steps.length).sort(byRank);
  if (kernels.length) {
    el("h3", {class: "kernels"}, root,
       `Kernel changed — ${kernels.length} metric(s) whose kernels changed (not steps: compared within each kernel)`);
    group(kernels);
  }
  if (!only) {
    // then every family's unchanged metrics, the family whose metrics moved most first, its largest moves first
    const byFamily = new Map();
    for (const m of shown) {
      if (!byFamily.has(m.family)) byFamily.set(m.family, []);
      byFamily.get(m.family).push(m);
    }
    const above = m => m.steps.length || m.kc.length;  // drawn under Changes or Kernel changed
    const order = [...byFamily.entries()].map(([f, list]) => [f, list, list.filter(m => !above(m)).sort(byRank)]);
    order.sort((a, b) => (b[2][0] ? b[2][0].rank : -1) - (a[2][0] ? a[2][0].rank : -1) || a[0].localeCompare(b[0]));
    for (const [family, list, rest] of order) {
      const moved = list.length - rest.length;
      el("h3", {class: "family", "data-family": family}, root,
         `${family} — ${list.length} metric(s)` + (moved ? `, ${moved} with steps or kernel changes (above)` : ""));
      if (rest.length) group(rest);
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
const lead = document.querySelector("#families .plot");
if (lead) {  // where the first plot lies on the first screen (a test finds it in the screenshot)
  const r = lead.getBoundingClientRect();
  document.body.dataset.firstPlot = [r.left, r.top, r.width, r.height].map(Math.round).join(",");
}
document.body.dataset.rendered = "yes";
