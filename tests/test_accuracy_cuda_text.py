"""The accuracy suites' CUDA kernels are valid CUDA C: the exhaustive sweep of every binary32 unary
function and CUDA fast intrinsic (plain, with the mean's sums, and with the gate check's ulp plant) and
the element-wise evaluator with the plant.

CI has no GPU, so these texts run only in the GPU session; this test compiles them with ``nvcc -ptx``
(the front end NVRTC shares) where a CUDA toolkit is installed, so a typo in a CUDA-only branch shows
before a GPU session is spent on it. Machines without nvcc skip with that reason. The texts of one kind
go into one translation unit (kernels renamed, macros undefined in between): one nvcc call each.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_gpuperf.accuracy import expr_kernels, fp_formats, functions, sweep

NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc on this machine: CUDA texts cannot be compiled here")

KERNELS = ("acc_sweep", "acc_plain", "acc_ref", "acc_eval")


def _unit(texts: list[str]) -> str:
    """One translation unit from several generated programs: kernel names numbered, the per-program
    macros undefined before the next program, the plant helper kept once."""
    out, helper, seen = [], sweep.PLANT["cuda"], False
    for i, text in enumerate(texts):
        if helper in text:
            text = text.replace(helper, "") if seen else text
            seen = True
        for k in KERNELS:
            text = re.sub(rf"\b{k}\b", f"{k}_{i}", text)
        out.append(text + "\n#undef FN32\n#undef FN64\n#undef GP_SUM\n")
    return "".join(out)


def _compile(tmp_path: Path, name: str, source: str, options: tuple[str, ...] = ()) -> None:
    src = tmp_path / f"{name}.cu"
    src.write_text(source)
    proc = subprocess.run([NVCC, "-ptx", "-arch=sm_90", *options, "-o", str(tmp_path / f"{name}.ptx"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{name} does not compile as CUDA:\n{proc.stderr[-3000:]}"


def _unary() -> list[tuple[str, str]]:
    """(binary32 expression, binary64 reference) of every unary library function the math suite certifies."""
    return [(f.expr("cuda", "fp32", ["x0"]), f.expr("cuda", "fp64", ["x0"]))
            for f in functions.FUNCTIONS.values() if f.arity == 1]


def test_library_sweeps_compile(tmp_path):
    texts = [sweep.source("cuda", e32, e64, plant=p, sums=s) for e32, e64 in _unary()
             for p, s in ((False, True), (True, True), (False, False))]
    _compile(tmp_path, "library", _unit(texts))


def test_fast_variant_sweeps_compile(tmp_path):
    groups: dict[tuple[str, ...], list[str]] = {}
    for v in functions.FAST:
        if v.backend != "cuda" or v.base in ("div", "pow"):
            continue
        e64 = functions.FUNCTIONS[v.base].expr("cuda", "fp64", ["x0"])
        groups.setdefault(v.options, []).append(sweep.source("cuda", f"{v.call}(x0)", e64, sums=True))
    assert set(groups) == {(), ("--use_fast_math",)}
    for i, (options, texts) in enumerate(groups.items()):
        _compile(tmp_path, f"fast{i}", _unit(texts), options)


def test_planted_evaluators_compile(tmp_path):
    texts = [expr_kernels.eval_source("cuda", fp_formats.FP32, e32, 1, plant=True) for e32, _ in _unary()]
    texts += [expr_kernels.eval_source("cuda", fp_formats.FP32, "powf(x0, x1)", 2, plant=True)]
    _compile(tmp_path, "evaluators", _unit(texts))
