"""Device evaluators: one generated kernel per (expression, format, build options) that applies the
expression element-wise, for CUDA (NVRTC) and OpenCL. The expression names its arguments x0, x1, x2."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..devices import ndrange
from ..devices.dialect import DIALECTS, dialect, per_language
from .fp_formats import Format

#: C element type per kernel language and format (binary16 is the dialect's half type)
CTYPE = {name: {"fp16": d.half_type, "fp32": "float", "fp64": "double"} for name, d in DIALECTS.items()}
LOCAL = 256


#: Entry point of the evaluator per kernel language (``Dialect.name``): the declaration up to the index
#: ``i``, and one input parameter (``{t}``: element type, ``{k}``: argument number).
EVAL_ENTRY = per_language(
    cuda=('extern "C" __global__ void acc_eval({params}, {t}* __restrict__ y, int n) {{\n'
          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n", "const {t}* __restrict__ p{k}"),
    opencl=("__kernel void acc_eval({params}, __global {t}* y, int n) {{\n"
            "  int i = get_global_id(0);\n", "__global const {t}* p{k}"),
)


def eval_source(backend: str, fmt: Format, expr: str, arity: int, plant: bool = False, helpers: str = "") -> str:
    """The element-wise evaluator; ``plant`` applies the gate check's 1-ulp plant (binary32 only, see
    :data:`.sweep.PLANT`) to the result; ``helpers``: the caller's own device functions, put before the entry
    point (the expression may call them)."""
    from .sweep import PLANT

    t = CTYPE[backend][fmt.name]
    loads = " ".join(f"{t} x{k} = p{k}[i];" for k in range(arity))
    if plant:
        if fmt.name != "fp32":
            raise ValueError("the ulp plant applies to binary32 results only")
        expr = f"gp_plant(({expr}), x0)"
    helper = PLANT[backend] if plant else ""
    d = dialect(backend)
    head = {"fp16": d.fp16_prelude, "fp64": d.fp64_prelude}.get(fmt.name, "") + helper + (helpers.rstrip() + "\n" if helpers else "")
    entry, param = EVAL_ENTRY[backend]
    params = ", ".join(param.format(t=t, k=k) for k in range(arity))
    return head + entry.format(params=params, t=t) + f"  if (i < n) {{ {loads} y[i] = {expr}; }}\n}}\n"


def evaluate(device, fmt: Format, expr: str, args: Sequence[np.ndarray], options: Sequence[str] = (),
             timeout_s: float = 120.0, plant: bool = False, helpers: str = "") -> np.ndarray:
    """Run ``expr`` over the argument columns on ``device``; returns the results as ``fmt.dtype``."""
    arity = len(args)
    kernel = device.compile(eval_source(device.info.backend, fmt, expr, arity, plant, helpers), "acc_eval",
                            tuple(options))
    n = len(args[0])
    bufs = [device.to_device(np.ascontiguousarray(a, dtype=fmt.dtype).view(fmt.bits)) for a in args]
    out = device.empty(max(n, 1) * fmt.dtype.itemsize)
    device.launch(kernel, ndrange((n,), (LOCAL,)), (LOCAL,), [*bufs, out, np.int32(n)])
    device.synchronize(timeout_s)
    return device.to_host(out, fmt.bits, n).view(fmt.dtype)
