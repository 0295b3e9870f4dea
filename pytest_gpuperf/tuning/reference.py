"""The tuning suite's exhaustive reference, cached across runs: every configuration's measurement, timed
once per kernel source, device, driver and search space, and replayed by the strategies of later runs.

A ``test_tune`` case times every configuration of its space (exhaustive search) so that each strategy's
pick can be judged against the optimum; that pass is most of the suite's device time. Its table — each
configuration's median time, spread and host cost, and what the strategies of that run measured besides
(the workload-transformed kernels) — is stored as a tuning-cache entry (``pytest-gpuperf-tuning/1`` with
``strategy: exhaustive`` and ``points``) under the user's cache directory, or ``$GPUPERF_TUNING_CACHE``
(:func:`cache_dir`). A later
run with the same key loads the table into its :class:`~.evaluate.Evaluator` before any strategy runs, so
exhaustive search, the thesis tuner, the static pruners, random search and Kernel Tuner's strategies all
replay it (as :mod:`.ktsim` replays Kernel Tuner's own cache) and pay its recorded price per point; the
device then runs only what the figures need of this run: every pick no run under the key has checked
is checked against NumPy on fresh inputs (the checked configurations are kept in the entry,
``verified``: a check's outcome depends on nothing outside the key), and the picks and the cached optimum are re-timed together (``Evaluator.remeasure``), so
``optimum_us`` and every ``quality`` ratio are times of this run, as with a cold cache.

Where the user's folder has no table under the key, the read-only layer of reviewed references is read
(:func:`~..util.memo.reference_folder`: tables the project measured on the cards it runs on, or a fleet's
shared folder); the picks are then checked and re-timed on this card all the same, and the metric's
``info`` says ``reviewed``. Every table keeps its key's parts (``key_fields``), so :func:`out_of_date` can
tell whether a shipped one could still be hit by this code.

The key (:func:`key`) holds everything that shapes a point: the kernel's source, entry point and build
options (those the limits added too), the problem sizes and the input seed, the device key, backend,
driver, runtime and toolkit, the timing settings of a point, and the search space itself. Anything else
is a miss, and a miss behaves as before the cache existed: every point is timed, and the table stored.
A table is not stored when the card was shared with another process or throttled while it was timed
(the session's observers): such a table would bias every later run's picks. ``--gpuperf-retune``
ignores stored tables and stores the new one. Runs that replay one table agree on every search figure
(costs, evaluations) by construction, so the runs a baseline is made of time their own
(``gpuperf baseline init`` passes ``--gpuperf-retune``): otherwise their agreement would read as stability. The entry of another schema version is refused with a
warning (:class:`~.fixtures.TuningCache`) and the space timed again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..timing.measure import MeasureConfig
from ..timing.profiles import profile
from ..util.provenance import now_iso
from .evaluate import Config, Point
from .fixtures import TuningCache, cache_dir, pick_key
from .kernels import by_name
from .replay import config as config_of
from .strategies import Context


def key_fields(ctx: Context, seed: int) -> dict[str, Any]:
    """Everything that shapes a point of ``ctx``'s exhaustive table (``seed``: its inputs')."""
    ev, info = ctx.ev, ctx.device.info
    timing = {k: v for k, v in dataclasses.asdict(ev.config).items() if k != "timeout_s"}
    return {"source": hashlib.sha256(ev.bench.source.encode()).hexdigest(), "kernel": ev.bench.kernel,
            "bench": ev.bench.name, "options": list(ev.bench.extra_options), "limit_options": list(ev.extra_options),
            "problem": sorted(ev.sizes.items()), "seed": seed, "device": info.key, "backend": info.backend,
            "driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version,
            "timing": timing, "space": [c.label() for c in ctx.space]}


def key(ctx: Context, seed: int) -> str:
    """The cache key of ``ctx``'s exhaustive table: a digest of :func:`key_fields`."""
    return _digest(key_fields(ctx, seed))


def _digest(fields: dict[str, Any]) -> str:
    """The key of an exhaustive table made of ``fields``."""
    return "exhaustive-" + hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:24]


@dataclass
class Reference:
    """Where this run's exhaustive table came from: ``cached`` (replayed from ``path``, measured on
    ``measured``; ``reviewed``: from the read-only layer of reviewed references, not the user's cache)
    or timed now (then ``stored`` says whether it was written, ``why`` why not)."""

    key: str
    path: str
    cached: bool
    reviewed: bool = False
    measured: str = ""
    stored: bool = False
    why: str = ""
    verified: frozenset[str] = frozenset()  # configurations checked against NumPy under this key
    verified_now: int = 0  # how many this run checked
    entry: dict[str, Any] | None = field(default=None, repr=False, compare=False)  # the stored table replayed
    fields: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # what the key is made of

    def unverified(self, picks: list[Config]) -> list[Config]:
        """The picks no run under this key has checked against NumPy yet."""
        return [c for c in picks if c.label() not in self.verified]

    def info(self) -> dict[str, Any]:
        """What the suite keeps in a metric's ``info`` (the figures' meaning is the same either way)."""
        out: dict[str, Any] = {"cached": self.cached, "key": self.key, "measured": self.measured,
                               "verified": {"stored": len(self.verified), "now": self.verified_now}}
        if self.cached:
            out["reviewed"] = self.reviewed
        if not self.cached:
            out["stored"] = self.stored
            if self.why:
                out["why"] = self.why
        return out


def begin(ctx: Context, seed: int, retune: bool = False, root: Path | None = None) -> Reference:
    """Before any strategy runs: load the stored table of ``ctx`` into its evaluator when there is one
    (and ``retune`` is off); the strategies then replay it. A miss leaves the evaluator as it was."""
    cache = TuningCache(cache_dir() if root is None else root)
    fields = key_fields(ctx, seed)
    k = _digest(fields)
    found = None if retune else cache.find(k)
    if found is None or not found[0].get("points"):
        return Reference(k, str(cache.path(k)), cached=False, fields=fields)
    entry, where = found
    ctx.ev.points.update({config_of(label): Point(float(p["time_s"]), float(p["spread"]), float(p["cost_s"]))
                          for label, p in entry["points"].items()})
    return Reference(k, str(where), cached=True, reviewed=where != cache.path(k),
                     measured=str(entry.get("measured", "")), verified=frozenset(entry.get("verified", ())),
                     entry=entry, fields=fields)


def record_verified(ref: Reference, checked: list[Config], root: Path | None = None) -> Reference:
    """Add the picks this run checked against NumPy to a replayed table's entry, so later runs under the
    same key (kernel source, sizes, device, driver, toolkit) do not check them again. A table timed now
    keeps them through :func:`finish`."""
    ref.verified_now = len(checked)
    ref.verified = ref.verified | {c.label() for c in checked}
    if ref.entry is None or not checked:
        return ref
    ref.entry["verified"] = sorted(ref.verified)
    try:
        TuningCache(cache_dir() if root is None else root).put(ref.key, ref.entry)
    except OSError:  # the next run checks them again: costs time, never a figure
        pass
    return ref


def finish(ref: Reference, ctx: Context, optimum: Config, root: Path | None = None) -> Reference:
    """After the strategies of a run that timed its table: store every point it measured, unless the card
    was shared with another process or throttled meanwhile (``why`` then says so)."""
    if ref.cached:
        return ref
    dev = ctx.device
    if any(w.get("contended") for w in dev.tenant_observations):
        ref.why = "another process was on the card while the space was timed"
    elif any(w.get("throttled") for w in dev.power_observations):
        ref.why = "the card throttled while the space was timed"
    elif any(p.energy_j is not None for p in ctx.ev.points.values()):
        ref.why = "the points carry energies (a power objective), which the table does not keep"
    if ref.why:
        return ref
    ev = ctx.ev
    ref.measured = now_iso()
    entry = {"local": list(optimum.local), "variant": optimum.variant, "kernel": ev.bench.name,
             "device": dev.info.key, "problem": dict(ev.sizes), "strategy": "exhaustive",
             "time_us": ev.points[optimum].time_s * 1e6, "evaluations": len(ctx.space), "space": len(ctx.space),
             "driver": dev.info.driver_version, "measured": ref.measured, "verified": sorted(ref.verified),
             "key_fields": ref.fields,
             "points": {c.label(): {"time_s": p.time_s, "spread": p.spread, "cost_s": p.cost_s}
                        for c, p in sorted(ev.points.items())}}
    try:
        TuningCache(cache_dir() if root is None else root).put(ref.key, entry)
    except OSError as exc:  # a read-only or full cache folder costs the next run time, never this run
        ref.why = f"not written: {exc.strerror or exc}"
        return ref
    ref.stored = True
    return ref



def _timings() -> list[dict[str, Any]]:
    """The timing settings of a point on a GPU and on a CPU device, as :func:`key_fields` keeps them."""
    out = []
    for cpu in (False, True):
        cfg = dataclasses.asdict(MeasureConfig(**profile("tuning", cpu), timeout_s=1.0))
        out.append({k: v for k, v in cfg.items() if k != "timeout_s"})
    return out


def out_of_date(entry: dict[str, Any], key: str) -> list[str]:
    """Why a stored tuning entry (an exhaustive table or a pick) named ``key`` can no longer be read by this
    code — its key's parts no longer digest to its name, its kernel is gone or its source changed, a table's
    point timing changed — or [] where what the code alone decides still matches. A reviewed reference is
    checked this way before it ships: one that no run could hit is dead weight."""
    fields = entry.get("key_fields")
    if not isinstance(fields, dict):
        return ["it holds no key_fields (written by an older pytest-gpuperf): measure it again"]
    table = entry.get("strategy") == "exhaustive"
    digest = _digest(fields) if table else pick_key(fields)
    why = [] if digest == key else [f"its key_fields digest to {digest}, not to its name {key}"]
    name = str(fields.get("bench") or entry.get("kernel", ""))
    try:
        bench = by_name(name)
    except KeyError:
        return [*why, f"the tuning suite has no kernel {name!r} any more"]
    if fields.get("source") != hashlib.sha256(bench.source.encode()).hexdigest():
        why.append(f"the source of {name} changed since it was measured")
    if table and fields.get("timing") not in _timings():
        why.append("a point's timing settings changed since it was measured")
    return why
