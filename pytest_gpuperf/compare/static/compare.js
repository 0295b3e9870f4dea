// gpuperf compare: a strip plot of both sides' samples for every significant row (uPlot, inlined).
"use strict";
const PLOTS = JSON.parse(document.getElementById("compare-data").textContent);
const SIDES = [["A", "#0969da"], ["B", "#d1680a"]];

function fmt(v) {
  const a = Math.abs(v);
  return a !== 0 && (a >= 1e6 || a < 1e-3) ? v.toExponential(2) : String(Number(v.toPrecision(4)));
}
function median(xs) {
  const s = [...xs].sort((p, q) => p - q), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// each side's values spread across a column (sorted, so the spread itself shows the distribution)
function strip(box, p) {
  const cols = [p.a, p.b].map(v => [...v].sort((x, y) => x - y));
  const xs = [], ya = [], yb = [];
  cols.forEach((vals, side) => vals.forEach((v, i) => {
    xs.push(side + 0.6 * ((i + 0.5) / vals.length - 0.5));
    ya.push(side === 0 ? v : null);
    yb.push(side === 1 ? v : null);
  }));
  let lo = Math.min(...cols[0], ...cols[1]), hi = Math.max(...cols[0], ...cols[1]);
  if (hi === lo) { const d = Math.abs(hi) * 0.05 || 1; lo -= d; hi += d; }
  const pad = (hi - lo) * 0.1, meds = cols.map(median);
  const series = [{}, ...SIDES.map(([label, color]) => ({label, stroke: color, fill: color, paths: () => null,
                                                        points: {show: true, size: 3.5, fill: color, stroke: color}}))];
  const opts = {
    width: 280, height: 136, legend: {show: false}, cursor: {show: false}, series,
    scales: {x: {time: false, range: () => [-0.5, 1.5]}, y: {range: () => [lo - pad, hi + pad]}},
    axes: [{size: 24, splits: () => [0, 1], values: () => ["A", "B"], font: "11px system-ui"},
           {size: 46, font: "10px system-ui", label: p.unit, labelSize: 14, labelFont: "10px system-ui",
            values: (u, splits) => splits.map(fmt)}],
    hooks: {draw: [u => {
      const ctx = u.ctx, r = devicePixelRatio;
      meds.forEach((m, side) => {
        const y = u.valToPos(m, "y", true), x0 = u.valToPos(side - 0.35, "x", true), x1 = u.valToPos(side + 0.35, "x", true);
        ctx.save(); ctx.strokeStyle = "#1b1f24"; ctx.lineWidth = 2 * r;
        ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke(); ctx.restore();
      });
    }]},
  };
  new uPlot(opts, [xs, ya, yb], box);
  box.title = `${p.name}: A median ${fmt(meds[0])}, B median ${fmt(meds[1])} ${p.unit} (${p.a.length} and ${p.b.length} values)`;
  box.dataset.drawn = "yes";
}

let drawn = 0;
for (const box of document.querySelectorAll(".strip")) { strip(box, PLOTS[Number(box.dataset.plot)]); drawn++; }
document.body.dataset.plots = String(drawn);
document.body.dataset.rendered = "yes";
