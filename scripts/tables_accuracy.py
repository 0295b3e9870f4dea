#!/usr/bin/env python3
"""Print the markdown tables of docs/accuracy.md from results JSON files (never typed by hand).

    python scripts/tables_accuracy.py [results/]

Columns: H100 CUDA (results/nvidia-h100-80gb-hbm3/accuracy-cuda.json), H100 NVIDIA OpenCL
(.../accuracy-opencl.json) and PoCL (results/pocl-*/accuracy-opencl.json); a missing file or metric is
shown as "—"."""

from __future__ import annotations

import glob
import json
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
    print("| device | fn | mode | inputs checked | device s | checked/s | evaluate-only/s | max (MPFR) | worst input |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c, (ms, _) in COLS.items():
        for fn in ("exp", "sin", "log"):
            r = ms.get(f"accuracy.sweep.fp32.{fn}.checked_per_s")
            m = ms.get(f"accuracy.sweep.fp32.{fn}.max_ulp")
            if not r or not m:
                continue
            i = r["info"]
            w = m["info"].get("worst") or {}
            print(f"| {c} | {fn} | {i['mode']} | {i['checked']} | {i['device_s']:.4g} | {r['value']:.3g} | "
                  f"{i['plain_sweep_per_s']:.3g} | {m['value']:.3g} ({m['info']['metric']}) | "
                  f"{', '.join(w.get('input_hex', []))} |")


def sum_table() -> None:
    print("| device | variant | layout | n | abs error vs MPFR | time (µs) |")
    print("|---|---|---|---|---|---|")
    for c, (ms, _) in COLS.items():
        rows = sorted(k for k in ms if k.startswith("accuracy.sum.") and k.endswith(".abs_err"))
        for k in rows:
            parts = k.split(".")
            n = parts[-2]
            layout = parts[-3]
            variant = ".".join(parts[2:-3])
            t = ms.get(k.replace(".abs_err", ".time_us"))
            print(f"| {c} | {variant} | {layout} | 2^{n[1:]} | {ms[k]['value']:.3g} | "
                  f"{t['value']:.4g} |" if t else "— |")


def fuzz_table() -> None:
    print("| device | test | max | bound | worst input |")
    print("|---|---|---|---|---|")
    for c, (ms, _) in COLS.items():
        for k in sorted(ms):
            if k.startswith(("accuracy.fuzz.", "accuracy.search.")):
                m = ms[k]
                w = (m.get("info") or {}).get("worst") or {}
                print(f"| {c} | {k[len('accuracy.'):-len('.max_ulp')]} | {val(c, k)} | "
                      f"{(m.get('info') or {}).get('bound', '—')} | {', '.join(w.get('input_hex', []))} |")


if __name__ == "__main__":
    sections = {"sources": sources, "functions": function_table, "ops": ops_table, "fast": fast_table,
                "sweep": sweep_table, "sum": sum_table, "fuzz": fuzz_table}
    want = sys.argv[2:] or list(sections)
    for s in want:
        print(f"<!-- tables_accuracy.py {s} -->")
        sections[s]()
        print()
