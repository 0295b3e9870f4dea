"""Power and energy: measured per kernel through NVML, predicted statically (Alavani ch. 5),
and traded against time by the work-group tuner. Devices without a power sensor (PoCL, other vendors,
no NVML) skip every test here with the reason.

* ``power.<kernel>.joules_per_op`` / ``.watts`` — steady-state energy per operation and average board
  power (``timing.energy.steady_state_energy``: launches looped until the energy counter moved ≥ 20 of
  its own update steps, 10 for the copy and the tuning kernels, both ends aligned to an update: its error bound is saved per metric
  as ``info["power"]["error_bound_rel"]`` beside the span's power drift ``drift_rel``) of probe kernels (fp32 and fp64 FMA chains: J per flop; a device
  copy: J per byte read + written) and the 12 tuning kernels at their default work-group (J per element
  of the problem's index space). A measurement during which the card throttled is kept, marked
  (``info["power"]["throttled"]``) and not gated (verdict ``throttled``).
* ``model.power.<family>.{r2,rmse_w,mae_w,mape}`` — the static power model's scores on held-out kernels
  (nested, kernel-grouped cross-validation) over the device's saved corpus
  (``results/<key>/power-corpus-<backend>.json[.gz]``, collected by ``python -m pytest_gpuperf.studies.static_power.collect``);
  skipped with the reason where no corpus was collected for this device.
* ``power.tuning.<kernel>.{front,energy_saving}`` — the (time, energy) Pareto front of the tuning space
  under the objective ``both``, and the energy the energy-optimal configuration saves over the time-optimal
  one. Searched with a measured bound (``tuning.pareto.search_front``): exact where the idle-power bound
  proves the unmeasured configurations dominated; past the per-kernel budget the front is over the N
  fastest of M configurations (``info["search"]``: exact/truncated, energies measured, P_floor).
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_gpuperf.devices.dialect import portable
from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.power import energy_figures, fma_load, front_figures, sustained
from pytest_gpuperf.studies.static_power import model_scores
from pytest_gpuperf.timing.energy import K_STEPS, steady_state_energy
from pytest_gpuperf.tuning import pareto
from pytest_gpuperf.tuning.fixtures import budget_spent, pareto_budget, tuning_options
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from pytest_gpuperf.tuning.tuner import context


def _sensor(device, request=None):
    """The device's power sensor, or skip with the reason. With ``request``, also skip once the session's
    wall-clock budget (``--gpuperf-tuning-budget``, the time-boxed GPU session's) is spent, so a killed
    session still writes its results: each energy figure takes up to ~15 s."""
    sensor, why = device.power_sensor()
    if sensor is None:
        pytest.skip(f"{device.info.spec} ({device.info.name}) has no power sensor: {why}")
    spent = None if request is None else budget_spent(request.config)
    if spent:
        pytest.skip(f"--gpuperf-tuning-budget={spent:g} s spent before this test; raise it to run every power test")
    return sensor


def test_power_model(gpu_device, gpuperf_record, request):
    """Nested CV of the thesis' model families on this device's saved corpus (CPU-only work)."""
    _sensor(gpu_device)
    root = request.config.rootpath
    path = model_scores.corpus_path(gpu_device.info, root)
    if not path.exists():
        pytest.skip(f"no power corpus for {gpu_device.info.key} ({path.relative_to(root)}): collect it with "
                    "python -m pytest_gpuperf.studies.static_power.collect")
    for r in model_scores.records(path, root):
        gpuperf_record(**r)


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_energy_fma(gpu_device, gpu_kernel, gpuperf_record, gpuperf_plant, precision, request):
    sensor = _sensor(gpu_device, request)
    if precision == "fp64" and not gpu_device.info.fp64:
        pytest.skip(f"{gpu_device.info.name} has no fp64")
    scalar, _ = fma_load.PRECISIONS[precision]
    kern = gpu_kernel.compile(fma_load.source(gpu_device.info.dialect, scalar), "fma_chain")
    flops = fma_load.flops()
    plant = plants.fraction(gpuperf_plant, "power")  # the gate check's power plant: uncredited work per launch
    e = steady_state_energy(gpu_device, sensor, fma_load.launcher(gpu_device, kern, precision, plant), flops)
    extra = {"flops_per_launch": flops, "k_steps": K_STEPS, **({"planted_slowdown": plant} if plant else {})}
    for r in energy_figures.records(f"fma_{precision}", e, "flop", extra):
        gpuperf_record(**r)


def test_sustained_clock(gpu_device, gpu_kernel, gpuperf_record, request):
    """The card's own state under one standard load (the fp32 FMA chain): the SM clock it sustains, the
    power it draws, the slowdown reasons it reports — a card that now runs slower is ``regressed``."""
    sensor = _sensor(gpu_device, request)
    kern = gpu_kernel.compile(fma_load.source(gpu_device.info.dialect, "float"), "fma_chain")
    load = sustained.under_load(gpu_device, sensor, fma_load.launcher(gpu_device, kern, "fp32"))
    for m in sustained.records("fma_fp32", load):
        gpuperf_record(**m)


def test_energy_copy(gpu_device, gpuperf_record, request):
    sensor = _sensor(gpu_device, request)
    size = 256 << 20
    src = gpu_device.to_device(np.random.default_rng(3).integers(0, 255, size, dtype=np.uint8))
    dst = gpu_device.empty(size)
    e = steady_state_energy(gpu_device, sensor, lambda: gpu_device.copy(dst, src, size), 2.0 * size,
                            k_steps=energy_figures.SHORT_SPAN_STEPS)
    for r in energy_figures.records("copy_256MiB", e, "byte read + written", {"bytes_per_launch": 2 * size}):
        gpuperf_record(**r)


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_energy_tuning_kernel(gpu_device, gpu_kernel, gpuperf_record, bench, request):
    sensor = _sensor(gpu_device, request)
    sizes = bench.sizes(gpu_device)
    local = bench.default_local()
    prepared = bench.prepare(gpu_device, np.random.default_rng(5), sizes)
    kern = gpu_kernel.compile(portable(bench.source, gpu_device.info.backend), bench.kernel, bench.options(local))
    glob = bench.ndrange(sizes, local, gpu_device)
    args = prepared.args()
    elements = float(np.prod(bench.extent(sizes)))
    e = steady_state_energy(gpu_device, sensor, lambda: gpu_device.launch(kern, glob, local, args), elements,
                            k_steps=energy_figures.SHORT_SPAN_STEPS)
    for r in energy_figures.records(f"tuning.{bench.name}", e, "element of the problem",
                                    {"local": list(local), "elements": elements, "sizes": sizes}):
        gpuperf_record(**r)


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_energy_pareto(gpu_device, gpuperf_record, bench, request):
    """The (time, energy) front under the objective ``both``, by the pruned search (``tuning.pareto.pareto_search``):
    the idle board power first (P_floor), every configuration timed, then energies fastest first until the
    bound ``E_min ≤ P_floor · t_lo`` proves the rest dominated, or the per-kernel budget is spent — then the
    front is over the N fastest configurations, and ``info["search"]`` says so (``exact``/``truncated``).
    Opt-in: a few seconds per energy, so an exhaustive 32-configuration search takes over a minute."""
    options = tuning_options(request.config)
    if not options.energy_pareto:
        pytest.skip("the (time, energy) Pareto search is opt-in: --gpuperf-energy-pareto (up to "
                    f"{options.pareto_budget_s:g} s per kernel, --gpuperf-pareto-budget)")
    sensor = _sensor(gpu_device, request)
    ctx = context(gpu_device, bench, seed=11, objective="time")  # time every configuration without an energy
    found, idle = pareto.pareto_search(ctx, sensor, pareto_budget(request.config))
    for r in front_figures.records(bench.name, ctx, found, idle):
        gpuperf_record(**r)
