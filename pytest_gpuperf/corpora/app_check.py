"""Runs an application-corpus kernel on a device and checks it: its outputs against its NumPy reference,
and that a shorter launch does exactly the first groups' share (what the sampled model relies on).

Write-only outputs start filled with a sentinel (the most negative float, or all ones for integers) so that
a value a kernel never wrote cannot pass for a computed one, and so that after a launch of the first groups
only the outputs those groups own have changed. A reference marks the outputs a kernel must leave alone
(a stencil's boundary) with NaN: there the sentinel must remain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..devices.base import Device
from .app_kernel import AppKernel, Out, Params, Problem


def sentinel(dtype: Any) -> Any:
    """The value a write-only output starts with: the most negative finite float (a NaN could not tell an
    unwritten value from a computed NaN), all bits set for integers."""
    dt = np.dtype(dtype)
    return np.finfo(dt).min if dt.kind == "f" else np.array(-1, np.int64).astype(dt)


def _fill(out: Out) -> np.ndarray:
    return np.full(out.count, sentinel(out.dtype), dtype=out.dtype)


@dataclass
class Launched:
    """The device buffers of one problem and the argument list that launches it."""

    problem: Problem
    buffers: dict[str, Any]
    args: list[Any]


def upload(dev: Device, problem: Problem, fill_outputs: bool = True) -> Launched:
    """Copy the inputs to ``dev`` and allocate the outputs (sentinel-filled where ``fill_outputs``; left
    as allocated otherwise, as a timed run needs no sentinel)."""
    bufs: dict[str, Any] = {name: dev.to_device(np.ascontiguousarray(arr)) for name, arr in problem.inputs.items()}
    for name, out in problem.outputs.items():
        bufs[name] = dev.to_device(_fill(out)) if fill_outputs else dev.empty(max(out.nbytes, 4))
    args = [bufs[a] if isinstance(a, str) else a for a in problem.args]
    return Launched(problem, bufs, args)


def run(dev: Device, app: AppKernel, problem: Problem, groups: int | None = None) -> dict[str, np.ndarray]:
    """Launch ``app`` on ``problem`` over its first ``groups`` work-groups (all by default) and read back
    every buffer (outputs and inputs: a kernel may write into a buffer it reads)."""
    n = problem.groups if groups is None else groups
    if not 1 <= n <= problem.groups:
        raise ValueError(f"{app.name}: {n} work-groups asked of a problem of {problem.groups}")
    kernel = dev.compile(app.source(dev.info.backend), app.name)
    launched = upload(dev, problem)
    dev.launch(kernel, (n * app.local_size,), (app.local_size,), launched.args)
    got = {name: dev.to_host(launched.buffers[name], out.dtype, out.count) for name, out in problem.outputs.items()}
    got.update({name: dev.to_host(launched.buffers[name], arr.dtype, arr.size) for name, arr in problem.inputs.items()})
    return got


def _compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float, mask: np.ndarray | None = None) -> str:
    want = np.asarray(want).reshape(-1)
    if got.shape != want.shape:
        return f"{name}: {got.size} values read, reference has {want.size}"
    if mask is not None:
        got, want = got[mask], want[mask]
    if got.dtype.kind == "f" or atol:
        w = want.astype(np.float64)
        bad = np.where(np.isnan(w), got != sentinel(got.dtype), ~np.isclose(got.astype(np.float64), w, rtol=rtol, atol=atol))
    else:
        bad = got != want
    if not bad.any():
        return ""
    i = int(np.flatnonzero(bad)[0])
    return f"{name}: {int(bad.sum())} of {bad.size} values differ, first at {i}: got {got[i]!r}, expected {want[i]!r}"


def _prefix(dev: Device, app: AppKernel, problem: Problem, want: Mapping[str, np.ndarray]) -> list[str]:
    half = problem.groups // 2
    if half < 1:
        return [f"{app.name}: one work-group at this size, so no shorter launch to check"]
    got = run(dev, app, problem, groups=half)
    issues = []
    for name, out in problem.outputs.items():
        g = got[name]
        written = g != sentinel(out.dtype)
        if not written.any() or written.all():
            issues.append(f"{name}: a launch of {half} of {problem.groups} groups wrote {int(written.sum())} of "
                          f"{written.size} values (expected some, not all)")
        elif name in want:
            issues.append(_compare(name, g, want[name], problem.rtol, problem.atol, mask=written))
    return issues


def mismatches(dev: Device, app: AppKernel, params: Params) -> list[str]:
    """Every difference between ``app``'s results at ``params`` and its NumPy reference after a launch of
    all its groups, and — unless it ``scatters`` — after a launch of the first half of them: the outputs
    that launch wrote are the reference's, and it wrote some but not all (the sampled model's premise:
    a shorter launch does exactly the first groups' share, whatever the number of groups)."""
    problem = app.problem(params)
    want = problem.reference()
    if not want:
        raise ValueError(f"{app.name}: the reference checks no buffer")
    got = run(dev, app, problem)
    missing = [k for k in want if k not in got]
    if missing:
        raise ValueError(f"{app.name}: the reference names buffers the problem does not have: {missing}")
    issues = [_compare(k, got[k], v, problem.rtol, problem.atol) for k, v in want.items()]
    if not app.scatters:
        issues += [f"first half of the groups: {m}" for m in _prefix(dev, app, problem, want) if m]
    return [m for m in issues if m]


def footprint_and_groups(app: AppKernel, params: Params) -> Mapping[str, tuple[int, int]]:
    """What the cost function claims against what the built problem has: {"groups": (claimed, built),
    "footprint": (claimed, built)}; the estimates at the GPU size rest on these formulas."""
    problem = app.problem(params)
    cost = app.cost(**params)
    return {"groups": (cost.groups, problem.groups), "footprint": (cost.footprint, problem.footprint)}
