"""Memory hierarchy: per-level latency and detected cache sizes, shared-memory latency, latency under
load (Alavani's piecewise model) and launch overhead vs grid size (Alavani ch. 3.3–3.4).

* ``memory.<l1|l2|dram>.latency.cycles``, ``memory.<l1|l2>.size.bytes`` (GPUs) — pointer chase over a random
  cycle of 128-byte lines, footprints 1 KiB … 4 × L2 (two points per doubling); the 1 KiB stride (CUDA) goes to
  the ``curve_stride1024`` info. Each named level's edge is then chased at 10 footprints between the two
  sweep footprints that bracket it (``probes.cache_edges``): a size lies on a grid of 22 footprints per
  doubling, and its band, one step of it (3.5 %), is the catalog's.
  On CPU devices only ``l1`` is named (its step is the only sharp one there; see
  ``memory.recorded_levels``); the detected levels stay in ``info``.
* ``memory.chase.<footprint>.latency.cycles`` — the chase latency at the fixed footprints 1 KiB × 4^k: the
  same names in every run, so the curve itself is gated.
* ``memory.shared.latency.cycles`` — the same chase in shared/local memory.
* ``memory.global.latency.{unloaded,loaded}.cycles`` — per-access latency as the number of chasing
  threads (outstanding requests) grows; the piecewise-linear fit goes into ``info``.
* ``launch.overhead.{intercept_us,slope_ns_per_kthread}`` — empty-kernel time vs threads launched (on a GPU
  each point one device-event span of back-to-back launches over their number).
"""

from __future__ import annotations

import pytest

from pytest_gpuperf.gatecheck import plants
from pytest_gpuperf.probes import hierarchy, launch_overhead, memory
from pytest_gpuperf.timing.stats import Stats


@pytest.fixture
def probe(gpu_device, gpu_measure):
    """This device's memory kernels, their SASS evidence, the clock and the bound measurer."""
    p = hierarchy.probe(gpu_device, gpu_measure)
    if p is None:
        pytest.skip(f"{gpu_device.info.name} reports no clock; cycles cannot be derived")
    return p


def test_pointer_chase(gpu_device, gpuperf_record, gpuperf_plant, probe):
    # the gate check's chase plant: more dependent loads than credited (memory.planted_long)
    sweep = hierarchy.chase_sweep(gpu_device, probe, plants.fraction(gpuperf_plant, "chase"))
    assert len(sweep.levels) >= 2, (f"no latency step found between 1 KiB and {4 * sweep.cache >> 20} MiB: "
                                    f"{sweep.main} — the chase did not reach past a cache level")
    for r in sweep.records(gpu_device):
        gpuperf_record(**r)


def test_shared_latency(gpu_device, gpuperf_record, probe):
    samples = memory.shared_latency(gpu_device, probe.kernels, probe.clock, probe.meas)
    st = Stats.of(samples)
    assert st.median > 0
    gpuperf_record("memory.shared.latency.cycles", st.median, "cycles", stats=st,
                   info={"clock_mhz": probe.clock, "clock_source": probe.source,
                         "sass": probe.evidence.get("gp_shared_chase")})


def test_loaded_latency(gpu_device, gpuperf_record, probe):
    for r in hierarchy.loaded_records(gpu_device, probe):
        gpuperf_record(**r)


def test_launch_overhead_vs_grid(gpu_device, gpuperf_record, gpuperf_plant, probe):
    plant = plants.fraction(gpuperf_plant, "launch")  # the gate check's launch plant: extra work per launch
    for r in launch_overhead.grid_records(gpu_device, probe.meas, probe.kernels["gp_empty"], plant):
        gpuperf_record(**r)
