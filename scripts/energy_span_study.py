"""What a shorter energy span would read: every saved GPU A/A run's power spans re-read over their first K steps.

The power suite reads each load's energy over ``K`` update steps of the board's energy counter
(:func:`pytest_gpuperf.timing.energy.steady_state_energy`), and each span's NVML readings are saved with the
figure (``info.nvml_samples`` of ``power.<load>.joules_per_op``). So a span of fewer steps can be read back from
every saved run exactly as the suite would have measured it, up to where the longer span went on: the mean power
from the span's first counter update to the first reading that shows the K-th step after it. For each card and
load this prints how far the short span's power lies from the whole span's (median and σ over the runs), the σ of
one short span's own error (the span's two halves are two independent short spans: σ of their difference / √2),
and the spread of the whole span's power between runs (its σ / mean), which is what a band is set from.

    python scripts/energy_span_study.py            # K = 10 against the saved spans
    python scripts/energy_span_study.py --steps 5
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import aa_bands  # noqa: E402
from pytest_gpuperf.timing.energy import Reading, energy_of, reached  # noqa: E402


@dataclass(frozen=True)
class LoadStudy:
    """One card's and load's spans: how many, the short span's offset from the whole span (median, σ), one short
    span's own σ (from the two halves), and the whole span's σ between runs, all relative."""

    key: str
    load: str
    spans: int
    offset_median: float
    offset_sigma: float
    short_sigma: float
    between_runs_sigma: float


def _watts(readings: Sequence[Reading]) -> float:
    """The mean power of a span, as the suite's figure computes it (:func:`energy_of`)."""
    return energy_of(readings, 1, 1.0).watts


def short_span(readings: Sequence[Reading], steps: int) -> int | None:
    """The index of the reading that ends a span of ``steps`` counter steps from the first reading, by the suite's
    own rule (:func:`pytest_gpuperf.timing.energy.reached`); None when the saved span is shorter."""
    for i in range(2, len(readings) + 1):
        if reached(readings[:i], steps):
            return i - 1
    return None


def span_readings(metric: Mapping[str, Any]) -> list[Reading] | None:
    """A saved energy figure's span readings (``info.nvml_samples``), None where it kept none."""
    samples = (metric.get("info") or {}).get("nvml_samples")
    return [Reading(**s) for s in samples] if samples else None


def study(key: str, steps: int) -> list[LoadStudy]:
    """Every load of every saved CUDA A/A run of card ``key``, re-read over ``steps`` counter steps."""
    seen: dict[str, list[tuple[float, float | None, float]]] = {}
    for run in aa_bands.aa_runs(key, "cuda"):
        for name, metric in run.metrics.items():
            if not (name.startswith("power.") and name.endswith(".joules_per_op")):
                continue
            rs = span_readings(metric)
            end = short_span(rs, steps) if rs else None
            if end is None or end >= len(rs) - 1:
                continue
            whole, short, rest = _watts(rs), _watts(rs[:end + 1]), None
            second = short_span(rs[end:], steps)
            if second is not None:
                rest = _watts(rs[end:end + second + 1])
            seen.setdefault(name[len("power."):-len(".joules_per_op")], []).append((short / whole - 1.0,
                                                                                 None if rest is None else rest / short - 1.0,
                                                                                 whole))
    out = []
    for load, rows in sorted(seen.items()):
        offsets = [r[0] for r in rows]
        halves = [r[1] for r in rows if r[1] is not None]
        wholes = [r[2] for r in rows]
        out.append(LoadStudy(key, load, len(rows), statistics.median(offsets), statistics.pstdev(offsets),
                             statistics.pstdev(halves) / math.sqrt(2.0) if len(halves) > 1 else math.nan,
                             statistics.pstdev(wholes) / statistics.fmean(wholes)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10, help="counter steps of the short span (default 10)")
    args = ap.parse_args(argv)
    print("| card | load | spans | short − whole (median) | σ | one short span's σ | whole span between runs σ |")
    print("|---|---|---|---|---|---|---|")
    for key in aa_bands.KEYS:
        for s in study(key, args.steps):
            print(f"| {s.key} | `{s.load}` | {s.spans} | {s.offset_median * 100:+.2f} % | {s.offset_sigma * 100:.2f} % | "
                  f"{s.short_sigma * 100:.2f} % | {s.between_runs_sigma * 100:.2f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
