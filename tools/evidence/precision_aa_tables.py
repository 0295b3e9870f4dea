"""Tables of docs/precision.md over many unchanged runs of one or more devices: what the precision
tuner chose in each run, and how the mixed-precision solve's speedup is distributed over the runs.

Each role of the marker is one device (``h100=results/…,… h200=results/…``); a role whose runs
recorded different devices is an error, so a column never mixes cards. A run that lacks a figure the
others hold is named in the cell, never dropped silently.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

from .accuracy_tables import device_label
from .precision_tables import KERNELS, choice_rule
from .registry import Inputs
from .runfile import EvidenceError, Run

REFINE = "precision.refine"


def devices(inp: Inputs) -> list[tuple[str, list[Run]]]:
    """The marker's roles as (device label, runs), one device per role."""
    if not inp.roles:
        raise EvidenceError(f"{inp.block.where}: name each device's runs as a role (h100=results/…,…)")
    out = []
    for role, runs in inp.roles.items():
        keys = sorted({str(r.device.get("key") or r.device.get("name") or "?") for r in runs})
        if len(keys) != 1:
            raise EvidenceError(f"{inp.block.where}: {role}= names runs of {len(keys)} devices ({', '.join(keys)}); "
                                "give each device a role of its own")
        out.append((device_label(runs[0]), runs))
    return out


def _require(inp: Inputs, runs: Iterable[Run], prefix: str) -> None:
    empty = [r.stem for r in runs if not any(n.startswith(prefix) for n in r.metrics)]
    if empty:
        raise EvidenceError(f"{inp.block.where}: {', '.join(empty)} record no {prefix}* figure; "
                            "name runs of the suite that makes them")


def grouped(runs: Sequence[Run], key: Callable[[Run], Any]) -> list[tuple[Any, list[Run]]]:
    """Runs grouped by ``key`` (None: the run lacks the figure), the largest group first."""
    groups: dict[Any, list[Run]] = defaultdict(list)
    for r in runs:
        groups[key(r)].append(r)
    return sorted(groups.items(), key=lambda kv: (kv[0] is None, -len(kv[1])))


def _stems(runs: Sequence[Run]) -> str:
    return ", ".join(f"`{r.stem}`" for r in runs)


def distribution(runs: Sequence[Run], key: Callable[[Run], Any], show: Callable[[Any], str]) -> str:
    """``show(value)`` in N of N runs where all agree; else each value with the runs that gave it (the
    largest group by count, the others by name), and the runs lacking the figure by name."""
    groups = grouped(runs, key)
    if len(groups) == 1 and groups[0][0] is not None:
        return f"{show(groups[0][0])} in {len(runs)} of {len(runs)} runs"
    parts = []
    for i, (value, members) in enumerate(groups):
        who = f"{len(members)} runs" if i == 0 and len(members) > 1 else _stems(members)
        parts.append(f"not recorded: {who}" if value is None else f"{show(value)}: {who}")
    return "; ".join(parts)


def _range(values: Sequence[float], spec: str, collapse: bool = True) -> str:
    if not values:
        return "–"
    lo, hi = format(min(values), spec), format(max(values), spec)
    return lo if lo == hi and collapse else f"{lo}–{hi}"


def _most(values: Sequence[float]) -> str:
    return format(max(values), ".2f") if values else "–"


def _distinct(values: Iterable[Any]) -> str:
    seen: list[str] = []
    for v in values:
        if str(v) not in seen:
            seen.append(str(v))
    return " / ".join(seen) or "–"


# ---- the tuner's choices ------------------------------------------------------------------------------
def _choice(kernel: str) -> Callable[[Run], tuple[int, int] | None]:
    def key(r: Run) -> tuple[int, int] | None:
        info = r.info(f"precision.tuner.{kernel}.speedup")
        if r.get(f"precision.tuner.{kernel}.fp32_fraction") is None or not info:
            return None
        return len(info.get("chosen_lowered", [])), int(info.get("ops", 0))
    return key


def _share(choice: tuple[int, int]) -> str:
    k, ops = choice
    return f"{k} of {ops} ({k / ops:.3f})" if ops else str(k)


def _mix(kernel: str) -> Callable[[Run], tuple[str, ...] | None]:
    def key(r: Run) -> tuple[str, ...] | None:
        info = r.info(f"precision.tuner.{kernel}.speedup")
        return tuple(sorted(info.get("chosen_lowered", []))) if info else None
    return key


def _speedup(runs: Sequence[Run], name: str) -> str:
    vals = [v for v in (r.value(name) for r in runs) if v is not None]
    if not vals:
        return "–"
    return f"{statistics.median(vals):.3f} [{_range(vals, '.3f', collapse=False)}]"


def _iterations(run: Run, base: str) -> str:
    """Validations of the search with step 8 and cut points, and (in parentheses) one level at a time."""
    without = run.info(f"{base}.speedup").get("iterations_without_speedups", "–")
    return f"{int(run.value(f'{base}.iterations') or 0)} ({without})"


def per_timed_run_ms(run: Run, name: str) -> float | None:
    """Wall clock per timed run of the tuner's closing measurement (ms): its one sampling window's wall
    clock over the timed runs, two per pair; None where the figure holds another count of windows."""
    info = run.info(name)
    power, pairs = info.get("power") or {}, info.get("speedup_pairs")
    if power.get("windows") != 1 or power.get("wall_s") is None or not pairs:
        return None
    return 1e3 * float(power["wall_s"]) / (2 * int(pairs))


def tuner_choices(inp: Inputs) -> list[str]:
    """Per kernel: the fp32 operations the tuner chose and in how many runs of each device, the chosen
    operations, the rule, the speedup's median and range per device, error, iterations, and the wall clock
    per timed run of the closing measurement (where it reaches the CUDA timer's hold, the kernel's launches
    filled the driver's queue)."""
    devs = devices(inp)
    every = [r for _, runs in devs for r in runs]
    _require(inp, every, "precision.tuner.")
    head = (["kernel", "chosen by", "chosen fp32 operations"]
            + [f"{label}: fp32 operations chosen" for label, _ in devs]
            + [f"{label}: speedup, median [min–max]" for label, _ in devs]
            + ["error", "iterations: step 8 + cut points (step 1)", "wall clock per timed run, ms (all runs)"])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in KERNELS:
        base = f"precision.tuner.{k}"
        have = [r for r in every if r.get(f"{base}.speedup") is not None]
        if not have:
            continue
        rule = _distinct(choice_rule(r.info(f"{base}.speedup")) for r in have)
        mixes = grouped(every, _mix(k))
        if len(mixes) == 1:
            ops = ", ".join(f"`{n}`" for n in mixes[0][0]) or "none (the original)"
        else:
            ops = "; ".join(("not recorded" if m is None else ", ".join(f"`{n}`" for n in m) or "none")
                            + f" ({_stems(rs)})" for m, rs in mixes)
        chosen = [distribution(runs, _choice(k), _share) for _, runs in devs]
        speed = [_speedup(runs, f"{base}.speedup") for _, runs in devs]
        err = _distinct(format(r.value(f"{base}.error"), ".3g") for r in have if r.get(f"{base}.error") is not None)
        its = _distinct(_iterations(r, base) for r in have if r.get(f"{base}.iterations") is not None)
        wall = _range([w for w in (per_timed_run_ms(r, f"{base}.speedup") for r in have) if w is not None], ".1f")
        out.append("| " + " | ".join([k, rule, ops, *chosen, *speed, err, its, wall]) + " |")
    return out


# ---- the refinement's speedup over runs ---------------------------------------------------------------
def sizes(runs: Iterable[Run]) -> list[int]:
    return sorted({int(n.split(".")[2][1:]) for r in runs for n in r.metrics
                   if n.startswith(f"{REFINE}.n") and n.endswith(".speedup")})


def window_s(run: Run, name: str) -> float | None:
    """Wall clock of the sampling window that made ``name``. A test's power windows are summed into each
    figure's ``info["power"]`` as they accumulate, so one size's window is its summary less that of the
    figure recorded one window earlier; None where that figure is not there (a window taken again)."""
    p = run.info(name).get("power") or {}
    count, wall = p.get("windows"), p.get("wall_s")
    if not count or wall is None:
        return None
    if count == 1:
        return float(wall)
    before = [q for q in (run.info(n).get("power") for n in run.metrics
                          if n.startswith(f"{REFINE}.n") and n.endswith(".speedup"))
              if q and q.get("windows") == count - 1]
    return float(wall) - float(before[0]["wall_s"]) if before else None


def beyond_span_ms(run: Run, name: str) -> float | None:
    """Wall clock per timed solve beyond its timed span (ms): the window's wall clock over its timed
    solves (two per pair) less the median of the two solves' spans."""
    info, wall = run.info(name), window_s(run, name)
    pairs = info.get("pairs")
    if wall is None or not pairs or "t_mixed_us" not in info or "t_fp64_us" not in info:
        return None
    return 1e3 * wall / (2 * pairs) - (info["t_mixed_us"] + info["t_fp64_us"]) / 2e3


def _size_row(label: str, n: int, runs: Sequence[Run]) -> str:
    name = f"{REFINE}.n{n}.speedup"
    have = [r for r in runs if r.get(name) is not None]
    lacking = [r for r in runs if r.get(name) is None]
    vals = [float(r.value(name)) for r in have]  # type: ignore[arg-type]
    count = f"{len(have)}" + (f" (not recorded: {_stems(lacking)})" if lacking else "")
    infos = [r.info(name) for r in have]
    pairs = [s for r in have for s in ((r.get(name) or {}).get("stats") or {}).get("samples", [])]
    launches = _distinct(f"{i['launches']['mixed']} / {i['launches']['fp64']}" for i in infos if i.get("launches"))
    ms = lambda key: _range([i[key] / 1e3 for i in infos if key in i], ".1f")  # noqa: E731
    beyond = _range([b for b in (beyond_span_ms(r, name) for r in have) if b is not None], ".0f")
    power = [i.get("power") or {} for i in infos]
    clock = _range([p[k] for p in power for k in ("sm_clock_min_mhz", "sm_clock_max_mhz") if k in p], ".0f")
    hosts = [i.get("host") or {} for i in infos]
    other = " / ".join(_most([h[k] for h in hosts if k in h]) for k in ("foreign_cores_max", "steal_cores_max"))
    its = _distinct(int(v) for v in (r.value(f"{REFINE}.n{n}.iterations") for r in have) if v is not None)
    cells = [label, str(n), count, f"{statistics.median(vals):.3f}", _range(vals, ".3f"), _range(pairs, ".2f"),
             _distinct(i.get("pairs", "–") for i in infos), launches, ms("t_fp64_us"), ms("t_mixed_us"), beyond,
             clock, other, its]
    return "| " + " | ".join(cells) + " |"


def _kappa_row(label: str, runs: Sequence[Run]) -> str | None:
    name = f"{REFINE}.kappa_limit"
    have = [r for r in runs if r.get(name) is not None]
    if not have:
        return None
    n = _distinct((r.get(name) or {}).get("identity", {}).get("n", "?") for r in have)
    steps = _distinct(", ".join(str(p["iterations"]) for p in r.info(name).get("points", []) if p.get("converged"))
                      for r in have)
    value = distribution(runs, lambda r: r.value(name), lambda v: format(v, ".0e"))
    return (f"| {label} | κ limit (n = {n}) | {len(have)} | {value} | | | | | | | | | | "
            f"{steps} (κ = 10, 100, … while converging) |")


def refine_runs(inp: Inputs) -> list[str]:
    """Per device and order n: the speedup's median and range over the runs, its single pairs, and what
    the runs recorded about how it was timed (pairs, launches, solve times, wall clock beyond the timed
    span, SM clock, the host's other work), the refinements; then the κ limit."""
    devs = devices(inp)
    _require(inp, [r for _, runs in devs for r in runs], f"{REFINE}.")
    head = ["device", "n", "runs", "speedup (fp64 / mixed): median", "min–max over runs", "single pairs: min–max",
            "pairs per run", "kernels per solve, mixed / fp64", "fp64 solve ms", "mixed solve ms",
            "wall clock per timed solve beyond its timed span, ms", "SM clock MHz",
            "host: other processes' / stolen cores, max", "refinements"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, runs in devs:
        for n in sizes(runs):
            out.append(_size_row(label, n, runs))
        kappa = _kappa_row(label, runs)
        if kappa:
            out.append(kappa)
    return out


TABLES: Mapping[str, Callable[[Inputs], list[str]]] = {
    "precision-tuner-choices": tuner_choices, "precision-refine-runs": refine_runs}
