"""Budgeted worst-case search for a unary function: random restarts over all binades, then local
search in the bit-pattern neighbourhood of the worst inputs (steps of ±2^j ulps and random jitter),
keeping the best inputs found. Each round is one device batch and a vectorized bulk score; the final
maximum is confirmed by MPFR (:func:`check.score`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..util import memo
from .fp_formats import Format
from .inputs import stratified
from .ulp import ulp_errors


@dataclass
class SearchResult:
    best_x: np.ndarray  # the top inputs found (fmt dtype)
    rounds: int
    evaluated: int


def worst_case_search(fmt: Format, device_eval: Callable[[np.ndarray], np.ndarray],
                      reference: Callable[[np.ndarray], np.ndarray], metric: str, budget_s: float,
                      rng: np.random.Generator, batch: int = 1 << 14, keep: int = 32,
                      domain: tuple | None = None, min_rounds: int = 1) -> SearchResult:
    """Search for inputs maximizing the error of ``device_eval`` under ``metric`` within ``budget_s``, and for
    at least ``min_rounds`` rounds however long they take (a seeded search then visits the same inputs on a
    busy host as on a quiet one)."""
    t0 = time.perf_counter()
    frac = fmt.p - 1

    def errors(x: np.ndarray) -> np.ndarray:
        e = ulp_errors(device_eval(x), reference(x), fmt)
        v = e.cr if metric == "cr" else e.ulp
        return np.where(np.isnan(v), -1.0, v)

    def restart(n: int) -> np.ndarray:
        x = stratified(fmt, max(1, n // (2 << (fmt.width - fmt.p))), rng)
        if domain is not None:
            d = rng.uniform(domain[0], domain[1], n).astype(fmt.dtype)
            x = np.concatenate([x, d])
        return x

    pool = restart(batch)
    err = errors(pool)
    order = np.argsort(err)[::-1][:keep]
    best, best_err = pool[order], err[order]
    rounds, evaluated = 1, pool.size
    steps = np.concatenate([1 << np.arange(0, min(frac, 24)), -(1 << np.arange(0, min(frac, 24)))]).astype(np.int64)
    while rounds < min_rounds or time.perf_counter() - t0 < budget_s:
        bits = best.view(fmt.bits).astype(np.int64)
        local = (bits[:, None] + steps[None, :]).ravel()
        jitter = bits[rng.integers(0, bits.size, batch // 2)] + rng.integers(-(1 << 12), 1 << 12, batch // 2)
        cand_bits = np.concatenate([local, jitter]) & ((1 << fmt.width) - 1)
        cand = np.concatenate([cand_bits.astype(np.uint64).astype(fmt.bits).view(fmt.dtype), restart(batch // 4)])
        ce = errors(cand)
        allx = np.concatenate([best, cand])
        alle = np.concatenate([best_err, ce])
        _, uniq = np.unique(allx.view(fmt.bits), return_index=True)
        allx, alle = allx[uniq], alle[uniq]
        order = np.argsort(alle)[::-1][:keep]
        best, best_err = allx[order], alle[order]
        rounds += 1
        evaluated += cand.size
    return SearchResult(best, rounds, evaluated)


@dataclass(frozen=True)
class StoredSearch:
    """A worst-case search as a run uses it: the worst inputs found (``x``, values of the format), the device's
    outputs there (``y``), the search's rounds and evaluations, and how the store served it (``stored``:
    ``cached``, ``key``, ``computed``, ``spot_checked``)."""

    x: np.ndarray
    y: np.ndarray
    rounds: int
    evaluated: int
    stored: dict[str, Any]


def stored_search(kind: str, fields: Mapping[str, Any], fmt: Format,
                  device_eval: Callable[[np.ndarray], np.ndarray], reference: Callable[[np.ndarray], np.ndarray],
                  metric: str, budget_s: float, rng: np.random.Generator, *, batch: int, domain: tuple | None = None,
                  keep: Callable[[np.ndarray], np.ndarray] | None = None) -> StoredSearch:
    """:func:`worst_case_search` kept across runs (:func:`~pytest_gpuperf.util.memo.remember` under ``kind``, keyed
    by ``fields`` — what the device's outputs depend on — with the budget and batch): the worst inputs a search
    found are what it is worth, so a later run evaluates them on the device again and reuses them only when
    every output bit is the one stored; any other bit is a new search. ``keep``: a mask of the found inputs
    to keep (those a library may flush, left out), applied before they are stored."""

    def bits(a: np.ndarray) -> list[int]:
        return a.view(fmt.bits).astype(np.int64).tolist()

    def compute() -> dict[str, Any]:
        res = worst_case_search(fmt, device_eval, reference, metric, budget_s, rng, batch=batch, domain=domain)
        x = res.best_x if keep is None else res.best_x[keep(res.best_x)]
        return {"x": bits(x), "y": bits(device_eval(x)) if x.size else [], "rounds": res.rounds,
                "evaluated": res.evaluated}

    def same_outputs(stored: Mapping[str, Any]) -> bool:
        x = values(stored["x"], fmt)
        return not x.size or bits(device_eval(x)) == stored["y"]

    found, how = memo.remember(kind, {**fields, "budget_s": budget_s, "batch": batch}, compute, valid=same_outputs)
    stored = {"cached": how["cached"], "key": how["key"], "computed": how["computed"],
              "spot_checked": len(found["x"]) if how["cached"] else 0}
    return StoredSearch(values(found["x"], fmt), values(found["y"], fmt), int(found["rounds"]),
                        int(found["evaluated"]), stored)


def values(stored_bits: Sequence[int], fmt: Format) -> np.ndarray:
    """Stored bit patterns (int64) as values of ``fmt``."""
    return np.asarray(stored_bits, np.int64).astype(fmt.bits).view(fmt.dtype)
