"""The math as users call it: each backend's array library, evaluated on the device under test.

The accuracy suites build their own kernels (``accuracy.expr_kernels``); users mostly do not. They call
``pyopencl.clmath.sin`` on a ``pyopencl.array`` or CuPy's ufuncs, ``ElementwiseKernel`` and
``RawKernel``, which compile the same built-ins with the *library's* build options. This module is the
one place that knows those libraries (backend-specific by nature): :func:`user_math` returns an
evaluator for a library on a device, or raises :class:`BackendUnavailableError` with the reason the
device cannot provide it, so a suite keys its skips on capability, not on the backend's name.

Build options each library passes (read from their sources; ``build`` of the evaluator says it too):

* PyOpenCL (``pyopencl.elementwise`` → ``Program.build``): the caller's options (none for clmath),
  plus ``-I <pyopencl include dir>`` and whatever ``PYOPENCL_BUILD_OPTIONS`` adds; no
  ``-cl-fast-relaxed-math``, no ``-cl-denorms-are-zero``: the same math as the project's option-less
  OpenCL build.
* CuPy (every NVRTC compile: ufuncs, ``ElementwiseKernel``, ``RawKernel``; ``cupy/cuda/compiler.py``,
  ``_compile_with_cache_cuda``): ``-ftz=true`` always, plus ``--std=c++17``, ``-arch=compute_XX`` and
  its include dirs. The project's NVRTC build passes no ``-ftz`` (NVRTC's default is ``-ftz=false``), so
  binary32 subnormal inputs and results are flushed to zero under CuPy only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..errors import BackendUnavailableError

LIBRARIES = ("pyopencl", "cupy", "cupy_elementwise", "cupy_raw")

#: the function names of the accuracy catalog that PyOpenCL's clmath spells differently or lacks
_CLMATH = {"pow": None, "hypot": None, "rsqrt": None}  # pow: ``a ** b`` on arrays (below)
#: CuPy ufunc names (NumPy's), None where CuPy has no ufunc of that function
_CUPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "asinh": "arcsinh",
         "acosh": "arccosh", "atanh": "arctanh", "pow": "power", "exp10": None, "rsqrt": None,
         "erf": None, "erfc": None, "tgamma": None, "lgamma": None}

CUPY_OPTIONS = ("-ftz=true", "--std=c++17")
#: CUDA math functions outside standard C++ <cmath> (no guaranteed generic overload)
_NONSTANDARD = {"exp10", "rsqrt"}


@dataclass(frozen=True)
class UserMath:
    """``evaluate(fn, args, dtype, expr)`` runs ``fn`` the way a user of ``library`` would; ``expr`` is
    the C spelling (``sinf(x0)``) a ``RawKernel`` user writes. ``spelling(fn)`` is the user's call, or
    None where the library lacks the function."""

    library: str
    build: str
    options: tuple[str, ...]
    flushes_subnormals: bool
    spelling: Callable[[str], Optional[str]]
    evaluate: Callable[[str, Sequence[np.ndarray], np.dtype, str], np.ndarray]


def library_source(library: str, call: str, dtype: Any) -> str:
    """What stands for a library kernel's source in a figure's ``source_digest``: the library with its version,
    the call and the element type. The library generates the kernel text itself, so a new version of the
    library (which may change that text) reads as a changed kernel, as an edited kernel of the project does."""
    return f"{library}: {call} on {np.dtype(dtype).name}"


def user_math(device, library: str) -> UserMath:
    """The evaluator of ``library`` on ``device``; :class:`BackendUnavailableError` (with the reason)
    where this device cannot run it."""
    if library not in LIBRARIES:
        raise ValueError(f"unknown library {library!r}; known: {', '.join(LIBRARIES)}")
    if library == "pyopencl":
        return _pyopencl(device)
    return _cupy(device, library)


def _pyopencl(device) -> UserMath:
    context, queue = getattr(device, "context", None), getattr(device, "queue", None)
    if context is None or queue is None or device.info.backend != "opencl":
        raise BackendUnavailableError("pyopencl", f"{device.info.spec} is not an OpenCL device (no pyopencl context)")
    import pyopencl
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.clmath as clmath

    def spelling(fn: str) -> Optional[str]:
        if fn == "pow":
            return "x0 ** x1 (pyopencl.array)"
        if fn in _CLMATH or not hasattr(clmath, fn):
            return None
        return f"pyopencl.clmath.{fn}"

    def evaluate(fn: str, args: Sequence[np.ndarray], dtype, expr: str = "") -> np.ndarray:
        # PyOpenCL's array uploads and read-backs are blocking calls on the device's queue, which wait in C
        # for whatever was queued before them: each comes only after a polled wait under the watchdog
        device.synchronize()
        # the kernel's text is PyOpenCL's own: the library, its version and the call name it (library_source)
        device.note_source(library_source(f"PyOpenCL {pyopencl.VERSION_TEXT}", spelling(fn) or fn, dtype), opts)
        arrs = [cla.to_device(queue, np.ascontiguousarray(a, dtype)) for a in args]
        out = arrs[0] ** arrs[1] if fn == "pow" else getattr(clmath, fn)(*arrs)
        device.synchronize()
        return out.get(queue=queue)

    forced = os.environ.get("PYOPENCL_BUILD_OPTIONS", "")
    opts = tuple(cl._DEFAULT_BUILD_OPTIONS) + tuple(forced.split())  # + "-I <pyopencl include dir>"
    build = ("PyOpenCL elementwise kernel (pyopencl.clmath), Program.build options: "
             + (" ".join(opts) + " " if opts else "") + "-I <pyopencl include dir>")
    return UserMath("pyopencl", build, opts, False, spelling, evaluate)


def _cupy(device, library: str) -> UserMath:
    try:
        import cupy
    except ImportError as exc:
        cupy, missing = None, f"; CuPy is not installed here ({exc})"
    else:
        missing = ""
    if device.info.backend != "cuda" or cupy is None:
        raise BackendUnavailableError("cuda", f"{library} needs a CUDA device; {device.info.spec} is "
                                              f"{device.info.backend} ({device.info.name}){missing}")
    ctype = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

    def ufunc_name(fn: str) -> Optional[str]:
        name = _CUPY.get(fn, fn)
        return name if name is not None and hasattr(cupy, name) else None

    def spelling(fn: str) -> Optional[str]:
        if library == "cupy":
            name = ufunc_name(fn)
            return None if name is None else f"cupy.{name}"
        if library == "cupy_elementwise":
            return f"cupy.ElementwiseKernel('T x0, ...', 'T y', 'y = {fn}(x0, ...)')"
        return "cupy.RawKernel (the project's C spelling, default options)"

    def evaluate(fn: str, args: Sequence[np.ndarray], dtype, expr: str = "") -> np.ndarray:
        device.check_usable()
        dt = np.dtype(dtype)
        with device._dev:  # the device under test (CuPy's current device)
            xs = [cupy.asarray(np.ascontiguousarray(a, dt)) for a in args]
            names = [f"x{k}" for k in range(len(xs))]
            if library == "cupy":
                device.note_source(library_source(f"CuPy {cupy.__version__}", f"cupy.{ufunc_name(fn)}", dt), CUPY_OPTIONS)
                y = getattr(cupy, ufunc_name(fn))(*xs)
            elif library == "cupy_elementwise":
                # users write the generic C++ overload (``sin(x)``); exp10/rsqrt are CUDA extensions whose
                # float overloads are not standard C++, so those take the project's typed spelling
                body = expr if fn in _NONSTANDARD else f"{fn}({', '.join(names)})"
                params = ", ".join(f"T {n}" for n in names)
                # CuPy builds it inside its own template, which its version names
                device.note_source(f"CuPy {cupy.__version__} ElementwiseKernel({params}; T y; y = {body})", CUPY_OPTIONS)
                k = cupy.ElementwiseKernel(params, "T y", f"y = {body}", f"gpuperf_user_{fn}")
                y = k(*xs)
            else:
                t = ctype[dt]
                params = ", ".join(f"const {t}* p{k}" for k in range(len(xs)))
                loads = " ".join(f"{t} x{k} = p{k}[i];" for k in range(len(xs)))
                src = (f'extern "C" __global__ void gpuperf_user_raw({params}, {t}* y, int n) {{\n'
                       f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       f"  if (i < n) {{ {loads} y[i] = {expr}; }}\n}}\n")
                device.note_source(src, CUPY_OPTIONS)  # CuPy builds it, outside Device.compile
                k = cupy.RawKernel(src, "gpuperf_user_raw")
                n = xs[0].size
                y = cupy.empty_like(xs[0])
                k(((n + 255) // 256,), (256,), (*xs, y, np.int32(n)))
            # CuPy's read-back (and a device-wide synchronize) would wait in C; the library's stream is
            # polled under the watchdog first, so the copy waits for nothing but itself
            done = cupy.cuda.Event()
            done.record()
            device.watch(lambda: done.done, device.timeout_s)
            out = cupy.asnumpy(y)
        return out

    build = (f"CuPy {getattr(cupy, '__version__', '?')} NVRTC build: " + " ".join(CUPY_OPTIONS)
             + " -arch=compute_XX -I <cupy include dirs> (cupy/cuda/compiler.py adds -ftz=true to every compile)")
    return UserMath(library, build, CUPY_OPTIONS, True, spelling, evaluate)
