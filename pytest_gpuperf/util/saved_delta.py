"""A saved run stored as its difference from another (the first run of its folder, say), read back whole.

A gate check's runs on one machine share nearly everything but their readings: the same metrics, tests,
identities, citations and notes. xz compresses each file alone, so each repeats what the first holds; stored as
its difference from that run (``{"$delta": "aa-1.json.xz", ...}``), a later run takes about a third of the bytes.
Every reader goes through :func:`pytest_gpuperf.util.jsonio.read_bytes`, which gives the whole document back
(:func:`decode`); the writer (``scripts/compact_saved.py --delta``) keeps a delta only where it decodes to the
document key for key, in order. The base is a file of the delta's own folder (``aa-1.json.xz``) or of a sibling
folder under the same parent, the device's folder (``../gatecheck/aa-1.json.xz``: a gate check's first run stored
against another gate check's, ``compact_saved.py --delta --anchor``) or, from the device's folder, of a folder
inside it (``gatecheck/aa-1.json.xz``: a run of the device's own folder stored against the device's anchor); no
delta reaches further. A base is a whole
document or the difference from one (:data:`MAX_DEPTH`), so a chain is two deltas long at most."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Callable

#: how a delta file's text begins (its first key), so a reader tells one from a whole document without parsing
MARK = b'{"$delta":'
BASE, TOP, METRICS, PATCH, OF = "$delta", "top", "metrics", "$patch", "$of"
#: a key the later document does not have
GONE = {"$gone": 1}
#: the most deltas a document is read through: a delta's base is a whole document or the difference from one
MAX_DEPTH = 2


def same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` read back as the same JSON text: equal, of the same types (``1`` is not ``1.0`` nor
    ``True``) and with their keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def diff(a: Any, b: Any) -> Any:
    """A patch that turns ``a`` into ``b`` (:func:`patched`): mappings key by key where the keys keep their order
    (kept keys in ``a``'s order, new ones after), any other value whole."""
    if isinstance(a, dict) and isinstance(b, dict):
        if [k for k in a if k in b] + [k for k in b if k not in a] != list(b):
            return b
        p: dict[str, Any] = {k: (v if k not in a else diff(a[k], v)) for k, v in b.items() if k not in a or not same(a[k], v)}
        p.update({k: GONE for k in a if k not in b})
        return {PATCH: p}
    return b


def patched(a: Any, p: Any, keep: Callable[[Any], Any] = lambda v: v) -> Any:
    """``a`` with the patch ``p`` (:func:`diff`) applied; what the patch keeps of ``a`` passes through ``keep``
    (:func:`fresh` gives it objects of its own, for an ``a`` that others share)."""
    if not (isinstance(p, dict) and PATCH in p and isinstance(a, dict)):
        return p
    changes = p[PATCH]
    out = {}
    for k, v in a.items():
        if k not in changes:
            out[k] = keep(v)
        elif changes[k] != GONE:
            out[k] = patched(v, changes[k], keep)
    for k, v in changes.items():
        if k not in a and v != GONE:
            out[k] = v
    return out


_SCALARS = (str, int, float, bool, type(None))


def fresh(v: Any) -> Any:
    """A copy of the JSON value ``v`` that shares no list or mapping with it."""
    t = type(v)
    if t is dict:
        return {k: x if type(x) in _SCALARS else fresh(x) for k, x in v.items()}
    if t is list:
        return [x if type(x) in _SCALARS else fresh(x) for x in v]
    return v


def _key(metric: Any) -> list[Any]:
    return [metric.get("name"), metric.get("test")] if isinstance(metric, dict) else [None, None]


def index(base: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Where each name and test stands among the base's metrics (a name may repeat), so that a base parsed once
    serves every delta stored against it unchanged (:func:`decode`)."""
    at: dict[str, list[int]] = {}
    for i, m in enumerate(base.get("metrics", [])):
        at.setdefault(repr(_key(m)), []).append(i)
    return {k: tuple(v) for k, v in at.items()}


def _counterparts(base: dict[str, Any], at: dict[str, tuple[int, ...]] | None = None) -> Callable[[str], Any]:
    """Takes the base's metrics of one name and test in their order, each once (None when none is left); ``at``:
    the base's :func:`index`, where the caller keeps it."""
    metrics, places, used = base.get("metrics", []), index(base) if at is None else at, {}

    def take(key: str) -> Any:
        n = used.get(key, 0)
        if n >= len(places.get(key, ())):
            return None
        used[key] = n + 1
        return metrics[places[key][n]]

    return take


def encode(base: dict[str, Any], doc: dict[str, Any], base_name: str) -> dict[str, Any]:
    """``doc`` as its difference from ``base`` (the file ``base_name``, :func:`base_name`): its other fields, and
    each metric as the patch of the base's metric of the same name and test (``$of``), in order."""
    take = _counterparts(base)
    metrics = []
    for m in doc.get("metrics", []):
        same = take(repr(_key(m)))
        metrics.append({OF: _key(m), PATCH: diff(same, m)} if same is not None else m)
    rest = {k: v for k, v in doc.items() if k != "metrics"}
    return {BASE: base_name, TOP: diff({k: v for k, v in base.items() if k != "metrics"}, rest), METRICS: metrics}


def _plain(part: str) -> bool:
    """Whether ``part`` names a file or folder in its folder: not empty, not ``.``/``..``, no separator."""
    return part not in ("", ".", "..") and "/" not in part and "\\" not in part


def base_name(delta: dict[str, Any], where: object) -> str:
    """The file the delta is the difference from, as it names it: a plain file name (a file of its own folder),
    ``../<folder>/<file>`` (a file of a sibling folder under the same parent, the device's folder) or
    ``<folder>/<file>`` (a file of a folder inside its own: from the device's folder, its anchor gate check's first
    run); nothing that reaches further."""
    name = delta.get(BASE)
    parts = name.split("/") if isinstance(name, str) else [""]
    if not ((len(parts) == 1 and _plain(parts[0])) or
            (len(parts) == 2 and _plain(parts[0]) and _plain(parts[1])) or
            (len(parts) == 3 and parts[0] == ".." and _plain(parts[1]) and _plain(parts[2]))):
        raise ValueError(f"{where}: its base {name!r} is not a file name of its own folder, <folder>/<file> of a "
                         "folder inside it nor ../<folder>/<file> of a sibling folder")
    return name


def decode(delta: dict[str, Any], base: Any, where: object,
           base_index: dict[str, tuple[int, ...]] | None = None) -> dict[str, Any]:
    """The whole document a delta stands for, given its base (the file :func:`base_name` names) as a whole
    document: where that file is itself a delta, the caller decodes it first. The base is only read: what the
    document keeps of it is copied (:func:`fresh`), so a base parsed once serves every delta stored against it, and
    no document shares a list or mapping with it or with another (``base_index``: the base's :func:`index`, where
    the caller keeps it with the base)."""
    name = base_name(delta, where)
    if not isinstance(base, dict) or BASE in base:
        raise ValueError(f"{where}: its base {name} is not a whole results document")
    take = _counterparts(base, base_index)
    metrics = []
    for m in delta.get(METRICS, []):
        if isinstance(m, dict) and OF in m:
            same = take(repr(m[OF]))
            if same is None:
                raise ValueError(f"{where}: metric {m[OF]!r} has no counterpart in its base {name}")
            metrics.append(patched(same, m[PATCH], fresh))
        else:
            metrics.append(m)
    top = patched({k: v for k, v in base.items() if k != "metrics"}, delta.get(TOP), fresh)
    if not isinstance(top, dict):
        raise ValueError(f"{where}: not a delta of a results document")
    # "metrics" where the document had it: the base's place for it
    keys = list(top)
    at_metrics = list(base).index("metrics") if "metrics" in base else len(keys)
    keys.insert(min(at_metrics, len(keys)), "metrics")
    return {k: (metrics if k == "metrics" else top[k]) for k in keys}


def is_delta(raw: bytes) -> bool:
    """Whether a file's (decompressed) text is a delta."""
    return raw[: len(MARK)] == MARK
