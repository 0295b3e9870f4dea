"""Tables of docs/accuracy.md (and the "math as users call it" section): math functions against their
documented bounds, basic operations per rounding mode, fast variants, the exhaustive sweep, fuzzing and
worst-case search, summation and its perf × accuracy trade-off.

Columns are the roles ``cuda``, ``opencl`` and ``pocl`` (each one run, or several merged, first wins),
labelled by the device each run recorded; a metric a column's run lacks reads "—".
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from pytest_gpuperf.accuracy import functions
from pytest_gpuperf.devices.backend_registry import backends
from .registry import Inputs
from .runfile import Run, merged

ROLES = ("cuda", "opencl", "pocl")
Metrics = Mapping[str, Mapping[str, Any]]


def device_label(run: Run) -> str:
    """``H100 CUDA``, ``H200 OpenCL``, ``PoCL``: the device and backend a column's run recorded."""
    dev = run.device
    if dev.get("is_cpu") or "pocl" in str(dev.get("platform", "")).lower():
        return "PoCL"
    name = str(dev.get("name", "GPU"))
    short = next((w for w in name.split() if any(c.isdigit() for c in w)), name)
    label = next((b.label for b in backends() if b.name == run.backend), run.backend)
    return f"{short} {label}"


def column_backend(label: str) -> str:
    """The backend a column's label names (PoCL is an OpenCL device)."""
    word = "OpenCL" if label == "PoCL" else label.split()[-1]
    return next((b.name for b in backends() if b.label == word), word.lower())


def columns(inp: Inputs, roles: tuple[str, ...] = ROLES) -> list[tuple[str, Metrics]]:
    return [(device_label(inp.maybe(r)[0]), merged(inp.maybe(r))) for r in roles if inp.maybe(r)]


def val(ms: Metrics, name: str, fmt: str = "{:.3g}") -> str:
    m = ms.get(name)
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


def worst(cols: list[tuple[str, Metrics]], name: str, only: str | None = None) -> str:
    for label, ms in cols:
        if only and label != only:
            continue
        w = ((ms.get(name) or {}).get("info") or {}).get("worst")
        if w:
            return f"{', '.join(w['input_hex'])} ({label})"
    return "—"


def worst_input(cols: list[tuple[str, Metrics]], key: str) -> str:
    """The worst-input cell of ``key`` (a ``max_ulp``): where a column's certificate records the fractional
    maximum (``<key>_fractional``), the input with the largest error; else the maximum's own worst input
    (for an integer ``cr`` maximum a tie-break among the inputs that share it)."""
    frac = worst(cols, key + "_fractional")
    return worst(cols, key) if frac == "—" else frac[:-1] + ", largest fractional error)"


def function_table(inp: Inputs) -> list[str]:
    """Every math function × precision: CUDA and OpenCL bounds, each column's maximum, the worst input."""
    cols = columns(inp)
    out = ["| function | prec | CUDA bound (cr) | OpenCL bound (ulp) | " + " | ".join(c for c, _ in cols) + " | worst input (max) |",
           "|---|---|---|---|" + "---|" * len(cols) + "---|"]
    for name, f in functions.FUNCTIONS.items():
        for fmt in ("fp32", "fp64"):
            key = f"accuracy.{fmt}.{name}.max_ulp"
            cb, ob = f.bound("cuda", fmt), f.bound("opencl", fmt)
            out.append(f"| {name} | {fmt} | {cb if cb is not None else '—'} | {ob if ob is not None else 'undefined'} | "
                       + " | ".join(val(ms, key) for _, ms in cols) + f" | {worst_input(cols, key)} |")
    return out


def ops_table(inp: Inputs) -> list[str]:
    """Basic operations × format × rounding mode (must be 0 steps)."""
    cols = columns(inp)
    out = ["| op | fmt | mode | " + " | ".join(c for c, _ in cols) + " |", "|---|---|---|" + "---|" * len(cols)]
    for fmt in ("fp16", "fp32", "fp64"):
        for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
            for mode in ("rn", "rz", "ru", "rd", "rn.default"):
                key = f"accuracy.{fmt}.{op}.{mode}.max_ulp"
                cells = [val(ms, key) for _, ms in cols]
                if all(c == "—" for c in cells):
                    continue
                out.append(f"| {op} | {fmt} | {mode} | " + " | ".join(cells) + " |")
    return out


def _fast_bound(v: Any) -> str:
    if v.bound is not None:
        return f"{v.bound} ulp"
    if v.abs_bound is not None:
        return f"abs {v.abs_bound:.3g} on {v.domain[0]:.3g}..{v.domain[1]:.3g}"
    return "per-input (see citation)" if v.bound_fn is not None else "implementation-defined"


def fast_table(inp: Inputs) -> list[str]:
    """Fast intrinsics, native_/half_ functions and fast-math builds (binary32)."""
    cols = columns(inp)
    out = ["| variant | backend | documented bound | max ulp | mean ulp | bound metric | worst input |",
           "|---|---|---|---|---|---|---|"]
    for v in functions.FAST:
        for label, ms in cols:
            if column_backend(label) != v.backend:
                continue
            base = f"accuracy.fp32.{v.label}"
            if f"{base}.max_ulp" not in ms:
                continue
            extra = (val(ms, f"{base}.max_abs") + " abs" if v.abs_bound is not None else
                     val(ms, f"{base}.max_ulp_over_bound") + " over" if v.bound_fn is not None else "")
            out.append(f"| {v.label} {' '.join(v.options)} | {label} | {_fast_bound(v)} | {val(ms, base + '.max_ulp')} | "
                       f"{val(ms, base + '.mean_ulp')} | {extra} | {worst(cols, base + '.max_ulp', label)} |")
    return out


def sweep_table(inp: Inputs) -> list[str]:
    """The exhaustive/strided sweep: inputs checked, rates, the plain fp64-reference sweep, the maximum."""
    out = ["| device | fn | mode | inputs checked | device s | checked/s | plain fp64-reference sweep/s | checked ÷ "
           "reference time | evaluate-only/s | max (MPFR) | worst input |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, ms in columns(inp):
        for fn in ("exp", "sin", "log"):
            r = ms.get(f"accuracy.sweep.fp32.{fn}.checked_per_s")
            m = ms.get(f"accuracy.sweep.fp32.{fn}.max_ulp")
            if not r or not m:
                continue
            i = r["info"]
            w = m["info"].get("worst") or {}
            ref = f"{i['reference_sweep_per_s']:.3g}" if "reference_sweep_per_s" in i else "—"
            ratio = f"{i['checked_over_reference_time']:.2f}" if "checked_over_reference_time" in i else "—"
            out.append(f"| {label} | {fn} | {i['mode']} | {i['checked']} | {i['device_s']:.4g} | {r['value']:.3g} | {ref} | "
                       f"{ratio} | {i['plain_sweep_per_s']:.3g} | {m['value']:.3g} ({m['info']['metric']}) | "
                       f"{', '.join(w.get('input_hex', []))} |")
    return out


SUM_VARIANTS = ("float", "float.kahan", "float2", "double", "double.kahan", "double2")


def _sum(ms: Metrics, variant: str, layout: str, lg: int) -> tuple[float, float] | None:
    e = ms.get(f"accuracy.sum.{variant}.{layout}.n{lg}.abs_err")
    t = ms.get(f"accuracy.sum.{variant}.{layout}.n{lg}.time_us")
    return (e["value"], t["value"]) if e and t else None


def sum_table(inp: Inputs) -> list[str]:
    """Summation: absolute error and time per variant, layout and size."""
    cols = [(c, ms) for c, ms in columns(inp) if any(k.startswith("accuracy.sum.") for k in ms)]
    out = ["| variant | layout | n | " + " | ".join(f"{c} abs error | {c} µs" for c, _ in cols) + " |",
           "|---|---|---|" + "---|---|" * len(cols)]
    for layout in ("serial", "parallel", "pairwise"):
        for variant in SUM_VARIANTS:
            for lg in (12, 16, 20, 24):
                cells = [_sum(ms, variant, layout, lg) for _, ms in cols]
                if all(x is None for x in cells):
                    continue
                out.append(f"| {variant} | {layout} | 2^{lg} | " + " | ".join(
                    f"{x[0]:.3g} | {x[1]:.4g}" if x else "— | —" for x in cells) + " |")
    return out


def _orders(worse: float, better: float) -> str:
    if better == 0:
        return f"exact (0 vs {worse:.2g})" if worse else "both exact"
    if worse == 0:
        return f"worse ({better:.2g} vs 0)"
    return f"{math.log10(worse / better):+.1f}"


def tradeoff_table(inp: Inputs) -> list[str]:
    """Surineni's perf × accuracy comparisons (ch. 4.1.1) at the largest n each layout has."""
    out = ["| device | layout | n | float2 vs float: orders more accurate, time × | double2 vs double: orders, time × "
           "| float2 vs double: orders, time × |", "|---|---|---|---|---|---|",
           "| Surineni thesis (Kepler/Maxwell, 1M values, ch. 4.1.1) | serial & parallel | 2^20 | 4–5, 1.22–1.25× | "
           "8–14, 1.33× (Kepler) / ~2× (Maxwell) | float2 less accurate, slower or equal |"]
    for label, ms in columns(inp):
        for layout in ("serial", "parallel"):
            lgs = [lg for lg in (24, 20, 16, 12) if _sum(ms, "float", layout, lg) and _sum(ms, "double2", layout, lg)]
            if not lgs:
                continue
            lg = lgs[0]
            f, f2, d, d2 = (_sum(ms, v, layout, lg) for v in ("float", "float2", "double", "double2"))
            float2_float = f"{_orders(f[0], f2[0])}, {f2[1] / f[1]:.2f}×"
            double2_double = f"{_orders(d[0], d2[0])}, {d2[1] / d[1]:.2f}×"
            float2_double = f"{_orders(f2[0], d[0])} (double better), {f2[1] / d[1]:.2f}×"
            out.append(f"| {label} | {layout} | 2^{lg} | {float2_float} | {double2_double} | {float2_double} |")
    return out


def fuzz_table(inp: Inputs) -> list[str]:
    """One row per fuzz region / searched function; each cell is max (documented bound of that backend)."""
    cols = columns(inp)
    names = sorted({k for _, ms in cols for k in ms if k.startswith(("accuracy.fuzz.", "accuracy.search."))},
                   key=lambda k: (k.split(".")[1], k.split(".")[2], k))
    out = ["| test | " + " | ".join(f"{c} max (bound)" for c, _ in cols) + " | worst input (max) |",
           "|---|" + "---|" * len(cols) + "---|"]
    for k in names:
        cells = []
        for _, ms in cols:
            m = ms.get(k)
            bound = ((m or {}).get("info") or {}).get("bound")
            cells.append("—" if m is None else f"{val(ms, k)} ({bound:g})" if isinstance(bound, (int, float)) else val(ms, k))
        out.append(f"| {k[len('accuracy.'):-len('.max_ulp')]} | " + " | ".join(cells) + f" | {worst(cols, k)} |")
    return out


#: the published exhaustive binary32 maxima copied here (fractional ulp): Gladman, Innocente, Mather, Zimmermann,
#: "Accuracy of Mathematical Functions in Single, Double, Double Extended, and Quadruple Precision"
#: (hal-03141101), CUDA column, measured with CUDA 11.2; a function not copied reads "—"
PUBLISHED_CUDA_11_2 = {"exp": 1.931}
#: a published and a measured maximum within this many ulp are the same figure (the paper gives three decimals)
SAME_ULP = 0.01


def _hex(text: str) -> str:
    """``-0x1.bcc7300000000p+3`` → ``-0x1.bcc73p+3``: a binary32 input without the padding float.hex adds."""
    mant, _, exp = text.partition("p")
    return f"{mant.rstrip('0').rstrip('.')}p{exp}" if "." in mant else text


def _at(value: Any, where: Any) -> str:
    """A maximum and, where known, the input where it occurs."""
    return f"{float(value):.4f}" + (f" ({_hex(str(where))})" if where else "")


def _fractional_cell(ms: Metrics, key: str) -> str:
    m = ms.get(key)
    return "needs a run" if m is None else _at(m["value"], (m.get("info") or {}).get("worst_input_hex"))


def fractional_table(inp: Inputs) -> list[str]:
    """Every binary32 function's exhaustive fractional maximum (``accuracy.fp32.<fn>.max_ulp_fractional``, the input
    where it occurs) on each CUDA column (roles ``h100``, ``h200``), beside the published CUDA 11.2 figure and the
    exhaustive OpenCL sweep (role ``opencl``: ``accuracy.sweep.fp32.<fn>.max_ulp`` where its mode is exhaustive)."""
    cols = columns(inp, ("h100", "h200"))
    sweep = merged(inp.maybe("opencl"))
    sweep_label = device_label(inp.maybe("opencl")[0]) if inp.maybe("opencl") else ""
    fns = sorted({name.split(".")[2] for _, ms in cols for name in ms
                  if name.startswith("accuracy.fp32.") and name.endswith(".max_ulp_fractional")
                  and not name.split(".")[2].startswith("__") and name.split(".")[2] != "fastmath"})
    out = ["| function | published, CUDA 11.2 (paper) | paper vs measured (a difference over 0.01 ulp) | "
           + " | ".join(f"{c}, `max_ulp_fractional` (input)" for c, _ in cols)
           + (f" | {sweep_label}, exhaustive sweep (input)" if sweep_label else "") + " |",
           "|---|---|---|" + "---|" * len(cols) + ("---|" if sweep_label else "")]
    for fn in fns:
        key = f"accuracy.fp32.{fn}.max_ulp_fractional"
        paper = PUBLISHED_CUDA_11_2.get(fn)
        measured = [(c, float(ms[key]["value"])) for c, ms in cols if key in ms]
        if paper is None:
            versus = "—"
        else:
            off = [f"{c} {v:.4f} ({v - paper:+.4f})" for c, v in measured if abs(v - paper) > SAME_ULP]
            versus = ("differs: " + ", ".join(off)) if off else \
                "same (" + "; ".join(f"{c} {v:.4f}" for c, v in measured) + ")"
        row = f"| {fn}f | {paper if paper is not None else '—'} | {versus} | " + \
            " | ".join(_fractional_cell(ms, key) for _, ms in cols)
        if sweep_label:
            m = sweep.get(f"accuracy.sweep.fp32.{fn}.max_ulp")
            info = (m or {}).get("info") or {}
            cell = "—"
            if m is not None and info.get("mode") == "exhaustive":
                where = (info.get("worst") or {}).get("input_hex") or [None]
                cell = _at(m["value"], where[0])
            row += f" | {cell}"
        out.append(row + " |")
    return out


TABLES = {"accuracy-functions": function_table, "accuracy-ops": ops_table, "accuracy-fast": fast_table,
          "accuracy-sweep": sweep_table, "accuracy-sum": sum_table, "accuracy-tradeoff": tradeoff_table,
          "accuracy-fuzz": fuzz_table, "accuracy-fractional": fractional_table}
