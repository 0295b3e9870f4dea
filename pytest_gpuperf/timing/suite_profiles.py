"""Suite profiles: which tests of the shipped suites a run measures (``--gpuperf-profile``, ini
``gpuperf_profile``), in one place beside the timing profiles (:mod:`.profiles`).

* ``full`` (the default) — every test of every suite except the studies (:data:`STUDIES`).
* ``study`` — ``full`` and the studies: tests that replay a published seed protocol at its own scale (an
  application corpus of tens of kernels, each run for a tenth of a second or more at several lengths),
  minutes of device time that a gate on every change does not need.
* ``quick`` — the headline figures, for a verdict on every commit: copy bandwidth (1 GiB and 1 MiB),
  empty-kernel launch overhead, the fp32/fp64/fp16x2 dependent-chain latencies (the groups that hold
  FFMA, DFMA and HFMA2), L1/L2/DRAM and shared-memory latency, the exhaustive certificates of five fp32
  math functions, one tuner pick (the whole race on one kernel) and the sampled model on three corpus
  kernels. The other tests are deselected at collection (pytest counts them as deselected).

A profile chooses tests, never how a figure is measured: a test it keeps runs as under ``full``, so every
metric keeps its name and identity, and a quick run gates against a baseline made by a full run. A test
that a profile runs in part is described by a :class:`Part`: the kernels it measures (the test reads
them through the ``gpuperf_part`` fixture) and the metric names it still records, so that the baseline's
entries of the kernels left out do not read ``missing`` (:meth:`SuiteProfile.measures`). A figure over
the kernels carries its kernel set as identity (:mod:`pytest_gpuperf.util.aggregate`): the sampled
model's means over three kernels read ``incomparable`` against a full baseline's, never ``regressed``.

The studies are listed once, here (:data:`STUDIES`); ``full`` leaves them out by that list, so a full run
deselects them (pytest counts them as deselected) and a baseline's entries of a study never read
``missing`` under ``full`` or ``quick`` (:meth:`SuiteProfile.measures`): they are gated by ``study`` runs.

A profile selects among the shipped suites only (test ids ``suites/<file>::<test>``): a user's own tests
always run. Test ids here have no device (``strip_device_id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Mapping

#: the profile a run uses when neither the option nor the ini key names one
DEFAULT = "full"
SUITES_PREFIX = "suites/"


@dataclass(frozen=True)
class Part:
    """What a profile measures of a test it runs in part: ``kernels`` (the test measures only these) and
    ``metrics``, shell patterns of the metric names the test then records (every other baseline entry
    of the test is left out on purpose, not missing)."""

    kernels: tuple[str, ...]
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class SuiteProfile:
    """A named selection of the shipped suites' tests; ``tests`` None selects every test but those whose
    function ``leaves_out`` names (ids without parameters: ``suites/f.py::t``)."""

    name: str
    description: str
    tests: tuple[str, ...] | None = None
    parts: Mapping[str, Part] = field(default_factory=dict)
    leaves_out: tuple[str, ...] = ()

    def selects(self, test: str) -> bool:
        """Whether a run under this profile runs ``test`` (a device-free canonical test id)."""
        if not test.startswith(SUITES_PREFIX):
            return True
        if _function(test) in self.leaves_out:
            return False
        return self.tests is None or test in self.tests

    def part(self, test: str) -> Part | None:
        """The part of ``test`` this profile measures, or None when it runs the whole test."""
        return self.parts.get(_function(test))

    def measures(self, test: str, metric: str) -> bool:
        """Whether a passed ``test`` is expected to record ``metric`` under this profile: the rule that
        keeps the entries of a part left out, and of a test the profile does not select, from reading
        ``missing``."""
        if not self.selects(test):
            return False
        part = self.part(test)
        return part is None or any(fnmatchcase(metric, p) for p in part.metrics)


def _function(test: str) -> str:
    """``suites/f.py::t[x]`` → ``suites/f.py::t``: a part belongs to the test function."""
    return test.split("[", 1)[0]


_SAMPLED = "suites/test_model_error.py::test_sampled_models"
#: the sampled model's quick kernels: memory-bound, compute-bound (an FMA chain), local memory + barriers
_SAMPLED_KERNELS = ("copy", "poly32", "group_reduce")
_MATH = ("sin", "cos", "exp", "log", "tan")

#: The studies: test function → what it replays and why a full run leaves it out. Only ``study`` runs them.
STUDIES: Mapping[str, str] = {
    "suites/test_model_apps.py::test_sampled_app_models":
        "Dao's sampled-kernel model on the 40-kernel application corpus at his scale (each kernel's full run "
        "≥ 0.1 s on an H100, at three run lengths): minutes of device time",
    "suites/test_model_apps.py::test_dao_ml_app_model":
        "Dao's ML model on hardware counters over the same corpus: the study's measurement (shared with "
        "test_sampled_app_models in one session) and an Nsight Compute profile of every kernel's two samples",
    "suites/test_model_ptx_study.py::test_ptx_model_study":
        "Alavani's static PTX model over 108 launch configurations of 21 kernels of the eight dwarfs (block "
        "and problem sizes, the Hopper variant's held-out kernels apart): a minute or more of device time",
    "suites/test_memory.py::test_launch_streams":
        "where the launch rate's spread lives: empty-launch spans round-robin over 8 queues in each of 4 child "
        "processes (probes.launch_streams), seconds of process start-up for an informational figure",
    "suites/test_memory.py::test_opencl_event_gate":
        "what an OpenCL event's start reads: an empty launch timed behind a user event, behind a blocking kernel "
        "and unheld (probes.event_gate), a check of the timing method, not a figure of the card",
}

FULL = SuiteProfile("full", "every test of every suite except the studies", leaves_out=tuple(STUDIES))
STUDY = SuiteProfile("study", "every test of every suite and the studies: " + "; ".join(STUDIES.values()))
QUICK = SuiteProfile(
    "quick", "the headline figures: copy bandwidth, launch overhead, FMA latencies, memory latencies, five "
             "fp32 certificates, one tuner pick, the sampled model on three kernels",
    tests=("suites/test_memory.py::test_copy_bandwidth[1GiB]",
           "suites/test_memory.py::test_copy_bandwidth[1MiB]",
           "suites/test_memory.py::test_launch_overhead",
           "suites/test_latency.py::test_latency[fp32-ieee]",
           "suites/test_latency.py::test_latency[fp64-ieee]",
           "suites/test_latency.py::test_latency[fp16-ieee]",
           "suites/test_memory_hierarchy.py::test_pointer_chase",
           "suites/test_memory_hierarchy.py::test_shared_latency",
           *(f"suites/test_accuracy_math.py::test_math_function[{fn}-fp32]" for fn in _MATH),
           "suites/test_workgroup_tuning.py::test_tune[matvec_row]",
           _SAMPLED),
    # per kernel (both sampling families) and the means over the kernels measured; the SVR is trained
    # leave-one-kernel-out over the whole corpus, so on a part of it it would be another model: not recorded
    parts={_SAMPLED: Part(_SAMPLED_KERNELS, tuple(f"model.sampled*.{k}.*" for k in _SAMPLED_KERNELS)
                          + ("model.sampled*.mean_*",))})

PROFILES: Mapping[str, SuiteProfile] = {p.name: p for p in (QUICK, FULL, STUDY)}
NAMES: tuple[str, ...] = tuple(PROFILES)


def get(name: str) -> SuiteProfile:
    """The profile called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown suite profile {name!r}; choose one of {', '.join(NAMES)}") from None
