#!/usr/bin/env python3
"""Compile the CUDA side of kernels that no GPU has run yet, with NVRTC and no GPU: the precision
auto-tuner's six templates (all-double and all-float mixes), the device LU and refinement kernels, the
VPREC rounding kernel and two VPREC-rendered programs, and the quantization kernels. A compile error
here is one the lent H100 would otherwise show first (it found a host-only helper in vprec.py).

    pip install --target /tmp/nvrtc-site nvidia-cuda-nvrtc==13.0.*
    PYTHONPATH=/tmp/nvrtc-site python scripts/cuda_compile_check.py      # exits 1 on a compile error
"""
import sys, ctypes
from pytest_gpuperf.devices import recompile
from pytest_gpuperf.precision import dialect as pd, lukernels, vprec, template, quant_kernels
from pytest_gpuperf.precision.programs import PROGRAMS

def ptx(src, opts):
    lib = None
    for p in recompile._loaded_nvrtc():
        try: lib = recompile._open(p); break
        except OSError: pass
    prog = ctypes.c_void_p(); lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n)); log = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace")

cases = []
# precision
for name, prog in PROGRAMS.items():
    t = template.TypedTemplate.parse(prog.template)
    for default in ("double", "float"):
        try:
            text = t.render(default=default)
        except Exception as e:
            print("render fail", name, e); continue
        cases.append((f"precision.{name}.{default}", pd.source(text, "cuda")))
for real in ("float", "double"):
    cases.append((f"lu.{real}", pd.source(f"#define REAL {real}\n" + lukernels.LU, "cuda")))
cases.append(("lu.refine", pd.source(lukernels.REFINE, "cuda")))
cases.append(("vprec.round", pd.source(vprec.Format(8, 10).defines() + vprec.ROUNDING_KERNEL, "cuda")))
for name, prog in list(PROGRAMS.items())[:2]:
    t = template.TypedTemplate.parse(prog.template)
    cases.append((f"vprec.{name}", pd.source(vprec.render(t, vprec.Format(8, 10)), "cuda")))
cases.append(("quant", quant_kernels.source("cuda")))
bad = 0
for name, src in cases:
    rc, log = ptx(src, ["-arch=compute_90", "-std=c++17"])
    if rc:
        bad += 1; print("FAIL", name, log[:600])
print(len(cases), "compiled,", bad, "failed")
sys.exit(1 if bad else 0)
