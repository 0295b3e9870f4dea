"""Replay a tuner's final pass on a run's saved measurements.

The tuning suite saves every configuration it timed (``points``: median µs, robust spread, theoretical
occupancy, 128-byte transactions per work-item) in the info of ``tuning.<kernel>.space``, and the thesis
tuner's survivors and profiled configurations in the info of ``tuning.<kernel>.dao.quality``. From
those, a final pass can be compared with the thesis' exhaustive one on real device numbers without
another device run — as :mod:`.ktsim` does for Kernel Tuner's strategies. ``python -m
pytest_gpuperf.tuning.replay RESULTS.json [--rule bracket|walk]`` prints, per kernel, its dimensions and
space, what the filters spent, and for the thesis' pass and the ranked pass the pick, its quality (× the
saved optimum), the evaluations (filters + final pass) and the kernel time as a share of the exhaustive
search's, with the ranked pass against its target. ``--rule walk`` reproduces runs made before
the chain rule (their recorded ``dao_ranked`` picks and costs).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Mapping


from . import descent
from .evaluate import Config
from .strategies import Context
from ..schemas.results_doc import ResultsDocument, ResultsDocumentError


def points(ctx: Context) -> dict[str, dict[str, float | None]]:
    """Every configuration the evaluator timed in this run, with what the static model knows of it."""
    out: dict[str, dict[str, float | None]] = {}
    for cfg, p in sorted(ctx.ev.points.items()):
        occ = ctx.occupancy(cfg) if not cfg.variant else None
        per_item = ctx.transactions_per_item(cfg)
        out[cfg.label()] = {"us": round(p.time_s * 1e6, 4), "spread": round(p.spread, 5),
                            "occupancy": None if occ is None else round(occ.occupancy, 4),
                            "transactions_per_item": round(per_item, 4)}
        if p.energy_j is not None:  # an energy objective measured it too (tuning.pareto)
            out[cfg.label()].update({"mJ": round(p.energy_j * 1e3, 5), "W": p.watts, "throttled": p.throttled})
    return out


def config(label: str) -> Config:
    """The configuration a label names (``32x4``, ``256``, ``wl:32x2``)."""
    variant, _, shape = label.rpartition(":")
    return Config(tuple(int(v) for v in shape.split("x")), variant)


#: Issue 18's target for the ranked pass, per kind of space: (quality bound, kernel-time bound). Used only to
#: label the replay's rows; the tuner never sees it. Tiled and smaller 2-D spaces have no target.
TARGETS = {"1-D": (1.02, 0.20), "2-D >= 200": (1.02, 0.05)}


def target_of(dims: int, space: int) -> str | None:
    """Which of :data:`TARGETS` a space of ``dims`` dimensions and ``space`` shapes falls under."""
    if dims == 1:
        return "1-D"
    if dims == 2 and space >= 200:
        return "2-D >= 200"
    return None


@dataclass(frozen=True)
class FinalPass:
    """One kernel's final pass, replayed: the pick, its quality against the space's optimum, and the
    evaluations and kernel time the whole tuner (filters + final pass) spent, as fractions of the space;
    ``filters`` and ``filters_device_cost`` are the filters' share (the concurrency tuner's two runs)."""

    kernel: str
    strategy: str
    pick: str
    quality: float
    evaluations: int
    cost: float
    device_cost: float
    filters: int = 0
    filters_device_cost: float = 0.0
    dims: int = 1
    space: int = 0

    @property
    def final(self) -> int:
        """Evaluations of the final pass (beyond what the filters profiled)."""
        return self.evaluations - self.filters

    def verdict(self) -> str:
        """Against :data:`TARGETS`: "met", "missed (quality)", "missed (kernel time)", … or "-" (no target)."""
        kind = target_of(self.dims, self.space)
        if kind is None:
            return "-"
        q_max, cost_max = TARGETS[kind]
        checks = (("quality", self.quality > q_max), ("kernel time", self.device_cost > cost_max))
        missed = [what for what, bad in checks if bad]
        return "met" if not missed else "MISSED (" + ", ".join(missed) + ")"


def replay_kernel(kernel: str, pts: Mapping[str, Mapping[str, Any]], survivors: list[str], profiled: list[str],
                  floor: float = 0.01, rule: str = "bracket") -> tuple[FinalPass, FinalPass]:
    """(the thesis' exhaustive final pass, the ranked pass under ``rule``) over one kernel's saved points."""
    plain = {k: v for k, v in pts.items() if not k.startswith("wl:")}
    if not plain:
        raise ValueError(f"{kernel}: no saved points of the original kernel")
    opt = min(v["us"] for v in plain.values())
    total_us = sum(v["us"] for v in plain.values())
    dims = max(len(config(k).local) for k in plain)
    missing = [s for s in survivors + profiled if s not in pts]
    if missing:
        raise ValueError(f"{kernel}: survivors/profiled configurations without a saved point: {missing[:5]}")
    filters_us = sum(pts[c]["us"] for c in set(profiled))

    def summary(strategy: str, pick: str, visited: set[str]) -> FinalPass:
        return FinalPass(kernel, strategy, pick, pts[pick]["us"] / opt, len(visited), len(visited) / len(plain),
                         sum(pts[c]["us"] for c in visited) / total_us, len(set(profiled)), filters_us / total_us,
                         dims, len(plain))

    exhaustive_pick = min(survivors, key=lambda c: (pts[c]["us"], config(c)))
    thesis = summary("dao", exhaustive_pick, set(survivors) | set(profiled))

    visited = set(profiled)

    def time_of(c: Config) -> float:
        visited.add(c.label())
        return float(pts[c.label()]["us"])

    walk = descent.ranked_pass([config(c) for c in survivors],
                               lambda c: descent.static_key(pts[c.label()]["occupancy"],
                                                            pts[c.label()]["transactions_per_item"], c),
                               time_of, lambda c: float(pts[c.label()]["spread"]),
                               profiled=[config(c) for c in profiled], floor=floor, rule=rule)
    ranked = summary("dao_ranked", walk.best.label(), visited)  # type: ignore[attr-defined]
    return thesis, ranked


def replay_results(doc: ResultsDocument, floor: float = 0.01,
                   rule: str = "bracket") -> list[tuple[FinalPass, FinalPass]]:
    """Every kernel of a results document (:meth:`ResultsDocument.load`) that carries saved points and the
    thesis tuner's survivors."""
    metrics = {m.require("name").name: m for m in doc.metrics}
    out = []
    for name, m in sorted(metrics.items()):
        if not (name.startswith("tuning.") and name.endswith(".space")):
            continue
        kernel = name[len("tuning."):-len(".space")]
        pts = (m.info or {}).get("points")
        quality = metrics.get(f"tuning.{kernel}.dao.quality")
        pruning = ((None if quality is None else quality.info) or {}).get("pruning") or {}
        if not pts or "survivors" not in pruning:
            continue
        out.append(replay_kernel(kernel, pts, pruning["survivors"], pruning.get("profiled", []), floor, rule))
    return out


def table(rows: list[tuple[FinalPass, FinalPass]]) -> list[str]:
    """The replay's report, one line per kernel: the filters' evaluations and kernel time (shared by both
    passes), then per pass its pick, quality (× the optimum of the saved points), evaluations (filters +
    final pass) and kernel time (% of the exhaustive search's), and the ranked pass against the target."""
    head = (f"{'kernel':16} {'dims':>4} {'space':>5} | {'filters':>7} {'kernel':>6} | {'dao pick':>9} {'q':>6} "
            f"{'evals':>6} {'kernel':>6} | {'ranked':>9} {'q':>6} {'evals':>6} {'kernel':>6} | target")
    lines = [head]
    for a, b in rows:
        lines.append(f"{a.kernel:16} {f'{a.dims}-D':>4} {a.space:>5} | {a.filters:>7} {a.filters_device_cost:6.1%} | "
                     f"{a.pick:>9} {a.quality:6.3f} {f'{a.filters}+{a.final}':>6} {a.device_cost:6.1%} | "
                     f"{b.pick:>9} {b.quality:6.3f} {f'{b.filters}+{b.final}':>6} {b.device_cost:6.1%} | {b.verdict()}")
    groups = [("mean", rows)] + [(f"mean {kind}", [r for r in rows if target_of(r[0].dims, r[0].space) == kind])
                                 for kind in TARGETS]
    for label, rs in groups:
        if not rs:
            continue
        n = len(rs)
        lines.append(f"{label:16} {'':>4} {'':>5} | {'':>7} {sum(a.filters_device_cost for a, _ in rs) / n:6.1%} | "
                     f"{'':>9} {sum(a.quality for a, _ in rs) / n:6.3f} {sum(a.cost for a, _ in rs) / n:6.1%} "
                     f"{sum(a.device_cost for a, _ in rs) / n:6.1%} | {'':>9} {sum(b.quality for _, b in rs) / n:6.3f} "
                     f"{sum(b.cost for _, b in rs) / n:6.1%} {sum(b.device_cost for _, b in rs) / n:6.1%} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_gpuperf.tuning.replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a results JSON of the tuning suite (pytest-gpuperf/1)")
    ap.add_argument("--floor", type=float, default=0.01, help="smallest relative noise (default 0.01)")
    ap.add_argument("--rule", choices=descent.RULES, default=descent.RULES[0],
                    help="the ranked pass's rule (default %(default)s; 'walk' is the rule of runs before it)")
    args = ap.parse_args(argv)
    try:
        doc = ResultsDocument.load(args.results)
    except ResultsDocumentError as exc:  # not JSON, or not a results document: names the file and the fix
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (EOFError, OSError) as exc:
        print(f"error: cannot read {args.results}: {exc}", file=sys.stderr)
        return 2
    rows = replay_results(doc, args.floor, args.rule)
    if not rows:
        print(f"error: {args.results} holds no tuning kernel with saved points (run the tuning suite with this "
              "version of pytest-gpuperf)", file=sys.stderr)
        return 2
    print(f"{args.results}: ranked pass rule {args.rule!r}, noise floor {args.floor:g}. q = pick / optimum of the "
          "saved points; evals = filters + final pass; kernel = kernel time of the timed configurations / the "
          "whole space's (Dao §3.6.2); mean rows give evals as % of the space. Targets: "
          + "; ".join(f"{k}: q <= {q:g}, kernel <= {c:.0%}" for k, (q, c) in TARGETS.items()) + ".")
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
