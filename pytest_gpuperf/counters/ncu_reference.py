"""The kernel-class suite's Nsight Compute counters, stored across runs and spot-checked on every run.

Profiling the whole counter dataset (:func:`.ncu.dataset_plan`: every run of K1–K10 and the unseen kernels,
each replayed once per counter pass) is most of that suite's device time. Its counters are a property of
the kernels' build on one device model, driver and ncu, so — like the tuning suite's exhaustive reference
(:mod:`..tuning.reference`) — the whole profile is kept as one entry (``pytest-gpuperf-ncu-reference/1``:
ncu's raw CSV, the worker's launch log, the metrics, replay passes, ncu's version, when it was measured)
under the package's cache directory or ``$GPUPERF_NCU_CACHE`` (:func:`cache_dir`).

The key (:func:`key_fields`) holds everything that shapes a counter: the planned runs (kernel, size,
group size, repetition, data seed, in launch order), each kernel's CUDA source, the code that builds their
inputs, the metric list, ncu's version and options, the device key, compute capability, driver, runtime
and toolkit. Anything else is a miss, and a miss profiles the dataset as before the cache existed.

A hit still measures the card: :func:`spot_plan` picks one mid-sized run of each kernel, ncu profiles
those again with the stored metric list, and :func:`spot_check` compares every counter with the stored
value of the same run under :data:`SPOT_POINTS` / :data:`SPOT_FLOOR` / :data:`SPOT_REL`. If every value
agrees the stored profile is used (the figures are then exactly what it gives); if any does not, the whole
dataset is profiled again and stored again, and the records' ``info`` says which value disagreed.

Where the user's folder has no entry under the key, the read-only layer of reviewed references is read
(:func:`~..util.memo.reference_folder`: the profiles the project measured on the cards it runs on, or a
fleet's shared folder): such a profile is spot-checked the same way, and ``info.collection.reference``
says ``reviewed``. :func:`out_of_date` tells whether an entry could still be hit by this code.

Not stored: a profile in which ncu dropped metrics (it is not the dataset's), or one taken while another
process held the card or the card throttled (the session's observers, :func:`..timing.measure.observed`,
watch every ncu run). ``--gpuperf-retune`` ignores stored profiles and stores the new one. An entry that
is torn, of another schema version or that no longer matches its plan is refused with a warning
(:class:`StaleNcuReference`) and the dataset profiled again.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .. import NCU_REFERENCE_SCHEMA, __version__
from ..corpora import kernel_classes as kc
from ..devices.base import Device, DeviceInfo
from ..paths import NCU_FOLDER
from ..schemas.keyed_store import KeyedStore
from ..timing.measure import observed
from ..util.memo import cache_folder, reference_folder
from ..util.provenance import now_iso
from . import ncu
from .ncu_worker import SPEC_VERSION, PlannedRun

#: the folder of the stored profiles under the user's cache directory
FOLDER = NCU_FOLDER
#: the environment variable that names another folder
ENV = "GPUPERF_NCU_CACHE"

#: The spot check's tolerance: a counter agrees with its stored value when they differ by at most
#: ``max(floor, SPOT_REL × the larger of the two)``, the floor being :data:`SPOT_POINTS` percentage points
#: for counters in % and :data:`SPOT_FLOOR` for the others (per-cycle rates, ratios). Counters are not
#: exact from run to run: percentages of elapsed cycles move with launch and tail timing, L2 hit rates of
#: the small matrices with the order in which SMs touch lines, achieved occupancy and eligible warps with
#: scheduling. The rule is the narrowest round one under which two full profiles of one build on one card,
#: taken back to back, agree on every value, while the profile of another card model disagrees on most
#: kernels (tests/test_models_ncu_reference.py checks both on saved profiles). One counter out of its band
#: is enough to re-profile: a miss costs time, a wrong hit would cost the figures.
SPOT_POINTS = 10.0
SPOT_FLOOR = 0.1
SPOT_REL = 0.20
SPOT_RULE = (f"|cached - now| <= max({SPOT_POINTS:g} points for % counters, {SPOT_FLOOR:g} for the others; "
             f"{SPOT_REL:.0%} of the larger)")


class StaleNcuReference(UserWarning):
    """A stored profile was not used (torn, another schema version, or not matching its plan): the
    dataset is profiled again and the entry rewritten."""


def cache_dir() -> Path:
    """``$GPUPERF_NCU_CACHE`` where set, else ``ncu-reference`` under the package's cache directory
    (:func:`~..util.memo.cache_root`: ``$GPUPERF_CACHE``, or ``<user cache dir>/pytest-gpuperf``)."""
    return cache_folder(FOLDER, ENV)


# ---- the key --------------------------------------------------------------------------------------------
def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _code(obj: Callable[..., Any]) -> str:
    """A digest of ``obj``'s source text, or the package version where the source is not shipped."""
    try:
        return _sha(inspect.getsource(obj))
    except (OSError, TypeError):
        return f"pytest-gpuperf {__version__}"


def key_fields(runs: Sequence[PlannedRun], info: DeviceInfo, ncu_version: str,
               metrics: Sequence[str] = ncu.METRIC_NAMES) -> dict[str, Any]:
    """Everything that shapes the counters of ``runs`` profiled on a device like ``info`` by this ncu."""
    kernels = list(dict.fromkeys(r.kernel for r in runs))
    return {"runs": [[r.index, r.kernel, r.size, r.local, r.rep, r.seed] for r in runs],
            "sources": {k: _sha(kc.source(k, "cuda")) for k in kernels}, "inputs": _code(kc.generate),
            "worker": SPEC_VERSION, "metrics": list(metrics), "ncu": ncu_version,
            "ncu_options": [*ncu.NCU_OPTIONS, "--kernel-name", ncu.KERNEL_FILTER],
            "device": info.key, "backend": info.backend, "compute_capability": info.compute_capability,
            "driver": info.driver_version, "runtime": info.runtime_version, "toolkit": info.toolkit_version}


def key(fields: Mapping[str, Any]) -> str:
    """The cache key of :func:`key_fields`' result: a digest of them."""
    return "ncu-" + _sha(json.dumps(fields, sort_keys=True))[:24]


def out_of_date(entry: Mapping[str, Any], name: str) -> list[str]:
    """Why a stored profile named ``name`` can no longer be read by this code — its key's parts no longer
    digest to its name, or a part the code alone decides (the suite's planned runs, a kernel's source, the
    input builder, the worker, the metric list, ncu's options) changed — or [] where they all still match.
    A reviewed reference is checked this way before it ships: one that no run could hit is dead weight."""
    fields = entry.get("key_fields")
    if not isinstance(fields, Mapping):
        return ["it holds no key_fields"]
    why = [] if key(fields) == name else [f"its key_fields digest to {key(fields)}, not to its name {name}"]
    plan = ncu.dataset_plan()
    if fields.get("runs") != [[r.index, r.kernel, r.size, r.local, r.rep, r.seed] for r in plan]:
        why.append("the suite's planned runs changed since it was measured")
    for k, digest in dict(fields.get("sources", {})).items():
        try:
            current = _sha(kc.source(k, "cuda"))
        except KeyError:
            why.append(f"the corpus has no kernel {k!r} any more")
            continue
        if digest != current:
            why.append(f"the source of {k} changed since it was measured")
    for part, now in (("inputs", _code(kc.generate)), ("worker", SPEC_VERSION), ("metrics", list(ncu.METRIC_NAMES)),
                      ("ncu_options", [*ncu.NCU_OPTIONS, "--kernel-name", ncu.KERNEL_FILTER])):
        if fields.get(part) != now:
            why.append(f"its {part} changed since it was measured")
    return why


# ---- the store ------------------------------------------------------------------------------------------
class NcuReferenceCache(KeyedStore):
    """The stored profiles (:class:`~..schemas.keyed_store.KeyedStore` of
    :data:`~pytest_gpuperf.NCU_REFERENCE_SCHEMA`): a refused entry warns :class:`StaleNcuReference`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, NCU_REFERENCE_SCHEMA, "stored ncu profile", StaleNcuReference,
                         "the counter dataset is profiled again and the entry rewritten.",
                         shipped=reference_folder(FOLDER))

    def put(self, key: str, value: Mapping[str, Any]) -> Path:
        """Store ``value`` stamped with its key too (the entry names the profile it is)."""
        return super().put(key, {"key": key, **value})


def entry_of(prof: ncu.Profile, fields: Mapping[str, Any], measured: str) -> dict[str, Any]:
    """What is stored of a whole profile (without the schema and key stamps :meth:`NcuReferenceCache.put`
    adds)."""
    return {"key_fields": dict(fields), "measured": measured, "device": str(fields.get("device", "")),
            "driver": str(fields.get("driver", "")), "runtime": str(fields.get("runtime", "")),
            "toolkit": str(fields.get("toolkit", "")), "ncu_version": prof.version, "metrics": list(prof.metrics),
            "dropped": list(prof.dropped), "passes": {k: int(v) for k, v in prof.passes.items()},
            "command": [str(c) for c in prof.command], "wall_s": round(float(prof.wall_s), 3),
            "runs": [asdict(r) for r in prof.runs], "launches": list(prof.launches), "csv": prof.raw}


def _identity(run: PlannedRun) -> tuple[str, int, int, int, int]:
    return (run.kernel, run.size, run.local, run.rep, run.seed)


def profile_of(entry: Mapping[str, Any], runs: Sequence[PlannedRun]) -> ncu.Profile:
    """The :class:`~.ncu.Profile` a stored entry holds for ``runs``, checked as a fresh one is: the
    plan is the entry's, ncu's kernels match the launch log row by row and every run has every metric.
    :class:`~.ncu.NcuError` says what does not hold."""
    stored = [PlannedRun(**r) for r in entry["runs"]]
    if [_identity(r) for r in stored] != [_identity(r) for r in runs]:
        raise ncu.NcuError(f"the stored plan ({len(stored)} runs) is not this run's ({len(runs)} runs)")
    if entry["dropped"]:
        raise ncu.NcuError(f"the stored profile dropped metric(s) {', '.join(entry['dropped'])}")
    results = ncu.parse_csv(entry["csv"])
    ncu.match(results, entry["launches"])
    if len(results) != len(runs):
        raise ncu.NcuError(f"{len(results)} stored kernels for {len(runs)} planned runs")
    ncu.feature_matrix(results, entry["metrics"])  # every run has every metric
    return ncu.Profile(list(runs), results, list(entry["metrics"]), [], list(entry.get("command", [])),
                       float(entry.get("wall_s", 0.0)), entry["csv"], entry["ncu_version"],
                       {k: int(v) for k, v in entry.get("passes", {}).items()}, list(entry["launches"]))


# ---- the spot check -------------------------------------------------------------------------------------
def spot_plan(runs: Sequence[PlannedRun]) -> list[PlannedRun]:
    """One run of each kernel, in plan order: the middle one of its runs (mid size, mid group size in
    :func:`.ncu.dataset_plan`'s order), whose counters are further from the tail effects of the smallest
    problems. The runs keep their index and data seed, so each is the very launch the stored one was."""
    by_kernel: dict[str, list[PlannedRun]] = {}
    for r in runs:
        by_kernel.setdefault(r.kernel, []).append(r)
    return [rs[len(rs) // 2] for rs in by_kernel.values()]


def allowed(unit: str, cached: float, now: float) -> float:
    """The largest difference :data:`SPOT_RULE` accepts between a stored counter and this run's."""
    floor = SPOT_POINTS if unit == "%" else SPOT_FLOOR
    return max(floor, SPOT_REL * max(abs(cached), abs(now)))


@dataclass(frozen=True)
class Deviation:
    """One counter of one spot-checked run: the stored value, this run's, and the difference allowed."""

    tag: str
    kernel: str
    metric: str
    cached: float
    now: float
    allowed: float

    @property
    def ratio(self) -> float:
        """The difference as a share of what is allowed (above 1: the values disagree)."""
        return abs(self.cached - self.now) / self.allowed

    def to_json(self) -> dict[str, Any]:
        return {"tag": self.tag, "kernel": self.kernel, "metric": self.metric, "cached": self.cached,
                "now": self.now, "allowed": round(self.allowed, 6), "deviation": round(self.ratio, 4)}


@dataclass(frozen=True)
class SpotCheck:
    """The spot-checked runs against the stored profile: the worst value, every value that disagrees,
    and the run/metric pairs the spot profile lacks (a metric this ncu dropped, say)."""

    runs: int
    values: int
    worst: Deviation | None
    disagreeing: tuple[Deviation, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return self.runs > 0 and self.values > 0 and not self.disagreeing and not self.missing

    def describe(self) -> str:
        """One line: what disagreed (the worst values first), or that everything agreed."""
        if self.missing:
            return f"the spot profile lacks {len(self.missing)} value(s): {', '.join(self.missing[:3])}"
        if self.disagreeing:
            worst = sorted(self.disagreeing, key=lambda d: -d.ratio)[:3]
            return (f"{len(self.disagreeing)} of {self.values} counter values out of {SPOT_RULE}: " +
                    "; ".join(f"{d.kernel} ({d.tag}) {d.metric} stored {d.cached:g}, now {d.now:g}" for d in worst))
        return f"all {self.values} counter values of {self.runs} runs agree"

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": self.runs, "values": self.values, "agrees": self.agrees,
                               "rule": SPOT_RULE, "disagreeing": len(self.disagreeing)}
        if self.worst is not None:
            out["max_deviation"] = round(self.worst.ratio, 4)
            out["worst"] = self.worst.to_json()
        if not self.agrees:
            out["why"] = self.describe()
        return out


def _finite(v: float) -> float:
    """A value as the classifier sees it (:func:`.ncu.feature_matrix`: non-finite → 0)."""
    return float(v) if math.isfinite(v) else 0.0


def spot_check(stored: ncu.Profile, spot: ncu.Profile) -> SpotCheck:
    """Every counter of ``stored.metrics`` of every spot-profiled run against the stored value of the
    same planned run (:func:`allowed`)."""
    by_run = {_identity(r): res for r, res in zip(stored.runs, stored.results)}
    deviations: list[Deviation] = []
    missing: list[str] = []
    for run, res in zip(spot.runs, spot.results):
        if _identity(run) not in by_run:
            raise ncu.NcuError(f"spot-checked run {run.tag} ({run.kernel}) is not in the stored plan")
        old = by_run[_identity(run)]
        for m in stored.metrics:
            if m not in res.values or m not in old.values:
                missing.append(f"{run.tag} {m}")
                continue
            a, b = _finite(old.values[m]), _finite(res.values[m])
            deviations.append(Deviation(run.tag, run.kernel, m, a, b, allowed(old.units.get(m, ""), a, b)))
    worst = max(deviations, key=lambda d: d.ratio, default=None)
    return SpotCheck(len(spot.results), len(deviations), worst, tuple(d for d in deviations if d.ratio > 1.0),
                     tuple(missing))


# ---- one collection -------------------------------------------------------------------------------------
@dataclass
class CounterReference:
    """Where this run's counter dataset came from: the stored profile (``cached``, confirmed by ``spot``)
    or ncu now (``miss`` says why; ``stored`` whether it was kept, ``why`` why not). ``measured``: when
    the counters the figures come from were profiled."""

    key: str
    path: str
    cached: bool = False
    reviewed: bool = False  # the stored profile came from the read-only layer of reviewed references
    measured: str = ""
    spot: dict[str, Any] | None = None
    miss: str = ""
    stored: bool = False
    why: str = ""

    def info(self) -> dict[str, Any]:
        """What the records keep in ``info`` (the figures mean the same either way, so not the identity)."""
        out: dict[str, Any] = {"cached": self.cached, "key": self.key, "measured": self.measured}
        if self.cached:
            out["reviewed"] = self.reviewed
        if self.spot is not None:
            out["spot_check"] = dict(self.spot)
        if not self.cached:
            out["miss"] = self.miss
            out["stored"] = self.stored
            if self.why:
                out["why"] = self.why
        return out


def _watched(device: Device, runs: Sequence[PlannedRun], metrics: Sequence[str], timeout_s: float,
             ncu_path: str, workdir: Path) -> tuple[ncu.Profile, str]:
    """ncu on ``runs`` under the session's observers (the card's other processes, its throttle reasons:
    they reach the test's metrics as any measurement's do), and why the profile must not be stored ("")."""
    tenants, power = len(device.tenant_observations), len(device.power_observations)
    prof = observed(device, lambda: ncu.profile(runs, device.info.index, metrics, timeout_s, workdir, ncu_path))
    if any(w.get("contended") for w in device.tenant_observations[tenants:]):
        return prof, "another process was on the card while ncu profiled"
    if any(w.get("throttled") for w in device.power_observations[power:]):
        return prof, "the card throttled while ncu profiled"
    return prof, ""


def _load(cache: NcuReferenceCache, k: str,
          runs: Sequence[PlannedRun]) -> tuple[ncu.Profile | None, str, str, Path | None]:
    """(the stored profile or None, when it was measured, why there is none, the file it was read from)."""
    found = cache.find(k)
    if found is None:
        return None, "", "no stored profile under this key (or it was refused: see the warning)", None
    entry, where = found
    try:
        return profile_of(entry, runs), str(entry["measured"]), "", where
    except (ncu.NcuError, KeyError, TypeError, ValueError) as exc:
        cache.refuse(f"stored ncu profile {where} does not hold this run's dataset: {exc}")
        return None, "", "the stored profile was refused (see the warning)", None


def collect(device: Device, runs: Sequence[PlannedRun], ncu_path: str, timeout_s: float, workdir: Path,
            retune: bool = False, root: Path | None = None,
            metrics: Sequence[str] = ncu.METRIC_NAMES) -> tuple[ncu.Profile, CounterReference]:
    """The counter dataset of ``runs`` on ``device``: the stored profile when there is one and the spot
    check agrees, else a fresh profile (stored when it is clean). ``workdir`` holds ncu's spec and launch
    log (the spot check's in ``workdir/spot``); ``root`` overrides :func:`cache_dir`."""
    work = Path(workdir)
    cache = NcuReferenceCache(cache_dir() if root is None else Path(root))
    version = ncu.version(ncu_path)
    fields = key_fields(runs, device.info, version, metrics)
    k = key(fields)
    ref = CounterReference(k, str(cache.path(k)))
    unknown = "" if ncu.parse_version(f"Version {version}") else \
        f"ncu's version could not be read ({version}), so a stored profile could not be told from another ncu's"
    if unknown:
        ref.miss = unknown
    elif retune:
        ref.miss = "--gpuperf-retune: stored profiles are not used"
    else:
        stored, measured, ref.miss, where = _load(cache, ref.key, runs)
        if stored is not None:
            ref.path, ref.reviewed = str(where), where != cache.path(ref.key)
            spot, _ = _watched(device, spot_plan(runs), stored.metrics, timeout_s, ncu_path, work / "spot")
            check = spot_check(stored, spot)
            ref.spot = {**check.info(), "wall_s": round(spot.wall_s, 1), "stored_measured": measured}
            if check.agrees:
                ref.cached, ref.measured = True, measured
                return stored, ref
            ref.miss = ("spot check of the reviewed profile disagreed: " if ref.reviewed
                        else "spot check disagreed: ") + check.describe()
            ref.path, ref.reviewed = str(cache.path(ref.key)), False
    ref.measured = now_iso()
    prof, problem = _watched(device, runs, metrics, timeout_s, ncu_path, work)
    return prof, store(cache, ref, prof, fields, unknown or problem)


def store(cache: NcuReferenceCache, ref: CounterReference, prof: ncu.Profile, fields: Mapping[str, Any],
          problem: str = "") -> CounterReference:
    """Keep a fresh profile under ``ref.key`` unless ``problem`` (why it must not be kept) or ncu dropped
    metrics; ``ref.why`` says why it was not, a write error included (it costs the next run time, never
    this one)."""
    if prof.dropped:
        ref.why = f"ncu dropped metric(s) {', '.join(prof.dropped)}: the profile is not the whole dataset's"
    elif problem:
        ref.why = problem
    if ref.why:
        return ref
    ref.measured = ref.measured or now_iso()
    try:
        cache.put(ref.key, entry_of(prof, fields, ref.measured))
    except OSError as exc:
        ref.why = f"not written: {exc.strerror or exc}"
        return ref
    ref.stored = True
    return ref
