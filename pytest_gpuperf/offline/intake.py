"""``gpuperf offline collect OUT.tgz``: bring an offline host's run back into the results store.

Each results document lands in ``<into>/<device key>/`` under its own name, xz-compressed (results
are evidence: kept whole, kept small); a different file already there keeps its name and the newcomer
gets ``-2``, ``-3``… — nothing is overwritten, nothing lost. Each log lands beside them under ``logs/``,
and, with ``--history``, every run is imported into the history store (runs already there are skipped
by the importer). A power corpus (``power-corpus-<backend>.json``, or ``.json.gz`` where the host resumed a
compressed one, collected into ``OUT/results/<key>/``) is joined with the store's corpus of that card, in
the form the store keeps it (one the store lacks lands compressed, as results do; the collector resumes
either form). The corpus is the studies wing's file: its module (:data:`CORPUS_INTAKE`) reads and joins it,
loaded by name only when a run brought one back, so this module imports nothing of the studies.

An archive of ``run.sh --gatecheck`` holds a gate check (``gatecheck/gatecheck.json`` and its runs beside it):
it lands as one folder, ``<into>/<device key>/gatecheck-<commit>/``, the file as it is and each run's results and
log xz-compressed, as the project keeps its own. A later archive of the same gate check (``--append``) that
holds every file of that folder unchanged and every run its file named adds to it; any other gets a folder of
its own (``-2``, ``-3``…), so nothing is overwritten. Its runs are not imported into a history: they are the
gate check's A/A and planted runs, not the machine's record.

What an archive holds is not trusted: every device key it gives becomes a folder name only through
:func:`pytest_gpuperf.paths.safe_name` (checked for all of them before anything is written), members are
unpacked by tarfile's ``data`` filter (no links out, no devices), at most :data:`MAX_UNPACKED` bytes in
all, and two collects into one store at once take turns (:data:`LOCK_NAME`), so both runs are kept."""

from __future__ import annotations

import importlib
import json
import os
import re
import tarfile
import tempfile
import zlib
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

from ..errors import GpuPerfError
from ..gatecheck.run import SCHEMA as GATECHECK_SCHEMA
from ..paths import UnsafeNameError, safe_name
from ..schemas.results_doc import ResultsDocument
from ..util import jsonio
from ..util.atomic import atomic_write_chunks
from ..util.locks import file_lock

#: the files of a power corpus among a run's results, plain or compressed
CORPUS = ("power-corpus-*.json", "power-corpus-*.json.gz", "power-corpus-*.json.xz")

#: the module that keys and joins a power corpus brought back (``key_of``, ``join``); named, not imported,
#: so the gate wing imports nothing of the studies
CORPUS_INTAKE = "pytest_gpuperf.studies.static_power.corpus_intake"


def _corpus_intake() -> ModuleType:
    """:data:`CORPUS_INTAKE`, loaded when a run brought a corpus back."""
    return importlib.import_module(CORPUS_INTAKE)


#: the most bytes an archive may unpack to, all members together (counted from the members' headers
#: while the archive is read, before each is written): a run's results, logs and history are a few MiB;
#: a small archive that unpacks to gigabytes is refused before it fills the disk or the memory
MAX_UNPACKED = 1024 * 2**20

#: the lock every ``collect`` into one store takes while it picks its files' names and writes them, so two
#: at once keep both runs (``-2``), as two one after the other do
LOCK_NAME = ".gpuperf-collect"


def _bounded(tar: tarfile.TarFile, source: Path, limit: int) -> Iterator[tarfile.TarInfo]:
    """The archive's members in order, refusing the archive once their sizes pass ``limit`` bytes."""
    total = 0
    for member in tar:
        total += max(member.size, 0)
        if total > limit:
            raise GpuPerfError(f"{source}: unpacks to more than {limit // 2**20} MiB (a run archive holds a few); "
                               "refused before unpacking it — is it the OUT.tgz run.sh wrote?")
        yield member


def _unpacked(source: Path, tmp: Path, limit: int = MAX_UNPACKED) -> Path:
    if source.is_dir():
        return source
    if not source.is_file():
        raise GpuPerfError(f"{source}: no such file or folder; pass the OUT.tgz (or OUT folder) run.sh wrote")
    try:
        with tarfile.open(source, "r|gz") as tar:  # a stream: members are checked, then written, one by one
            tar.extractall(tmp, members=_bounded(tar, source, limit), filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise GpuPerfError(f"{source}: truncated or damaged, or not a run archive ({exc or type(exc).__name__}); "
                           "copy OUT.tgz again (a copy cut short) or collect the OUT folder itself") from None
    except OSError as exc:
        raise GpuPerfError(f"{source}: cannot be unpacked ({exc})") from None
    return tmp


def _store(src: Path, folder: Path) -> tuple[Path, bool]:
    """``src`` compressed into ``folder`` under its name (``-2``, ``-3``… where a different file holds
    it): (the stored file, whether it is new — False when the same content was already there). Callers
    hold the store's lock (:data:`LOCK_NAME`), so the name chosen is still free when it is written."""
    data = jsonio.read_bytes(src)
    stem, dot, ext = jsonio.uncompressed_name(src.name).partition(".")
    n = 1
    while True:
        name = f"{stem}{dot}{ext}" if n == 1 else f"{stem}-{n}{dot}{ext}"
        taken = [t for t in (folder / (name + jsonio.XZ), folder / (name + jsonio.GZ)) if os.path.lexists(t)]
        if not taken:
            folder.mkdir(parents=True, exist_ok=True)
            return jsonio.write_xz(folder / name, data), True
        same = next((t for t in taken if jsonio.read_bytes(t) == data), None)
        if same is not None:
            return same, False
        n += 1


def _results_key(path: Path, echo: Callable[[str], object]) -> str | None:
    """The device key of a results document (checked: it names a folder), or None when ``path`` is not one
    (read as :class:`ResultsDocument`; the file itself is stored byte for byte by :func:`_store`)."""
    try:
        device = ResultsDocument.load(path).device or {}
    except (ValueError, OSError):  # ResultsDocumentError is a ValueError
        device = {}
    if "key" not in device:
        echo(f"skipped {path.name}: not a results document")
        return None
    return safe_name(device["key"], f"{path.name}: device key")


#: where ``run.sh --gatecheck`` leaves the gate check in its archive: this folder, its file inside
GATECHECK_DIR, GATECHECK_FILE = "gatecheck", "gatecheck.json"


def _gatecheck_refs(doc: dict) -> set[str]:
    """The results files a gate-check document names (its A/A and planted runs' ``results``/``runs``)."""
    refs = {str(r.get("results")) for r in doc.get("aa") or [] if isinstance(r, dict) and r.get("results")}
    for p in doc.get("planted") or []:
        if isinstance(p, dict):
            refs.update(f"{r}.json" for r in p.get("runs") or [] if isinstance(r, str))
    return refs


def _gatecheck_files(folder: Path) -> dict[str, bytes]:
    """The plain ``*.json`` and ``*.log`` files of a gate check's folder by their uncompressed names."""
    out = {}
    for f in sorted(folder.iterdir()):
        name = jsonio.uncompressed_name(f.name)
        if f.is_file() and not f.is_symlink() and name.endswith((".json", ".log")):
            out[name] = jsonio.read_bytes(f)
    return out


def _gatecheck_target(base: Path, files: dict[str, bytes], refs: set[str]) -> tuple[Path, dict[str, bytes]]:
    """The folder the gate check goes to (``base``, or ``base-2``, ``-3``… where one holds another) and the
    files to write there: all of them in a new folder, the new and changed ones in a folder this archive
    extends (every file it holds is unchanged here, and every run its gate-check file named is named again),
    none where the folder holds every file of the archive already."""
    n = 1
    while True:
        folder = base if n == 1 else base.with_name(f"{base.name}-{n}")
        if not folder.exists():
            return folder, files
        have = _gatecheck_files(folder)
        old_refs = _gatecheck_refs(json.loads(have.get(GATECHECK_FILE, b"{}")))
        if GATECHECK_FILE in have and refs <= old_refs and all(
                have.get(name) == data for name, data in files.items() if name != GATECHECK_FILE):
            return folder, {}  # this archive, or an earlier one of the gate check the folder holds
        runs_kept = all(files.get(name) == data for name, data in have.items() if name != GATECHECK_FILE)
        if GATECHECK_FILE in have and runs_kept and old_refs <= refs:
            return folder, {name: data for name, data in files.items() if have.get(name) != data}
        n += 1


def _commit_name(commit: str) -> str:
    """A commit as a folder name's part: its short hash (``-dirty`` where it had uncommitted changes), or the
    text made safe (lower-case letters, digits and ``-``), or ``no-commit``."""
    found = re.match(r"[0-9a-f]{7,40}", commit.lower())
    if found:
        return found[0][:7] + ("-dirty" if "dirty" in commit.lower() else "")
    return re.sub(r"[^0-9a-z]+", "-", commit.lower()).strip("-")[:40] or "no-commit"


def _collect_gatecheck(source: Path, folder: Path, into: Path, echo: Callable[[str], object]) -> list[Path]:
    """File the gate check of ``folder`` (an unpacked ``OUT/gatecheck``) under ``into/<key>/gatecheck-<commit>``;
    the paths written. Callers hold the store's lock."""
    try:
        doc = json.loads(jsonio.read_bytes(folder / GATECHECK_FILE))
    except ValueError as exc:
        raise GpuPerfError(f"{source}: {GATECHECK_DIR}/{GATECHECK_FILE} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != GATECHECK_SCHEMA:
        raise GpuPerfError(f"{source}: {GATECHECK_DIR}/{GATECHECK_FILE} is not a gate-check file (schema "
                           f"{doc.get('schema') if isinstance(doc, dict) else None!r}, expected {GATECHECK_SCHEMA!r})")
    try:
        key = safe_name((doc.get("device") or {}).get("key"), f"{GATECHECK_FILE}: device key")
    except UnsafeNameError as exc:
        raise GpuPerfError(f"{source}: {exc}") from None
    commit = _commit_name(str(doc.get("commit") or ""))
    files = _gatecheck_files(folder)
    target, todo = _gatecheck_target(into / key / f"gatecheck-{commit}", files, _gatecheck_refs(doc))
    if not todo:
        echo(f"{target} holds this gate check already")
        return []
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in sorted(todo.items(), key=lambda item: item[0] == GATECHECK_FILE):  # the file last
        if name == GATECHECK_FILE:
            atomic_write_chunks(target / name, [data])
            written.append(target / name)
        else:
            written.append(jsonio.write_xz(target / name, data))
    echo(f"collected the gate check into {target} ({len(written)} files)")
    return written


def collect(source: Path, into: Path, history: str | None = None, echo=print) -> list[Path]:
    """Copy the run's results and logs into ``into`` and join its power corpora with the store's; returns
    the results files now there. Every key the documents give is checked before anything is written:
    one that is not a plain folder name (``../x``, ``/abs``, ``a/b``) refuses the whole archive."""
    with tempfile.TemporaryDirectory(prefix="gpuperf-collect-") as tmp:
        root = _unpacked(source, Path(tmp))
        gatecheck = root / GATECHECK_DIR
        if (gatecheck / GATECHECK_FILE).is_file():
            into.mkdir(parents=True, exist_ok=True)
            with file_lock(into / LOCK_NAME):
                return _collect_gatecheck(source, gatecheck, into, echo)
        corpora = sorted(p for pattern in CORPUS for p in root.glob(f"results/*/{pattern}"))
        found = [p for p in sorted(root.glob("results/*/*.json")) if p not in corpora]
        if not found and not corpora:
            hint = (f"its gate check wrote no {GATECHECK_DIR}/{GATECHECK_FILE}" if gatecheck.is_dir()
                    else "did the run record anything?")
            raise GpuPerfError(f"{source}: holds no results/<key>/*.json; {hint} (see its log)")
        try:
            corpus = _corpus_intake() if corpora else None
            keyed_corpora = [(p, k) for p in corpora if (k := corpus.key_of(p, echo)) is not None]
            keyed = [(p, k) for p in found if (k := _results_key(p, echo)) is not None]
        except UnsafeNameError as exc:
            raise GpuPerfError(f"{source}: {exc}") from None
        if not keyed and not keyed_corpora:
            raise GpuPerfError(f"{source}: none of {', '.join(p.name for p in found + corpora)} is a results document "
                               f"or a power corpus; nothing collected")
        into.mkdir(parents=True, exist_ok=True)
        placed: list[Path] = []
        with file_lock(into / LOCK_NAME):  # another collect into this store waits: both runs are kept
            for path, key in keyed_corpora:
                corpus.join(path, key, into, echo)
            for path, key in keyed:
                stored, new = _store(path, into / key)
                placed.append(stored)
                if not new:
                    continue
                echo(f"collected {stored}")
                for log in root.glob("*.log"):
                    _store(log, into / key / "logs")
        if history and placed:
            from ..history.cli import import_files

            try:
                code = import_files([str(p) for p in placed], history)
            except GpuPerfError as exc:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed: {exc}") from None
            if code != 0:
                raise GpuPerfError(f"the results were collected, but importing them into {history} failed (exit {code})")
        return placed
