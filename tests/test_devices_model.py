"""One device model (issue 15): backend knowledge lives in ``pytest_gpuperf/devices/``; everything else asks
the device (``DeviceInfo`` capabilities, ``info.dialect``, ``Device`` methods) instead of branching on the
backend name, and the kernel texts the committed baselines were measured with stay byte for byte the same."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.devices import backend_registry, discover, open_device
from pytest_gpuperf.devices.dialect import DIALECTS, dialect, per_language

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("cuda", "opencl")
#: a branch on the backend's name, in any of the spellings the code base used
BRANCH = re.compile(r"""backend ?[!=]= ?['"]|\.backend in\b""")
BACKEND_IMPORT = re.compile(r"^\s*(import (cupy|pyopencl)\b|from (cupy|pyopencl)\b)", re.M)


def _outside_devices() -> list[Path]:
    files = sorted((ROOT / "pytest_gpuperf").rglob("*.py"))
    return [p for p in files if "devices" not in p.relative_to(ROOT).parts]


def test_no_backend_branches_or_imports_outside_devices():
    found = []
    for path in _outside_devices():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BRANCH.search(line) or BACKEND_IMPORT.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, ("backend knowledge outside pytest_gpuperf/devices/ (ask DeviceInfo/Device/info.dialect "
                       "instead):\n" + "\n".join(found))


def test_dialects_are_complete_and_unknown_backends_are_refused():
    assert set(DIALECTS) == set(BACKENDS)
    for name, d in DIALECTS.items():
        assert d.name == name and d.entry and d.fast_math
    with pytest.raises(ValueError, match="unknown backend 'vulkan'"):
        dialect("vulkan")


def _generated(backend: str) -> dict[str, str]:
    """Every kernel text (and build-option tuple) the areas generate for ``backend``, per area."""
    from pytest_gpuperf.accuracy import expr_kernels, fp_formats, functions, summation, sweep
    from pytest_gpuperf.corpora import corpus
    from pytest_gpuperf.corpora import kernel_classes
    from pytest_gpuperf.probes import chain, global_latency, memory, ops, throughput
    from pytest_gpuperf.tuning import concurrency
    from pytest_gpuperf.devices.dialect import portable
    from pytest_gpuperf.tuning import kernels as tk

    out: dict[str, list[str]] = {k: [] for k in ("chain", "memory", "accuracy", "models", "tuning", "options")}
    for o in ops.ALL_OPS:
        if o.source(backend) is None:
            continue
        for timing in ("clock", "events"):
            out["chain"].append(chain.latency_kernel(o, backend, timing)[0])
            out["chain"] += [chain.throughput_kernel(o, backend, timing, k)[0] for k in (1, 2, 8)]
    for fp64, clock, fp16 in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)):
        out["chain"].append(chain.program(backend, ["A", "B"], bool(fp64), bool(clock), bool(fp16)))
    out["memory"] += [memory.source(backend), throughput._SPIN, global_latency.SOURCE]
    for fmt in ("fp16", "fp32", "fp64"):
        out["accuracy"] += [expr_kernels.eval_source(backend, fp_formats.get(fmt), "f(x0)", arity) for arity in (1, 2, 3)]
    out["accuracy"].append(expr_kernels.eval_source(backend, fp_formats.get("fp32"), "f(x0)", 1, plant=True))
    out["accuracy"] += [f.expr(backend, fmt, ["x0", "x1"][:f.arity]) for f in functions.FUNCTIONS.values()
                        for fmt in ("fp32", "fp64")]
    out["accuracy"] += [summation.source(backend, t, m) for t in ("float", "double") for m in summation.ACC]
    out["accuracy"] += [sweep.source(backend, "expf", "exp", plant, sums) for plant in (0, 1) for sums in (0, 1)]
    out["models"] += [k.source(backend) for k in corpus.CORPUS]
    out["models"] += [kernel_classes.source(n, backend) for n in kernel_classes.SOURCES]
    # whole kernels only (a shared fragment such as GROUP_SUM is inside them already)
    texts = [getattr(tk, n) for n in dir(tk) if n.isupper() and isinstance(getattr(tk, n), str)
             and "__kernel" in getattr(tk, n)]
    out["tuning"] += [portable(t, backend) for t in texts + [concurrency.MICRO]]
    out["options"] += [repr(chain.fast_math_options(backend))]
    out["options"] += [repr((v.label, v.options)) for v in functions.FAST if v.backend == backend]
    return {k: hashlib.sha256("\x00".join(v).encode()).hexdigest()[:16] for k, v in out.items()}


#: sha256 prefixes of the texts above. "chain", "memory", "accuracy" and "options" are the texts the
#: baselines were measured with (commit bf0e270). "models" and "tuning" changed once since, when the two
#: preludes became one (``devices.dialect.portable``, adding macros those kernels do not use): on CUDA,
#: NVRTC 13.0 for sm_90 gave byte-identical machine code for all 66 builds the baselines time
#: (results/offline/cuda-code-identity.txt.gz, with how its "before" side was made); on PoCL the PoCL gate
#: check at 121c3ff ran the new texts against the old baseline clean (results/pocl-*/gatecheck.json), and
#: no NVIDIA OpenCL baseline exists. A change here means the baselines may no longer describe the kernels
#: that run: re-measure them, or show the machine code unchanged, before updating this.
PINNED = {
    "cuda": {"chain": "465557e0cf70df4e", "memory": "7e757045c805e1bc", "accuracy": "7d0dd3cf31273e15",
             "models": "a9461d80dd520346", "tuning": "2badd95af0d5e69b", "options": "50a7d08164ce25d2"},
    "opencl": {"chain": "445fa01e2f1896e3", "memory": "4bd87d06b931defa", "accuracy": "fe049e2d3f4439e0",
               "models": "2be34af7bb956bdd", "tuning": "b068cfdf13cc20eb", "options": "91a0f18cef496ad2"},
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_texts_are_the_measured_ones(backend):
    got = _generated(backend)
    assert got == PINNED[backend], f"generated {backend} kernel texts changed: {got}"


def test_compile_many_shares_compiles_cache_and_close_clears_it(cl_device):
    """Entry points taken from one build land in the device's one kernel cache (no second cache beside it),
    carry the driver's resource usage, and are dropped by close()."""
    src = ("__kernel void gp_a(__global int* o) { o[0] = 1; }\n"
           "__kernel void gp_b(__global int* o) { o[0] = 2; }\n")
    dev = open_device(cl_device.info)
    try:
        ks = dev.compile_many(src, ["gp_a", "gp_b"])
        assert ks["gp_b"] is dev.compile(src, "gp_b") and ks["gp_a"] is dev.compile(src, "gp_a")
        assert ks["gp_b"].program is ks["gp_a"].program  # one compiler call
        assert ks["gp_b"].attributes.get("max_threads_per_block", 0) > 0
        assert dev.compile_many(src, ["gp_a", "gp_b"]) == ks
        assert not [k for k in vars(dev) if "kernel" in k.lower()]
        out = dev.empty(4)
        dev.launch(ks["gp_b"], (1,), (1,), [out])
        assert int(dev.to_host(out, np.int32)[0]) == 2
    finally:
        dev.close()
    assert dev._programs == {}


def test_capabilities_answer_without_the_backend_name(cl_device):
    info = cl_device.info
    assert info.dialect is DIALECTS[info.backend]
    assert not info.has_sass and not info.clock_counter and not info.has_ncu
    assert cl_device.kernel_resources(cl_device.compile("__kernel void gp_c(int x) { }", "gp_c")).shared >= 0
    with pytest.raises(Exception, match="yields no SASS"):
        cl_device.sass_functions(cl_device.compile("__kernel void gp_c(int x) { }", "gp_c"))


def backend_tables(source: str) -> list[int]:
    """Lines of ``source`` that keep a table keyed by a backend's name: a dict display with one as a key,
    ``dict(...)`` with one as a keyword, or a lookup with one as a literal subscript (``MODES["cuda"]``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [kw.arg for kw in node.keywords]
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            keys = [node.slice.value]
        else:
            continue
        if any(k in BACKENDS for k in keys):
            found.append(node.lineno)
    return sorted(set(found))


def test_the_table_rule_finds_tables_keyed_by_backend_names():
    source = ('A = {"cuda": 1, "opencl": 2}\nB = dict(opencl=3)\nC = MODES["cuda"]\n'
              'D = per_language(cuda=1, opencl=2)\nE = {"fp32": 1}\nF = info.dialect.rounding_modes\n')
    assert backend_tables(source) == [1, 2, 3]


def test_no_table_keyed_by_backend_names_outside_devices():
    """A fact about a backend lives in its ``devices.backend_registry.Backend`` record, on ``DeviceInfo`` or
    on its ``Dialect``; what is written once per kernel language (the texts of one kernel) is a
    ``devices.dialect.per_language`` table, which refuses one that misses a language."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in _outside_devices()
             for n in backend_tables(path.read_text(encoding="utf-8"))]
    assert not found, ("tables keyed by a backend's name outside pytest_gpuperf/devices/ (a Backend record, "
                       "DeviceInfo or Dialect fact, or a per_language table instead):\n" + "\n".join(found))


def test_the_registry_is_complete_and_per_language_tables_refuse_gaps():
    assert backend_registry.names() == tuple(DIALECTS) == BACKENDS
    for b in backend_registry.backends():
        assert b.dialect is DIALECTS[b.name] and b.label and b.timer_resolution_s > 0
    with pytest.raises(ValueError, match="unknown backend 'vulkan'"):
        backend_registry.backend("vulkan")
    with pytest.raises(ValueError, match="missing 'opencl'; unknown 'vulkan'"):
        per_language(cuda="a", vulkan="b")


def test_discovery_accounts_for_every_backend_and_names_a_missing_library():
    """Each backend lists devices or says why it cannot; a backend whose library is not installed reads as
    unavailable with the install hint, never as an import error."""
    inv = discover()
    assert {d.backend for d in inv.devices} | set(inv.unavailable) == set(BACKENDS)
    for name, module in (("cuda", "cupy"), ("opencl", "pyopencl")):
        if importlib.util.find_spec(module) is None:
            assert "cannot be imported" in inv.unavailable[name]


def test_the_registry_loads_no_driver_library_until_a_device_is_listed():
    code = ("import sys; from pytest_gpuperf.devices import backend_registry as r; r.backends(); "
            "print(sorted(m for m in ('cupy', 'pyopencl') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.strip()
    assert out == "[]"


def test_a_second_backend_of_one_name_is_refused_unless_its_module_was_imported_anew():
    """A backend module registers once; run again in its own module object it is an error, while a module
    imported anew (pytest's in-process runs restore sys.modules) replaces the record its old self made."""
    import dataclasses
    import importlib
    import sys

    from pytest_gpuperf.devices import backend_registry, opencl

    first = backend_registry.backend("opencl")
    twin = dataclasses.replace(first, label=first.label + " twin")
    with pytest.raises(ValueError, match="registered twice"):
        exec("register(twin)", {"__name__": opencl.__name__, "register": backend_registry.register, "twin": twin})
    saved = sys.modules.pop(opencl.__name__)
    try:
        fresh = importlib.import_module(opencl.__name__)
        assert fresh is not saved and backend_registry.backend("opencl") is fresh.BACKEND
    finally:
        sys.modules[opencl.__name__] = saved
        backend_registry.register.__globals__["_REGISTERED"]["opencl"] = first
        backend_registry.register.__globals__["_FROM"]["opencl"] = saved
