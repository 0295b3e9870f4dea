#!/usr/bin/env python3
"""Print the markdown tables of docs/precision-quant.md and of the "math as users call it" section of
docs/accuracy.md from results JSON files (never typed by hand).

    python scripts/tables_precision.py [results/] quant|users

Our columns: PoCL (results/pocl-*/precision-opencl.json) and H100 (results/nvidia-h100-80gb-hbm3/
precision-cuda.json); a missing file or metric reads "not yet measured". The thesis' figures are Dao's,
chapter 4, Tables 5 and 6 (validation accuracy, %), typed from the thesis and cited per column."""

from __future__ import annotations

import glob
import json
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "results"
WHAT = sys.argv[2] if len(sys.argv) > 2 else "quant"
NOT_YET = "not yet measured"


def load(pattern: str) -> tuple[dict, str]:
    files = sorted(glob.glob(os.path.join(ROOT, pattern)))
    if not files:
        return {}, ""
    return {m["name"]: m for m in json.load(open(files[0]))["metrics"]}, files[0]


POCL = load("pocl-*/precision-opencl.json")
H100 = load("nvidia-h100-80gb-hbm3/precision-cuda.json")

#: Dao, thesis chapter 4: (table, network) -> {method: validation accuracy %}
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


def ours(col: tuple[dict, str], name: str, fmt: str = "{:+.2f}") -> str:
    m = col[0].get(name)
    return NOT_YET if m is None else fmt.format(m["value"])


def quant() -> None:
    heads = [f"{n} {t.split(' ')[0]} {t.split(' ')[1]}" for t, n in THESIS]
    print("| method | digits MLP, PoCL (ours) | digits MLP, H100 (ours) | " + " | ".join(heads) + " |")
    print("|---|---|---|" + "---|" * len(heads))
    fp = [ours(POCL, "precision.quant.fp32.accuracy", "{:.2f}"), ours(H100, "precision.quant.fp32.accuracy", "{:.2f}")]
    print(f"| fp32 accuracy (%) | {fp[0]} | {fp[1]} | " + " | ".join(f"{v['fp32']:.2f}" for v in THESIS.values()) + " |")
    for m in METHODS:
        th = [(f"{v['fp32'] - v[m]:+.2f}" if m in v else "—") for v in THESIS.values()]
        print(f"| {LABEL[m]}: INT8 drop (pp) | {ours(POCL, f'precision.quant.{m}.accuracy_drop')} | "
              f"{ours(H100, f'precision.quant.{m}.accuracy_drop')} | " + " | ".join(th) + " |")
    for m in METHODS:
        print(f"| {LABEL[m]}: INT4 drop (pp) | {ours(POCL, f'precision.quant.{m}.int4.accuracy_drop')} | "
              f"{ours(H100, f'precision.quant.{m}.int4.accuracy_drop')} | " + " | ".join("—" for _ in THESIS) + " |")
    print()
    print("| GEMM 256³ | PoCL (CPU, ours) | H100 (ours) |")
    print("|---|---|---|")
    for name, lab, f in (("precision.quant.gemm.int8.time_us", "int8 (int32 accumulation) µs", "{:.0f}"),
                         ("precision.quant.gemm.fp32.time_us", "fp32 µs", "{:.0f}"),
                         ("precision.quant.gemm.int8_over_fp32", "int8 over fp32 (×)", "{:.2f}")):
        print(f"| {lab} | {ours(POCL, name, f)} | {ours(H100, name, f)} |")
    print(f"\nSources: PoCL `{POCL[1] or '—'}`; H100 `{H100[1] or '—'}`.")


def users() -> None:
    libs = [("pyopencl", "PoCL pyopencl.clmath", POCL), ("cupy.ufunc", "H100 CuPy ufunc", H100),
            ("cupy.elementwise", "H100 CuPy ElementwiseKernel", H100), ("cupy.raw", "H100 CuPy RawKernel", H100)]
    names = sorted({n.split(".")[3] for n in POCL[0] if n.startswith("accuracy.pyopencl.")})
    print("| function | prec | bound (OpenCL ulp) | PoCL project build | " + " | ".join(l[1] for l in libs)
          + " | PoCL results differing from the project build | PoCL pyopencl search max |")
    print("|---|---|---|---|" + "---|" * len(libs) + "---|---|")
    for fn in names:
        for fmt in ("fp32", "fp64"):
            m = POCL[0].get(f"accuracy.pyopencl.{fmt}.{fn}.max_ulp")
            if m is None:
                continue
            i = m["info"]
            cols = [ours(c, f"accuracy.{p}.{fmt}.{fn}.max_ulp", "{:.3g}") for p, _, c in libs]
            search = (i.get("search") or {}).get("max")
            print(f"| {fn} | {fmt} | {i.get('bound', '—'):g} | {i['project_max_ulp']:.3g} | " + " | ".join(cols)
                  + f" | {i['differs_from_project']} of {i['n']} | {'—' if search is None else f'{search:.3g}'} |")
    print(f"\nSources: PoCL `{POCL[1] or '—'}`; H100 `{H100[1] or '—'}`.")


if __name__ == "__main__":
    {"quant": quant, "users": users}[WHAT]()
