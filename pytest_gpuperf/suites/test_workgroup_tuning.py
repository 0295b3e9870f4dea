"""Work-group-size auto-tuning (Dao thesis ch. 3; Lim dissertation ch. III) against exhaustive search,
random search and Kernel Tuner's strategies, on 12 benchmark kernels.

Per kernel (``tuning.<kernel>.*``):
* ``optimum_us`` — exhaustive optimum of the original kernel (device time);
* ``<strategy>.quality`` — time of the strategy's pick / exhaustive optimum, both re-timed together
  (interleaved) at the end; < 1 is possible for ``dao`` (its workload transformation changes the kernel);
* ``<strategy>.cost`` — evaluations / exhaustive evaluations; host seconds spent compiling+timing the
  visited configurations / exhaustive's in ``device_cost``'s ``info["host_time_cost"]`` (gated as the mean
  over kernels, ``mean.<strategy>.time_cost``: one configuration's host time is a single wall-clock reading);
* ``<strategy>.device_cost`` — the thesis' tuning cost (Dao §3.6.2): kernel execution time of one run
  of each configuration visited / the same sum over the whole space (exhaustive search);
* ``dao.pruned.<filter>`` — fraction of the space left out after each filter;
* ``space`` — size of the space, with the work-group limits that bound it (``limits.py``) in its info.
Random search and Kernel Tuner's strategies get the thesis tuner's number of evaluations (at least 3)
and are averaged over seeds (``tuning.race``, over the strategies of ``tuning.strategies.REGISTRY``).
``tuning.tiled.blur.best_us``: a blur with a ``__local`` tile, its work-group size and tile factor tuned by Kernel
Tuner itself (``tuning.tiled``), every configuration's output checked.
``tuning.mean.<strategy>.*`` averages the figures this session recorded of the kernels tuned before it
(``tuning.standings``; the set is the metric's identity, so a subset never gates against all kernels).
Every strategy's pick is run once on fresh random inputs and compared with NumPy (once per stored table:
the entry keeps the configurations checked under its key).
The exhaustive table is stored in the user's cache directory per kernel source, device, driver and space
(``tuning.reference``); a later run's strategies replay it and only the picks and the cached optimum are
timed again (together, as always), so every ``quality`` and ``optimum_us`` is a time of this run
(``info["reference"]`` of ``optimum_us`` says which); ``--gpuperf-retune`` times the whole space again.
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.tuning import ktsim, race, standings, tiled
from pytest_gpuperf.tuning.fixtures import budget_spent, tuning_options
from pytest_gpuperf.tuning.kernels import BENCHMARKS
from pytest_gpuperf.tuning.tuner import calibration


def test_lambda0_calibration(gpu_device, gpuperf_record):
    """λ0 by the thesis' micro-benchmark (needs an SM model: NVIDIA devices)."""
    cal = calibration(gpu_device)
    if cal is None:
        pytest.skip(f"{gpu_device.info.name} has no SM occupancy model (not an NVIDIA device): λ0 is not defined")
    gpuperf_record("tuning.lambda0", cal.figure(), "ratio", better="exact", info=cal.record_info())


@pytest.mark.parametrize("bench", BENCHMARKS, ids=[b.name for b in BENCHMARKS])
def test_tune(gpu_device, gpuperf_record, gpuperf_plant, bench, request):
    """Every registered strategy on one kernel (``tuning.race``): its pick's quality and its cost."""
    if ktsim.missing():  # the race includes Kernel Tuner's strategies: without them its figures are not these
        pytest.skip(ktsim.missing())
    spent = budget_spent(request.config)
    if spent:
        pytest.skip(f"--gpuperf-tuning-budget={spent:g} s spent before {bench.name}; raise it to tune every kernel")
    opts = tuning_options(request.config)
    result = race.run(gpu_device, bench, probe_limit=opts.probe_limit, retune=opts.retune,
                      plant=plants.fraction(gpuperf_plant, "tuner"))  # the gate check's tuner plant
    for r in race.records(result):
        gpuperf_record(**r)
    print(result.line())
    assert not result.third_party_all_failed(), f"every Kernel Tuner strategy failed: {result.errors}"


def test_tuning_means(gpu_device, gpuperf_record, gpuperf_recorded, gpuperf_recorded_info):
    """Means over the kernels this session tuned before this test, each strategy's over the kernels it has a
    result for, read back from what their ``test_tune`` cases recorded (``tuning.standings``). That set is
    the metric's identity (``util.aggregate.over``): a ``-k`` subset or a kernel skipped by the budget
    reads ``incomparable`` against a baseline made over all kernels, never ``regressed`` or ``improved``.
    Skips, saying so, when no ``test_tune`` case ran before it in this session."""
    tuned = standings.from_recorded(gpuperf_recorded, gpuperf_recorded_info)
    if not tuned:
        pytest.skip("no kernel was tuned earlier in this session on this device: the means are over the "
                    "test_tune cases that ran (select some of them with this test)")
    for r in standings.records(tuned):
        gpuperf_record(**r)


def test_tile_and_work_group_through_kernel_tuner(gpu_device, gpuperf_record):
    """A blur whose ``__local`` tile is sized by the work-group and a tile factor (``tuning.tiled``), both
    tuned by Kernel Tuner as ``api.tune`` with ``tune_params`` does; every configuration's output checked
    against NumPy. Its best time is gated like any kernel time; the best configuration is in its ``info``."""
    if ktsim.missing():
        pytest.skip(ktsim.missing())
    best = tiled.tune(gpu_device)
    assert best.checked and best.evaluations == best.space, best
    for r in best.records("tuning.tiled.blur"):
        gpuperf_record(**r)
