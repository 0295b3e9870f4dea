"""What an xdist worker hands back, and the one place the host-wide report is made.

Each worker owns its GPUs' runs and writes their results, baselines and history itself (each store
locks or writes atomically, and the results paths of two cards never coincide:
``GpuPerfSession._json_paths``). What only the whole host can say — the summary of every card and the
sibling check — needs every worker's results, so each worker puts a :func:`payload` into xdist's
``workeroutput`` (plain JSON types: it crosses execnet) and the controller gathers them in
``pytest_testnodedown`` (:class:`Gathered`) and reports once. Without xdist the session itself is the
only "worker": :func:`payload` of it feeds the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..report import results
from ..schemas.results_doc import ResultsDocument
from ..util.atomic import atomic_write_json
from . import siblings
from ..util import jsonio

KEY = "gpuperf"


def payload(state: Any, lines: list[tuple[str, dict[str, bool]]], failed: bool, status: int = 0) -> dict[str, Any]:
    """A session's share of the host report: its summary lines, one results document per device that
    recorded metrics (raw samples kept: the sibling check tests significance on them), the results path
    of each device, and whether it failed at the end (a missing metric, a write that failed)."""
    from ..util.provenance import environment

    docs, paths = [], {}
    for path, run in state.json_paths().items():
        paths[run.info.spec] = state.written_as.get(path, path)
    env = environment(state.rootdir)
    for run in state.runs.values():
        if run.metrics:
            doc = results.document(run.info, env, {}, sorted(run.metrics.values(), key=lambda m: m.name), True)
            docs.append(results.jsonable(doc))
    return {"lines": [[t, m] for t, m in lines], "documents": docs, "paths": paths, "failed": bool(failed),
            "status": int(status)}


@dataclass
class Gathered:
    """Every worker's payload, as the controller receives them."""

    payloads: list[dict[str, Any]] = field(default_factory=list)

    def add(self, workeroutput: dict[str, Any] | None) -> None:
        if workeroutput and KEY in workeroutput:
            self.payloads.append(workeroutput[KEY])

    @property
    def failed(self) -> bool:
        return any(p.get("failed") for p in self.payloads)

    def status(self) -> int | None:
        """The exit status of its own a worker ended with (``exits``: no baseline, a card too busy or
        throttled to gate), in the order a single session settles them (a missing baseline over a busy card
        over a throttled one over a busy host); None when no worker had one."""
        from ..report.run_outcome import WORKER_PRECEDENCE

        seen = {p.get("status") for p in self.payloads}
        return next((code for code in WORKER_PRECEDENCE if code in seen), None)

    def reasons(self) -> list[dict[str, Any]]:
        """Every worker's reasons the run failed (``report.civerdict.Reason.to_json``), regressions first."""
        found = [r for p in self.payloads for r in p.get("reasons", [])]
        return sorted(found, key=lambda r: r.get("kind") != "REGRESSED")

    def sections(self) -> list[str]:
        """Every worker's device sections of the GitHub step summary."""
        return [sec for p in self.payloads for sec in p.get("sections", [])]

    def recorded(self) -> dict[str, list[str]]:
        """The verdicts of the metrics recorded per device spec."""
        return {d.device["spec"]: [m.require("verdict").verdict for m in d.metrics] for d in self.documents()}

    def lines(self) -> list[tuple[str, dict[str, bool]]]:
        """Every worker's summary lines, the workers ordered by the first device they report."""
        ordered = sorted(self.payloads, key=lambda p: sorted(d["device"]["spec"] for d in p["documents"]) or ["~"])
        return [(t, dict(m)) for p in ordered for t, m in p["lines"]]

    def documents(self) -> list[ResultsDocument]:
        """Every worker's results documents, typed as they arrive, ordered by backend and device index."""
        return sorted((d for p in self.payloads for d in documents_of(p)),
                      key=lambda d: (d.device["backend"], d.device["index"]))

    def paths(self) -> dict[str, str]:
        return {spec: path for p in self.payloads for spec, path in p.get("paths", {}).items()}


def documents_of(share: dict[str, Any]) -> list[ResultsDocument]:
    """The results documents of one :func:`payload` (plain JSON on the way, so it crosses execnet), read
    as :class:`ResultsDocument` s where they arrive."""
    return [ResultsDocument.from_json(d) for d in share["documents"]]


def report(documents: Sequence[ResultsDocument], paths: dict[str, str],
           floor_override: tuple[float, float] | None) -> tuple[dict[str, Any], str | None]:
    """The sibling report of the host and where it was written (``siblings.json`` beside the results
    file of the first card of the first group), or None when there are no results files or no group."""
    rep = siblings.check(documents, floor_override=floor_override)
    if not rep["groups"] or not paths:
        return rep, None
    first = rep["groups"][0]["devices"][0]
    target = paths.get(first) or next(iter(paths.values()))
    out = Path(target).parent / "siblings.json"
    atomic_write_json(str(out), rep)
    return rep, str(out)


def load_documents(paths: list[str]) -> list[dict[str, Any]]:
    """Results files for ``gpuperf siblings`` (an unreadable file raises OSError / ValueError)."""
    return [jsonio.read_json(p) for p in paths]
