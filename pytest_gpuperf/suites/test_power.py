"""Power and energy: measured per kernel through NVML, predicted statically (Alavani ch. 5),
and traded against time by the work-group tuner. Devices without a power sensor (PoCL, other vendors,
no NVML) skip every test here with the reason.

* ``power.<kernel>.joules_per_op`` / ``.watts`` — steady-state energy per operation and average board
  power (``timing.energy.steady_state_energy``: launches looped until the energy counter moved ≥ 20 of
  its own update steps, both ends aligned to an update: its error bound is saved per metric
  as ``info["power"]["error_bound_rel"]`` beside the span's power drift ``drift_rel``) of probe kernels (fp32 and fp64 FMA chains: J per flop; a device
  copy: J per byte read + written) and the 12 tuning kernels at their default work-group (J per element
  of the problem's index space). A measurement during which the card throttled is kept, marked
  (``info["power"]["throttled"]``) and not gated (verdict ``throttled``).
* ``model.power.<family>.{r2,rmse_w,mae_w,mape}`` — the static power model's scores on held-out kernels
  (nested, kernel-grouped cross-validation) over the device's saved corpus
  (``results/<key>/power-corpus-<backend>.json``, collected by ``python -m pytest_gpuperf.power.collect``);
  skipped with the reason where no corpus was collected for this device.
* ``power.tuning.<kernel>.{front,energy_saving}`` — the (time, energy) Pareto front of the tuning space
  under the objective ``both``, and the energy the energy-optimal configuration saves over the time-optimal
  one. Searched with a measured bound (``tuning.pareto.search_front``): exact where the idle-power bound
  proves the unmeasured configurations dominated; past the per-kernel budget the front is over the N
  fastest of M configurations (``info["search"]``: exact/truncated, energies measured, P_floor).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_gpuperf.models import power_model as pmodel
from pytest_gpuperf.power import sustained
from pytest_gpuperf.timing.energy import K_STEPS, steady_state_energy
from pytest_gpuperf.tuning import pareto
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from pytest_gpuperf.devices.dialect import portable

#: energy per op and watts: the counter's error bound (a few percent), the kernel's power noise over a 2 s
#: span plus run-to-run drift of board temperature (leakage power grows with it); the band widens to k × the
#: baseline runs' spread, and a value outside it counts only where it is significant over those runs
TOL_ENERGY = {"rel": 0.08}
TOL_WATTS = {"rel": 0.08}
#: model scores: the corpus is a file, the CV seeded, so a change is a change of code or corpus
TOL_MODEL = {"abs": 0.02, "rel": 0.1}
ITERS = 4096
CHAINS = 8
THREADS = 1 << 20


def _sensor(device, request=None):
    """The device's power sensor, or skip with the reason. With ``request``, also skip once the session's
    wall-clock budget (``--gpuperf-tuning-budget``, the time-boxed GPU session's) is spent, so a killed
    session still writes its results: each energy figure takes up to ~15 s."""
    sensor, why = device.power_sensor()
    if sensor is None:
        pytest.skip(f"{device.info.spec} ({device.info.name}) has no power sensor: {why}")
    if request is not None:
        from pytest_gpuperf.tuning.fixtures import tuning_options
        from pytest_gpuperf.util.clock import session_elapsed

        budget = tuning_options(request.config).budget_s
        if budget and session_elapsed(request.config) > budget:
            pytest.skip(f"--gpuperf-tuning-budget={budget:g} s spent before this test; raise it to run every "
                        "power test")
    return sensor


def _fma_source(dialect, scalar: str) -> str:
    """``CHAINS`` independent multiply-add chains of ``ITERS`` steps per work-item (compilers contract
    ``x * y + z`` into one FMA; the chains keep the FMA pipes full)."""
    xs = ", ".join(f"x{k} = (({scalar})i + {k}) * ({scalar})1e-7" for k in range(CHAINS))
    steps = " ".join(f"x{k} = x{k} * y + z;" for k in range(CHAINS))
    total = " + ".join(f"x{k}" for k in range(CHAINS))
    pre = dialect.fp64_prelude if scalar == "double" else ""
    return pre + portable(
        f"KERNEL void fma_chain(GLOBAL {scalar}* out, {scalar} y, {scalar} z) {{\n  int i = GID;\n"
        f"  {scalar} {xs};\n  {dialect.unroll_once}for (int j = 0; j < {ITERS}; ++j) {{ {steps} }}\n"
        f"  out[i] = {total};\n}}\n", dialect.name)


def _record(gpuperf_record, name: str, e, unit_op: str, extra: dict) -> None:
    power = e.info()
    info = {"power": power, "per": unit_op, **extra}
    # the span's NVML readings (the informative ones): tests/test_power_saved.py re-derives the figures
    gpuperf_record(f"power.{name}.joules_per_op", e.joules_per_op, "J/op", better="lower", tolerance=TOL_ENERGY,
                   info={**info, "ops_per_launch": e.joules_per_launch / e.joules_per_op,
                         "nvml_samples": e.samples()})
    gpuperf_record(f"power.{name}.watts", e.watts, "W", better="lower", tolerance=TOL_WATTS, info=info)


def _corpus_path(info, root: Path) -> Path:
    """The device's saved corpus in the user's repository (pytest's rootdir)."""
    return root / "results" / info.key / f"power-corpus-{info.backend}.json"


def test_power_model(gpu_device, gpuperf_record, request):
    """Nested CV of the thesis' model families on this device's saved corpus (CPU-only work)."""
    _sensor(gpu_device)
    root = request.config.rootpath
    path = _corpus_path(gpu_device.info, root)
    if not path.exists():
        pytest.skip(f"no power corpus for {gpu_device.info.key} ({path.relative_to(root)}): collect it with "
                    "python -m pytest_gpuperf.power.collect")
    _, entries = pmodel.load_corpus(path)
    kernels = len({e.kernel for e in entries})
    identity = {"corpus_entries": len(entries), "kernels": kernels}
    # held-out kernels (model.power.<family>.*) and the thesis' shuffled rows (model.power.<family>.rows.*)
    for protocol in pmodel.PROTOCOLS:
        _record_model(gpuperf_record, pmodel.nested_cv(entries, protocol=protocol), protocol, identity,
                      str(path.relative_to(root)))


def _record_model(gpuperf_record, results: dict, protocol: str, identity: dict, corpus: str) -> None:
    """``model.power.<family>[.<protocol>].*`` of one protocol's nested-CV results (held-out kernels unnamed)."""
    for name, r in results.items():
        info = {"estimator": r.estimator, "importances": r.importances, "top5": pmodel.top(r.importances),
                "thesis_top5": list(pmodel.THESIS_TOP5), "thesis_table_5_8": {g: v.get(name) for g, v in
                                                                             pmodel.THESIS_TABLE_5_8.items()},
                "thesis_table_5_9_xgboost": dict(pmodel.THESIS_TABLE_5_9), "folds": r.folds,
                "corpus": corpus, "goal": "MAPE ≤ 4 % on held-out kernels",
                "protocol": protocol}
        for metric, unit, better in (("r2", "ratio", "higher"), ("rmse", "W", "lower"), ("mae", "W", "lower"),
                                     ("mape", "%", "lower")):
            suffix = metric if metric in ("r2", "mape") else f"{metric}_w"
            where = name if protocol == "kernels" else f"{name}.{protocol}"
            gpuperf_record(f"model.power.{where}.{suffix}", r.scores[metric], unit, better=better,
                           tolerance=TOL_MODEL, identity=identity, info=info)


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_energy_fma(gpu_device, gpu_kernel, gpuperf_record, precision, request):
    sensor = _sensor(gpu_device, request)
    if precision == "fp64" and not gpu_device.info.fp64:
        pytest.skip(f"{gpu_device.info.name} has no fp64")
    scalar = "float" if precision == "fp32" else "double"
    dt = np.float32 if precision == "fp32" else np.float64
    kern = gpu_kernel.compile(_fma_source(gpu_device.info.dialect, scalar), "fma_chain")
    out = gpu_device.empty(THREADS * np.dtype(dt).itemsize)
    args = [out, dt(0.999), dt(0.001)]
    flops = 2.0 * CHAINS * ITERS * THREADS
    e = steady_state_energy(gpu_device, sensor, lambda: gpu_device.launch(kern, (THREADS,), (256,), args), flops)
    _record(gpuperf_record, f"fma_{precision}", e, "flop", {"flops_per_launch": flops, "k_steps": K_STEPS})


def test_sustained_clock(gpu_device, gpu_kernel, gpuperf_record, request):
    """The card's own state under one standard load (the fp32 FMA chain): the SM clock it sustains, the
    power it draws, the slowdown reasons it reports — a card that now runs slower is ``regressed``."""
    sensor = _sensor(gpu_device, request)
    kern = gpu_kernel.compile(_fma_source(gpu_device.info.dialect, "float"), "fma_chain")
    args = [gpu_device.empty(THREADS * 4), np.float32(0.999), np.float32(0.001)]
    load = sustained.under_load(gpu_device, sensor, lambda: gpu_device.launch(kern, (THREADS,), (256,), args))
    for m in sustained.records("fma_fp32", load):
        gpuperf_record(**m)


def test_energy_copy(gpu_device, gpuperf_record, request):
    sensor = _sensor(gpu_device, request)
    size = 256 << 20
    src = gpu_device.to_device(np.random.default_rng(3).integers(0, 255, size, dtype=np.uint8))
    dst = gpu_device.empty(size)
    e = steady_state_energy(gpu_device, sensor, lambda: gpu_device.copy(dst, src, size), 2.0 * size)
    _record(gpuperf_record, "copy_256MiB", e, "byte read + written", {"bytes_per_launch": 2 * size})


def _default_local(bench) -> tuple[int, ...]:
    return (256,) if bench.dims == 1 else (16, 16)


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_energy_tuning_kernel(gpu_device, gpu_kernel, gpuperf_record, bench, request):
    sensor = _sensor(gpu_device, request)
    sizes = bench.sizes(gpu_device)
    local = _default_local(bench)
    prepared = bench.prepare(gpu_device, np.random.default_rng(5), sizes)
    kern = gpu_kernel.compile(portable(bench.source, gpu_device.info.backend), bench.kernel, bench.options(local))
    glob = bench.ndrange(sizes, local, gpu_device)
    args = prepared.args()
    elements = float(np.prod(bench.extent(sizes)))
    e = steady_state_energy(gpu_device, sensor, lambda: gpu_device.launch(kern, glob, local, args), elements)
    _record(gpuperf_record, f"tuning.{bench.name}", e, "element of the problem",
            {"local": list(local), "elements": elements, "sizes": sizes})


def _pareto_budget(request) -> float:
    """This kernel's search budget: ``--gpuperf-pareto-budget``, never past the session's
    ``--gpuperf-tuning-budget``, so the last search of a time-boxed call ends truncated but recorded."""
    from pytest_gpuperf.tuning.fixtures import tuning_options
    from pytest_gpuperf.util.clock import session_elapsed

    options = tuning_options(request.config)
    budget, session = options.pareto_budget_s, options.budget_s
    if session:
        budget = min(budget, max(session - session_elapsed(request.config), 1.0))
    return budget


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_energy_pareto(gpu_device, gpuperf_record, bench, request):
    """The (time, energy) front under the objective ``both``, by the pruned search (``tuning.pareto.pareto_search``):
    the idle board power first (P_floor), every configuration timed, then energies fastest first until the
    bound ``E_min ≤ P_floor · t_lo`` proves the rest dominated, or the per-kernel budget is spent — then the
    front is over the N fastest configurations, and ``info["search"]`` says so (``exact``/``truncated``).
    Opt-in: a few seconds per energy, so an exhaustive 32-configuration search takes over a minute."""
    from pytest_gpuperf.tuning.fixtures import tuning_options
    from pytest_gpuperf.tuning.tuner import context

    options = tuning_options(request.config)
    if not options.energy_pareto:
        pytest.skip("the (time, energy) Pareto search is opt-in: --gpuperf-energy-pareto (up to "
                    f"{options.pareto_budget_s:g} s per kernel, --gpuperf-pareto-budget)")
    sensor = _sensor(gpu_device, request)
    ctx = context(gpu_device, bench, seed=11, objective="time")  # time every configuration without an energy
    found, idle = pareto.pareto_search(ctx, sensor, _pareto_budget(request))
    pts = {c: ctx.ev.points[c] for c in found.energies}
    front = found.front()
    t_best = min(pts, key=lambda c: (pts[c].time_s, c))
    e_best = min(pts, key=lambda c: (pts[c].energy_j, c))
    edp_best = min(pts, key=lambda c: (pareto.score(pts[c].time_s, pts[c].energy_j, "both"), c))
    table = {c.label(): {"us": round(p.time_s * 1e6, 3), "us_lo": round(found.time_lo[c] * 1e6, 3),
                         "mJ": round(p.energy_j * 1e3, 4), "W": p.watts, "throttled": p.throttled}
             for c, p in sorted(pts.items())}
    timed_only = {c.label(): {"us": round(found.times[c] * 1e6, 3), "us_lo": round(found.time_lo[c] * 1e6, 3),
                              "status": "pruned" if c in found.pruned else "undecided"}
                  for c in found.order if c not in pts}
    throttled = any(p.throttled for p in pts.values())
    scope = "" if found.exact else f" of the {found.covered} fastest"
    search = {**found.info(lambda c: c.label()), "p_floor": None if idle is None else idle.info()}
    info = {"gate": "if-stable", "front": [c.label() for c in front], "time_optimal": t_best.label(),
            "energy_optimal": e_best.label(), "edp_optimal": edp_best.label(), "points": table,
            "timed_only": timed_only, "search": search, "scope": f"measured configurations{scope}",
            "energy_k_steps": ctx.ev.energy_k_steps, "power": {"throttled": throttled}}
    # a truncated front is the front of the N fastest, and N moves with the budget and the card's speed: the
    # scope is part of the figures' identity, so fronts of different scopes are incomparable, never a regression
    identity = {"front_scope": "exact" if found.exact else f"the {found.covered} fastest of {len(found.order)}"}
    gpuperf_record(f"power.tuning.{bench.name}.front", len(front), "configs", better="exact",
                   tolerance={"abs": 2}, identity=identity, info=info)
    # truncated: the energy-optimal configuration of the N fastest, so the saving is a lower bound of the space's
    gpuperf_record(f"power.tuning.{bench.name}.energy_saving", pts[t_best].energy_j / pts[e_best].energy_j, "ratio",
                   better="higher", tolerance={"abs": 0.05, "rel": 0.1}, identity=identity, info=info)
