"""The catalog of metric families: one table, :data:`FAMILIES`, of what the project knows about each family
of metric names — its unit, the direction that is better, the tolerance a new baseline entry gets on a GPU
and on a CPU device, the identity keys its metrics carry, how it varies between unchanged runs (its noise
model) and, where its GPU band is wider than :data:`.classes.WIDE_BAND`, the measured cause of that noise.

Why one table: a tolerance is policy, not procedure. Written beside each ``gpuperf_record`` call it
drifts between suites and cannot be reviewed as a whole; here every band a suite asks for is one row,
keyed by metric family and device class, and ``gpuperf_record`` takes it from here when the suite
names none (for the shipped suites' metrics: a user's own test names its metrics as it likes). Bands measured
from run-to-run spread (``tolerance: None``) stay the default.

Two kinds of rows: a *family* (a unit and a direction: a fixed band, a fixed direction or identity keys are
the family's definition, and ``gpuperf_record`` holds its metrics to them) and a *class* (no unit: metrics
of any name the pattern covers, optionally only in some ``units``, whose band is their measured spread; it
says only how they vary and, where their bands are wide, why). A row's ``pattern`` is an ``fnmatch``
pattern over metric names and the first matching row answers: :func:`family` reads the families alone,
:func:`row` every row that accepts the metric's unit (the last rows catch every name). So a narrower
pattern stands before a wider one, and the catch-all classes after the families.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Callable, Iterable, Mapping

from .classes import FLOORS

Tolerance = Mapping[str, float]

#: the noise models (:mod:`.noise` says what each means for a verdict)
MODELS = ("deterministic", "sampled", "repeated", "informational")


@dataclass(frozen=True)
class Noise:
    """How a class of metrics varies between unchanged runs: its noise model (one of :data:`MODELS`; a
    metric that carries raw samples is ``sampled`` whatever its row, :func:`.noise.model_of`) and why."""

    model: str
    why: str


SEARCH = Noise("repeated", "a time-budgeted search: how far it gets depends on the device's speed (its documented "
                           "bound gates it)")
SEEDED = Noise("deterministic", "seeded or exhaustive inputs: one build gives the same bits on every run")
SOLVER = Noise("deterministic", "seeded matrices and a fixed solver: the same arithmetic on every run")
COUNTS = Noise("deterministic", "sizes and counts")
TUNING_MEAN = Noise("repeated", "a mean over the tuned kernels of timing-derived ratios; its set of kernels is part "
                                "of its identity")
TUNER = Noise("repeated", "a tuner's pick and its quality are decided by timings")
MODEL = Noise("repeated", "a model's error is a ratio of timings measured in the run")
PRECISION = Noise("repeated", "speedups and chosen mixes are decided by timings")
POWER = Noise("repeated", "energy and watts integrate a power counter over a timed span")
TIMINGS = Noise("repeated", "timings reduced to one figure without their samples")
HOST_TIMED = Noise("informational", "host wall time around Python-side launches: it moves with the host's load, the "
                   "interpreter and the driver's host thread, not with the device (three unchanged H200 runs of "
                   "results/nvidia-h200/baseline-171978e read 11.2-15.5 µs per launch, 13 H100 runs 10.6-19.7 µs); the "
                   "device-timed launch figures gate the launch path")
DERIVED = Noise("repeated", "a figure derived from the run's measurements")
GATE_STUDY = Noise("informational", "a check of the OpenCL timing method (probes.event_gate): what an event's start "
                   "reads behind a user event, behind a blocking kernel, and unheld")
STREAM_STUDY = Noise("informational", "a study of where the launch rate's run-to-run spread lives: the queues of "
                     "one process against each other (probes.launch_streams); the gated launch figure is "
                     "launch.empty.device_us")

#: derived figures that cannot gate within 25 % (detection.LOOSE) from any affordable number of runs: the
#: prediction test of one new run against n baseline runs catches t(1 − α/2, n − 1)·√(1 + 1/n) + 2.33 run-σ,
#: 7.3 σ from ten runs, so gating within 25 % needs a σ between machines under 3.4 %; these figures' σ over
#: the saved A/A runs on 6 H200 and 4 H100 machines (scripts/derived_spread.py: the median entry's σ/|mean|,
#: the widest entry's) is above that, and every entry of their rows gated looser than 25 % on both cards
SPREAD_RULE = ("over the saved A/A runs on 6 H200 and 4 H100 machines (scripts/derived_spread.py); gating within 25 % "
               "needs a σ between machines under 3.4 % (7.3 σ from ten baseline runs), so it is recorded, not gated")
SAMPLED_ERROR_INFO = Noise("informational", "one kernel's error of the sampled model moves by 67 % (H200) and 63 % "
                           "(H100) of itself between unchanged runs, the median kernel's σ/|mean| (widest 108 %, 135 %) "
                           + SPREAD_RULE)
SAMPLED_MEAN_INFO = Noise("informational", "the sampled models' mean errors over kernels move by 14 % (H200) and 9.5 % "
                          "(H100) of themselves between unchanged runs, the median entry's σ/|mean| (widest 28 %, 24 %) "
                          + SPREAD_RULE)
AGREEMENT_INFO = Noise("informational", "the share of unseen kernels' runs voted as the paper argues moves by 2.6 % "
                       "(H200) and 5.6 % (H100) of itself between unchanged runs, the median entry's σ/|mean| (widest "
                       "9.5 %, 12 %) " + SPREAD_RULE)
RMSE_INFO = Noise("informational", "the L(gm) fit's residual moves by 10 % (H200) and 11 % (H100) of itself between "
                  "unchanged runs (σ/|mean|) " + SPREAD_RULE)
#: the units of timings (a class row of them catches every timing no earlier row names)
TIMING_UNITS = ("us", "ns", "ms", "s", "cycles", "GB/s", "1/s", "ops/clk/SM", "x", "ns/kthread", "MHz", "W", "J", "J/op")

#: A launch time on a CPU device (PoCL) is bimodal: one worker thread per core shares the host's cores
#: with the Python thread that enqueues and polls, and a launch that finds a worker descheduled waits for
#: the OS scheduler, about ten times the fast mode's microsecond (a single worker nearly removes it).
#: Whether a run's median lands in the slow mode depends on the host's load at that moment, so the band
#: is the slow mode's reach: a launch path that got tens of µs slower still fails. GPUs: measured spread.
LAUNCH_CPU: Tolerance = {"abs": 25.0, "rel": 2.0}
LAUNCH_CPU_WHY = "a descheduled PoCL worker's slow launch mode (tens of µs) on a CPU device; GPUs: the measured spread"
#: host-submitted launches run at one rate per process: the spread is between the runs, not within one (the saved
#: H200 A/A runs show it, tests/test_launch_modes.py); graph-launched spans are steady within a machine
#: the measured causes of the chases whose bands between machines are wider than WIDE_BAND
CHASE_CAUSES = {
    "chase.256KiB": ("256 KiB is the SM's L1 capacity (shared with shared memory): how much of a chain the L1 keeps "
                     "depends on the buffer, and the per-allocation medians spread by a few percent"),
    "chase.64MiB": ("a 64 MiB chain lies past the 50 MB L2, and machines of one card model read it in two "
                    "modes: 656-666 cycles on 14 H200 machines, 682-693 on 8 others, each machine's runs within "
                    "6 cycles of each other (the A/A runs of results/nvidia-h200/gatecheck-*/); the band between "
                    "machines covers both, and the figure is recorded, not gated"),
}
LAUNCH_GPU_CAUSE = ("host-submitted launches, read by device events over a span of back-to-back launches "
                    "(probes.launch_overhead), run at one rate per process: within a run the spans agree to 0.1 %, "
                    "but unchanged runs on one H200 machine differ by 1.2–6.2 % (σ between the runs of one machine, "
                    "the median over twelve machines; results/nvidia-h200/gatecheck-e003155 read an empty launch at "
                    "1.28, 1.37 and 1.28 µs in three runs), so the band holds every process's rate. The rate is not "
                    "the stream's: spread round-robin over eight streams of one process (launch.streams.empty.device_us, "
                    "results/nvidia-h200/queue-study-b3e0c59), one stream's rounds agree to 0.05 % and the streams lie "
                    "2.2–3.3 % apart while the two processes' means differ by 7 %, so an average over streams would not "
                    "narrow it; and a process that makes more streams launches slower on all of them (its first stream "
                    "read 1.34 µs before the other seven existed, 1.55 µs after)")
LAUNCH_GRAPH_CAUSE = ("launches of one device-side graph (probes.launch_overhead) read the same within a machine "
                      "(σ at most 0.03 % between its runs) but not on every machine of one card model: eleven H200 machines "
                      "read an empty graph launch at 0.501–0.502 µs, a twelfth at 0.537 µs (results/nvidia-h200/graph-d6b9582), "
                      "a thirteenth at 0.498 µs (results/nvidia-h200/gatecheck-300af00), a fourteenth at 0.495 µs "
                      "(results/nvidia-h200/fresh-c984332)")


#: fine footprints a detected cache edge is chased at between the two √2-apart sweep footprints that
#: bracket it (probes.cache_edges): the size lies on a grid of 2 × (points + 1) footprints per doubling, and
#: its band is one step of that grid (3.2 %), widened by a tenth for the footprints' rounding to a line
CACHE_EDGE_POINTS = 10
CACHE_SIZE_BAND: Tolerance = {"rel": round(1.1 * (2 ** (0.5 / (CACHE_EDGE_POINTS + 1)) - 1), 4)}


#: the sampled model's figures (Dao's protocol, the project's geometry, the application corpus, the SVR)
SAMPLED_BAND: Tolerance = {"abs": 0.02, "rel": 0.5}
SAMPLED_MEAN_WHY = ("the mean over kernels of the sampled model's error or overhead: half of it, or 2 points; on a "
                    "CPU device, whose microsecond runs time launch jitter on a shared host, only a model that "
                    "stopped working fails")


#: DRAM latency differs between machines of one card model by more than within one: H200 machines read a
#: 64 MiB chase at 657-670 cycles or at 679-689 (3.5 % apart, each machine's runs within 1.5 %), and every
#: figure bound by DRAM latency moves with it; a baseline from one machine's runs must pass the next one
DRAM_LATENCY_BAND: Tolerance = {"rel": 0.05}
#: the pointer chases inside an SM's L1 (1–64 KiB footprints): clock-timed on a GPU, every saved CUDA run of both
#: Hoppers read exactly 41 cycles there, so they take the L1 level's own 1 % (0.41 cycles), which fails a change of one
L1_LATENCY_LEVELS = ("chase.1KiB", "chase.4KiB", "chase.16KiB", "chase.64KiB")
L1_LATENCY_BAND: Tolerance = {"rel": 0.01}
L1_LATENCY_WHY = ("the L1's latency in whole SM cycles: the 95 saved unplanted CUDA results of H100s and H200s (47 "
                  "and 48) read exactly 41 cycles at each footprint the L1 holds, as at the L1 level's own figure, so "
                  "its band (1 %, under one cycle) fails any change of one cycle (2.4 %)")
DRAM_LATENCY_WHY = ("DRAM latency differs between machines of one card model: H200 machines read the 64 MiB chase "
                    "at 657-670 or at 679-689 cycles, 3.5 % apart, while one machine's runs agree within 1.5 %")

#: boards of one card model draw different power for the same work at the same clock (leakage, the board's
#: sensor), and every power figure moves with the board: a baseline from one machine must pass the next
POWER_BOARD_BANDS: dict[str, Tolerance] = {"energy": {"rel": 0.2}, "watts": {"rel": 0.25}, "sustained": {"rel": 0.15}}
POWER_BOARD_WHY = ("boards of one card model draw different power for the same work: one H100 drew 9 % more under "
                   "the standard FMA load at the same 1980 MHz (376 W against 336-350 W on four other machines), and "
                   "its per-kernel energies read up to 13 % and its watts up to 20 % above the baseline board's")

#: the summations of the accuracy study on a CPU device: µs-scale kernels on a shared host
SUM_CPU: Tolerance = {"rel": 3.0, "abs": 50.0}
SUM_CPU_WHY = "µs-scale kernels on a shared 2-core CPU swing by up to 3× run to run: there the band only catches gross regressions"

#: the ranked final pass stops where no untimed survivor can beat the best by more than the noise, so how
#: many configurations it times follows near-ties in the measured table, which a new machine measures
#: afresh: tables measured on three H200 machines moved it by up to 4 configurations (matvec_wg 1, 2 and 4
#: of 32; stencil2d 10 and 6 of 223). Its band, in configurations of the kernel's space:
RANKED_PASS_CONFIGS = 4
RANKED_PASS_WHY = ("a new machine measures the tuning table afresh and near-tied survivors move the ranked pass's "
                   "stop: over three H200 tables matvec_wg's final pass timed 1, 2 and 4 of 32 configurations")

#: a refinement solve is 1,535-6,155 launches: more than the driver's launch queue holds behind the CUDA
#: timer's blocking kernel, so each timed solve waits out the blocker's limit and its time takes in part of
#: the host's launching; every run stops at its fewest pairs and the ratio moves between unchanged runs
REFINE_HOLD_WHY = ("a solve of 1,535-6,155 launches overfills the launch queue behind the CUDA timer's blocking "
                   "kernel, so its time takes in part of the host's launching: over 9 unchanged H100 runs (4 machines) "
                   "the speedups read 0.67-1.06 and over 12 H200 runs 0.70-0.96")


@dataclass(frozen=True)
class Family:
    """One row of the catalog: a family of metric names and the policy its entries share (``unit`` and
    ``better`` set), or a class of metrics that only says how they vary (``unit`` None; ``units``, if given,
    the units it covers)."""

    pattern: str
    unit: str | None
    better: str | None
    gpu: Tolerance | None = None  # tolerance of a new entry on a GPU (None: from the measured spread)
    cpu: Tolerance | None = None  # on a CPU device (PoCL); the same as ``gpu`` unless set
    why: str = ""  # what the band stands for, where it is not the measured spread
    gpu_only: bool = False  # a CPU device's entries take the measured spread (``cpu`` is not used)
    identity: tuple[str, ...] = ()  # keys its metrics' identity must hold: the options that shape the value
    noise: Noise | None = None  # how its metrics vary between unchanged runs (every row of FAMILIES has one)
    cause: str = ""  # the measured cause of its GPU entries' noise, where their band is wider than WIDE_BAND
    configs: float | None = None  # a band of this many configurations of the tuned kernel's space (see space_of)
    units: frozenset[str] | None = None  # a class row's units (None: every unit)
    #: an exact figure read off a grid of timed points (a cache size on its footprint grid, λ0 on the stride
    #: sweep): unchanged runs move it by one step, which its band holds; everywhere a value is compared as
    #: exact (a fleet's cohort majority) that band holds too (:func:`grid_tolerance`)
    grid: bool = False

    def carrying(self, *keys: str) -> "Family":
        """This row with the identity keys its metrics must carry (a shipped suite's metric without one is
        refused: a value that depends on an option must name it, or runs made differently would compare)."""
        return dataclasses.replace(self, identity=tuple(keys))

    @property
    def is_family(self) -> bool:
        """Whether the row is a family (a unit and a direction its metrics are held to), not a class."""
        return self.unit is not None

    def accepts(self, unit: str) -> bool:
        """Whether a metric recorded in ``unit`` belongs to this row (a family: its unit alone)."""
        if self.unit is not None:
            return unit == self.unit
        return self.units is None or unit in self.units

    def tolerance(self, is_cpu: bool, space: float | None = None) -> dict[str, float] | None:
        """The band of a new entry on a CPU or a GPU device; a band in configurations (``configs``) needs the
        kernel's ``space`` (None without it)."""
        if is_cpu and self.gpu_only:
            return None
        if self.configs is not None:
            return None if space is None or space <= 0 else {"abs": self.configs / space}
        tol = self.cpu if is_cpu and self.cpu is not None else self.gpu
        return None if tol is None else dict(tol)


def _area(noise: Noise, *rows: Family) -> tuple[Family, ...]:
    """The rows of one area of the suites, each with the area's noise model unless it names its own."""
    return tuple(r if r.noise is not None else dataclasses.replace(r, noise=noise) for r in rows)


def _class(pattern: str, noise: Noise, units: Iterable[str] | None = None, cause: str = "") -> Family:
    """A class row: metrics the pattern covers (in ``units``, if given) whose band is their measured spread."""
    return Family(pattern, None, None, noise=noise, cause=cause, units=None if units is None else frozenset(units))


#: a deterministic accuracy statistic (the same inputs on the same device and library) moves only when
#: something changed: the gate allows float formatting noise, nothing more
ACCURACY_EXACT: Tolerance = {"abs": 1e-6}
ACCURACY_EXACT_WHY = "deterministic (the same inputs, device and library): any change of the library is news"
ACCURACY_BOUND_WHY = "correctly rounded or a documented bound: the bound is the gate"
#: a binary64 mean error is scored against a long double reference (accuracy.functions: NumPy's long double
#: functions, from the host's libm), 11 bits finer than binary64, and that reference's last bits depend on the
#: host's CPU. Measured: the same PoCL 5.0 outputs (every maximum identical) scored on an AMD EPYC and on an Intel
#: Xeon host give 36 binary64 means that differ, by up to 2.2e-6 ulp, 6 of them beyond the exact band (results
#: pocl-cpu-skylake-avx512-amd-epyc/pocl5-1 and pocl-cpu-skylake-avx512-intel-r-xeon-r-processor/ocl-1): the log,
#: exp and arctangent families, which glibc computes with the CPU's x87 instructions, the likely source. Within one
#: baseline key the saved runs agree bit for bit (220 means over 25 H100 and H200 machines; 56 over the 52 runs of
#: pocl-pthread-haswell-amd-epyc), so every file keeps the exact band; a CPU family file gates hosts of other CPU
#: models and vendors than the one it was made on, and its entries of these rows gate them at this band
#: (:func:`across_hosts`). One input changing by one ulp moves a mean of 5,118 inputs by 2e-4, twenty times it
LD_REFERENCE_MEAN: Tolerance = {"abs": 1e-5}
LD_REFERENCE_ROWS = ("accuracy.fp64.*.mean_ulp", "accuracy.pyopencl.fp64.*.mean_ulp", "accuracy.cupy.*.fp64.*.mean_ulp")
LD_REFERENCE_WHY = ("a binary64 mean against a long double reference whose last bits depend on the host: the same "
                    "outputs scored on an Intel and an AMD host differ by up to 2.2e-6 ulp (measured); any change of "
                    "one input's error is still 20 times the band")

#: the dependent-chain latency probes of long operations (library routines and SFU ops), whose chains run
#: 4 and 8 steps per loop iteration (``probes.chain.UNROLL``; which operations: ``probes.ops`` ``heavy``). A
#: whole process reads every one of them 0.10-0.37 cycles per operation higher, or not (at most 0.20 on those
#: under 25 cycles, where the quarter cycle is the band; above that the 1 % floor is wider), with the same SASS at
#: the same offsets: the two sections' loop overhead does not cancel by the same amount in every process, and
#: with 4 extra operations per iteration the difference lands on each at a quarter. The cheap operations'
#: chains (32 and 64 steps) move by 0.006 cycles between the same runs.
SHORT_CHAIN_OPS = ("fp32.cos", "fp32.cos_intr", "fp32.div", "fp32.exp", "fp32.exp2", "fp32.fdiv_rd", "fp32.fdiv_rn",
                   "fp32.fdiv_ru", "fp32.fdiv_rz", "fp32.fsqrt_rd", "fp32.fsqrt_rn", "fp32.fsqrt_ru", "fp32.fsqrt_rz",
                   "fp32.log", "fp32.pow", "fp32.rcp", "fp32.sin", "fp32.sin_intr", "fp32.sqrt", "fp64.ddiv_rd",
                   "fp64.ddiv_rn", "fp64.ddiv_ru", "fp64.ddiv_rz", "fp64.div", "fp64.exp", "fp64.log", "fp64.rcp",
                   "fp64.sin", "fp64.sqrt")
SHORT_CHAIN_BAND: Tolerance = {"abs": 0.25}
SHORT_CHAIN_WHY = ("a 4/8-step chain: a whole process reads every such probe 0.10-0.37 cycles per operation higher or "
                   "not (same SASS; at most 0.20 on those under 25 cycles), on H100s and H200s alike: the loop overhead left after the difference, a quarter "
                   "cycle at most; the 1 % floor covers the longer operations")

#: the tuning strategies that do not search (the exhaustive reference, the thesis tuner, Lim's occupancy
#: filters) and the band (GPU, CPU device) of their quality, per kernel and as a mean over kernels
NO_SEARCH = ("exhaustive", "dao*", "lim_*")
NO_SEARCH_QUALITY: tuple[Tolerance, Tolerance] = ({"rel": 0.08, "abs": 0.02}, {"rel": 3.0, "abs": 0.5})

#: a figure every run on a CPU device reads the same (a rounding error, a solver's count) gates on a CPU as a
#: derived figure on a GPU, not at the CPU class's floor for timings (classes.FLOORS: 200 % for "other"): the
#: PoCL 5.0 family's 44 such entries read the same bits on an Intel Xeon (results/pocl-cpu-skylake-avx512-intel-r-
#: xeon-r-processor/ocl-1) as on the AMD EPYC its runs came from, and the summation errors the same on PoCL 3.1,
#: 5.0 and 6.0 and on both GPUs. A count or a composite error gates any change; a summation error 10 % on every
#: device (DETERMINISTIC_SUM)
CPU_DETERMINISTIC: Tolerance = {"rel": 0.01}
DETERMINISTIC_SUM: Tolerance = {"rel": 0.1, "abs": 1e-30}
CPU_DETERMINISTIC_WHY = ("on a CPU device deterministic as on a GPU: the same value on every run and on hosts of "
                         "two CPU vendors (PoCL 5.0 on AMD EPYC and Intel Xeon)")

#: every row: the families (narrow patterns first), each area of the suites under its heading with the noise
#: model its rows share unless a row names its own (a class row that writes the cause of a few figures' wide
#: bands stands among its area's families); then the classes by area and unit, which catch every other metric
FAMILIES: tuple[Family, ...] = (
    # ---- accuracy: seeded or exhaustive inputs ------------------------------------------------------
    *_area(
        SEEDED,
        # the correctly rounded basic operations: gated by their documented bound alone; before the math
        # functions' rows, whose patterns would take them too
        Family("accuracy.fp*.*.r[nudz].max_ulp", "ulp", "bound", why=ACCURACY_BOUND_WHY).carrying("inputs", "n", "scale", "seed"),
        Family("accuracy.fp*.*.rn.default.max_ulp", "ulp", "bound", why=ACCURACY_BOUND_WHY).carrying("inputs", "n", "scale", "seed"),
        # binary64 means first (their reference's last bits depend on the host's CPU), then every other statistic
        *(Family(f"accuracy.{source}.*.mean_ulp", "ulp", "lower", gpu=ACCURACY_EXACT, why=LD_REFERENCE_WHY).carrying(
            *(("inputs",) if source == "fp64" else ("inputs", "n", "seed")))
          for source in ("fp64", "pyopencl.fp64", "cupy.*.fp64")),  # LD_REFERENCE_ROWS
        # math functions, fast variants and the libraries users call, on seeded sets or certified over every input
        *(Family(f"accuracy.{source}.*.{stat}", "ulp", "lower", gpu=ACCURACY_EXACT, why=ACCURACY_EXACT_WHY).carrying(
            *(("inputs",) if source == "fp*" else ("inputs", "n", "seed")))
          for source in ("fp*", "pyopencl", "cupy") for stat in ("max_ulp", "mean_ulp")),
        # the certificates' fractional maximum (|y - f(x)| / ulp(f(x)) over every input): deterministic alike
        Family("accuracy.fp*.*.max_ulp_fractional", "ulp", "lower", gpu=ACCURACY_EXACT,
               why=ACCURACY_EXACT_WHY).carrying("inputs"),
        Family("accuracy.sum.*.abs_err", "1", "lower", gpu=DETERMINISTIC_SUM,
               why="a rounding error of a fixed order of operations: the same bits on every run, on PoCL 3.1, 5.0 "
                   "and 6.0 on AMD and Intel CPUs and on both GPUs, so 10 % (its plant is 15 %); the absolute floor "
                   "keeps an exact sum (0) comparable").carrying("inputs", "n", "seed"),
        # the composite operations' errors over seeded inputs: the same arithmetic on every run and host
        Family("accuracy.cmp.*.max_rel_err", "1", "lower", cpu=CPU_DETERMINISTIC, why=CPU_DETERMINISTIC_WHY),
        # the summations' device times (every launch of one reduction), longest first
        Family("accuracy.sum.*.parallel.n24.time_us", "us", "lower", gpu=DRAM_LATENCY_BAND, cpu=SUM_CPU,
               noise=TIMINGS,
               why="2048 threads each walk a strided slice of a 64-128 MiB array, a working set past the L2: the time is "
                   "loads × DRAM latency, which moves with the machine as memory.dram.latency does"),
        Family("accuracy.sum.*.serial.n16.time_us", "us", "lower", cpu=SUM_CPU, noise=TIMINGS,
               why="one work-item adds 2^16 values in one 3–5 ms launch, whose runs on a GPU agree within 1 % (the "
                   "measured spread); " + SUM_CPU_WHY),
        Family("accuracy.sum.*.time_us", "us", "lower", cpu=SUM_CPU, noise=TIMINGS, why=SUM_CPU_WHY,
               cause="a reduction of 20–430 µs on a GPU: the pairwise sums (one launch per halving), the parallel ones "
                     "of up to 2^20 values (two launches) and the serial ones of 2^12 values (one launch); the runs of "
                     "one differ by up to 10 % (launch latency, the clock's ramp between launches), as its entries' "
                     "run_values show"),
        Family("accuracy.sweep.fp32.*.checked_per_s", "1/s", "higher", cpu={"rel": 2.0}, noise=TIMINGS,
               why="one timed pass on shared CPU cores: a concurrent process halves it, so only a rate that fell "
                   "by more than that fails").carrying("checked", "inputs"),
        # not here, their band depends on the case (accuracy/region_fuzz.py, accuracy/sweep_check.py compute it):
        # accuracy.fuzz.*.max_ulp (a bound where the function documents one, else the baseline's) and
        # accuracy.sweep.fp32.*.checked_over_reference (a bound in exhaustive mode, else the baseline's)
    ),
    # ---- latency and throughput probes, memory, launches: timings -----------------------------------
    *_area(
        TIMINGS,
        *(Family(f"latency.{op}{fast}.cycles", "cycles", "lower", gpu=SHORT_CHAIN_BAND, gpu_only=True,
                 why=SHORT_CHAIN_WHY) for op in SHORT_CHAIN_OPS for fast in ("", ".fast")),
        Family("throughput.*.saturating_ilp", "ilp", "lower", gpu={"abs": 0.5}, cpu={"abs": 4.0}, noise=DERIVED,
               why="an integer of the ILP sweep: GPUs sweep ILP 1..8 and read the same value in every saved run (59 "
                   "H100 and H200 runs), so half a step fails any change of one step; CPU devices sweep 1, 2, 4, 8, "
                   "where on a shared host the saturating ILP moves by a step between runs"),
        Family("memory.*.size.bytes", "bytes", "exact", gpu=CACHE_SIZE_BAND, noise=COUNTS, grid=True,
               why="the detected cache size is one of the fine footprints chased across the level's edge "
                   f"({2 * (CACHE_EDGE_POINTS + 1)} per doubling): one step of that grid either way"),
        # DRAM-resident footprints first: the 64 MiB chase lies past an H100's or H200's L2
        *(Family(f"memory.{level}.latency.cycles", "cycles", "lower", gpu=DRAM_LATENCY_BAND, gpu_only=True,
                 why=DRAM_LATENCY_WHY, cause=CHASE_CAUSES.get(level, "")) for level in ("chase.64MiB", "dram")),
        # footprints the L1 holds, before the wildcard below: clock-timed, they read the same cycle count everywhere
        *(Family(f"memory.{level}.latency.cycles", "cycles", "lower", gpu=L1_LATENCY_BAND, gpu_only=True,
                 why=L1_LATENCY_WHY) for level in L1_LATENCY_LEVELS),
        *(Family(f"memory.{level}.latency.cycles", "cycles", "lower", gpu={"rel": 0.03}, gpu_only=True,
                 why="the latency differs between machines of one card model: on H100s the L2-range footprints read "
                     "about 283 cycles on some machines and about 290 on others, while the runs of one machine agree "
                     "within 0.6 %: a baseline from one machine's runs must pass the next machine",
                 cause=CHASE_CAUSES.get(level, ""))
          for level in ("chase.256KiB", "chase.*", "l2")),
        *(_class(f"memory.copy.bandwidth.{size}", TIMINGS, ("GB/s",),
                 cause="a copy of 1–16 MiB lasts 1–8 µs, launch-bound: timed over a span of back-to-back copies "
                       "(probes.copy_bandwidth) its per-copy time still moves with the copies' issue gaps") for size in ("1MiB", "16MiB")),
        Family("memory.global.latency.*.cycles", "cycles", "lower",
               why="a pointer chain's latency per load, with or without other warps loading: its runs' spread",
               cause="each run's figure is the median over 5 allocations of the chain, and where a chain lands in "
                     "physical memory moves its latency: 16 allocations of one chain in one process read 284.3–289.4 "
                     "cycles (results/nvidia-h200/l2-placement-cuda.json.xz), and the unloaded figure's σ over its "
                     "runs' allocations is 1.5–1.8 % of it on an H200 (CUDA 10.3 cycles over "
                     "results/nvidia-h200/baseline-171978e, NVIDIA OpenCL 12.5 cycles over "
                     "results/nvidia-h200/nvocl-{5,6,7}-opencl.json.xz)"),
        Family("latency.*.ns", "ns", "lower",
               why="an instruction's latency in ns where no device clock is read (OpenCL): its runs' spread",
               cause="OpenCL reads no device clock: a latency is the difference of two chain lengths timed by "
                     "events, divided by the steps between them, so each run carries two launches' event noise; "
                     "three NVIDIA OpenCL runs on one H200 read latency.fp32.sin.ns at 46.7–48.1 ns "
                     "(results/nvidia-h200/nvocl-{5,6,7}-opencl.json.xz)"),
        Family("memory.global.latency_model.r2", "R²", "higher", gpu={"abs": 0.1}, cpu={"abs": 0.4}, noise=DERIVED,
               why="the piecewise fit explains a GPU's loaded-latency curve (R² near 1); on a shared CPU host one "
                   "jittery point pulls it down now and then, so there only a fit that stopped working fails"),
        Family("launch.event_gate.*", "us", "lower", noise=GATE_STUDY,
               why="a study of the OpenCL timing method, not a gate: the same empty launch under each way of "
                   "holding a timed region"
               ).carrying("hold", "launches_per_span"),
        Family("launch.streams.*", "us", "lower", noise=STREAM_STUDY,
               why="a study, not a gate: its info compares the queues of one process with one queue's rounds"
               ).carrying("queues", "rounds", "processes"),
        *(Family(pattern, "us", "lower", cpu=LAUNCH_CPU, why=LAUNCH_CPU_WHY,
                 cause=LAUNCH_GRAPH_CAUSE if pattern.startswith("launch.graph.") else LAUNCH_GPU_CAUSE)
          for pattern in ("launch.empty.device_us", "launch.graph.*.device_us", "launch.grid.*.device_us",
                          "launch.overhead.intercept_us")),
        Family("launch.overhead.slope_ns_per_kthread", "ns/kthread", "lower", cpu={"rel": FLOORS["cpu"]["throughput"]},
               why="on a CPU device the slope is the inverse of the workers' throughput over the largest grids, and a "
                   "neighbour holding one of the host's cores halves it: the CPU floor of compute throughput holds a "
                   "lost core (GPUs: the measured spread)"),
    ),
    # ---- kernel classes and models: a model's error is a ratio of timings ---------------------------
    *_area(
        MODEL,
        Family("model.classify.counters.*.accuracy", "ratio", "higher", gpu={"abs": 0.10, "rel": 0.0},
               why="held-out accuracy from Nsight Compute counters (CUDA only), in absolute points").carrying("classes", "unseen"),
        Family("model.classify.counters.*.unseen_agreement", "ratio", "higher", gpu={"abs": 0.34, "rel": 0.0},
               why="share of the unseen kernels' runs voted as the paper argues, in absolute points").carrying("classes", "unseen"),
        Family("model.classify.*.accuracy*", "ratio", "higher", gpu={"abs": 0.10, "rel": 0.0},
               cpu={"abs": 0.25, "rel": 0.0},
               why="held-out accuracy from timing features (with and without code features), in absolute points; "
                   "wider on a CPU device").carrying("classes", "unseen"),
        Family("model.classify.*.unseen_agreement*", "ratio", "higher", gpu={"abs": 0.34, "rel": 0.0}, noise=AGREEMENT_INFO,
               cpu={"abs": 0.6, "rel": 0.0},
               why="share of the unseen kernels' runs voted as the paper argues (timing features, with and without "
                   "code features), in absolute points; wider on a CPU device").carrying("classes", "unseen"),
        Family("model.similarity.*.slowdown", "ratio", "lower", gpu={"abs": 0.1, "rel": 0.0},
               why="time at the reused work-group size over the query's own best (≥ 1), in absolute terms"),
        Family("model.ptx.global_latency.r2", "R²", "higher", gpu={"abs": 0.1},
               why="quality of the piecewise-linear L(gm) fit: 0.1 of R²"),
        Family("model.ptx.global_latency.rmse_cycles", "cycles", "lower", gpu={"abs": 10.0, "rel": 1.0}, noise=RMSE_INFO,
               why="residual of the L(gm) fit: it may double, or move 10 cycles",
               cause="the residual of the L(gm) fit in cycles, not a latency: the band is the row's own (a doubling, "
                     "or 10 cycles)"),
        Family("model.ptx.*.error", "ratio", "lower", gpu={"abs": 0.05, "rel": 0.2},
               why="one dwarf kernel's relative error of the static PTX model (or a variant): 20 % of it, or 5 points").carrying("latencies"),
        Family("model.ptx.*.mape", "ratio", "lower", gpu={"abs": 0.05, "rel": 0.2},
               why="a dwarf's mean error of the static PTX model (or a variant): 20 % of it, or 5 points").carrying("kernels", "latencies"),
        Family("model.ptx.*mean_error", "ratio", "lower", gpu={"abs": 0.05, "rel": 0.2},
               why="the mean error over the dwarf kernels of the static PTX model (or a variant): 20 % of it, or 5 points").carrying("kernels", "latencies"),
        Family("model.s[av][mr]*.mean_error", "ratio", "lower", gpu=SAMPLED_BAND, cpu={"abs": 0.8, "rel": 1.0},
               noise=SAMPLED_MEAN_INFO,
               why=SAMPLED_MEAN_WHY).carrying("kernels", "sampling", "waves"),
        Family("model.dao_ml_apps.mean_error", "ratio", "lower", gpu=SAMPLED_BAND,
               why=SAMPLED_MEAN_WHY + "; Dao's counter model (CUDA only: it reads Nsight Compute counters), its "
                   "counter set in the identity").carrying("kernels", "sampling", "waves", "counters"),
        Family("model.sampled*.mean_overhead", "ratio", "lower", gpu=SAMPLED_BAND, cpu={"abs": 0.8, "rel": 1.0},
               why=SAMPLED_MEAN_WHY).carrying("kernels", "sampling", "waves"),
        Family("model.sampled*.*.error", "ratio", "lower", gpu=SAMPLED_BAND, noise=SAMPLED_ERROR_INFO,
               why="one kernel's error of the sampled model: half of it, or 2 points, widened to k x the larger of "
                   "its runs' spread and its own standard error in a run (error_se): the slope of two samples is "
                   "extrapolated over ~160x on an 800-wave run, so the sample pairs' scatter moves one kernel's "
                   "error by several points between unchanged runs").carrying("sampling", "waves"),
        Family("model.sampled*.*.overhead", "ratio", "lower", gpu={"rel": 0.05},
               why="one kernel's sampling overhead (sampled time / full run, a ratio of device-timed medians): "
                   "unchanged runs on two machines of one card model agree within 4 %").carrying("sampling", "waves"),
        # the static power model's scores: the corpus is a file and the cross-validation seeded, so a change
        # is a change of code or corpus
        *(Family(f"model.power.*.{score}", unit, better, {"abs": 0.02, "rel": 0.1},
                 why="a seeded fit of a saved corpus").carrying("corpus_entries", "kernels")
          for score, unit, better in (("r2", "ratio", "higher"), ("rmse_w", "W", "lower"), ("mae_w", "W", "lower"),
                                      ("mape", "%", "lower"))),
    ),
    # ---- power: energy and watts over a timed span --------------------------------------------------
    *_area(
        POWER,
        Family("power.*.joules_per_op", "J/op", "lower", gpu=POWER_BOARD_BANDS["energy"], why=POWER_BOARD_WHY,
               cause=POWER_BOARD_WHY),
        *(Family(f"power.{load}.watts", "W", "lower", gpu=POWER_BOARD_BANDS["watts"], why=POWER_BOARD_WHY,
                 cause=POWER_BOARD_WHY)
          for load in ("fma_*", "copy_*", "tuning.*")),
        Family("power.sustained.*.watts", "W", "lower", gpu=POWER_BOARD_BANDS["sustained"],
               why=POWER_BOARD_WHY, cause=POWER_BOARD_WHY),
        Family("power.tuning.*.front", "configs", "exact", {"abs": 2}, noise=COUNTS,
               why="a count of configurations, each placed by energies that carry the counter's noise"),
        Family("power.tuning.*.energy_saving", "ratio", "higher", {"abs": 0.05, "rel": 0.1},
               why="a ratio of two steady-state energies, each within the counter's bound"),
    ),
    # ---- precision: speedups and chosen mixes -------------------------------------------------------
    *_area(
        PRECISION,
        *(Family(pattern, unit, better, gpu={"abs": 0.5},
                 why="seeded training, deterministic on a device; one of the 450 test images is 0.22 points: two images")
          for pattern, unit, better in (("precision.quant.fp32.accuracy", "%", "higher"),
                                        ("precision.quant.*.accuracy_drop", "pp", "lower"))),
        Family("precision.vprec.rounding_mismatches", "1", "exact", gpu={"abs": 0.0},
               why="the in-kernel rounding to (r, p) must equal the host's element for element"),
        # a solver's or a precision search's counts (seeded matrices, a fixed search): deterministic on a CPU too
        Family("precision.*.iterations", "iterations", "lower", cpu=CPU_DETERMINISTIC, noise=SOLVER,
               why=CPU_DETERMINISTIC_WHY),
        Family("precision.vprec.*.min_mantissa_bits", "bits", "lower", cpu=CPU_DETERMINISTIC, noise=SOLVER,
               why=CPU_DETERMINISTIC_WHY),
        Family("precision.refine.*.speedup", "ratio", "higher", gpu={"rel": 0.3}, gpu_only=True,
               why=REFINE_HOLD_WHY, cause=REFINE_HOLD_WHY),
    ),
    # ---- tuning: a tuner's pick and cost are decided by timings -------------------------------------
    *_area(
        TUNER,
        Family("tuning.lambda0", "ratio", "exact", {"abs": 0.25}, grid=True,
               why="λ0 is one step of the micro-benchmark's stride sweep, not a continuous figure"),
        # the means over kernels first: the per-kernel patterns below match them too
        *(Family(f"tuning.mean.{strategy}.quality", "ratio", "lower", *NO_SEARCH_QUALITY, noise=TUNING_MEAN,
                 why="as a kernel's quality of a strategy that does not search").carrying("kernels") for strategy in NO_SEARCH),
        Family("tuning.mean.*.quality", "ratio", "lower", {"rel": 0.1, "abs": 0.03}, {"rel": 1.0, "abs": 0.3},
               noise=TUNING_MEAN,
               why="a searching strategy's mean: averaging over kernels and seeds narrows one kernel's swings").carrying("kernels"),
        Family("tuning.mean.*.time_cost", "ratio", "lower", {"rel": 0.6, "abs": 0.1}, {"rel": 2.0, "abs": 0.3},
               noise=TUNING_MEAN,
               why="host seconds: one wall-clock reading per configuration, diluted over the kernels").carrying("kernels"),
        Family("tuning.mean.*.device_cost", "ratio", "lower", {"rel": 0.3, "abs": 0.05}, noise=TUNING_MEAN,
               why="a ratio of kernel-time sums, averaged over kernels").carrying("kernels"),
        Family("tuning.mean.*.cost", "ratio", "lower", {"rel": 0.3, "abs": 0.05}, noise=TUNING_MEAN,
               why="evaluations over the space's, averaged over kernels").carrying("kernels"),
        Family("tuning.total.*.device_cost", "ratio", "lower", {"rel": 0.3, "abs": 0.05}, {"rel": 1.0, "abs": 0.2},
               noise=TUNING_MEAN,
               why="on a shared 2-core CPU one slow kernel moves the sum: gross changes only there").carrying("kernels"),
        # per kernel
        Family("tuning.tiled.*.best_us", "us", "lower",
               why="the tuned tile kernel's best time: its runs' spread",
               cause="the best of Kernel Tuner's timings of a kernel of a few µs, each one launch, among near-tied "
                     "configurations: on NVIDIA's OpenCL three runs on one H200 read the tiled blur's best at 9.12, "
                     "8.64 and 8.80 µs, picking block 256, 128 and 256 with tile 4 "
                     "(results/nvidia-h200/nvocl-{5,6,7}-opencl.json.xz)"),
        Family("tuning.*.optimum_us", "us", "lower", None, {"rel": 3.0},
               why="CPU devices share their cores with other jobs: the optimum swings several-fold between runs"),
        Family("tuning.*.space", "configs", "exact", {"abs": 0}, noise=COUNTS, why="a count: any change is a change"),
        # a tuner's evaluations per stage, as a fraction of the space: a filter's decisions read the stored
        # tuning table, so unchanged runs count the same evaluations (one configuration's band), except
        # where the count follows near-ties in a table that a new machine measures afresh
        Family("tuning.*.dao_ranked.evals.final", "fraction", "lower", configs=RANKED_PASS_CONFIGS,
               why=f"{RANKED_PASS_CONFIGS} configurations of the space: " + RANKED_PASS_WHY),
        Family("tuning.*.evals.*", "fraction", "lower", configs=1,
               why="one configuration of the space (1/space): unchanged runs count the same evaluations"),
        Family("tuning.*.pruned.*", "fraction", "higher", {"abs": 0.05}, why="a filter's share of the space"),
        Family("tuning.*.exhaustive.quality", "ratio", "lower", *NO_SEARCH_QUALITY,
               why="two re-timed medians plus picks that flip between near-equal configurations; on a CPU one "
                   "noisy point of the exhaustive pass moves the optimum by tens of percent: gross failures only"),
        *(Family(f"tuning.*.{strategy}.quality", "ratio", "lower", *NO_SEARCH_QUALITY, why="as exhaustive's quality")
          for strategy in NO_SEARCH[1:]),
        Family("tuning.*.quality", "ratio", "lower", {"rel": 0.25, "abs": 0.05}, {"rel": 5.0, "abs": 0.5},
               why="a searching strategy follows the measured values, so one noisy point changes its path; on a "
                   "shared CPU its pick on a small space can land several times off the optimum in one run"),
        Family("tuning.*.dao_ranked.cost", "ratio", "lower", {"rel": 0.25, "abs": 0.1}, {"rel": 1.0, "abs": 0.2},
               why=RANKED_PASS_WHY),
        Family("tuning.*.dao*.*cost", "ratio", "lower", {"rel": 0.25, "abs": 0.05}, {"rel": 1.0, "abs": 0.2},
               why="a strategy that does not search: a contention decision that flips moves its evaluations"),
        Family("tuning.*.lim_*.*cost", "ratio", "lower", {"rel": 0.25, "abs": 0.05}, {"rel": 1.0, "abs": 0.2},
               why="as the thesis tuner's cost"),
        Family("tuning.*.*cost", "ratio", "lower", {"rel": 0.6, "abs": 0.15}, {"rel": 1.5, "abs": 0.5},
               why="a searching strategy's path (and the budget the thesis tuner's evaluations give it) moves "
                   "with one noisy point: per kernel only a broken strategy is caught; the means compare"),
    ),
    # ---- classes: every other metric, by area and unit ----------------------------------------------
    _class("accuracy.search.*", SEARCH),
    _class("accuracy.*", SEEDED, ("ulp", "1", "bits")),
    _class("precision.*", SOLVER, ("bits", "iterations")),
    _class("*", COUNTS, ("configs", "bytes", "count")),
    _class("tuning.mean.*", TUNING_MEAN),
    _class("tuning.total.*", TUNING_MEAN),
    _class("tuning.*", TUNER),
    _class("model.*", MODEL),
    _class("precision.*", PRECISION),
    _class("power.*", POWER),
    _class("*.host_us", HOST_TIMED, ("us",),
           cause="timed by the host's clock around Python-side launches: classes.HOST_FLOOR"),
    _class("*", TIMINGS, TIMING_UNITS),
    _class("*", DERIVED),
)


#: metric names the shipped suites recorded once and no longer record (regex, where the figure went): a
#: baseline entry of one is not ``missing`` but retired — the run says so, ``gpuperf baseline migrate`` drops it
RETIRED: tuple[tuple[str, str], ...] = (
    (r"^model\.svr(_project|_apps)?\.(?!mean_)[^.]+\.error$",
     "the SVR's per-kernel error is kept in its mean's info['per_kernel']: one kernel's leave-one-kernel-out "
     "error moves several-fold between unchanged runs, so only the mean is a gated figure"),
)


#: the figures that are a difference of two timings: each single sample is one pair's difference (a chain's
#: long section minus its short one, a pointer chase's long run minus its short one, each thread's 2n-step
#: section minus its n-step one), which a neighbour's time slice landing in the shorter launch makes
#: negative on a shared host (PoCL's event-timed chains and chases: a few samples of 1 in 30), while their
#: median, the figure, cannot be (:func:`.validity.sample_problem`). A user's own differenced figure declares
#: itself in its ``info`` (:data:`.validity.DIFFERENCED`). Pattern → the procedure that differences it.
DIFFERENCED: tuple[tuple[str, str], ...] = (
    ("latency.*", "a dependent chain's two sections (probes.latency, probes.chain)"),
    ("memory.*.latency.cycles", "a pointer chase's long minus short section (probes.memory, probes.chase_windows)"),
    ("memory.global.latency.*.cycles", "each thread's 2n-step minus n-step section (probes.global_latency)"),
)


@functools.lru_cache(maxsize=None)
def differenced(name: str) -> str | None:
    """How a shipped suite's figure is differenced (:data:`DIFFERENCED`), or None where it is not."""
    return next((how for pattern, how in DIFFERENCED if fnmatchcase(name, pattern)), None)


def retired(name: str) -> str | None:
    """Where a metric the shipped suites no longer record went (:data:`RETIRED`), or None."""
    return next((why for pattern, why in RETIRED if re.search(pattern, name)), None)


@functools.lru_cache(maxsize=None)
def family(name: str) -> Family | None:
    """The family of a metric name (the first family row its name matches), or None where its band is the
    measured spread alone (remembered per name: a run looks each metric up when it validates, records and
    judges it)."""
    return next((f for f in FAMILIES if f.is_family and fnmatchcase(name, f.pattern)), None)


@functools.lru_cache(maxsize=None)
def row(name: str, unit: str) -> Family:
    """The row that says how a metric of ``name`` recorded in ``unit`` varies and, where its band is wide, why:
    the first row whose pattern its name matches and that accepts its unit (the last row accepts every one)."""
    return next(f for match, f in _rows_accepting(unit) if match(name))


@functools.lru_cache(maxsize=None)
def _rows_accepting(unit: str) -> tuple[tuple[Callable[[str], Any], Family], ...]:
    """The rows that accept ``unit``, in order, each with its pattern compiled (as :func:`fnmatchcase`
    matches it): a comparison of 100,000 metrics looks up 100,000 names no cache has seen."""
    return tuple((re.compile(fnmatch.translate(f.pattern)).match, f) for f in FAMILIES if f.accepts(unit))


def wide_band_cause(name: str, unit: str) -> str | None:
    """The measured cause that lets a device-timed GPU figure gate wider than :data:`.classes.WIDE_BAND`
    (its row's ``cause``), or None."""
    return row(name, unit).cause or None


def policy(name: str, unit: str, better: str, tolerance: Tolerance | None, is_cpu: bool) -> dict[str, float] | None:
    """The tolerance a shipped suite's metric is recorded with: its own (a band computed from the data) or
    its family's. Raises ValueError where the metric's unit or direction contradict its family's row — a
    catalog row out of date, or a metric named into the wrong family."""
    fam = family(name)
    if fam is not None and (fam.unit, fam.better) != (unit, better):
        raise ValueError(f"metric {name!r} recorded as {unit!r}, better={better!r}; its family {fam.pattern!r} "
                         f"in baselines/catalog.py says {fam.unit!r}, better={fam.better!r}")
    if tolerance is not None:
        return dict(tolerance)
    return None if fam is None else fam.tolerance(is_cpu)


def missing_identity(name: str, identity: Mapping[str, object] | None) -> list[str]:
    """The identity keys ``name``'s family says its metrics carry and ``identity`` lacks (empty: none)."""
    fam = family(name)
    return [] if fam is None else [k for k in fam.identity if k not in (identity or {})]


def tolerance(name: str, is_cpu: bool) -> dict[str, float] | None:
    """The tolerance a new baseline entry of ``name`` gets on a CPU or a GPU device (None: none fixed, or a
    band in configurations of a space, which :func:`space_band` and :func:`baseline_band` give)."""
    f = family(name)
    return None if f is None else f.tolerance(is_cpu)


def across_hosts(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """A family file's entry as it gates a host of another CPU model or vendor than the one it was made on: a
    figure scored against a reference the host computes (:data:`LD_REFERENCE_ROWS`) at no narrower than
    :data:`LD_REFERENCE_MEAN`; any other entry as it is."""
    if not any(fnmatchcase(name, p) for p in LD_REFERENCE_ROWS):
        return dict(entry)
    tolerance = dict(entry.get("tolerance") or {})
    tolerance["abs"] = max(float(tolerance.get("abs", 0.0)), LD_REFERENCE_MEAN["abs"])
    return {**entry, "tolerance": tolerance}


def grid_tolerance(name: str, is_cpu: bool) -> dict[str, float] | None:
    """The band of an exact figure read off a grid of timed points (its row's ``grid``), within which two
    readings are the same figure; None for any other figure (compared bit for bit where it is exact)."""
    f = family(name)
    return f.tolerance(is_cpu) if f is not None and f.grid else None


def space_of(name: str) -> str:
    """The metric counting the configurations of the space a tuning figure's band is measured in: the tuning
    suite records each kernel's space as ``tuning.<kernel>.space``."""
    return f"tuning.{name.split('.')[1]}.space"


def space_band(name: str, space: int) -> dict[str, float] | None:
    """The band of a tuning figure whose family counts its band in configurations, for a space of ``space``
    configurations (the tuner passes it when it records the figure), or None for a figure of another family."""
    f = family(name)
    return None if f is None or f.configs is None else f.tolerance(False, float(space))


#: the provenance key of the entries whose bands were measured between machines (their baseline runs pooled
#: with saved A/A runs of unchanged code on other machines, ``scripts/derived_bands.py``): one object that the
#: pooled entries of a section share, ``{"script", "runs", "causes": {name: cause}, "baseline": {name: what the
#: pooling replaced}}`` and, for those that even so cannot gate within 25 % (:data:`.detection.LOOSE`),
#: ``"informational": {name: why, with the measured spread}``
BAND_FROM = "band_from"


def _band_from(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    prov = entry.get("provenance")
    got = prov.get(BAND_FROM) if isinstance(prov, Mapping) else None
    return got if isinstance(got, Mapping) else None


def measured_band(name: str, entry: Mapping[str, Any]) -> str | None:
    """The measured cause of entry ``name``'s own band, where its band was measured between machines in place of
    its row's fixed band (:data:`BAND_FROM`), or None. Such an entry keeps its band: the catalog's fixed band is
    not re-applied to it."""
    causes = (_band_from(entry) or {}).get("causes")
    cause = causes.get(name) if isinstance(causes, Mapping) else None
    return str(cause) if cause else None


def measured_informational(name: str, entry: Mapping[str, Any]) -> str | None:
    """Why entry ``name`` is recorded, not gated, where its baseline's runs pooled with A/A runs on other machines
    still spread too far to gate it within 25 % (:data:`BAND_FROM`'s ``informational``), or None."""
    why = (_band_from(entry) or {}).get("informational")
    why = why.get(name) if isinstance(why, Mapping) else None
    return str(why) if why else None


def baseline_band(name: str, is_cpu: bool, metrics: Mapping[str, Mapping[str, object]]) -> dict[str, float] | None:
    """The band the catalog gives an entry of ``name`` in a baseline section holding ``metrics`` (what a run of
    this plugin would record: ``gpuperf baseline migrate --catalog-bands``), None where it fixes none or the
    entry's band was measured for it between machines (:func:`measured_band`). A band in configurations takes
    the space from the section's :func:`space_of` entry; ValueError where it has none."""
    entry = metrics.get(name)
    if isinstance(entry, Mapping) and measured_band(name, entry) is not None:
        return None
    f = family(name)
    if f is None or f.configs is None:
        return None if f is None else f.tolerance(is_cpu)
    space = (metrics.get(space_of(name)) or {}).get("value")
    if isinstance(space, bool) or not isinstance(space, (int, float)) or not space > 0:
        raise ValueError(f"its band is {f.configs:g} configuration(s) of the kernel's space, and the section has no "
                         f"{space_of(name)} entry to count them by")
    return f.tolerance(is_cpu, float(space))


def between_machines(name: str, unit: str) -> bool:
    """Whether the fixed band of ``name``'s row holds the differences between machines (boards) of one card
    model — a board's power draw, a machine's memory latency — rather than the noise of one card's runs.
    A baseline must pass every healthy board, so such a band is wide on purpose; the fleet report, which
    compares the cards themselves, judges those figures without it (``baselines.cohort.effect_floor``)."""
    f = row(name, unit)
    return f.gpu is DRAM_LATENCY_BAND or f.why in (POWER_BOARD_WHY, DRAM_LATENCY_WHY) or "between machines" in f.why
