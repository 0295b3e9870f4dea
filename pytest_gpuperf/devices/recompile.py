"""A second NVRTC compile, through the very ``libnvrtc`` this process loaded, for the SASS proof.

Device knowledge (:meth:`CudaDevice.sass_functions` calls it). When ``cuobjdump`` rejects the cubin the
CUDA backend kept (seen on an H100 host: "does not contain
device code" from every cuobjdump there and from a 13.4 one carried along), we compile the same
source with the same options again via ctypes and disassemble that. The proof stays about the code
that ran: every kernel's machine code (``.text.<name>``) in the fresh cubin must occur byte for byte
in the cubin the driver loaded (:func:`check_identical`), otherwise the probe is an error.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
from typing import Sequence

from ..errors import ProbeVerificationError
from . import elf


def _loaded_nvrtc() -> list[str]:
    """Paths of libnvrtc already mapped into this process (the one CuPy compiled with), then others."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                p = line.split()[-1]
                if "libnvrtc.so" in p and "builtins" not in p and p not in paths:
                    paths.append(p)
    except OSError:
        pass
    for base in sys.path + ["/usr/local/cuda/lib64"]:
        paths += sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib", "libnvrtc.so*")))
        paths += sorted(glob.glob(os.path.join(base, "libnvrtc.so*")))
    return [p for p in paths if "builtins" not in p] + ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]


def _open(path: str) -> ctypes.CDLL:
    folder = os.path.dirname(path)
    for b in sorted(glob.glob(os.path.join(folder, "libnvrtc-builtins.so*"))) if folder else []:
        try:
            ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    return ctypes.CDLL(path)


def nvrtc_options(arch: str, options: Sequence[str] = (), target: str = "cubin",
                  includes: Sequence[str] = ()) -> list[str]:
    """The NVRTC option list the CUDA backend compiles with (``CudaDevice.nvrtc_options``), for ``arch`` ("90")
    and ``target`` ("cubin": ``-arch=sm_XY``; "ptx": ``-arch=compute_XY``) — one home, so an offline
    recompilation gets the code a GPU run got."""
    flag = f"-arch=sm_{arch}" if target == "cubin" else f"-arch=compute_{arch}"
    return [flag, "-std=c++17", *includes, *options]


def ptx_text(source: str, arch: str, options: Sequence[str] = ()) -> str:
    """PTX of ``source`` as the CUDA backend compiles it for ``compute_<arch>``, offline (no GPU)."""
    return compile_ptx(source, nvrtc_options(arch, options, "ptx"))[0].decode()


def compile_cubin(source: str, options: Sequence[str]) -> tuple[bytes, str]:
    """(cubin, library path) from NVRTC via ctypes with exactly ``options``."""
    return _compile(source, options, "CUBIN")


def compile_ptx(source: str, options: Sequence[str]) -> tuple[bytes, str]:
    """(PTX, library path) from NVRTC via ctypes with exactly ``options`` (``-arch=compute_XY``): what the
    offline tools (``scripts/ptx_offline.py``, ``scripts/cuda_compile_check.py``) compile without a GPU."""
    return _compile(source, options, "PTX")


def _compile(source: str, options: Sequence[str], output: str) -> tuple[bytes, str]:
    """NVRTC's ``output`` ("CUBIN" or "PTX") of ``source`` from the first libnvrtc that loads and compiles
    it; :class:`ProbeVerificationError` with every library's reason (a compile error: its log) otherwise."""
    errors = []
    for path in _loaded_nvrtc():
        try:
            lib = _open(path)
        except OSError as exc:
            errors.append(f"{path}: {exc}")
            continue
        prog = ctypes.c_void_p()
        if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"probe.cu", 0, None, None) != 0:
            errors.append(f"{path}: nvrtcCreateProgram failed")
            continue
        try:
            arr = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            rc = lib.nvrtcCompileProgram(prog, len(options), arr)
            if rc != 0:
                n = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
                log = ctypes.create_string_buffer(n.value)
                lib.nvrtcGetProgramLog(prog, log)
                errors.append(f"{path}: compile rc {rc}: {log.value.decode(errors='replace')[:2000]}")
                continue
            n = ctypes.c_size_t()
            getattr(lib, f"nvrtcGet{output}Size")(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            getattr(lib, f"nvrtcGet{output}")(prog, buf)
            return (buf.raw if output == "CUBIN" else buf.value), path
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))
    raise ProbeVerificationError("NVRTC compiled nothing (for the SASS proof or an offline check): " + "; ".join(errors))


def check_identical(loaded: bytes, fresh: bytes, names: Sequence[str]) -> dict[str, int]:
    """Every kernel's code in ``fresh`` must appear verbatim in ``loaded``; returns code sizes."""
    sizes = {}
    for name in names:
        code = elf.function_code(fresh, name)
        if code not in loaded:
            raise ProbeVerificationError(
                f"{name}: the recompiled machine code is not in the cubin that ran ({len(loaded)} bytes; "
                f"{elf.header_problem(loaded) or 'complete ELF'}), so its SASS proves nothing about the run")
        sizes[name] = len(code)
    return sizes
