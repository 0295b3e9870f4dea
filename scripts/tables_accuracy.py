#!/usr/bin/env python3
"""Print the markdown tables of docs/accuracy.md from results JSON files (never typed by hand).

    python scripts/tables_accuracy.py [results/]

Columns: H100 CUDA (results/nvidia-h100-80gb-hbm3/accuracy-cuda.json.gz), H100 NVIDIA OpenCL
(.../accuracy-opencl.json) and PoCL (results/pocl-*/accuracy-opencl.json); a missing file or metric is
shown as "—"."""

from __future__ import annotations

import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from pytest_gpuperf.accuracy import functions  # noqa: E402

ROOT = sys.argv[1] if len(sys.argv) > 1 else "results"


def load(pattern: str) -> tuple[dict, str]:
    files = sorted(glob.glob(os.path.join(ROOT, pattern)))
    if not files:
        return {}, ""
    doc = json.load(open(files[0]))
    return {m["name"]: m for m in doc["metrics"]}, files[0]


COLS = {"H100 CUDA": load("nvidia-h100-80gb-hbm3/accuracy-cuda.json"),
        "H100 OpenCL": load("nvidia-h100-80gb-hbm3/accuracy-opencl.json"),
        "PoCL": load("pocl-*/accuracy-opencl.json")}


def val(col: str, name: str, fmt: str = "{:.3g}") -> str:
    m = COLS[col][0].get(name)
    if m is None:
        return "—"
    v = m["value"]
    s = fmt.format(v)
    info = m.get("info") or {}
    if info.get("mismatches"):
        s += " + " + ", ".join(f"{k} ×{n}" for k, n in info["mismatches"].items())
    b = info.get("bound")
    if (b is not None and v > b) or info.get("mismatches"):
        s = f"**{s}** ✗"
    return s


def worst(name: str, only: str | None = None) -> str:
    for col in ([only] if only else COLS):
        m = COLS[col][0].get(name)
        if m and (m.get("info") or {}).get("worst"):
            w = m["info"]["worst"]
            return f"{', '.join(w['input_hex'])} ({col})"
    return "—"


def sources() -> None:
    print("Sources: " + "; ".join(f"{c}: `{f}`" if f else f"{c}: (no results file)" for c, (_, f) in COLS.items()))
    print()


def function_table() -> None:
    print("| function | prec | CUDA bound (cr) | OpenCL bound (ulp) | H100 CUDA | H100 OpenCL | PoCL | worst input (max) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, f in functions.FUNCTIONS.items():
        for fmt in ("fp32", "fp64"):
            key = f"accuracy.{fmt}.{name}.max_ulp"
            cb, ob = f.bound("cuda", fmt), f.bound("opencl", fmt)
            print(f"| {name} | {fmt} | {cb if cb is not None else '—'} | {ob if ob is not None else 'undefined'} | "
                  f"{val('H100 CUDA', key)} | {val('H100 OpenCL', key)} | {val('PoCL', key)} | {worst(key)} |")


def ops_table() -> None:
    print("| op | fmt | mode | H100 CUDA | H100 OpenCL | PoCL |")
    print("|---|---|---|---|---|---|")
    for fmt in ("fp16", "fp32", "fp64"):
        for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
            for mode in ("rn", "rz", "ru", "rd", "rn.default"):
                key = f"accuracy.{fmt}.{op}.{mode}.max_ulp"
                cells = [val(c, key) for c in COLS]
                if all(c == "—" for c in cells):
                    continue
                print(f"| {op} | {fmt} | {mode} | " + " | ".join(cells) + " |")


def fast_table() -> None:
    print("| variant | backend | documented bound | max ulp | mean ulp | bound metric | worst input |")
    print("|---|---|---|---|---|---|---|")
    for v in functions.FAST:
        col = "H100 CUDA" if v.backend == "cuda" else "PoCL"
        cols = [col] if v.backend == "cuda" else ["H100 OpenCL", "PoCL"]
        for c in cols:
            base = f"accuracy.fp32.{v.label}"
            if f"{base}.max_ulp" not in COLS[c][0]:
                continue
            bound = (f"{v.bound} ulp" if v.bound is not None else f"abs {v.abs_bound:.3g} on {v.domain[0]:.3g}..{v.domain[1]:.3g}"
                     if v.abs_bound is not None else "per-input (see citation)" if v.bound_fn is not None
                     else "implementation-defined")
            extra = (val(c, f"{base}.max_abs") + " abs" if v.abs_bound is not None else
                     val(c, f"{base}.max_ulp_over_bound") + " over" if v.bound_fn is not None else "")
            print(f"| {v.label} {' '.join(v.options)} | {c} | {bound} | {val(c, base + '.max_ulp')} | "
                  f"{val(c, base + '.mean_ulp')} | {extra} | {worst(base + '.max_ulp', c)} |")


def sweep_table() -> None:
    print("| device | fn | mode | inputs checked | device s | checked/s | plain fp64-reference sweep/s | checked ÷ "
          "reference time | evaluate-only/s | max (MPFR) | worst input |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c, (ms, _) in COLS.items():
        for fn in ("exp", "sin", "log"):
            r = ms.get(f"accuracy.sweep.fp32.{fn}.checked_per_s")
            m = ms.get(f"accuracy.sweep.fp32.{fn}.max_ulp")
            if not r or not m:
                continue
            i = r["info"]
            w = m["info"].get("worst") or {}
            ref = f"{i['reference_sweep_per_s']:.3g}" if "reference_sweep_per_s" in i else "—"
            ratio = f"{i['checked_over_reference_time']:.2f}" if "checked_over_reference_time" in i else "—"
            print(f"| {c} | {fn} | {i['mode']} | {i['checked']} | {i['device_s']:.4g} | {r['value']:.3g} | {ref} | "
                  f"{ratio} | {i['plain_sweep_per_s']:.3g} | {m['value']:.3g} ({m['info']['metric']}) | "
                  f"{', '.join(w.get('input_hex', []))} |")


SUM_VARIANTS = ("float", "float.kahan", "float2", "double", "double.kahan", "double2")


def _sum(c: str, variant: str, layout: str, lg: int) -> tuple[float, float] | None:
    ms = COLS[c][0]
    e = ms.get(f"accuracy.sum.{variant}.{layout}.n{lg}.abs_err")
    t = ms.get(f"accuracy.sum.{variant}.{layout}.n{lg}.time_us")
    return (e["value"], t["value"]) if e and t else None


def sum_table() -> None:
    cols = [c for c in COLS if any(k.startswith("accuracy.sum.") for k in COLS[c][0])]
    print("| variant | layout | n | " + " | ".join(f"{c} abs error | {c} µs" for c in cols) + " |")
    print("|---|---|---|" + "---|---|" * len(cols))
    for layout in ("serial", "parallel", "pairwise"):
        for variant in SUM_VARIANTS:
            for lg in (12, 16, 20, 24):
                cells = [_sum(c, variant, layout, lg) for c in cols]
                if all(x is None for x in cells):
                    continue
                print(f"| {variant} | {layout} | 2^{lg} | " + " | ".join(
                    f"{x[0]:.3g} | {x[1]:.4g}" if x else "— | —" for x in cells) + " |")


def _orders(worse: float, better: float) -> str:
    if better == 0:
        return f"exact (0 vs {worse:.2g})" if worse else "both exact"
    if worse == 0:
        return f"worse ({better:.2g} vs 0)"
    return f"{math.log10(worse / better):+.1f}"


def tradeoff_table() -> None:
    """The thesis' perf × accuracy comparisons (ch. 4.1.1) at the largest n each layout has."""
    print("| device | layout | n | float2 vs float: orders more accurate, time × | double2 vs double: orders, time × "
          "| float2 vs double: orders, time × |")
    print("|---|---|---|---|---|---|")
    print("| thesis (Kepler/Maxwell, 1M values) | serial & parallel | 2^20 | 4–5, 1.22–1.25× | 8–14, 1.33× (Kepler) "
          "/ ~2× (Maxwell) | float2 less accurate, slower or equal |")
    for c in COLS:
        for layout in ("serial", "parallel"):
            lgs = [lg for lg in (24, 20, 16, 12) if _sum(c, "float", layout, lg) and _sum(c, "double2", layout, lg)]
            if not lgs:
                continue
            lg = lgs[0]
            f, f2, d, d2 = (_sum(c, v, layout, lg) for v in ("float", "float2", "double", "double2"))
            print(f"| {c} | {layout} | 2^{lg} | {_orders(f[0], f2[0])}, {f2[1] / f[1]:.2f}× | "
                  f"{_orders(d[0], d2[0])}, {d2[1] / d[1]:.2f}× | {_orders(f2[0], d[0])} (double better), "
                  f"{f2[1] / d[1]:.2f}× |")


def fuzz_table() -> None:
    """One row per fuzz region / searched function; each cell is max (documented bound of that backend)."""
    names = sorted({k for ms, _ in COLS.values() for k in ms if k.startswith(("accuracy.fuzz.", "accuracy.search."))},
                   key=lambda k: (k.split(".")[1], k.split(".")[2], k))
    print("| test | " + " | ".join(f"{c} max (bound)" for c in COLS) + " | worst input (max) |")
    print("|---|" + "---|" * len(COLS) + "---|")
    for k in names:
        cells = []
        for c in COLS:
            m = COLS[c][0].get(k)
            cells.append("—" if m is None else f"{val(c, k)} ({(m.get('info') or {}).get('bound', '—'):g})"
                         if isinstance((m.get("info") or {}).get("bound"), (int, float)) else val(c, k))
        print(f"| {k[len('accuracy.'):-len('.max_ulp')]} | " + " | ".join(cells) + f" | {worst(k)} |")


if __name__ == "__main__":
    sections = {"sources": sources, "functions": function_table, "ops": ops_table, "fast": fast_table,
                "sweep": sweep_table, "sum": sum_table, "tradeoff": tradeoff_table, "fuzz": fuzz_table}
    want = sys.argv[2:] or list(sections)
    for s in want:
        print(f"<!-- tables_accuracy.py {s} -->")
        sections[s]()
        print()
