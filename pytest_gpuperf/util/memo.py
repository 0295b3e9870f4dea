"""Results of pure host computations kept across runs, keyed by a digest of everything they depend on.

Some figures of a run are functions of saved data alone — the power model's nested cross-validation of a
saved corpus, for one: minutes of CPU time on a small host, the same numbers every time. Such a result is
stored under the user's cache directory (``$GPUPERF_CACHE`` or ``<user cache dir>/pytest-gpuperf``,
platformdirs) with a key made of its inputs' digest, the digest of this package's code and the versions
of the libraries it calls. Any change to one of them is a miss, and a miss computes as if no store
existed; a hit is the stored value, unchanged. A torn or foreign entry is a miss too. Writes are atomic,
and a store that cannot be written costs the next run time, never this run its result.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import platformdirs

from ..errors import GpuPerfError
from ..paths import REVIEWED_REFERENCES
from .atomic import atomic_write_json
from .provenance import now_iso

SCHEMA = "pytest-gpuperf-memo/1"
#: the environment variable that moves every store of this package's cache directory
ENV = "GPUPERF_CACHE"
#: the environment variable naming the read-only folder of reference entries a store reads after the
#: user's cache ("off": none; unset: the reviewed references shipped in this package)
REFERENCES_ENV = "GPUPERF_REFERENCES"


def cache_root() -> Path:
    """``$GPUPERF_CACHE`` where set, else ``<user cache dir>/pytest-gpuperf`` (``$XDG_CACHE_HOME`` or
    ``~/.cache`` on Linux)."""
    env = os.environ.get(ENV)
    return Path(env) if env else Path(platformdirs.user_cache_dir("pytest-gpuperf", appauthor=False))


def cache_folder(folder: str, env: str) -> Path:
    """A store's folder: ``$<env>`` where set, else ``folder`` under :func:`cache_root`."""
    named = os.environ.get(env)
    return Path(named) if named else cache_root() / folder


def reference_folder(folder: str) -> Path | None:
    """The read-only layer under a store's user folder: ``folder`` under ``$GPUPERF_REFERENCES`` where set
    (``off``: none), else under the package's reviewed references (:data:`~..paths.REVIEWED_REFERENCES`).
    A fleet can point every machine at one shared folder this way; a folder that does not exist is an
    error, never "no references"."""
    named = os.environ.get(REFERENCES_ENV)
    if named is None:
        return REVIEWED_REFERENCES / folder
    if named.strip().lower() == "off":
        return None
    root = Path(named)
    if not root.is_dir():
        raise GpuPerfError(f"{REFERENCES_ENV}={named!r} is not a folder: name a folder of reference entries "
                           f"(gpuperf offline references CACHE --into DIR writes one), or set {REFERENCES_ENV}=off to read none")
    return root / folder


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of every Python source of this package as installed: any edit is another key."""
    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(pkg.rglob("*.py")):
        h.update(f.relative_to(pkg).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def versions(distributions: Sequence[str]) -> dict[str, str]:
    """The installed version of each distribution ("absent" where it is not installed); looked up once per
    process (suites ask per test)."""
    return dict(_versions(tuple(distributions)))


@functools.lru_cache(maxsize=None)
def _versions(distributions: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    out = {}
    for d in distributions:
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = "absent"
    return tuple(out.items())


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def key(kind: str, fields: Mapping[str, Any]) -> str:
    """The store key of a ``kind`` of result computed from ``fields`` (JSON-able), this code included."""
    text = json.dumps({"kind": kind, "code": code_digest(), **fields}, sort_keys=True)
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def _plain(obj: Any) -> Any:
    """NumPy scalars and arrays as plain Python (the only non-JSON values a computation may return)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"a memoized value holds {type(obj).__name__}, which JSON cannot keep")


def _path(root: Path, k: str) -> Path:
    return root / "memo" / f"{k}.json"


def remember(kind: str, fields: Mapping[str, Any], compute: Callable[[], Any], root: Path | None = None,
             valid: Callable[[Any], bool] | None = None) -> tuple[Any, dict[str, Any]]:
    """``compute()``'s value for these ``fields``, from the store when it holds one, else computed and
    stored; and what happened (``cached``, ``key``, ``computed`` timestamp, ``why`` a store failed).
    ``valid``: a check of a stored value against the world of this run (a spot check of a device's
    outputs, say); a stored value it refuses is computed again and replaced (``refused`` says so)."""
    k = key(kind, fields)
    path = _path(cache_root() if root is None else root, k)
    refused = False
    try:
        entry = json.loads(path.read_text())
        if entry.get("schema") == SCHEMA and entry.get("key") == k and "value" in entry:
            if valid is None or valid(entry["value"]):
                return entry["value"], {"cached": True, "key": k, "computed": entry.get("computed", "")}
            refused = True
    except (OSError, ValueError, AttributeError):
        pass
    value = json.loads(json.dumps(compute(), allow_nan=False, default=_plain))  # as a hit would return it
    how: dict[str, Any] = {"cached": False, "key": k, "computed": now_iso(), **({"refused": True} if refused else {})}
    try:
        atomic_write_json(path, {"schema": SCHEMA, "key": k, "computed": how["computed"], "value": value})
    except (OSError, TypeError, ValueError) as exc:
        how["why"] = f"not stored: {exc}"
    return value, how
