"""The legacy history format: one JSON line per run, kept for ``--gpuperf-history=path.jsonl``.

The old writer re-read and rewrote the whole file, so two sessions finishing together lost lines,
and it appended to a file with garbage in it until ``read()`` failed. Now every append holds an
exclusive lock file (:func:`pytest_gpuperf.util.locks.file_lock`), checks the file is valid JSON lines first, and
appends one line with a single ``write`` + ``fsync``; a crash can at worst leave a torn last line,
which the next append refuses with the line number instead of burying it.

Checking the whole file before every append made N appends cost N² lines read. A sidecar index (beside the
lock, ``.gpuperf-locks/<name>.idx``: git-ignored with it, a cache that any append may rebuild) records what
the last writer validated: the prefix's length in bytes, its line count, the file's inode, its mtime, the
digest and length of its last line, and the run keys of its lines. An append trusts that prefix only while
the file still matches it — same inode, same last line, and either the same length and mtime (nothing
changed) or a greater length (a line appended since, by a writer that kept no index: only that tail is
read and checked, its line numbers counted on from the prefix's). A shorter file, another inode, another
last line, the same length with another mtime, or an index that is missing, unreadable or of another
version: the whole file is checked again and the index rebuilt. A damaged line anywhere is still refused
with its line number; an edit that keeps the file's length, inode, mtime and last line is the one change
it cannot see without reading everything.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock

from ..util.atomic import atomic_write_text
from ..util.locks import file_lock, lock_path
from .records import RunRecord, dumps, finite, from_legacy_line
from .target import HistoryTargetError, disk_full, full_error

LOCK_TIMEOUT_S = 120.0


#: the layout of the index; an index of another version is rebuilt
INDEX_VERSION = 1


def _lock(path: Path) -> FileLock:
    return file_lock(path, timeout=LOCK_TIMEOUT_S)


def _parse(data: bytes, path: Path, first: int = 1) -> list[dict[str, Any]]:
    """The records of ``data``, whose first line is line ``first`` of the file; HistoryTargetError naming the
    first bad line, or a last line without its newline (torn)."""
    out = []
    for number, raw in enumerate(data.split(b"\n"), first):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
        except (UnicodeDecodeError, ValueError) as exc:
            raise HistoryTargetError(
                f"history file {path} line {number} is not a JSON record ({type(exc).__name__}: "
                f"{str(exc)[:80]}); refusing to append to a damaged history — repair or move that file, "
                f"or switch to a database (--gpuperf-history=history.db)") from None
        out.append(rec)
    if data and not data.endswith(b"\n"):
        raise HistoryTargetError(f"history file {path} does not end with a newline (a torn last line); "
                                 f"repair or move that file")
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every record of the file; HistoryTargetError naming the first bad line."""
    if not path.exists():
        return []
    return _parse(path.read_bytes(), path)


@dataclass
class _Index:
    """A validated prefix of the file: its length, its line count, the file's inode and mtime when it was
    recorded, the sha256 and length of its last line, and the run keys of its lines."""

    size: int = 0
    lines: int = 0
    ino: int = 0
    mtime_ns: int = 0
    last: str = ""
    last_len: int = 0
    keys: set[str] = field(default_factory=set)

    def extended(self, data: bytes, path: Path) -> "_Index":
        """This prefix with ``data``, the bytes that follow it, checked (HistoryTargetError naming a bad line)."""
        keys = {k for k in map(_key, _parse(data, path, self.lines + 1)) if k is not None}
        if not data:
            return _Index(self.size, self.lines, self.ino, self.mtime_ns, self.last, self.last_len, set(self.keys))
        last = data[data.rfind(b"\n", 0, len(data) - 1) + 1:]  # data ends with its newline (_parse)
        return _Index(self.size + len(data), self.lines + data.count(b"\n"), self.ino, self.mtime_ns,
                      hashlib.sha256(last).hexdigest(), len(last), self.keys | keys)


def _index_path(path: Path) -> Path:
    """Where the index of ``path`` lives: beside its lock, in the git-ignored lock folder."""
    return lock_path(path).with_name(f"{path.name}.idx")


def _read_index(path: Path) -> _Index | None:
    """The index of ``path``, or None where there is none or it cannot be trusted to be one (unreadable,
    another version, a field of the wrong type)."""
    try:
        doc = json.loads(_index_path(path).read_bytes())
        ints = [doc[k] for k in ("size", "lines", "ino", "mtime_ns", "last_len")]
        if (doc.get("version") != INDEX_VERSION or not all(type(v) is int and v >= 0 for v in ints)
                or not isinstance(doc["last"], str) or not isinstance(doc["keys"], list)
                or not all(isinstance(k, str) for k in doc["keys"])):
            return None
        return _Index(*ints[:4], doc["last"], ints[4], set(doc["keys"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write_index(path: Path, index: _Index) -> None:
    """Store the index of ``path`` atomically. It is a cache: where it cannot be written (a full disk) the
    old one stays, which still describes a prefix of the file (or is found not to), so nothing is lost."""
    doc = {"version": INDEX_VERSION, "size": index.size, "lines": index.lines, "ino": index.ino,
           "mtime_ns": index.mtime_ns, "last": index.last, "last_len": index.last_len, "keys": sorted(index.keys)}
    try:
        atomic_write_text(_index_path(path), json.dumps(doc))
    except OSError:
        pass


def _ends_as_indexed(fh: BinaryIO, size: int, index: _Index) -> bool:
    """Whether the file (open as ``fh``, ``size`` bytes) holds the index's last line where the index ends."""
    if index.last_len == 0:
        return index.size == 0
    if size < index.size or index.last_len > index.size:
        return False
    fh.seek(index.size - index.last_len)
    return hashlib.sha256(fh.read(index.last_len)).hexdigest() == index.last


def _scan(path: Path) -> tuple[_Index, bool]:
    """The index of the whole file as it is now, every line checked (HistoryTargetError naming a bad one): the
    stored index where it still describes the file, extended by the tail appended since, else built anew from
    the whole file; and whether it differs from the stored one. Call it holding the lock."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return _Index(), False
    with fh:
        st = os.fstat(fh.fileno())
        stored = _read_index(path)
        if stored is not None and stored.ino == st.st_ino and _ends_as_indexed(fh, st.st_size, stored):
            if st.st_size == stored.size and st.st_mtime_ns == stored.mtime_ns:
                return stored, False
            if st.st_size > stored.size:
                fh.seek(stored.size)
                grown = stored.extended(fh.read(), path)
                grown.mtime_ns = st.st_mtime_ns
                return grown, True
        fh.seek(0)
        return _Index(ino=st.st_ino, mtime_ns=st.st_mtime_ns).extended(fh.read(), path), True


def validate(path: str | Path) -> None:
    """Raise HistoryTargetError if ``path`` exists and is not a clean JSON-lines history (the lines its index
    covers are not read again: see the module's docstring)."""
    target = Path(path)
    with _lock(target):
        index, changed = _scan(target)
        if changed:
            _write_index(target, index)


def append(path: str | Path, run: RunRecord) -> bool:
    """Append one run as one line, under the lock; old readers still find date/key/metrics{name: value}.
    False, and nothing written, when the file holds the run already (the same run key: recorded live and
    imported from its results file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    key = run.run_key
    return append_record(target, {"date": run.date, "key": run.device_key, "backend": run.backend,
                                  "driver": run.driver, "commit": run.commit,
                                  "metrics": {m.name: m.value for m in run.metrics}, "run": run.to_json(),
                                  "run_key": key}, key=key)


def _key(rec: dict[str, Any]) -> str | None:
    """The run key of a line: written beside the run since keys exist, computed for older lines."""
    if isinstance(rec.get("run_key"), str):
        return rec["run_key"]
    try:
        return from_legacy_line(rec).run_key
    except (KeyError, TypeError, ValueError):
        return None


def append_record(path: str | Path, record: dict[str, Any], key: str | None = None) -> bool:
    """Append one JSON object as one line: locked, after checking the file (its index: only what was added
    since the last append is read), one write, fsync. Not written, and False, where ``key`` is given and a
    line of the file has that run key; True where it was written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    line = (dumps(finite(record), separators=(",", ":"), default=str) + "\n").encode()
    with _lock(target):
        index, changed = _scan(target)
        if key is not None and key in index.keys:
            if changed:
                _write_index(target, index)
            return False
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            st = os.fstat(fd)
        except OSError as exc:
            os.ftruncate(fd, size)  # no torn line left behind
            if disk_full(exc):
                raise full_error(str(target), exc) from None
            raise
        finally:
            os.close(fd)
        if size == index.size:  # else the file changed after the check, unlocked: the next append reads it all
            written = index.extended(line, target)
            written.ino, written.mtime_ns = st.st_ino, st.st_mtime_ns
            _write_index(target, written)
    return True


def records(path: str | Path) -> list[dict[str, Any]]:
    """Every line of the file as the JSON object written, under the lock; HistoryTargetError names a
    damaged line."""
    target = Path(path)
    with _lock(target):
        return _lines(target)


def read(path: str | Path) -> list[RunRecord]:
    """Every run of a JSONL history (old lines and new ones)."""
    target = Path(path)
    return [from_legacy_line(rec, source=str(target)) for rec in records(target)]
