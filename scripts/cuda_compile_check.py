#!/usr/bin/env python3
"""Compile the CUDA side of kernels that no GPU has run yet, with NVRTC and no GPU: the precision
auto-tuner's six templates (all-double and all-float mixes), the device LU and refinement kernels, the
VPREC rounding kernel and two VPREC-rendered programs, the quantization kernels, the work-group scheduling
trace kernels, the mixed-precision addition kernels, the composite-precision operations, and the application
corpus of the sampled-kernel model. A compile error here is one a GPU host would otherwise show first
(it found a host-only helper in vprec.py).

    pip install --target /tmp/nvrtc-site nvidia-cuda-nvrtc==13.0.*
    PYTHONPATH=/tmp/nvrtc-site python scripts/cuda_compile_check.py [PREFIX]   # exits 1 on a compile error

PREFIX compiles only the cases whose name starts with it (``app.``: the application corpus).
"""
from __future__ import annotations

import sys

from pytest_gpuperf.devices import recompile
from pytest_gpuperf.devices.dialect import portable_fp64
from pytest_gpuperf.errors import ProbeVerificationError
from pytest_gpuperf.corpora.app_kernels import APP_KERNELS
from pytest_gpuperf.precision import lukernels, quant_kernels, template, vprec
from pytest_gpuperf.accuracy import composite_ops, expr_kernels, fp_formats
from pytest_gpuperf.probes import mixed_adds, wg_schedule
from pytest_gpuperf.precision.programs import PROGRAMS

OPTIONS = ["-arch=compute_90", "-std=c++17"]


def cases() -> list[tuple[str, str]]:
    """(name, CUDA text) of every kernel the check compiles; a template that does not render is an error
    of the check itself (it raises), not a kernel left out."""
    out = []
    for name, prog in PROGRAMS.items():
        t = template.TypedTemplate.parse(prog.template)
        out += [(f"precision.{name}.{d}", portable_fp64(t.render(default=d), "cuda")) for d in ("double", "float")]
    out += [(f"lu.{real}", portable_fp64(f"#define REAL {real}\n" + lukernels.LU, "cuda")) for real in ("float", "double")]
    out.append(("lu.refine", portable_fp64(lukernels.REFINE, "cuda")))
    fmt = vprec.Format(8, 10)
    out.append(("vprec.round", portable_fp64(fmt.defines() + vprec.ROUNDING_KERNEL, "cuda")))
    for name, prog in list(PROGRAMS.items())[:2]:
        out.append((f"vprec.{name}", portable_fp64(vprec.render(template.TypedTemplate.parse(prog.template), fmt), "cuda")))
    out.append(("quant", quant_kernels.source("cuda")))
    out.append(("sched", wg_schedule.SOURCE))
    out.append(("mixed_adds", mixed_adds.source("cuda")))
    out += [(f"cmp.{op}.{k}", expr_kernels.eval_source("cuda", fp_formats.FP32, e, 4))
            for op in composite_ops.OPS for k, e in enumerate(composite_ops.expressions("cuda", op))]
    out += [(f"app.{k.name}", k.source("cuda")) for k in APP_KERNELS]
    return out


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    todo = [c for c in cases() if c[0].startswith(prefix)]
    if not todo:
        print(f"no case starts with {prefix!r}")
        return 1
    bad = 0
    for name, src in todo:
        try:
            recompile.compile_ptx(src, OPTIONS)
        except ProbeVerificationError as exc:
            bad += 1
            print(f"FAIL {name}: {str(exc)[:600]}")
    print(f"{len(todo)} compiled, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
