"""The launch configurations of the PTX model's study (Alavani, thesis §4.4.8–4.4.10): every kernel of
every dwarf — the twelve dwarf kernels the Hopper variant was shaped on (:mod:`.dwarfs`) and the nine held
out from it (:mod:`.heldout_kernels`) — swept over block sizes and problem sizes, 108 launches in all, as
the thesis built "108 configurations … considering all permissible launch configurations" and "varied
the dataset sizes wherever possible".

Each kernel has five or six configurations: the block sizes its text allows (a dwarf kernel that reads
``blockDim`` at 128, 256 and 1024 threads; a Rodinia kernel whose block side is a macro at 8, 16 and 32)
and problem sizes below and above the model suite's (a dwarf's scale ¼ or ½ and 2 or 4), each held out
kernel around its benchmark's own default launch. A configuration's label names its parameters; the
study's figures carry :data:`SWEEP_VERSION` and the labels in their identity, so a baseline made over
another sweep reads ``incomparable``.

:func:`check_ptx` compiles every configuration offline (NVRTC, no GPU) and predicts it with every
variant, so a sweep whose trip counts do not match its PTX fails in CI, not on the GPU
(``python -m pytest_gpuperf.studies.ptx_model.ptx_sweep --check-ptx 90``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...devices.dialect import CUDA, DIALECTS
from . import cfg as cfgmod, ptx as ptxmod, scheduler
from .dwarfs import DWARFS, Dwarf, Shape
from ...corpora.heldout_kernels import PORTS
from ...corpora.heldout_port import Port
from .ptx_latency import THESIS_V100, LatencyTable

#: the sweep's name and version in every figure's identity: a change of any configuration is a new version
SWEEP_VERSION = "alavani-sweep-1"


def _number(v: float) -> str:
    """A parameter's value in a label: ``0.25``, ``2048``, ``256K`` (2**18), ``1M`` (2**20)."""
    if isinstance(v, float) and v != int(v):
        return f"{v:g}"
    n = int(v)
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= 1 << 16 and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def label(params: Mapping[str, float]) -> str:
    """``{"bs": 16, "dim": 2048}`` → ``bs16.dim2048``, ``{"n": 2**20}`` → ``n1M``: a configuration's name in
    records and identities."""
    return ".".join(f"{k}{_number(v)}" for k, v in params.items())


@dataclass(frozen=True)
class Config:
    """One launch configuration of a kernel: its parameters (a dwarf's ``scale`` and ``block``, a port's
    own) and their label."""

    params: Mapping[str, float]

    @property
    def label(self) -> str:
        return label(self.params)


@dataclass(frozen=True)
class StudyKernel:
    """A kernel of the study: its dwarf, whether the Hopper variant was shaped on it, and its
    configurations; exactly one of ``dwarf_kernel`` (a design kernel) and ``port`` (a held-out one)."""

    name: str
    dwarf: str
    configs: tuple[Config, ...]
    dwarf_kernel: Dwarf | None = None
    port: Port | None = None

    def __post_init__(self) -> None:
        if (self.dwarf_kernel is None) == (self.port is None):
            raise ValueError(f"{self.name}: a study kernel is a dwarf kernel or a port, exactly one")
        labels = [c.label for c in self.configs]
        if len(set(labels)) != len(labels) or not labels:
            raise ValueError(f"{self.name}: configurations must be distinct and at least one: {labels}")

    @property
    def held_out(self) -> bool:
        return self.port is not None

    @property
    def origin(self) -> str:
        if self.port is not None:
            h = self.port.held_out
            return f"{h.suite} {h.application}"
        return "Alavani Table 4.7, re-written for CUDA (models.dwarfs)"

    def shape(self, config: Config) -> Shape:
        p = dict(config.params)
        if self.dwarf_kernel is not None:
            return self.dwarf_kernel.shape(p["scale"], int(p["block"]))
        assert self.port is not None
        return self.port.shape({k: int(v) for k, v in p.items()})

    def source(self, backend: str, shape: Shape) -> str:
        """The text ``backend`` compiles for ``shape`` (a dwarf kernel is CUDA C only)."""
        if self.port is not None:
            return self.port.source(backend, shape)
        assert self.dwarf_kernel is not None
        if DIALECTS.get(backend) is not CUDA:  # a dwarf kernel is written in CUDA C only (models.dwarfs)
            raise ValueError(f"{self.name} has no {backend} text, only CUDA C (models.dwarfs); the study runs on CUDA devices")
        return self.dwarf_kernel.source


def _dwarf_configs(scales: Sequence[float], blocks: Sequence[int], base_block: int = 256) -> tuple[Config, ...]:
    """The block sizes at scale 1, then the scales at ``base_block``."""
    out = [{"scale": 1, "block": b} for b in blocks] + [{"scale": s, "block": base_block} for s in scales]
    return tuple(Config(p) for p in out)


#: dwarf kernel → configurations: block sizes its text allows at the suite's size, then smaller and larger
#: problems (a 2-D kernel's scale multiplies both sides, so ½ and 2 make a quarter and four times the data)
DWARF_SWEEP: Mapping[str, tuple[Config, ...]] = {
    **{n: _dwarf_configs((0.25, 4), (128, 256, 1024)) for n in
       ("vectorAdd", "saxpy", "sobolGPU_kernel", "convolutionRowsKernel", "bfs_kernel1", "compute_step_factor")},
    **{n: _dwarf_configs((0.5, 2), (128, 256, 1024)) for n in ("transposeNaive", "calculate_temp")},
    "matrixMulCUDA": _dwarf_configs((0.5, 1, 1.5, 2, 3), ()),
    "needle_shared": _dwarf_configs((0.25, 0.5, 1, 2, 4), (), 16),
    "scanExclusiveShared": _dwarf_configs((0.25, 4), (64, 128, 256)),
    "mergeSortSharedKernel": _dwarf_configs((0.25, 0.5, 1, 2, 4), ()),
}

M = 1 << 20
#: held-out kernel → configurations, the benchmark's own default launch first (Rodinia's lud, srad and
#: pathfinder block sides and gaussian's 4 × 4 Fan2 blocks are compile-time or run-time options there too)
HELD_OUT_SWEEP: Mapping[str, tuple[Config, ...]] = {k: tuple(Config(p) for p in v) for k, v in {
    "lud_internal": [dict(bs=16, dim=2048, offset=0), dict(bs=8, dim=2048, offset=0), dict(bs=32, dim=2048, offset=0),
                     dict(bs=16, dim=1024, offset=0), dict(bs=16, dim=4096, offset=0), dict(bs=16, dim=2048, offset=1024)],
    "Fan2": [dict(bs=4, size=2048, t=0), dict(bs=8, size=2048, t=0), dict(bs=16, size=2048, t=0),
             dict(bs=32, size=2048, t=0), dict(bs=4, size=4096, t=0), dict(bs=4, size=2048, t=1024)],
    "dynproc_kernel": [dict(bs=256, height=20, cols=M), dict(bs=128, height=20, cols=M), dict(bs=512, height=20, cols=M),
                       dict(bs=1024, height=20, cols=M), dict(bs=256, height=5, cols=M), dict(bs=256, height=40, cols=M)],
    "spmv_csr_scalar_kernel": [dict(block=128, rows=16384), dict(block=64, rows=16384), dict(block=256, rows=16384),
                               dict(block=512, rows=16384), dict(block=128, rows=8192)],
    "bitonicSortShared": [dict(length=1024, n=M), dict(length=1024, n=M // 4), dict(length=1024, n=4 * M),
                          dict(length=256, n=M), dict(length=64, n=M)],
    "findK": [dict(queries=10000, records=M, fanout=256), dict(queries=1000, records=M, fanout=256),
              dict(queries=65536, records=M, fanout=256), dict(queries=10000, records=M, fanout=32),
              dict(queries=10000, records=65536, fanout=256)],
    "quasirandomGeneratorKernel": [dict(bx=128, grid=128, n=M), dict(bx=64, grid=128, n=M), dict(bx=256, grid=128, n=M),
                                   dict(bx=128, grid=512, n=M), dict(bx=128, grid=128, n=4 * M)],
    "srad_cuda_1": [dict(bs=16, rows=2048, cols=2048), dict(bs=8, rows=2048, cols=2048), dict(bs=32, rows=2048, cols=2048),
                    dict(bs=16, rows=1024, cols=1024), dict(bs=16, rows=4096, cols=4096)],
    # the thesis' three CFD grids (§4.4.10: 506, 1008 and 1212 blocks): Rodinia's 97K, 193K and 0.2M meshes
    "cuda_compute_flux": [dict(block=192, elements=97046), dict(block=64, elements=97046), dict(block=512, elements=97046),
                          dict(block=192, elements=193474), dict(block=192, elements=232536)],
}.items()}

STUDY_KERNELS: tuple[StudyKernel, ...] = (
    *(StudyKernel(d.name, d.dwarf, DWARF_SWEEP[d.name], dwarf_kernel=d) for d in DWARFS),
    *(StudyKernel(p.kernel, p.held_out.dwarf, HELD_OUT_SWEEP[p.kernel], port=p) for p in PORTS),
)


def launches() -> list[tuple[StudyKernel, Config]]:
    """Every (kernel, configuration) of the study, in the order it runs."""
    return [(k, c) for k in STUDY_KERNELS for c in k.configs]


def by_name(name: str) -> StudyKernel:
    for k in STUDY_KERNELS:
        if k.name == name:
            return k
    raise KeyError(f"no study kernel {name!r}; the study has {', '.join(k.name for k in STUDY_KERNELS)}")


def _nominal_table() -> LatencyTable:
    """The thesis' V100 latencies (Table 3.2) and its K20 global model: enough to predict offline."""
    return LatencyTable(dict(THESIS_V100), {k: "thesis Table 3.2 (offline check)" for k in THESIS_V100}, None,
                        "thesis Table 3.3 (offline check)")


def check_ptx(arch: str = "90", kernels: Sequence[StudyKernel] = STUDY_KERNELS) -> list[dict[str, Any]]:
    """Every configuration compiled offline for ``compute_<arch>`` (NVRTC through ``devices.recompile``, no
    GPU) and predicted by every variant at the thesis' latencies and a nominal calibration, with the 132 SMs
    and 1980 MHz of an H100: one row per launch with its loops, trip counts and predictions. Raises
    ValueError naming the launch where the trip counts do not match the PTX's loops."""
    from ...devices import recompile

    cc = f"{arch[:-1]}.{arch[-1]}"
    table, cal = _nominal_table(), scheduler.Calibration((3e-6, 1e-12), (2e12, 1.0, 1e-6), (2e13, 1.0, 1e-6),
                                                         global_tp_net=(2.5e12, 1.0, 1e-6))
    rates, _ = scheduler.issue_rates({}, cc)
    graphs: dict[str, cfgmod.Cfg] = {}
    rows = []
    for k in kernels:
        for c in k.configs:
            shape = k.shape(c)
            src = k.source("cuda", shape)
            if src not in graphs:
                graphs[src] = cfgmod.build(ptxmod.parse(recompile.ptx_text(src, arch), k.name))
            graph = graphs[src]
            if len(graph.loops) != len(shape.trips):
                raise ValueError(f"{k.name} {c.label}: the PTX has {len(graph.loops)} loop(s), the sweep gives "
                                 f"{len(shape.trips)} trip count(s) {list(shape.trips)}")
            pred = {v: scheduler.predict(graph, table, cal, grid=shape.grid, block=shape.block, regs=32,
                                         shared=0, trips=shape.trips, n_sm=132, clock_hz=1.98e9, cc=cc,
                                         l2_bytes=50 << 20, variant=v, rates=rates).seconds
                    for v in scheduler.VARIANTS}
            rows.append({"kernel": k.name, "config": c.label, "held_out": k.held_out, "grid": shape.grid,
                         "block": shape.block, "trips": list(shape.trips), "loops_in_ptx": len(graph.loops),
                         "const_loads": sum(i.opcode.startswith("ld.const") for b in graph.blocks for i in b.instructions),
                         "predicted_s": pred})
    return rows


def _span(values: Sequence[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def configurations_table() -> list[str]:
    """The sweep as the docs show it (docs/models.md §2): per dwarf and kernel, whether it is held out, its
    configurations' labels, threads per block, blocks per launch and loop trip counts."""
    out = ["| dwarf | kernel | held out | configurations | threads per block | blocks | trip counts |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for dwarf in sorted({k.dwarf for k in STUDY_KERNELS}):
        for k in (k for k in STUDY_KERNELS if k.dwarf == dwarf):
            shapes = [k.shape(c) for c in k.configs]
            trips = sorted({tuple(round(t, 1) for t in s.trips) for s in shapes})
            out.append(f"| {dwarf} | `{k.name}` | {'yes' if k.held_out else 'no'} | "
                       f"{', '.join(f'`{c.label}`' for c in k.configs)} | "
                       f"{', '.join(str(b) for b in sorted({s.block for s in shapes}))} | {_span([s.grid for s in shapes])} | "
                       f"{'; '.join(', '.join(f'{t:g}' for t in tr) for tr in trips) if any(trips) else '—'} |")
    n_k, n_l = len(STUDY_KERNELS), len(launches())
    out.append(f"| {len({k.dwarf for k in STUDY_KERNELS})} dwarfs | {n_k} kernels | "
               f"{sum(k.held_out for k in STUDY_KERNELS)} | {n_l} launches | | | |")
    return out


def ports_table() -> list[str]:
    """The held-out ports as the docs show them: dwarf, kernel, where it comes from, what the port changed."""
    out = ["| dwarf | kernel | from | what the port changed |", "| --- | --- | --- | --- |"]
    for k in STUDY_KERNELS:
        if k.port is not None:
            out.append(f"| {k.dwarf} | `{k.name}` | {k.origin} | {k.port.differs} |")
    return out


def estimate_s(ptx_test_s: float) -> float:
    """The study's time on a device, estimated from one run of the model suite's PTX test on it
    (``suites/test_model_error.py::test_ptx_model``, its ``duration_s`` in a results file): that test
    calibrates the device and then compiles, predicts, fills and times 12 launches, the same steps as the
    study's for each of its launches (the study's timing stops sooner: ``timing.profiles`` "ptx_study").
    So a launch costs at most the test's time over 12 (its calibration counted in), scaled by the launch's
    buffer bytes over the mean of the test's 12 launches where larger (inputs are generated, copied and
    streamed by bytes); the nine held-out kernels' checks count as launches of their first
    configuration; and the calibration is added once more, as if the study ran alone."""
    test_mean = sum(d.shape(1).bytes for d in DWARFS) / len(DWARFS)
    weights = [max(1.0, k.shape(c).bytes / test_mean) for k, c in launches()]
    weights += [max(1.0, k.shape(k.configs[0]).bytes / test_mean) for k in STUDY_KERNELS if k.held_out]
    return ptx_test_s + ptx_test_s / len(DWARFS) * sum(weights)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_gpuperf.studies.ptx_model.ptx_sweep", description=__doc__.split("\n")[0])
    ap.add_argument("--check-ptx", metavar="ARCH", default="90",
                    help="compile and predict every configuration offline for compute_ARCH (default 90)")
    args = ap.parse_args(argv)
    json.dump(check_ptx(args.check_ptx), sys.stdout, allow_nan=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

