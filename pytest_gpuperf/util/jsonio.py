"""Saved files that may be compressed: results kept as evidence are stored as ``*.json.xz`` (xz: a fifth
smaller than gzip on results documents; older logs as ``*.log.gz``), and every reader
of a results document, a log or a corpus takes any of these forms.

:func:`saved` finds the file a name means (``x.json``, ``x.json.gz`` or ``x.json.xz``); :func:`read_text` and
:func:`read_json` open it, decompressing by the suffix; :func:`write_gz` and :func:`write_xz` store a file
compressed, atomically. Every read goes through :func:`read_regular`: regular files only, at most
:data:`MAX_BYTES` (decompressed too)."""

from __future__ import annotations

import contextlib
import functools
import gc
import gzip
import io
import json
import lzma
import os
import stat
from pathlib import Path
from typing import Any, Iterator

from . import saved_delta
from .atomic import atomic_write_chunks

GZ = ".gz"
XZ = ".xz"
#: the compressed forms a saved file may take, by suffix
COMPRESSED = (GZ, XZ)
#: the names a saved results document may have
RESULTS_SUFFIXES = (".json", ".json" + GZ, ".json" + XZ)


def saved(path: str | os.PathLike[str]) -> Path:
    """The file ``path`` names: itself if it exists, else its ``.xz`` or ``.gz`` twin if one exists, else
    ``path`` unchanged (so a caller's "does not exist" message names what was asked for)."""
    p = Path(path)
    if p.exists() or p.suffix in COMPRESSED:
        return p
    for suffix in (XZ, GZ):
        twin = p.with_name(p.name + suffix)
        if twin.exists():
            return twin
    return p


def uncompressed_name(name: str) -> str:
    """``name`` without a compression suffix (``a.json.xz`` → ``a.json``)."""
    for suffix in COMPRESSED:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_results_name(name: str) -> bool:
    """Whether a file called ``name`` may be a saved results document (``.json``, ``.json.gz``, ``.json.xz``)."""
    return name.endswith(RESULTS_SUFFIXES)


#: the most bytes a results document, a baseline, a log or a corpus may hold once decompressed. A full run
#: with every sample kept is a few MiB; a larger file is not one of ours, and is refused before it fills
#: the memory (a ``/dev/zero`` behind a link would never end, a small ``.gz`` can unpack to gigabytes)
MAX_BYTES = 256 * 2**20


class UnreadableFileError(OSError):
    """A file that is not read: not a regular file (a FIFO, a device, a folder), or larger than the limit.
    An ``OSError``, so every caller that reports a file it cannot read reports this one too."""


class MissingBaseError(UnreadableFileError):
    """A run stored as its difference from another file of its folder, of a sibling folder or of a folder inside its
    own (:mod:`.saved_delta`), read where that file is not: copied out of the device's folder alone, say. Not a
    ``FileNotFoundError``: the file asked for is there."""


def read_regular(path: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file (after links) of at most ``limit`` bytes; else
    :class:`UnreadableFileError`. Opened without blocking, so a FIFO is refused at once instead of waiting
    for a writer forever; a dangling link raises ``FileNotFoundError``. Every read of a results document
    or a baseline goes through here."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFileError(f"{path}: not a regular file (a FIFO, a device or a folder); only regular files "
                                      "are read as results and baselines")
        if st.st_size > limit:
            raise UnreadableFileError(f"{path}: {st.st_size} bytes, more than the {limit} a results or baseline file "
                                      "may hold (pytest_gpuperf.util.jsonio.MAX_BYTES)")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFileError(f"{path}: more than the {limit} bytes a results or baseline file may hold")
    return data


def gunzip(data: bytes, where: object, limit: int = MAX_BYTES) -> bytes:
    """``data`` decompressed, reading at most ``limit`` bytes of output (a bomb is refused, not unpacked)."""
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
        out = f.read(limit + 1)
    if len(out) > limit:
        raise UnreadableFileError(f"{where}: unpacks to more than the {limit} bytes a results or baseline file may hold")
    return out


def unxz(data: bytes, where: object, limit: int = MAX_BYTES) -> bytes:
    """``data`` (xz) decompressed, at most ``limit`` bytes of output; a torn file raises ``EOFError``."""
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:
        out = dec.decompress(data, max_length=limit + 1)
    except lzma.LZMAError as exc:
        raise ValueError(f"{where}: not a readable xz file ({exc})") from None
    if len(out) > limit:
        raise UnreadableFileError(f"{where}: unpacks to more than the {limit} bytes a results or baseline file may hold")
    if not dec.eof:
        raise EOFError(f"{where}: the xz stream ends early (a torn or truncated file)")
    return out


def unpack(data: bytes, name: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """``data``, the bytes of a file called ``name``, decompressed as its suffix says (``.gz``, ``.xz``; any
    other name: as they are), at most ``limit`` bytes of output."""
    suffix = Path(name).suffix
    if suffix == GZ:
        return gunzip(data, name, limit)
    if suffix == XZ:
        return unxz(data, name, limit)
    return data


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """The bytes a saved file holds (:func:`saved`: ``path`` or its ``.xz``/``.gz`` twin, decompressed),
    through :func:`read_regular` and at most ``limit`` bytes decompressed; a run stored as its difference from
    another (:mod:`.saved_delta`) as the whole document, in compact JSON."""
    p, data = _stored(path, limit)
    if not saved_delta.is_delta(data):
        return data
    with _collector_paused():  # as in read_json
        doc = _decoded(p, data, limit)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def read_stored(path: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """The text a saved file holds as it is stored: decompressed, but a delta (:mod:`.saved_delta`) left a delta,
    for a reader that only looks for a key a delta keeps from its base (:func:`stored_base`) or carries itself."""
    return _stored(path, limit)[1]


def stored_base(path: str | os.PathLike[str], text: bytes) -> Path | None:
    """The saved file ``text`` (the stored text of ``path``, :func:`read_stored`, or only its start) is the delta
    of, its ``..`` collapsed, or None where it is a whole document."""
    name = _named(path, text)
    return None if name is None else _beside(path, name)


def base_of(path: str | os.PathLike[str]) -> Path | None:
    """The file the saved file ``path`` is stored as the delta of (:func:`stored_base`), reading only the start of
    its text, and once while it is unchanged; None where it is a whole document."""
    p = saved(path)
    st = p.stat()
    name = _named_at(str(p), st.st_mtime_ns, st.st_size, MAX_BYTES)
    return None if name is None else _beside(p, name)


def _named(path: str | os.PathLike[str], text: bytes) -> str | None:
    """The base a delta's text names, as it names it (:func:`.saved_delta.base_name`); None for a whole document."""
    if not saved_delta.is_delta(text):
        return None
    # the base is the delta's first value: read alone, not the whole document's text
    head = text[len(saved_delta.MARK):len(saved_delta.MARK) + _HEAD].decode("utf-8", "replace").lstrip()
    try:
        name = json.JSONDecoder().raw_decode(head)[0]
    except ValueError:
        name = None
    return saved_delta.base_name({saved_delta.BASE: name}, path)


#: how much of a delta's text :func:`_named` reads for its base's name
_HEAD = 4096


@functools.lru_cache(maxsize=1024)
def _named_at(path: str, mtime_ns: int, size: int, limit: int) -> str | None:
    """The base the saved file ``path`` names (:func:`_named`) while its mtime and size are these, from only the
    start of its text decompressed."""
    data, n = read_regular(path, limit), len(saved_delta.MARK) + _HEAD
    if path.endswith(XZ):
        try:
            head = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data, max_length=n)
        except lzma.LZMAError as exc:
            raise ValueError(f"{path}: not a readable xz file ({exc})") from None
    elif path.endswith(GZ):
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            head = f.read(n)
    else:
        head = data[:n]
    return _named(path, head)


def _beside(path: str | os.PathLike[str], name: str) -> Path:
    """The saved file a delta at ``path`` names ``name``, its ``..`` collapsed: in its folder, a sibling one or one
    inside it."""
    return saved(Path(os.path.normpath(Path(path).parent / name)))


def _stored(path: str | os.PathLike[str], limit: int) -> tuple[Path, bytes]:
    """The saved file of ``path`` (:func:`saved`) and its decompressed bytes."""
    p = saved(path)
    return p, unpack(read_regular(p, limit), p, limit)


def _decoded(p: Path, data: bytes, limit: int) -> Any:
    """The whole document the delta ``data`` (the file ``p``) stands for, in objects of its own: its base, itself
    decoded against its own base where it is a delta, is parsed once while the files it is read from are unchanged
    (:func:`_base`) and only read; what the document keeps of it is copied (:func:`.saved_delta.decode`), so no two
    documents share a mutable part."""
    delta = json.loads(data)
    if not isinstance(delta, dict):
        raise ValueError(f"{p}: not a delta of a results document")
    chain: list[tuple[str, int, int]] = []
    at, name = p, saved_delta.base_name(delta, p)
    while name is not None:
        q = _beside(at, name)
        if len(chain) == saved_delta.MAX_DEPTH:  # a base that is a delta of a delta, or a cycle
            raise ValueError(f"{p}: its base {chain[0][0]} is stored as a difference from {chain[1][0]}, itself a "
                             f"difference from {q}: a base must be a whole document or the difference from one")
        try:
            st = q.stat()
        except FileNotFoundError:
            raise _missing(p, at, name) from None
        chain.append((str(q), st.st_mtime_ns, st.st_size))
        at, name = q, _named_at(str(q), st.st_mtime_ns, st.st_size, limit)
    base, index = _base(tuple(chain), limit)
    return saved_delta.decode(delta, base, p, index)


def _missing(p: Path, at: Path, name: str) -> MissingBaseError:
    """The error for the delta ``p`` read where the base ``name``, named by ``at`` (``p`` or its base), is not: the
    missing file named from ``p``'s folder, and the fix."""
    rel = Path(os.path.relpath(os.path.normpath(at.parent / name), p.parent)).as_posix()
    said = f"{p} is stored as its difference from {rel}" if at == p else \
        f"{p} is stored as its difference from {Path(os.path.relpath(at, p.parent)).as_posix()}, itself the " \
        f"difference from {rel}"
    if "/" not in rel:
        return MissingBaseError(f"{said}, a file of the same folder that is not there: copy {rel} beside it (or copy "
                                "the device's whole folder)")
    return MissingBaseError(f"{said}, a file of another folder of the device that is not there: copy the device's "
                            "whole folder, whose folders' runs are stored against each other")


@functools.lru_cache(maxsize=4)
def _base(chain: tuple[tuple[str, int, int], ...], limit: int) -> tuple[Any, dict[str, tuple[int, ...]] | None]:
    """A delta's base, parsed once while the files it is read from are unchanged (``chain``: the base, then its own
    base where it is a delta, each with its mtime and size), with where each of its metrics stands
    (:func:`.saved_delta.index`). Shared by every delta stored against it: never handed out."""
    path = chain[0][0]
    base = json.loads(unpack(read_regular(path, limit), path, limit))
    if len(chain) > 1:
        if not isinstance(base, dict):
            raise ValueError(f"{path}: not a delta of a results document")
        own, index = _base(chain[1:], limit)
        base = saved_delta.decode(base, own, path, index)
    return base, (saved_delta.index(base) if isinstance(base, dict) else None)


def read_text(path: str | os.PathLike[str]) -> str:
    return read_bytes(path).decode("utf-8")


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON document a saved file holds (:func:`read_bytes`); a delta decoded straight to the document,
    without the round trip through its text. The garbage collector waits while a document is built: its
    hundreds of thousands of new containers (none of them garbage) would set off full collections of the
    caller's whole heap, which took longer than the parse itself in a process holding other documents."""
    p, data = _stored(path, MAX_BYTES)
    with _collector_paused():
        if saved_delta.is_delta(data):
            return _decoded(p, data, MAX_BYTES)
        return json.loads(data.decode("utf-8"))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, and back as it was after it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def write_gz(path: str | os.PathLike[str], data: bytes) -> Path:
    """Store ``data`` gzip-compressed at ``path`` (``.gz`` appended if missing), atomically; the
    compressed bytes do not depend on when they were written (mtime 0), so equal files stay equal."""
    p = Path(path)
    if p.suffix != GZ:
        p = p.with_name(p.name + GZ)
    atomic_write_chunks(p, [gz_bytes(data)])
    return p


def gz_bytes(data: bytes) -> bytes:
    """``data`` gzip-compressed at level 9 with mtime 0: the same input gives the same bytes."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def write_compressed(path: str | os.PathLike[str], data: bytes) -> Path:
    """Store ``data`` at ``path`` compressed as its suffix says: ``.xz`` as xz, anything else as gzip."""
    return write_xz(path, data) if Path(path).suffix == XZ else write_gz(path, data)


#: LZMA2 as preset 6, extreme (its 8 MiB window spans a whole results document, as preset 9's 64 MiB one
#: does, for a tenth of the encoder's memory), with no position bits (pb 0): JSON and logs are text, not words
#: aligned to 2 or 4 bytes, so the default pb 2 only splits the coder's statistics (about 1 % fewer bytes)
XZ_FILTERS: list[dict[str, int]] = [{"id": lzma.FILTER_LZMA2, "preset": 6 | lzma.PRESET_EXTREME, "dict_size": 8 << 20,
                                     "lc": 3, "lp": 0, "pb": 0}]


def xz_bytes(data: bytes) -> bytes:
    """``data`` xz-compressed with :data:`XZ_FILTERS`; the same input gives the same bytes, and any xz reader
    reads them."""
    return lzma.compress(data, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, filters=XZ_FILTERS)


def write_xz(path: str | os.PathLike[str], data: bytes) -> Path:
    """Store ``data`` xz-compressed at ``path`` (``.xz`` appended if missing), atomically."""
    p = Path(path)
    if p.suffix != XZ:
        p = p.with_name(p.name + XZ)
    atomic_write_chunks(p, [xz_bytes(data)])
    return p
