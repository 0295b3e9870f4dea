"""Tables of docs/precision.md, docs/precision-quant.md and the users' math section of docs/accuracy.md:
the precision tuner's choices per kernel, the mixed-precision solve, emulated precision, INT8
quantization beside Dao's Tables 5–6, and the math as users call it (pyopencl, CuPy).

Cells of several runs of one device read ``first / second / …`` in the order the marker names the runs.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .accuracy_tables import columns, device_label
from .registry import Inputs
from .runfile import Run, merged

NOT_YET = "not yet measured"
KERNELS = ("gaussian", "lu", "lavamd", "stencil", "nbody", "reduction")


def _over(runs: list[Run], name: str, fmt: Callable[[Mapping[str, Any]], str]) -> str:
    cells = [fmt(r.get(name)) if r.get(name) is not None else "–" for r in runs]
    return " / ".join(cells)


def _value(spec: str) -> Callable[[Mapping[str, Any]], str]:
    """A cell of :func:`_over`: the metric's value in the format ``spec``."""
    return lambda m: format(m["value"], spec)


def choice_rule(info: Mapping[str, Any]) -> str:
    """How a run's tuner chose its mix, from the speedup's info: the most lowered or the thesis' timed cost."""
    choice = str(info.get("choice", ""))
    return "most lowered" if choice.startswith("the passing mix") else "thesis cost (timed)" if info else "–"


def tuner(inp: Inputs) -> list[str]:
    """Per kernel: operations, how many pass, which the choice lowered, error, speedup, iterations."""
    runs = inp.runs("runs")
    out = ["| kernel | ops | passing (furthest) | chosen: fp32 ops | chosen by | error | speedup (original / chosen) "
           "| iterations: step 8 + cut points (step 1) |", "|---|---|---|---|---|---|---|---|"]
    for k in KERNELS:
        base = f"precision.tuner.{k}"
        if all(r.get(f"{base}.speedup") is None for r in runs):
            continue
        infos = [r.info(f"{base}.speedup") for r in runs if r.get(f"{base}.speedup") is not None]
        ops = infos[0].get("ops", "–")
        passing = " / ".join(str(len(i.get("furthest_lowered", []))) for i in infos)
        chosen = " / ".join(str(len(i.get("chosen_lowered", []))) for i in infos)
        rule = " / ".join(sorted({choice_rule(i) for i in infos}))
        its = " / ".join(f"{int(r.value(f'{base}.iterations'))} ({r.info(f'{base}.speedup').get('iterations_without_speedups', '–')})"
                         for r in runs if r.get(f"{base}.iterations") is not None)
        out.append(f"| {k} | {ops} | {passing} | {chosen} | {rule} | {_over(runs, f'{base}.error', _value('.2g'))} | "
                   f"{_over(runs, f'{base}.speedup', _value('.3f'))} | {its} |")
    return out


def tuner_mixes(inp: Inputs) -> list[str]:
    """Per kernel and run: the operations the chosen mix runs in fp32."""
    runs = inp.runs("runs")
    out = ["| kernel | run | chosen fp32 operations |", "|---|---|---|"]
    for k in KERNELS:
        for r in runs:
            i = r.info(f"precision.tuner.{k}.speedup")
            if i:
                out.append(f"| {k} | `{r.stem}` | {', '.join(f'`{n}`' for n in i.get('chosen_lowered', [])) or 'none (the original)'} |")
    return out


def refinement(inp: Inputs) -> list[str]:
    """Mixed solve against the fp64 solve per n: speedup, times, refinements, launches, κ limit."""
    runs = inp.runs("runs")
    sizes = sorted({int(n.split(".")[2][1:]) for r in runs for n in r.metrics
                    if n.startswith("precision.refine.n") and n.endswith(".speedup")})
    out = ["| n | speedup (fp64 / mixed) | mixed ms | fp64 ms | refinements | backward error | µs per launch, mixed / fp64 |",
           "|---|---|---|---|---|---|---|"]
    for n in sizes:
        b = f"precision.refine.n{n}"
        ms = lambda key: (lambda m: f"{m['info'][key] / 1000:.1f}")  # noqa: E731
        per = " / ".join(f"{i['us_per_launch']['mixed']:.1f}, {i['us_per_launch']['fp64']:.1f}" if "us_per_launch" in i else "–"
                         for i in (r.info(f"{b}.speedup") for r in runs if r.get(f"{b}.speedup") is not None))
        out.append(f"| {n} | {_over(runs, f'{b}.speedup', _value('.2f'))} | "
                   f"{_over(runs, f'{b}.speedup', ms('t_mixed_us'))} | {_over(runs, f'{b}.speedup', ms('t_fp64_us'))} | "
                   f"{_over(runs, f'{b}.iterations', lambda m: str(int(m['value'])))} | "
                   f"{_over(runs, f'{b}.backward_error', _value('.2g'))} | {per} |")
    lim = [r for r in runs if r.get("precision.refine.kappa_limit") is not None]
    if lim:
        pts = lim[0].info("precision.refine.kappa_limit").get("points", [])
        steps = ", ".join(str(p["iterations"]) for p in pts if p["converged"])
        out.append(f"| κ limit (n = {lim[0].get('precision.refine.kappa_limit')['identity'].get('n', '?')}) | "
                   f"{_over(lim, 'precision.refine.kappa_limit', _value('.0e'))} | | | "
                   f"{steps} (κ = 10, 100, … while converging) | | |")
    return out


def vprec(inp: Inputs) -> list[str]:
    """Emulated precision: in-kernel rounding mismatches and the fewest mantissa bits per kernel."""
    runs = inp.runs("runs")
    out = ["| figure | " + " | ".join(f"`{r.stem}`" for r in runs) + " |", "|---|" + "---|" * len(runs)]
    rows = [("rounding mismatches", "precision.vprec.rounding_mismatches", lambda m: str(int(m["value"])))]
    for k in ("stencil", "reduction"):
        def bits(m: Mapping[str, Any]) -> str:
            e = m["info"].get("errors_by_p", {})
            p = int(m["value"])
            return f"{p} (p = {p - 1}: {e.get(str(p - 1), float('nan')):.3g}; p = {p}: {e.get(str(p), float('nan')):.3g})"
        rows.append((f"{k} min mantissa bits", f"precision.vprec.{k}.min_mantissa_bits", bits))
    for label, name, fmt in rows:
        out.append(f"| {label} | " + " | ".join(fmt(r.get(name)) if r.get(name) else "–" for r in runs) + " |")
    return out


#: Dao, thesis chapter 4: (table, network) -> {method: validation accuracy %} (CIFAR10 / ImageNet, SGD)
THESIS = {
    ("Table 5 (CIFAR10, SGD)", "Resnet18"): {"fp32": 94.53, "max": 94.1, "rand": 94.23, "rand_mix": 94.72},
    ("Table 5 (CIFAR10, SGD)", "EfficientNet-B0"): {"fp32": 85.75, "max": 83.52, "rand": 83.68, "rand_mix": 86.85},
    ("Table 5 (CIFAR10, SGD)", "MobileNetV2"): {"fp32": 90.77, "max": 89.1, "rand": 89.0, "rand_mix": 91.02},
    ("Table 6 (ImageNet, SGD)", "Resnet18"): {"fp32": 69.9, "max": 68.53, "rand": 69.2, "rand_mix": 69.63},
    ("Table 6 (ImageNet, SGD)", "Resnet50"): {"fp32": 75.7, "max": 73.31, "rand": 73.32, "rand_mix": 75.53},
}
METHODS = ["ptq_max", "max", "percentile", "rand", "rand_mix"]
LABEL = {"ptq_max": "MAX, post-training (ours only)", "max": "MAX", "percentile": "histogram 99.99th percentile",
         "rand": "Rand (noise in the scale)", "rand_mix": "Rand+mix (adaptive precision)"}


def _ours(ms: Mapping[str, Any], name: str, fmt: str = "{:+.2f}") -> str:
    m = ms.get(name)
    return NOT_YET if m is None else fmt.format(m["value"])


def quant(inp: Inputs) -> list[str]:
    """INT8/INT4 accuracy drops per method (ours: digits MLP) beside the thesis' Tables 5 and 6."""
    cols = columns(inp, ("pocl", "gpu"))
    heads = [f"{n} {t.split(' ')[0]} {t.split(' ')[1]} (thesis)" for t, n in THESIS]
    out = ["| method | " + " | ".join(f"digits MLP, {c} (ours)" for c, _ in cols) + " | " + " | ".join(heads) + " |",
           "|---|" + "---|" * len(cols) + "---|" * len(heads)]
    out.append("| fp32 accuracy (%) | " + " | ".join(_ours(ms, "precision.quant.fp32.accuracy", "{:.2f}") for _, ms in cols)
               + " | " + " | ".join(f"{v['fp32']:.2f}" for v in THESIS.values()) + " |")
    for bits, suffix in (("INT8", ""), ("INT4", ".int4")):
        for m in METHODS:
            th = [(f"{v['fp32'] - v[m]:+.2f}" if m in v and not suffix else "—") for v in THESIS.values()]
            out.append(f"| {LABEL[m]}: {bits} drop (pp) | " + " | ".join(
                _ours(ms, f"precision.quant.{m}{suffix}.accuracy_drop") for _, ms in cols) + " | " + " | ".join(th) + " |")
    out += ["", "| GEMM 256³ | " + " | ".join(f"{c} (ours)" for c, _ in cols) + " |", "|---|" + "---|" * len(cols)]
    for name, lab, f in (("precision.quant.gemm.int8.time_us", "int8 (int32 accumulation) µs", "{:.0f}"),
                         ("precision.quant.gemm.fp32.time_us", "fp32 µs", "{:.0f}"),
                         ("precision.quant.gemm.int8_over_fp32", "int8 over fp32 (×)", "{:.2f}")):
        out.append(f"| {lab} | " + " | ".join(_ours(ms, name, f) for _, ms in cols) + " |")
    return out


def users(inp: Inputs) -> list[str]:
    """The math as users call it: pyopencl.clmath on PoCL and CuPy's three APIs on a CUDA device."""
    pocl = merged(inp.runs("pocl"))
    cuda = merged(inp.maybe("cuda"))
    gpu = device_label(inp.maybe("cuda")[0]).split()[0] if inp.maybe("cuda") else "GPU"
    libs = [("pyopencl", "PoCL pyopencl.clmath", pocl), ("cupy.ufunc", f"{gpu} CuPy ufunc", cuda),
            ("cupy.elementwise", f"{gpu} CuPy ElementwiseKernel", cuda), ("cupy.raw", f"{gpu} CuPy RawKernel", cuda)]
    names = sorted({n.split(".")[3] for n in pocl if n.startswith("accuracy.pyopencl.")})
    out = ["| function | prec | bound (OpenCL ulp) | PoCL project build | " + " | ".join(lb for _, lb, _ in libs)
           + " | PoCL results differing from the project build | PoCL pyopencl search max |",
           "|---|---|---|---|" + "---|" * len(libs) + "---|---|"]
    for fn in names:
        for fmt in ("fp32", "fp64"):
            m = pocl.get(f"accuracy.pyopencl.{fmt}.{fn}.max_ulp")
            if m is None:
                continue
            i = m["info"]
            cells = [_ours(ms, f"accuracy.{p}.{fmt}.{fn}.max_ulp", "{:.3g}") for p, _, ms in libs]
            search = (i.get("search") or {}).get("max")
            out.append(f"| {fn} | {fmt} | {i.get('bound', '—'):g} | {i['project_max_ulp']:.3g} | " + " | ".join(cells)
                       + f" | {i['differs_from_project']} of {i['n']} | {'—' if search is None else f'{search:.3g}'} |")
    return out


def users_cuda(inp: Inputs) -> list[str]:
    """CuPy on a CUDA device against CUDA's bound: the project build's maximum on each API's inputs, the
    results differing from the project build, flushed binary32 inputs left out, failing inputs."""
    cuda = merged(inp.runs("cuda"))
    apis = ("ufunc", "elementwise", "raw")
    names = sorted({n.split(".")[4] for n in cuda if n.startswith("accuracy.cupy.") and n.endswith(".max_ulp")})
    out = ["| function | prec | CUDA bound (ulp) | project build, max (ufunc / Elementwise / Raw inputs) | results differing "
           "from the project build (ufunc / Elementwise / Raw) | binary32 inputs left out as flushed (ufunc / Elementwise / "
           "Raw) | failing inputs (all three) |", "|---|---|---|---|---|---|---|"]
    for fn in names:
        for fmt in ("fp32", "fp64"):
            infos = [(cuda.get(f"accuracy.cupy.{a}.{fmt}.{fn}.max_ulp") or {}).get("info") for a in apis]
            have = [i for i in infos if i]
            if not have:
                continue
            cell = lambda key, fmt_=str: _cells([fmt_(i[key]) if i and key in i else "—" for i in infos])  # noqa: E731
            flushed = cell("ftz_excluded") if fmt == "fp32" else "—"
            fails: dict[str, int] = {}
            for i in have:
                for k, n in (i.get("mismatches") or {}).items():
                    fails[k] = max(fails.get(k, 0), int(n))
            failing = ", ".join(f"{n} ({k})" for k, n in fails.items()) or "0"
            out.append(f"| {fn} | {fmt} | {have[0].get('bound', '—'):g} | {cell('project_max_ulp', lambda v: f'{v:g}')} | "
                       f"{cell('differs_from_project')} | {flushed} | {failing} |")
    return out


def _cells(vals: list[str]) -> str:
    return vals[0] if len(set(vals)) == 1 else " / ".join(vals)


TABLES = {"precision-tuner": tuner, "precision-tuner-mixes": tuner_mixes, "precision-refine": refinement,
          "precision-vprec": vprec, "precision-quant": quant, "accuracy-users": users,
          "accuracy-users-cuda": users_cuda}
