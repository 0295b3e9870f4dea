"""Planted regressions: real, small changes of real work that the gate must catch.

``--gpuperf-plant KIND[=SIZE]`` (repeatable) makes the measured system worse in one known way, so the
gate check can count how often the gate catches it. Each kind changes the *work*, never the
arithmetic of a verdict: the copy is followed by uncredited work, the chain executes
more dependent instructions than it divides by, the math kernel's result is nudged by one ulp on some
inputs, a metric is not recorded. The kinds and their meaning:

* ``memory=F``  — every span of device copies (each size of the copy suite) ends with a launch whose first
  work-item spins for F × the measured time of the unplanted span, so each copy takes (1 + F) × its time
  (more bytes per copy would barely slow a launch-bound copy).
* ``compute=F`` — the dependent FMA chain of the latency probe runs (1 + F) × the instructions it
  divides by (a compute-bound slowdown of F).
* ``throughput=F`` — the independent chains of the throughput probe run (1 + F) × the iterations their
  rate is credited with (ops per clock fall by a factor 1 + F).
* ``launch=F``  — every launch does extra work: the device-timed empty launch runs a kernel whose first
  work-item spins for F × the measured time of the unplanted launch; the grid sweep's launches spin for as
  long as moves its fitted intercept by F (a spin beside the grid's work-groups hides behind them at large
  grids); a graph of launches (the empty one, and each grid's) mixes in spin launches at its own geometry,
  their in-graph cost measured, so its time per launch grows by F; the host-timed figure issues (1 + F) × the
  launches it divides by.
* ``chase=F``   — every pointer chase (each footprint, so each cache level) takes F × more dependent loads
  in its long section than it is credited with (chase latencies rise by F).
* ``summation=F`` — the summation kernel scales each sum it writes by (1 + F): the zero-sum data set's
  result is its rounding error, so the error rises by F (the parallel layout's two launches: (1 + F)²; the
  pairwise tree is left as it is).
* ``power=F``   — the power suite's FMA load launches (1 + F) × the work-items its energy per flop is
  credited with (joules per flop rise by F; GPUs with a power sensor only).
* ``tuner=F``   — the thesis tuner picks the fastest timed configuration over 1 + F slower than its honest
  pick (in the race: of the whole space, which the exhaustive search timed), so its quality falls by F or more
  (by one of the space's steps: the target's ``info["planted_pick"]`` says which).
* ``model=F``   — the second sample of Dao's sampled model runs (1 + F) × the extra work-groups over the
  first that the model credits it with (the extrapolated slope, so the prediction, grows by F).
* ``ulp=FN``    — the math kernel of function FN (e.g. ``sin``) returns the next float above its result
  on inputs whose low 4 mantissa bits are zero (1 of 16 inputs): a 1-ulp error on some inputs.
* ``missing=NAME`` — the metric NAME is not recorded (its test still passes): the ``missing`` verdict.

``KIND=ARG@DEVICE`` (e.g. ``compute=1.0@opencl:1``) plants on that device only: the sibling check's
planted slower card. PoCL 3.1 cannot limit the cores of one of its devices (its pthread
devices share one thread pool; ``POCL_MAX_PTHREAD_COUNT`` is process-wide), so a slower sibling on the
CPU machine is a device that does more work for the same credit.
"""

from __future__ import annotations

import re
from typing import Mapping

#: every planted kind and the argument it takes (``fraction``: a relative size in (0, 10))
KINDS = {"memory": "fraction", "compute": "fraction", "throughput": "fraction", "launch": "fraction",
         "chase": "fraction", "summation": "fraction", "power": "fraction", "tuner": "fraction",
         "model": "fraction", "ulp": "function", "missing": "metric"}
#: the kinds whose plant adds its size to the metric (an error fraction), not × (1 + size): their claim is in the
#: metric's own units, so a relative move is not set beside it
ADDITIVE = frozenset({"model"})
#: the family of the suites each kind stands for, as the gate check reports its detection rate
FAMILY = {"launch": "launch path", "memory": "memory copy", "chase": "cache chase", "compute": "instruction latency",
          "throughput": "instruction throughput", "ulp": "math ulp", "summation": "summation error",
          "power": "power (energy per op)", "tuner": "tuner pick", "model": "sampled-model error",
          "missing": "missing metric"}


#: the pytest option that plants a regression: a run given it does not measure the system as it is
PLANT_OPTION = "--gpuperf-plant"


def planted_values(argv: list[str] | tuple[str, ...]) -> list[str]:
    """The ``--gpuperf-plant`` values a run's command line names (``KIND=ARG[@DEVICE]``), in order; a trailing
    option without its value counts as an empty one."""
    out: list[str] = []
    for i, a in enumerate(argv):
        if a.startswith(PLANT_OPTION + "="):
            out.append(a.split("=", 1)[1])
        elif a == PLANT_OPTION:
            out.append(argv[i + 1] if i + 1 < len(argv) else "")
    return out


def parse(values: list[str] | tuple[str, ...], device: str | None = None) -> dict[str, str]:
    """``["memory=0.05", "missing=x.y"]`` → ``{"memory": "0.05", "missing": "x.y"}``; ValueError names the problem.

    Every value is checked; one scoped to a device (``@opencl:1``) is kept only when ``device`` is that
    device's spec."""
    out: dict[str, str] = {}
    for raw in values:
        body, at, scope = raw.partition("@")
        if at and not re.fullmatch(r"(cuda|opencl):\d+", scope):
            raise ValueError(f"--gpuperf-plant {raw!r}: the part after @ must be a device such as opencl:1")
        kind, sep, arg = body.partition("=")
        if kind not in KINDS or not sep or not arg:
            raise ValueError(f"--gpuperf-plant {raw!r}: use KIND=ARG[@DEVICE] with KIND one of "
                             + ", ".join(f"{k} ({v})" for k, v in KINDS.items()))
        if KINDS[kind] == "fraction":
            try:
                f = float(arg)
            except ValueError:
                raise ValueError(f"--gpuperf-plant {raw!r}: {kind} takes the added share of work, a number in "
                                 f"(0, 10) such as 0.05 (5 % more) or 3 (4× the work)") from None
            if not 0 < f < 10:  # also refuses nan
                raise ValueError(f"--gpuperf-plant {raw!r}: the added share of work must lie in (0, 10): 0.05 is 5 % "
                                 "more, 3 is 4× the work")
        elif KINDS[kind] == "function" and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arg):
            raise ValueError(f"--gpuperf-plant {raw!r}: {kind} takes a math function's name such as sin")
        if at and scope != device:
            continue
        out[kind] = arg
    return out


def fraction(plants: Mapping[str, str] | tuple[str, ...], kind: str) -> float:
    """The planted slowdown of ``kind`` (0.0 when not planted)."""
    table = plants if isinstance(plants, Mapping) else parse(list(plants))
    return float(table[kind]) if kind in table else 0.0


def ulp_function(plants: Mapping[str, str] | tuple[str, ...]) -> str | None:
    """The math function whose result is planted 1 ulp off, or None."""
    table = plants if isinstance(plants, Mapping) else parse(list(plants))
    return table.get("ulp")


def drops(plants: Mapping[str, str] | tuple[str, ...], name: str) -> bool:
    """Whether the metric ``name`` is planted missing."""
    table = plants if isinstance(plants, Mapping) else parse(list(plants))
    return table.get("missing") == name
