"""A results file as a *run* a doc table is made from: its metrics by name, the device, the commit and
the date it ran, and how a doc cites it.

Results documents (``pytest-gpuperf/1``) carry ``metrics`` (a list, or a name → entry mapping in older
files); other saved evidence (offline model outputs, power corpora, gate-check records) is read as a
plain document (:attr:`Run.doc`) with no metrics. Files are read through :mod:`..util.jsonio`, so
``x.json``, ``x.json.xz`` and ``x.json.gz`` name the same saved run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping

from pytest_gpuperf.errors import GpuPerfError
from pytest_gpuperf.schemas.results_doc import ResultsDocument, ResultsDocumentError
from pytest_gpuperf.util import jsonio


class EvidenceError(GpuPerfError):
    """A doc's table cannot be made from what it names (a missing or unreadable results file, an unknown
    table, a broken marker); the message names the doc and the table."""


@dataclass(frozen=True)
class Run:
    """One saved run: ``path`` as the doc names it (relative to the repository root)."""

    path: str
    doc: Mapping[str, Any]
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def device(self) -> Mapping[str, Any]:
        return self.doc.get("device") or {}

    @property
    def commit(self) -> str:
        env = self.doc.get("environment") or {}
        run = self.doc.get("run") or {}
        c = str(env.get("commit") or run.get("commit") or self.doc.get("commit") or "")
        return c[:7] if c and c not in ("na", "None") else ""

    @property
    def date(self) -> str:
        run = self.doc.get("run") or {}
        return str(run.get("started") or "")[:10]

    @property
    def backend(self) -> str:
        return str(self.device.get("backend") or "")

    @property
    def stem(self) -> str:
        """The run's short name: its path below ``results/<device key>/`` without ``.json[.xz|.gz]``
        (``default-7c-cuda``, ``gatecheck/aa-2``)."""
        parts = Path(self.path).parts
        name = "/".join(parts[2:]) if len(parts) > 2 and parts[0] == "results" else Path(self.path).name
        for suffix in (".xz", ".gz", ".json"):
            name = name[: -len(suffix)] if name.endswith(suffix) else name
        return name

    def states(self) -> dict[str, str]:
        """What kept this run from being a complete, quiet one, as ``{state: how it reads}`` (empty: complete):
        ``interrupted`` (``run.interrupted``: stopped before every test ran), ``contended`` (metrics whose
        host observer counted contended windows, ``info.host.contended``), ``throttled`` (metrics whose
        power observer saw the card slow down, ``info.power.throttled``). A doc table that cites the run
        says each of them (:func:`unsaid`)."""
        return dict(self._states)

    @cached_property
    def _states(self) -> dict[str, str]:
        """:meth:`states`, read once per run: every table citing a run asks for them again (its Runs line
        and the check that its caption says them), and a run holds thousands of metrics."""
        out: dict[str, str] = {}
        if (self.doc.get("run") or {}).get("interrupted"):
            out["interrupted"] = "interrupted before every test ran"
        marked = {"contended": 0, "throttled": 0}
        for m in self.metrics.values():
            info = _mapping(m.get("info"))
            if info:
                marked["contended"] += _flag(info.get("host"), "contended")
                marked["throttled"] += _flag(info.get("power"), "throttled")
        n = len(self.metrics)
        for state, phrase in (("contended", "host contended"), ("throttled", "throttled")):
            if marked[state]:
                out[state] = f"{phrase} in {marked[state]} of {n} metrics"
        return out

    def cite(self) -> str:
        """```path``` with the commit and date the run recorded, and its :meth:`states`, as a doc names
        its source."""
        what = ", ".join(x for x in (f"commit {self.commit}" if self.commit else "", self.date) if x)
        what = "; ".join(x for x in (what, *self.states().values()) if x)
        return f"`{self.path}`" + (f" ({what})" if what else "")

    def get(self, name: str) -> Mapping[str, Any] | None:
        return self.metrics.get(name)

    def value(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return None if m is None else float(m["value"])

    def info(self, name: str) -> Mapping[str, Any]:
        m = self.metrics.get(name)
        return (m or {}).get("info") or {}


def _mapping(x: Any) -> Mapping[str, Any] | None:
    """``x`` where it is a mapping, else None; a JSON object (a dict) is told without the slower ABC check."""
    if x is None or isinstance(x, dict):
        return x
    return x if isinstance(x, Mapping) else None


def _flag(observer: Any, state: str) -> bool:
    """Whether an observer's ``info`` section marks ``state`` (a count of windows, or a flag)."""
    obs = _mapping(observer)
    return obs is not None and bool(obs.get(state))


def unsaid(runs: Iterable[Run], text: str) -> list[str]:
    """``path (state, …)`` for each run whose states ``text`` (a table's caption, marker and body) never
    names: a table built on an interrupted, contended or throttled run must say so."""
    low = text.lower()
    out = []
    for run in runs:
        missing = [s for s in run.states() if s not in low]
        if missing:
            out.append(f"{run.path} ({', '.join(missing)})")
    return out


def _metrics(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The metrics of ``doc`` by name, as stored: a results document's (read as :class:`ResultsDocument`;
    metrics with a name and a value), an older file's name → entry mapping, or none (other evidence)."""
    try:
        typed = ResultsDocument.from_json(doc)
    except ResultsDocumentError:
        ms = doc.get("metrics") if isinstance(doc, Mapping) else None
        if isinstance(ms, Mapping):  # the older form, which is not a results document of today
            return {k: {**v, "name": k} for k, v in ms.items() if isinstance(v, Mapping) and "value" in v}
        return {}
    return {m.name: m.to_json() for m in typed.metrics if "name" in m.keys and "value" in m.keys}


def load(root: Path, rel: str) -> Run:
    """The run saved at ``root/rel`` (``rel`` may name ``x.json`` for a stored ``x.json.gz``)."""
    path = jsonio.saved(root / rel)
    if not path.is_file():
        raise EvidenceError(f"results file {rel} does not exist under {root}: name a saved run "
                            "(ls results/<device key>/) or restore the file")
    try:
        doc = jsonio.read_json(path)
    except (OSError, ValueError) as exc:
        raise EvidenceError(f"results file {rel} is not readable JSON ({exc}); restore it from git") from exc
    if not isinstance(doc, Mapping):
        raise EvidenceError(f"results file {rel} holds no JSON object; name a results document")
    return Run(rel, doc, _metrics(doc))


def merged(runs: Iterable[Run], prefer: str = "first") -> dict[str, Mapping[str, Any]]:
    """The metrics of several runs of one backend as one mapping: with ``prefer="first"`` an earlier
    file's metric wins and later files only fill gaps (a group re-measured after a fix); with
    ``"last"`` later files override metric by metric (a session's re-runs of single tests)."""
    if prefer not in ("first", "last"):
        raise ValueError(f"prefer must be 'first' or 'last', got {prefer!r}")
    out: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        for name, m in run.metrics.items():
            if prefer == "last" or name not in out:
                out[name] = m
    return out
