"""INT8 against fp32 GEMM on the device: the same loop over 256³ (A row-major, B transposed, one output
per work-item, four codes per step; int32 accumulation, ``__dp4a`` on CUDA), checked exact before it is
timed. On a CPU device (PoCL) the figure is the host's SIMD units', not a GPU's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..devices.base import Device
from ..timing.profiles import profile
from . import quant_kernels, quant_mlp as qm

GEMM_N = 256
SEED = 17
LAYOUT = "A row-major, B transposed, one output per work-item, 4 codes per step"


@dataclass
class Gemm:
    """Both GEMMs' kernels and arguments on one device, and whether each computed the exact product
    (int32 accumulation is exact: |acc| ≤ 256·128² < 2^24, so its fp32 copy is too)."""

    device: Device
    mlp: qm.QuantMLP
    grid: Any
    args8: list[Any]
    argsf: list[Any]
    int8_exact: bool
    fp32_exact: bool

    def records(self, measurer: Any) -> list[dict[str, Any]]:
        """Time both GEMMs (``measurer``: the test's ``gpu_measure``, with the ``quant_gemm`` profile) and
        give their times and fp32 time over int8 time as ``gpuperf_record`` arguments."""
        info = self.device.info
        prof = profile("quant_gemm", info.is_cpu)
        m8 = measurer(self.mlp.k["q_gemm_i8"], self.grid, (qm.LOCAL,), self.args8, **prof)
        mf = measurer(self.mlp.k["q_gemm_f32"], self.grid, (qm.LOCAL,), self.argsf, **prof)
        where = ("a CPU figure (PoCL vectorizes the OpenCL kernel for the host's SIMD units), not a GPU one"
                 if info.is_cpu else "device figure")
        ops = 2.0 * GEMM_N ** 3
        ident = {"n": GEMM_N, "layout": LAYOUT}
        return [
            {"name": "precision.quant.gemm.int8.time_us", "value": m8.stats.median * 1e6, "unit": "us",
             "better": "lower", "stats": m8.stats.scaled(1e6),
             "info": {"gops": ops / m8.stats.median / 1e9, "note": where}, "identity": ident},
            {"name": "precision.quant.gemm.fp32.time_us", "value": mf.stats.median * 1e6, "unit": "us",
             "better": "lower", "stats": mf.stats.scaled(1e6),
             "info": {"gflops": ops / mf.stats.median / 1e9, "note": where}, "identity": ident},
            {"name": "precision.quant.gemm.int8_over_fp32", "value": mf.stats.median / m8.stats.median, "unit": "x",
             "better": "higher", "valid": (1e-3, 1e3),
             "info": {"note": where, "int8_path": quant_kernels.INT8_PATH[info.dialect.name]}, "identity": ident},
        ]


def prepare(device: Device, mlp: qm.QuantMLP) -> Gemm:
    """Seeded int8 operands (and their fp32 copies) on the device, each GEMM run once and compared with
    the exact integer product on the host."""
    i32, f32, n = np.int32, np.float32, GEMM_N
    rng = np.random.default_rng(SEED)
    a8 = rng.integers(-128, 128, (n, n), dtype=np.int64).astype(np.int8)
    b8 = rng.integers(-128, 128, (n, n), dtype=np.int64).astype(np.int8)  # B transposed: one row per output
    af, bf = a8.astype(np.float32), b8.astype(np.float32)
    bias = device.to_device(np.zeros(n, np.float32))
    A8, B8, AF, BF = (device.to_device(x) for x in (a8, b8, af, bf))
    o8, of = device.empty(4 * n * n), device.empty(4 * n * n)
    grid = qm.ndrange((n * n,), (qm.LOCAL,))
    args8 = [A8, B8, bias, o8, i32(n), i32(n), i32(n), f32(1.0), i32(0)]
    argsf = [AF, BF, bias, of, i32(n), i32(n), i32(n), f32(1.0), i32(0)]
    exact = (a8.astype(np.int64) @ b8.astype(np.int64).T).astype(np.float32)
    device.launch(mlp.k["q_gemm_i8"], grid, (qm.LOCAL,), args8)
    device.launch(mlp.k["q_gemm_f32"], grid, (qm.LOCAL,), argsf)
    got8 = device.to_host(o8, np.float32, n * n).reshape(n, n)
    gotf = device.to_host(of, np.float32, n * n).reshape(n, n)
    return Gemm(device, mlp, grid, args8, argsf, bool(np.array_equal(got8, exact)), bool(np.array_equal(gotf, exact)))
